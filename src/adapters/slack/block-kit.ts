import { graphemePrefix, truncateText } from '../../core/text/index.js';
import { escapeMrkdwn } from './mrkdwn.js';

/** Block Kit building blocks shared by Butler's messages: limits, text objects, safe truncation. */

/** Block Kit limits (docs.slack.dev block reference; @slack/types). */
export const blockLimits = {
  blocks: 50,
  sectionText: 3000,
  field: 2000,
  buttonText: 75,
  buttonValue: 2000,
  buttonUrl: 3000,
  confirmTitle: 100,
  confirmText: 300,
  confirmButton: 30,
  notificationText: 300,
  modalTitle: 24,
  privateMetadata: 3000,
  inputMaxLength: 500,
  /**
   * All text of one message's blocks. Slack documents 12,000 for markdown blocks together and was seen
   * refusing messages of about 13.2k block characters (`msg_blocks_too_long`), so cards stay under this.
   */
  messageText: 12_000,
} as const;

export type SlackBlock = Record<string, unknown>;

export interface RenderedMessage {
  /** Notification / accessibility fallback. */
  text: string;
  blocks: SlackBlock[];
}

export const plain = (text: string, limit: number) => ({
  type: 'plain_text',
  text: truncateText(text, limit),
  emoji: true,
});

export const mrkdwn = (text: string, limit: number) => ({ type: 'mrkdwn', text: truncateText(text, limit) });

export const section = (text: string): SlackBlock => ({
  type: 'section',
  text: mrkdwn(text, blockLimits.sectionText),
});

/** Cuts escaped text to `limit`, never through an entity (a cut `&am` would show as text). */
function cutEscaped(escaped: string, limit: number): string {
  if (escaped.length <= limit) return escaped;
  if (limit <= 0) return '';
  let cut = graphemePrefix(escaped, limit - 1).length;
  const entity = escaped.lastIndexOf('&', cut - 1);
  if (entity >= 0 && escaped.indexOf(';', entity) >= cut) cut = entity;
  return `${escaped.slice(0, cut)}…`;
}

/** User-provided text as mrkdwn, escaped and at most `limit` characters. */
export function escapedWithin(text: string, limit: number): string {
  return cutEscaped(escapeMrkdwn(text), limit);
}

/** Slack renders `<!date^…>` in the reader's time zone; the fallback is UTC. */
export function slackDate(date: Date): string {
  const unix = Math.floor(date.getTime() / 1000);
  const fallback = `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  return `<!date^${unix}^{date_short_pretty} {time}|${fallback}>`;
}

/** Characters of every text object in `value` (sections, buttons, confirm dialogs): what counts toward Slack's caps. */
export function textLength(value: unknown): number {
  if (Array.isArray(value)) return value.reduce<number>((total, item) => total + textLength(item), 0);
  if (typeof value !== 'object' || value === null) return 0;
  let total = 0;
  for (const [key, item] of Object.entries(value)) {
    total += key === 'text' && typeof item === 'string' ? item.length : textLength(item);
  }
  return total;
}
