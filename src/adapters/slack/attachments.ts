import { graphemePrefix } from '../../core/text/index.js';
import { cleanInboundText } from './inbound-text.js';
import { isRecord } from './parse.js';
import { blocksText } from './rich-text.js';
import { describeFiles } from './shared-files.js';

/**
 * A message's `attachments[]` → quoted context for the model. Pure functions.
 *
 * Shapes:
 * - Shared / forwarded messages: `is_share` and/or `is_msg_unfurl`, with `author_name`, `author_subname`,
 *   `author_id`, `channel_name`, `channel_id`, `from_url`, `text`, `fallback`, `footer`, `files`, and the original
 *   blocks in `message_blocks[].message.blocks` (real deliveries in hackage slack-web golden files
 *   `forwarded_message.json`, `share_with_message.json`, `share_without_message.json`; slackapi/java-slack-sdk
 *   issue #1179, where `channel_name` is "Direct Message" for a DM).
 * - Legacy bot attachments and unfurls: `fallback`, `pretext`, `author_name`, `title`, `title_link`, `text`,
 *   `fields[{title, value}]`, `footer`, `service_name`, `blocks` (docs.slack.dev reference/messaging/attachments;
 *   node-slack-sdk `packages/types/src/message-attachments.ts`; slack-web golden `github_notification.json`).
 * Anything else (slack-web golden `non_spec_attachment.json`) yields nothing rather than an error.
 */

/** At most this many characters of one attachment reach the model... */
export const attachmentCharacterLimit = 4000;
/** ...and of all of a message's attachments together. */
export const attachmentsCharacterLimit = 8000;
/** Slack allows up to 100 attachments; past a few they are noise (and the total cap cuts them anyway). */
const attachmentCountLimit = 10;

type Json = Record<string, unknown>;

function text(record: Json, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' && value.trim().length > 0 ? value : undefined;
}

function records(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

/** Slack mrkdwn → readable text; other people's `<@U…>` stay for name resolution in `prepare`. */
function readable(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const cleaned = cleanInboundText(value, undefined);
  return cleaned.length > 0 ? cleaned : undefined;
}

function truncate(value: string, limit: number): string {
  if (value.length <= limit) return value;
  return `${graphemePrefix(value, Math.max(0, limit - 14)).trimEnd()} …(truncated)`;
}

/** `is_reply_unfurl` marks a shared thread reply (NousResearch/hermes-agent#75481); same fields otherwise. */
function isSharedMessage(attachment: Json): boolean {
  return (
    attachment.is_share === true || attachment.is_msg_unfurl === true || attachment.is_reply_unfurl === true
  );
}

/** "#deploys", "a direct message", or undefined. */
function channelLabel(attachment: Json): string | undefined {
  const name = text(attachment, 'channel_name');
  const id = text(attachment, 'channel_id');
  if (name === 'Direct Message' || (!name && id?.startsWith('D'))) return 'a direct message';
  if (name) return `#${name}`;
  return id ? `channel ${id}` : undefined;
}

function sharedMessageBody(attachment: Json): string | undefined {
  const fromBlocks = records(attachment.message_blocks)
    .map((entry) => (isRecord(entry.message) ? blocksText(entry.message.blocks) : ''))
    .filter(Boolean)
    .join('\n');
  return readable(text(attachment, 'text')) ?? readable(fromBlocks) ?? readable(text(attachment, 'fallback'));
}

function quote(body: string): string {
  return body
    .split('\n')
    .map((line) => (line.length > 0 ? `> ${line}` : '>'))
    .join('\n');
}

/** A forwarded message: who wrote it, where, and its text, quoted so it reads as context, not as the request. */
function sharedMessage(attachment: Json): string {
  const author =
    text(attachment, 'author_name') ??
    text(attachment, 'author_subname') ??
    (text(attachment, 'author_id') ? `<@${text(attachment, 'author_id')}>` : undefined);
  const channel = channelLabel(attachment);
  const link = text(attachment, 'from_url');
  const header = [
    'Forwarded message',
    author ? ` from ${author}` : '',
    channel ? ` in ${channel}` : '',
    link ? ` (${link})` : '',
  ].join('');
  const body = [sharedMessageBody(attachment), ...describeFiles(attachment.files, { all: true })]
    .filter(Boolean)
    .join('\n');
  return `[${header}]\n${quote(body || '(no text)')}`;
}

/** A bot's attachment or a link preview: the parts a person sees, top to bottom. */
function legacyAttachment(attachment: Json): string | undefined {
  const titleLink = text(attachment, 'title_link');
  const title = readable(text(attachment, 'title'));
  const authorName = text(attachment, 'author_name');
  const authorSubname = text(attachment, 'author_subname');
  const author =
    authorSubname && authorSubname !== authorName ? `${authorName ?? ''} ${authorSubname}` : authorName;
  const fields = records(attachment.fields)
    .map((field) => {
      const name = readable(text(field, 'title'));
      const value = readable(text(field, 'value'));
      return name && value ? `${name}: ${value}` : (value ?? name);
    })
    .filter(Boolean);
  const lines = [
    readable(text(attachment, 'pretext')),
    readable(author),
    title && titleLink && !title.includes(titleLink) ? `${title} (${titleLink})` : title,
    readable(text(attachment, 'text')) ?? readable(blocksText(attachment.blocks)),
    ...fields,
    readable(text(attachment, 'footer')),
  ].filter((line): line is string => line !== undefined);
  const body = lines.length > 0 ? lines : [readable(text(attachment, 'fallback'))].filter(Boolean);
  const files = describeFiles(attachment.files, { all: true });
  if (body.length === 0 && files.length === 0) return undefined;
  const source = text(attachment, 'service_name');
  return `[Attachment${source ? ` from ${source}` : ''}]\n${quote([...body, ...files].join('\n'))}`;
}

/** Every attachment as a quoted block, each and all of them bounded in size. Empty when there is nothing to read. */
export function describeAttachments(attachments: unknown): string {
  const parts: string[] = [];
  let used = 0;
  for (const attachment of records(attachments).slice(0, attachmentCountLimit)) {
    const described = isSharedMessage(attachment) ? sharedMessage(attachment) : legacyAttachment(attachment);
    if (!described) continue;
    const room = attachmentsCharacterLimit - used;
    if (room < 200) break;
    const part = truncate(described, Math.min(attachmentCharacterLimit, room));
    parts.push(part);
    used += part.length + 2; // the blank line between parts
  }
  return parts.join('\n\n');
}

/** What a person wrote: the message's text, or its blocks' text when a client sent only blocks. */
export function writtenText(text: string, blocks: unknown): string {
  return text.trim() ? text : blocksText(blocks);
}

/**
 * A message as the model reads it: what the person wrote, notes on the files the core does not fetch, then
 * any forwarded messages, unfurls and bot attachments, quoted after it: the person's own words are the
 * request. For the event Butler answers and for the earlier thread messages it reads as context alike. The
 * core describes the files it fetches (`sharedFiles`); with `allFiles` (Butler's own messages, whose files
 * it does not fetch back) every file gets a note.
 */
export function messageContent(
  message: { text: string; blocks?: unknown; files?: unknown; attachments?: unknown },
  botUserId: string | undefined,
  options: { allFiles?: boolean } = {},
): string {
  const own = [
    cleanInboundText(writtenText(message.text, message.blocks), botUserId),
    ...describeFiles(message.files, { all: options.allFiles === true }),
  ]
    .filter(Boolean)
    .join('\n');
  return [own, describeAttachments(message.attachments)].filter(Boolean).join('\n\n');
}
