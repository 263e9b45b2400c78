import { defuseMentions } from './mentions.js';

/**
 * Model markdown → what the card `markdown` element renders well. Code is left alone; elsewhere:
 * - headings are demoted (H1–H3 render very large in cards),
 * - images become links (card images need an uploaded image key, not a URL),
 * - task-list boxes become ☐/☑,
 * - `<` is escaped so model output cannot inject card tags such as `<at id=all>` or `<font>`;
 *   in code, where escapes would show, `<at>` tags are defused (`mentions.ts`).
 */

const fence = /^\s{0,3}(`{3,}|~{3,})/;

function convertInline(line: string): string {
  // Split on inline code spans; even indexes are prose, odd ones are code.
  return line
    .split(/(`+[^`]*`+)/)
    .map((part, index) =>
      index % 2 === 1
        ? defuseMentions(part)
        : part
            .replace(
              /!\[([^\]]*)\]\(([^)\s]+)[^)]*\)/g,
              (_match, alt: string, url: string) => `[${alt || 'image'}](${url})`,
            )
            .replace(/</g, '&#60;'),
    )
    .join('');
}

function convertLine(line: string): string {
  const heading = /^(#{1,6})\s+(.*)$/.exec(line);
  if (heading) {
    const level = heading[1]?.length ?? 1;
    return `${level <= 2 ? '####' : '#####'} ${convertInline(heading[2] ?? '')}`;
  }
  const task = /^(\s*[-*+]\s+)\[([ xX])\]\s+(.*)$/.exec(line);
  if (task) return `${task[1]}${task[2] === ' ' ? '☐' : '☑'} ${convertInline(task[3] ?? '')}`;
  if (/^\s{0,3}([*_])(\s*\1){2,}\s*$/.test(line)) return '---';
  return convertInline(line);
}

export function toCardMarkdown(markdown: string): string {
  const output: string[] = [];
  let openFence: string | undefined;
  for (const line of markdown.replace(/\r\n?/g, '\n').split('\n')) {
    const marker = fence.exec(line)?.[1];
    if (openFence) {
      // Code is shown as it is, but an `<at>` tag is live even there.
      output.push(defuseMentions(line));
      if (
        marker &&
        marker[0] === openFence[0] &&
        marker.length >= openFence.length &&
        line.trim() === marker
      ) {
        openFence = undefined;
      }
      continue;
    }
    if (marker) {
      openFence = marker;
      output.push(line);
      continue;
    }
    output.push(convertLine(line));
  }
  return output.join('\n').replace(/\n{4,}/g, '\n\n\n');
}
