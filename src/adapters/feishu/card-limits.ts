import type { JsonRecord } from './fields.js';

/**
 * What Feishu accepts in one card (platforms.md "Checked since → Feishu card limits", §11–13): the request
 * body that carries a card is at most 30 KB, counted on the serialized JSON with its escapes, not on the
 * markdown; a card holds at most 5 table components, markdown tables included.
 */

/**
 * 30 KB read as 30,000 bytes (the stricter reading), less 2,000 for what Feishu might count that we do not:
 * a card whose largest request body measures more than this is never sent.
 */
export const cardBodyBudgetBytes = 28_000;

/**
 * Feishu refuses a sixth table with 230099 / ErrCode 11310 "card table number over limit"
 * (larksuite/openclaw-lark#53); some reports say older clients show fewer.
 */
export const maxTablesPerCard = 5;

/** Ids, msg_type, reply_in_thread, uuid and sequence: what travels beside the card in the requests below. */
const envelopeAllowanceBytes = 256;

/**
 * Bytes of the largest request body that carries `card`. A message send, reply or patch and a CardKit create
 * carry the card as a JSON string inside the JSON body, so every quote, backslash and newline is escaped
 * twice (`"` takes four bytes); a CardKit content update carries one element's text escaped once, which is
 * always less.
 */
export function cardBodyBytes(card: JsonRecord): number {
  return Buffer.byteLength(JSON.stringify(JSON.stringify(card))) + envelopeAllowanceBytes;
}
