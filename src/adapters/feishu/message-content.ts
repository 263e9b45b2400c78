import { arrayField, asRecord, type JsonRecord, stringField } from './fields.js';

/** Turns a mention placeholder (`@_user_1`, `@_all`) into the text to show: a name, or '' for the bot itself. */
export type MentionResolver = (key: string) => string;

const mentionPlaceholder = /@_user_\d+|@_all/g;

/** What Butler reads when someone sends something it cannot open; the model answers it politely. */
const placeholders: Record<string, string> = {
  image: '[sent an image, which Butler cannot view]',
  sticker: '[sent a sticker]',
  audio: '[sent a voice message, which Butler cannot listen to]',
  media: '[sent a video, which Butler cannot watch]',
  interactive: '[sent a card, which Butler cannot read]',
  share_chat: '[shared a group chat]',
  share_user: '[shared a contact]',
  merge_forward: '[forwarded a chat history, which Butler cannot open]',
};

function parseContent(content: string): JsonRecord {
  try {
    return asRecord(JSON.parse(content)) ?? {};
  } catch {
    return {};
  }
}

function tidy(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/[ \t]{2,}/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function replaceMentions(text: string, resolve: MentionResolver): string {
  return text.replace(mentionPlaceholder, (key) => resolve(key));
}

function postElementText(element: JsonRecord, resolve: MentionResolver): string {
  const text = stringField(element, 'text') ?? '';
  switch (element.tag) {
    case 'text':
    case 'md':
      return replaceMentions(text, resolve);
    case 'a': {
      const href = stringField(element, 'href');
      return href ? `[${text || href}](${href})` : text;
    }
    case 'at': {
      const key = stringField(element, 'user_id') ?? '';
      if (/^@_user_\d+$|^@_all$/.test(key)) return resolve(key);
      const name = stringField(element, 'user_name');
      return name ? `@${name}` : '';
    }
    case 'img':
      return '[image]';
    case 'media':
      return '[video]';
    case 'emotion':
      return `:${stringField(element, 'emoji_type') ?? 'emoji'}:`;
    case 'hr':
      return '\n---\n';
    case 'code_block':
      return `\n\`\`\`${stringField(element, 'language')?.toLowerCase() ?? ''}\n${text}\n\`\`\`\n`;
    default:
      return text;
  }
}

/** Received posts are `{title, content}`; some clients wrap them per locale (`{"zh_cn": {…}}`). */
function postBody(parsed: JsonRecord): JsonRecord | undefined {
  if (Array.isArray(parsed.content)) return parsed;
  return Object.values(parsed)
    .map(asRecord)
    .find((value) => Array.isArray(value?.content));
}

function postText(parsed: JsonRecord, resolve: MentionResolver): string {
  const body = postBody(parsed);
  if (!body) return '';
  const lines = arrayField(body, 'content').map((paragraph) =>
    (Array.isArray(paragraph) ? paragraph : [])
      .map((element) => postElementText(asRecord(element) ?? {}, resolve))
      .join(''),
  );
  const title = stringField(body, 'title');
  return [...(title ? [title] : []), ...lines].join('\n');
}

/** Flattens any message type to text; never throws, whatever Feishu sends. */
export function messageText(messageType: string, content: string, resolve: MentionResolver): string {
  const parsed = parseContent(content);
  switch (messageType) {
    case 'text':
      return tidy(replaceMentions(stringField(parsed, 'text') ?? '', resolve));
    case 'post':
      return tidy(postText(parsed, resolve));
    case 'file': {
      const name = stringField(parsed, 'file_name');
      return name
        ? `[sent a file, ${name}, which Butler cannot open]`
        : '[sent a file, which Butler cannot open]';
    }
    case 'location': {
      const name = stringField(parsed, 'name');
      return name ? `[shared a location: ${name}]` : '[shared a location]';
    }
    default:
      return placeholders[messageType] ?? `[sent a ${messageType} message, which Butler cannot read]`;
  }
}
