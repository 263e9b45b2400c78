import {
  type ApprovalCardCall,
  argumentsShown,
  characters,
  moreCharacters,
} from '../../core/contracts/approval-card.js';
import { graphemePrefix } from '../../core/text/index.js';
import { escapeMrkdwn } from './mrkdwn.js';

/**
 * Arguments as mrkdwn code blocks: as much as fits, then how many characters were left out, counted on the
 * stored arguments (not on their escaped form), so a card can say "… 12,345 more characters" exactly.
 */

const fences = '```\n\n```'.length;

/** Below this, a code block would show only "{…": the arguments are left out instead. */
const shortestCode = 16;

/** Text inside a code block: escaped for mrkdwn, with backtick runs that would close the block made inert. */
function codeBody(text: string): string {
  // A zero-width space keeps the backticks visible but unable to end the block.
  return escapeMrkdwn(text).replace(/```/g, '`\u200b``');
}

const fenced = (text: string) => `\`\`\`\n${codeBody(text)}\n\`\`\``;

/** The start of `text` of at most `limit` units, never ending inside a surrogate pair. */
export function codePointPrefix(text: string, limit: number): string {
  const part = text.slice(0, limit);
  const last = part.charCodeAt(part.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? part.slice(0, -1) : part;
}

const isAscii = (code: number) => code < 0x7f;

/**
 * Whether two ASCII characters meet at `index` (CR LF aside): always a grapheme boundary, so the modal's
 * many cuts through long JSON skip the grapheme segmenter.
 */
function asciiBoundary(text: string, index: number): boolean {
  const before = text.charCodeAt(index - 1);
  const after = text.charCodeAt(index);
  return isAscii(before) && isAscii(after) && !(before === 0x0d && after === 0x0a);
}

/**
 * How many characters of `text` (from its start) escape to at most `room` characters of code: `&` takes 5,
 * `<` and `>` take 4, and every third backtick of a run takes one more (the zero-width space of `codeBody`).
 */
function fittingLength(text: string, room: number): number {
  let length = 0;
  let backticks = 0;
  let count = 0;
  for (; count < text.length; count++) {
    const code = text.charCodeAt(count);
    let added = code === 0x26 ? 5 : code === 0x3c || code === 0x3e ? 4 : 1;
    backticks = code === 0x60 ? backticks + 1 : 0;
    if (backticks > 0 && backticks % 3 === 0) added += 1;
    if (length + added > room) break;
    length += added;
  }
  return count;
}

/**
 * The longest start of `text` whose code block is at most `limit` characters: the block and how many
 * characters of `text` it shows. Undefined when not even a short start fits. `prefix` cuts the text (whole
 * graphemes by default; a single grapheme can be longer than a section).
 */
export function fittingCodeBlock(
  text: string,
  limit: number,
  prefix: (text: string, limit: number) => string = graphemePrefix,
): { block: string; shown: number } | undefined {
  const count = fittingLength(text, limit - fences);
  const part =
    count === text.length ? text : asciiBoundary(text, count) ? text.slice(0, count) : prefix(text, count);
  if (part.length < Math.min(shortestCode, text.length)) return undefined;
  return { block: fenced(part), shown: part.length };
}

/** "_… 12,345 more characters: Show all arguments has them all_" */
function cutNote(more: number): string {
  return `_… ${moreCharacters(more)}: Show all arguments has them all_`;
}

function leftOutNote(length: number): string {
  return `_Arguments not shown (${characters(length)}): Show all arguments has them_`;
}

/**
 * A call's arguments as a code block of at most `limit` characters, after `lead` (a first line in the same
 * block, such as the summary), and a note saying how much of them was left out; `cut` says whether any was.
 */
export function argumentsCode(
  call: ApprovalCardCall,
  limit: number,
  lead?: string,
): { text: string; cut: boolean } | undefined {
  const { text: shown, more: coreMore } = argumentsShown(call);
  const content = lead === undefined ? shown : `${lead}\n${shown}`;
  const leadLength = lead === undefined ? 0 : lead.length + 1;
  if (coreMore === 0) {
    const whole = fenced(content);
    if (whole.length <= limit) return { text: whole, cut: false };
  }
  // Room for the note at its longest: the count is never more than the whole length.
  const noteRoom = cutNote(call.argumentsLength).length + 1;
  const fit = fittingCodeBlock(content, limit - noteRoom);
  if (!fit) {
    const note = leftOutNote(call.argumentsLength);
    return note.length <= limit ? { text: note, cut: true } : undefined;
  }
  const more = call.argumentsLength - Math.max(0, fit.shown - leadLength);
  return { text: `${fit.block}\n${cutNote(more)}`, cut: true };
}
