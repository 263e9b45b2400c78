/**
 * What Feishu refuses in a card, for the fake Open API: the limits of platforms.md ("Checked since → Feishu
 * card limits", §11 and §13), written apart from Butler's own code so that the fake checks Butler rather
 * than agreeing with it.
 *
 * - A request body that carries a card is at most 30 KB, counted on the serialized JSON, escapes included
 *   (read here as 30,000 bytes, the stricter reading). Messages answer 230025 "The length of the message
 *   content reaches its limit." (HTTP 400; the error table of `PATCH /open-apis/im/v1/messages/:message_id`,
 *   open.feishu.cn, which gives 30 KB for cards and rich text and 150 KB for text). CardKit answers 230099:
 *   the node SDK rolls a stream over because "Feishu rejects oversized elements with code 230099"
 *   (larksuite/node-sdk `channel/outbound/streaming/markdown-stream.ts`); one report shows 300305 "element
 *   exceeds the limit" for a content update instead (Cheerwhy/hermes-lark-streaming#21).
 * - At most 5 tables per card, markdown tables included: 230099 "Failed to create card content, ext=ErrCode:
 *   11310; ErrMsg: card table number over limit" (HTTP 400), on message sends and on CardKit alike
 *   (larksuite/openclaw-lark#53 and #46, HKUDS/nanobot#1382).
 */

export type Json = Record<string, unknown>;

export interface Refusal {
  status: number;
  body: Json;
}

export const cardBodyLimitBytes = 30_000;
export const textBodyLimitBytes = 150_000;
export const maxTablesPerCard = 5;
export const messageTooLongCode = 230025;
export const cardContentFailedCode = 230099;

const tablesRefused: Refusal = {
  status: 400,
  body: {
    code: cardContentFailedCode,
    msg: 'Failed to create card content, ext=ErrCode: 11310; ErrMsg: card table number over limit; ErrorValue: table; ',
  },
};

