import { defuseBroadcasts } from './mentions.js';

/**
 * Markdown (what the model writes) → Slack mrkdwn, for the places that take mrkdwn: notices, card
 * text and the `text` fallback of messages. Streams and markdown blocks take Markdown as is.
 */

/**
 * Slack parses `<…>` as links and mentions: user-provided text must have these escaped. A bare `@channel`
 * gets a word joiner too, in case a client or setting reads it as a broadcast (`mentions.ts`).
 */
export function escapeMrkdwn(text: string): string {
  return defuseBroadcasts(text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'));
}

const bold = '\u0001';

function convertInline(text: string): string {
  return text
    .replace(/!\[([^\]]*)\]\(([^)\s]+)\)/g, (_match, alt: string, url: string) => `<${url}|${alt || url}>`)
    .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, '<$2|$1>')
    .replace(/\*\*(?=\S)(.+?)\*\*/g, `${bold}$1${bold}`)
    .replace(/__(?=\S)(.+?)__/g, `${bold}$1${bold}`)
    .replace(/(^|[^\w*])\*(?=\S)([^*\n]+?)\*(?!\w)/g, '$1_$2_')
    .replace(/~~(?=\S)(.+?)~~/g, '~$1~')
    .replaceAll(bold, '*');
}

/** One line outside code fences: block syntax first (headings, bullets, quotes), then inline spans. */
function convertLine(line: string): string {
  const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
  if (heading) return `*${convertSpans(escapeMrkdwn(heading[1] ?? ''))}*`;
  const quote = /^(\s*>\s?)(.*)$/.exec(line);
  if (quote) return `>${convertSpans(escapeMrkdwn(quote[2] ?? ''))}`;
  const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
  if (bullet) return `${bullet[1] ?? ''}• ${convertSpans(escapeMrkdwn(bullet[2] ?? ''))}`;
  return convertSpans(escapeMrkdwn(line));
}

/** Leaves inline code spans untouched. */
function convertSpans(text: string): string {
  return text
    .split(/(`[^`\n]+`)/)
    .map((part, index) => (index % 2 === 1 ? part : convertInline(part)))
    .join('');
}

export function markdownToMrkdwn(markdown: string): string {
  const output: string[] = [];
  let inFence = false;
  for (const line of markdown.split('\n')) {
    const fence = /^\s*```/.test(line);
    if (fence) {
      // Slack shows a fence's language tag as code; drop it.
      output.push('```');
      inFence = !inFence;
    } else {
      output.push(inFence ? escapeMrkdwn(line) : convertLine(line));
    }
  }
  return output.join('\n');
}
