import { mainThread } from '../../core/contracts/conversation-key.js';
import type { ConversationAddress } from '../../core/contracts/events.js';
import { plainText } from './approval-buttons.js';
import { asRecord, type JsonRecord, stringField } from './fields.js';

/**
 * The Stop button a reply card shows while Butler writes (card JSON 2.0). A click names the conversation's
 * thread: the callback carries the chat (`open_chat_id`) and tenant but not the thread, which is what the
 * conversation key needs (normalize.ts). The clicker and the chat come from Feishu's signed callback.
 */

export const stopElementId = 'stop';

export interface StopButtonValue {
  butler: 'stop';
  thread: string;
  /** A direct chat: the access rules' channel list does not apply (as for the messages there). */
  direct?: true;
}

/** Feishu thread and message ids are about 35 characters; a value this long bounds what the button adds. */
const longestThread = 'x'.repeat(64);
export const largestStopValue: StopButtonValue = { butler: 'stop', thread: longestThread, direct: true };

/** The Stop button's value for a reply in `address`. Direct chats share thread `main` (normalize.ts). */
export function stopValueFor(address: ConversationAddress): StopButtonValue {
  return address.thread === mainThread
    ? { butler: 'stop', thread: address.thread, direct: true }
    : { butler: 'stop', thread: address.thread };
}

/** `card` with a Stop button below its body. */
export function withStopButton(card: JsonRecord, value: StopButtonValue): JsonRecord {
  const body = asRecord(card.body);
  const elements = Array.isArray(body?.elements) ? body.elements : [];
  const button = {
    tag: 'button',
    element_id: stopElementId,
    type: 'default',
    size: 'small',
    text: plainText('Stop'),
    behaviors: [{ type: 'callback', value }],
  };
  return { ...card, body: { ...body, elements: [...elements, button] } };
}

/** The value of a Stop button, or undefined for any other click. */
export function parseStopValue(value: unknown): StopButtonValue | undefined {
  const record = asRecord(value);
  const thread = stringField(record, 'thread');
  if (record?.butler !== 'stop' || !thread) return undefined;
  return record.direct === true ? { butler: 'stop', thread, direct: true } : { butler: 'stop', thread };
}