const fenceMarker = /^\s{0,3}(`{3,}|~{3,})/;
const delimiterCell = /^\s*:?-+:?\s*$/;

function cells(line: string): string[] {
  let row = line.trim().replace(/^(>\s*)+/, '');
  if (row.startsWith('|')) row = row.slice(1);
  if (row.endsWith('|') && !row.endsWith('\\|')) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/);
}

/** GFM tables (a row with pipes, then a delimiter row of as many cells) outside code blocks. */
export function markdownTableCount(markdown: string): number {
  const lines = markdown.split('\n');
  let count = 0;
  let fence: string | undefined;
  lines.forEach((line, index) => {
    const marker = fenceMarker.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker)
        fence = undefined;
      return;
    }
    if (marker) {
      fence = marker;
      return;
    }
    const next = lines[index + 1];
    if (next === undefined || !line.includes('|')) return;
    const header = cells(line);
    const delimiter = cells(next);
    if (delimiter.length === header.length && delimiter.every((cell) => delimiterCell.test(cell))) count += 1;
  });
  return count;
}

/**
 * Table components anywhere in a card, markdown tables included; `contents` replaces the content of elements
 * by element_id (a CardKit card after content updates).
 */
export function cardTableCount(card: unknown, contents?: ReadonlyMap<string, string>): number {
  if (Array.isArray(card)) return card.reduce((sum: number, item) => sum + cardTableCount(item, contents), 0);
  if (typeof card !== 'object' || card === null) return 0;
  const element = card as Json;
  if (element.tag === 'table') return 1;
  if (element.tag === 'markdown') {
    const replaced = typeof element.element_id === 'string' ? contents?.get(element.element_id) : undefined;
    return markdownTableCount(String(replaced ?? element.content ?? ''));
  }
  return Object.values(element).reduce((sum: number, value) => sum + cardTableCount(value, contents), 0);
}

/** Why Feishu would refuse to send or patch this message, if it would. */
export function refuseMessage(
  msgType: string,
  bytes: number,
  content: Json | undefined,
): Refusal | undefined {
  const limit = msgType === 'text' ? textBodyLimitBytes : cardBodyLimitBytes;
  if (bytes > limit) {
    return {
      status: 400,
      body: { code: messageTooLongCode, msg: 'The length of the message content reaches its limit.' },
    };
  }
  if (msgType === 'interactive' && cardTableCount(content) > maxTablesPerCard) return tablesRefused;
  return msgType === 'interactive' ? refuseCardShape(content) : undefined;
}

/** Why CardKit would refuse to create, update or set this card, if it would. */
export function refuseCardkit(
  bytes: number,
  card: Json | undefined,
  contents?: ReadonlyMap<string, string>,
): Refusal | undefined {
  if (bytes > cardBodyLimitBytes) {
    return {
      status: 400,
      body: { code: cardContentFailedCode, msg: 'ErrMsg: element exceeds the limit; ' },
    };
  }
  if (card && cardTableCount(card, contents) > maxTablesPerCard) return tablesRefused;
  return refuseCardShape(card);
}

/**
 * Card JSON 2.0 shape rules Butler's buttons must meet (platforms.md §12; open.feishu.cn card-json-v2 breaking
 * changes and the button component): an `element_id` is at most 20 characters, starts with a letter, holds
 * letters, digits and underscores, and is unique in the card; a button has a plain_text `text` and its
 * `behaviors` are `callback` (with an object `value`) or `open_url`. Feishu answers 200861 for a card it
 * cannot parse (the code is the fake's stand-in for its several "invalid card" codes).
 */
export const invalidCardCode = 200861;
const elementIdPattern = /^[A-Za-z][A-Za-z0-9_]{0,19}$/;

function* componentsOf(node: unknown): Generator<Json> {
  if (Array.isArray(node)) {
    for (const item of node) yield* componentsOf(item);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const record = node as Json;
  if (typeof record.tag === 'string') yield record;
  for (const value of Object.values(record)) yield* componentsOf(value);
}

function buttonProblem(button: Json): string | undefined {
  const text = button.text as Json | undefined;
  if (text?.tag !== 'plain_text' || typeof text.content !== 'string') return 'button text';
  const behaviors = button.behaviors;
  if (!Array.isArray(behaviors) || behaviors.length === 0) return 'button behaviors';
  for (const behavior of behaviors as Json[]) {
    if (behavior.type === 'callback') {
      if (typeof behavior.value !== 'object' || behavior.value === null) return 'callback value';
    } else if (behavior.type !== 'open_url' || typeof behavior.default_url !== 'string') {
      return 'behavior type';
    }
  }
  return undefined;
}

/** Why Feishu would refuse this card's components (element ids, buttons), if it would. */
export function refuseCardShape(card: Json | undefined): Refusal | undefined {
  if (!card) return undefined;
  const seen = new Set<string>();
  for (const component of componentsOf(card.body)) {
    const id = component.element_id;
    let problem: string | undefined;
    if (id !== undefined && (typeof id !== 'string' || !elementIdPattern.test(id))) problem = 'element_id';
    else if (typeof id === 'string' && seen.has(id)) problem = 'duplicate element_id';
    else if (component.tag === 'button') problem = buttonProblem(component);
    if (problem) return { status: 400, body: { code: invalidCardCode, msg: `invalid card: ${problem}` } };
    if (typeof id === 'string') seen.add(id);
  }
  return undefined;
}

/** The callback value of the button `elementId` in a card, if the card shows that button. */
export function buttonValue(card: Json | undefined, elementId: string): Json | undefined {
  for (const component of componentsOf(card?.body)) {
    if (component.tag !== 'button' || component.element_id !== elementId) continue;
    const behaviors = (component.behaviors ?? []) as Json[];
    return behaviors.find((behavior) => behavior.type === 'callback')?.value as Json | undefined;
  }
  return undefined;
}
