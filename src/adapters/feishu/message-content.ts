import { asRecord, type JsonRecord, stringField } from './fields.js';
import {
  type MentionResolver,
  type PostTextOptions,
  postAtReferences,
  postText,
  replaceMentions,
} from './post-content.js';

export type { MentionResolver } from './post-content.js';

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

export function parseContent(content: string): JsonRecord {
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

/** Ids and placeholders a message's `at` tags carry (posts only; text messages use `mentions[]` alone). */
export function atReferences(messageType: string, content: string): string[] {
  return messageType === 'post' ? postAtReferences(parseContent(content)) : [];
}

/** Message types that are one file the core fetches (`InboundMessage.files`): nothing to say in the text. */
const fileMessages = new Set(['image', 'file', 'media']);

/**
 * Flattens any message type to text; never throws, whatever Feishu sends. With `filesFetched` (the message's
 * own files reach the core), a file is not described as one Butler cannot open.
 */
export function messageText(
  messageType: string,
  content: string,
  resolve: MentionResolver,
  options: PostTextOptions = {},
): string {
  const parsed = parseContent(content);
  if (options.filesFetched && fileMessages.has(messageType)) return '';
  switch (messageType) {
    case 'text':
      return tidy(replaceMentions(stringField(parsed, 'text') ?? '', resolve));
    case 'post':
      return tidy(postText(parsed, resolve, options));
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
