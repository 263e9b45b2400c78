import {
  type ApprovalCardCall,
  argumentsShown,
  characters,
  moreCharacters,
} from '../../core/approval-card.js';
import { graphemePrefix } from '../../core/text.js';
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
  const whole = fenced(text);
  if (whole.length <= limit) return { block: whole, shown: text.length };
  // Escaping only lengthens text, and a longer start never escapes shorter: search for the longest start.
  let low = 0;
  let high = Math.min(text.length, Math.max(0, limit - fences));
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (fenced(prefix(text, middle)).length <= limit) low = middle;
    else high = middle - 1;
  }
  const part = prefix(text, low);
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
