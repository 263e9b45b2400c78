import { isRecord } from './parse.js';

export interface SlackThreadMessage {
  ts: string;
  user: string | undefined;
  botId: string | undefined;
  text: string;
  subtype: string | undefined;
  /** Whether it carries buttons (an approval card still waiting for a decision). */
  hasActions: boolean;
  /** As Slack lists them (read by `messageContent`): the blocks, shared files and attachments. */
  blocks: readonly unknown[];
  files: readonly unknown[];
  attachments: readonly unknown[];
}

export function stringField(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** conversations.replies / conversations.history entries → the fields Butler reads. */
export function listedMessages(result: Record<string, unknown>): SlackThreadMessage[] {
  return (Array.isArray(result.messages) ? result.messages : []).filter(isRecord).flatMap((message) => {
    const ts = stringField(message, 'ts');
    if (!ts) return [];
    const list = (key: string): unknown[] => (Array.isArray(message[key]) ? message[key] : []);
    const blocks = list('blocks');
    return [
      {
        ts,
        user: stringField(message, 'user'),
        botId: stringField(message, 'bot_id'),
        text: typeof message.text === 'string' ? message.text : '',
        subtype: stringField(message, 'subtype'),
        hasActions: blocks.some((block) => isRecord(block) && block.type === 'actions'),
        blocks,
        files: list('files'),
        attachments: list('attachments'),
      },
    ];
  });
}
