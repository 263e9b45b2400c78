import type { ReplyTarget } from '../../core/contracts/adapter.js';
import {
  type ApprovalCardCall,
  type ApprovalDetails,
  characters,
  moreCharacters,
} from '../../core/contracts/approval-card.js';
import { graphemePrefix, truncateText } from '../../core/text/index.js';
import { codeMarkdown, escapeMarkdown, outcomeMarkdown, toolMarkdown } from './approval-markdown.js';
import { cardBodyBudgetBytes, cardBodyBytes } from './card-limits.js';
import { destinationFor } from './destination.js';
import type { FeishuApi } from './feishu-api-types.js';
import type { JsonRecord } from './fields.js';

/**
 * "Show all arguments" on Feishu: every call of a request with its arguments whole, in cards posted below the
 * approval card. Cards rather than text messages: the arguments keep their code block (a text message shows
 * JSON in a proportional font and would turn an `<at user_id="all">` in them into a real mention), and the
 * same body budget as every other card keeps each one within Feishu's 30 KB (card-limits.ts).
 */

/** Cards one click may post: about 200 KB of arguments; the rest is counted and left to the console. */
export const maxArgumentsCards = 10;

/** A chunk shorter than this starts a new card rather than ending a full one with a few characters. */
const shortestChunk = 200;

/** Room kept in the last card for saying what did not fit. */
const leftOutRoomBytes = 1_000;

function plainText(content: string): JsonRecord {
  return { tag: 'plain_text', content };
}

function card(title: string, elements: JsonRecord[]): JsonRecord {
  return {
    schema: '2.0',
    config: { summary: { content: title } },
    header: {
      title: plainText(title),
      subtitle: plainText('As stored with the request: what runs if it is approved'),
      template: 'grey',
    },
    body: { elements },
  };
}

/** Measured with the longest title a card of this click can get. */
const widestTitle = `Arguments (${maxArgumentsCards} of ${maxArgumentsCards})`;

/** Longest summary a call's heading shows: the approval card has the rest. */
const summaryLimit = 200;

function heading(call: ApprovalCardCall, number: number): string {
  const status = outcomeMarkdown(call) ?? 'Waiting for a decision';
  const summary = escapeMarkdown(truncateText(call.summary.replace(/\s+/g, ' '), summaryLimit));
  return `**${number}.** ${toolMarkdown(call)} · ${call.risk} risk · ${status}\n${summary}`;
}

function chunkMarkdown(lead: string, text: string): JsonRecord {
  return { tag: 'markdown', content: `${lead}\n${codeMarkdown(text)}` };
}

/** What did not fit: the rest of the call cut short (`from` characters in) and every later call. */
function leftOutMarkdown(details: ApprovalDetails, index: number, from: number): string {
  const calls = details.calls.slice(index);
  const [first, ...rest] = calls;
  if (!first) return '';
  const parts: string[] = [];
  if (from > 0) parts.push(`${moreCharacters(first.argumentsLength - from)} of call ${index + 1}`);
  const whole = from > 0 ? rest : calls;
  if (whole.length > 0) {
    const start = index + 1 + (from > 0 ? 1 : 0);
    const total = whole.reduce((sum, call) => sum + call.argumentsLength, 0);
    const which = whole.length === 1 ? `call ${start}` : `calls ${start}–${index + calls.length}`;
    parts.push(`${which} (${characters(total)})`);
  }
  const where = details.link
    ? `Read them whole in the [admin console](${details.link}).`
    : "An admin can read them whole in Butler's admin console (Approvals).";
  return `**Not sent here:** ${parts.join(' and ')}. ${where}`;
}

/**
 * The cards that carry `details`, in order: each call's heading, then its arguments in as few code blocks as
 * the body budget allows, a long call continuing in the next card. At most `maxArgumentsCards`.
 */
export function renderArgumentsCards(details: ApprovalDetails): JsonRecord[] {
  const pages: JsonRecord[][] = [[]];
  const fits = (elements: JsonRecord[], reserve: number) =>
    cardBodyBytes(card(widestTitle, elements)) + reserve <= cardBodyBudgetBytes;
  // The last card keeps room to say what did not fit.
  const reserveNow = () => (pages.length === maxArgumentsCards ? leftOutRoomBytes : 0);
  let leftOut: string | undefined;

  details.calls.forEach((call, index) => {
    if (leftOut !== undefined) return;
    const text = call.argumentsJson;
    let from = 0;
    let lead = heading(call, index + 1);
    while (leftOut === undefined) {
      const page = pages[pages.length - 1] ?? [];
      const rest = text.slice(from);
      const take = longestFitting(rest, (part) => fits([...page, chunkMarkdown(lead, part)], reserveNow()));
      const whole = take === rest.length;
      if (take >= Math.min(shortestChunk, rest.length) || (page.length === 0 && take > 0)) {
        page.push(chunkMarkdown(lead, rest.slice(0, take)));
        from += take;
        lead = `*(call ${index + 1}, continued)*`;
        if (whole) return;
      }
      if (pages.length === maxArgumentsCards) leftOut = leftOutMarkdown(details, index, from);
      else pages.push([]);
    }
  });
  const last = pages[pages.length - 1];
  if (leftOut !== undefined && last) last.push({ tag: 'markdown', content: leftOut });
  const used = pages.filter((page) => page.length > 0);
  return used.map((elements, index) =>
    card(used.length === 1 ? 'Arguments' : `Arguments (${index + 1} of ${used.length})`, elements),
  );
}

/**
 * The longest start of `text` (whole graphemes) that `fits`: how long it is. Longer starts never fit where a
 * shorter one does not, so the search halves.
 */
function longestFitting(text: string, fits: (part: string) => boolean): number {
  // A character takes at least a byte of the body: no start longer than the budget fits.
  let high = Math.min(text.length, cardBodyBudgetBytes);
  if (high === text.length && fits(text)) return text.length;
  let low = 0;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (fits(text.slice(0, middle))) low = middle;
    else high = middle - 1;
  }
  return graphemePrefix(text, low).length;
}

/**
 * Posts the cards below the approval card `cardMessageId`, where the conversation goes on (in its thread, or
 * in the chat), one after the other; returns how many were sent.
 */
export async function sendArgumentsCards(
  api: FeishuApi,
  details: ApprovalDetails,
  cardMessageId: string,
): Promise<number> {
  const target: ReplyTarget = {
    address: details.address,
    userId: '',
    ...(cardMessageId ? { replyTo: cardMessageId } : {}),
  };
  const cards = renderArgumentsCards(details);
  for (const content of cards)
    await api.sendMessage(destinationFor(target), { msgType: 'interactive', content });
  return cards.length;
}
