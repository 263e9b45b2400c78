import { isRecord } from './parse.js';

/**
 * Block Kit → Slack's text dialect (`<@U…>`, `<url|label>`, `<#C…|>`), so the result goes through the same
 * `cleanInboundText` and name resolution as a message's `text`. Pure functions.
 *
 * Shapes: rich_text elements as docs.slack.dev documents them (reference/block-kit/blocks/rich-text-block) and as
 * real deliveries carry them (hackage slack-web golden files `message_rich_text*.json`, `slackbotIm.json`);
 * section/header/context text objects from node-slack-sdk `packages/types/src/block-kit/blocks.ts`.
 */

type Json = Record<string, unknown>;

function text(record: Json, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function records(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

/** `"1f44d"` or `"1f468-200d-1f4bb"` → the emoji itself; undefined when the code is not hex. */
function emojiFromUnicode(unicode: string | undefined): string | undefined {
  if (!unicode || !/^[0-9a-f]+(-[0-9a-f]+)*$/i.test(unicode)) return undefined;
  try {
    return String.fromCodePoint(...unicode.split('-').map((part) => Number.parseInt(part, 16)));
  } catch {
    return undefined;
  }
}

function inlineElement(element: Json): string {
  switch (element.type) {
    case 'text':
      return text(element, 'text') ?? '';
    case 'link': {
      const url = text(element, 'url');
      if (!url) return text(element, 'text') ?? '';
      const label = text(element, 'text');
      return label ? `<${url}|${label}>` : `<${url}>`;
    }
    case 'user':
      return text(element, 'user_id') ? `<@${text(element, 'user_id')}>` : '';
    case 'usergroup':
      return text(element, 'usergroup_id') ? `<!subteam^${text(element, 'usergroup_id')}>` : '';
    case 'channel':
      return text(element, 'channel_id') ? `<#${text(element, 'channel_id')}|>` : '';
    case 'broadcast':
      return `<!${text(element, 'range') ?? 'here'}>`;
    case 'emoji':
      return emojiFromUnicode(text(element, 'unicode')) ?? `:${text(element, 'name') ?? 'emoji'}:`;
    case 'date': {
      const seconds = typeof element.timestamp === 'number' ? element.timestamp : Number.NaN;
      return (
        text(element, 'fallback') ?? (Number.isFinite(seconds) ? new Date(seconds * 1000).toISOString() : '')
      );
    }
    case 'color':
      return text(element, 'value') ?? '';
    case 'team':
      return text(element, 'team_id') ?? '';
    case 'message_mention':
      // A link to another message (seen in real rich_text); Butler cannot open it.
      return text(element, 'channel_id')
        ? `[a message in <#${text(element, 'channel_id')}|>]`
        : '[a message]';
    default:
      return text(element, 'text') ?? '';
  }
}

function inline(elements: unknown): string {
  return records(elements).map(inlineElement).join('');
}

function prefixLines(value: string, prefix: string): string {
  return value
    .split('\n')
    .map((line) => `${prefix}${line}`)
    .join('\n');
}

function richTextElement(element: Json): string {
  switch (element.type) {
    case 'rich_text_section':
      return inline(element.elements);
    case 'rich_text_list': {
      const ordered = element.style === 'ordered';
      const indent = '  '.repeat(typeof element.indent === 'number' ? Math.min(element.indent, 8) : 0);
      return records(element.elements)
        .map((item, index) => `${indent}${ordered ? `${index + 1}.` : '-'} ${richTextElement(item)}`)
        .join('\n');
    }
    case 'rich_text_quote':
      return prefixLines(inline(element.elements), '> ');
    case 'rich_text_preformatted':
      return `\`\`\`\n${inline(element.elements).replace(/\n$/, '')}\n\`\`\``;
    default:
      return inline(element.elements);
  }
}

function textObject(value: unknown): string | undefined {
  return isRecord(value) ? text(value, 'text') : undefined;
}

function blockText(block: Json): string {
  switch (block.type) {
    case 'rich_text':
      return records(block.elements).map(richTextElement).join('\n');
    case 'section':
      return [textObject(block.text), ...records(block.fields).map(textObject)].filter(Boolean).join('\n');
    case 'header':
      return textObject(block.text) ?? '';
    case 'markdown':
      return text(block, 'text') ?? '';
    case 'context':
      return records(block.elements)
        .map((element) => text(element, 'text') ?? '')
        .filter(Boolean)
        .join(' ');
    default:
      return '';
  }
}

/** The readable text of a `blocks` array: rich text, sections, headers, context. Empty when there is none. */
export function blocksText(blocks: unknown): string {
  return records(blocks)
    .map(blockText)
    .filter((part) => part.trim().length > 0)
    .join('\n')
    .trim();
}
