/**
 * The one rule for text entering Butler (platform messages, names, thread context, model output, tool
 * results) and for everything it stores as JSON: C0 control characters other than tab and newline are
 * removed, and unpaired UTF-16 surrogates become U+FFFD. Postgres rejects NUL in `text` and `jsonb`, and
 * unpaired surrogate escapes in `jsonb`; platforms and models produce both now and then (bots posting
 * binary, clients cutting an emoji in half, a model echoing a file).
 */

// Tab (0x09) and newline (0x0a) are kept; carriage returns go, so CRLF becomes LF.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const controlCharacters = /[\u0000-\u0008\u000b-\u001f]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const needsCleaning = /[\u0000-\u0008\u000b-\u001f\ud800-\udfff]/;

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Replaces each unpaired surrogate with U+FFFD (what `String.prototype.toWellFormed` does, ES2024). */
function wellFormed(text: string): string {
  let result = '';
  let copiedUpTo = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (isHighSurrogate(code) && isLowSurrogate(text.charCodeAt(index + 1))) {
      index++;
      continue;
    }
    if (isHighSurrogate(code) || isLowSurrogate(code)) {
      result += `${text.slice(copiedUpTo, index)}\ufffd`;
      copiedUpTo = index + 1;
    }
  }
  return copiedUpTo === 0 ? text : result + text.slice(copiedUpTo);
}

/** Text as Butler keeps it. Returns the same string when there is nothing to clean (the common case). */
export function cleanText(text: string): string {
  if (!needsCleaning.test(text)) return text;
  return wellFormed(text.replace(controlCharacters, ''));
}

/**
 * A JSON-like value with every string (keys included) cleaned. Returns the same value when nothing needed
 * cleaning, so clean payloads are not copied. Non-plain objects (dates) are kept as they are.
 */
export function cleanJson<T>(value: T): T {
  return cleanValue(value) as T;
}

function cleanValue(value: unknown): unknown {
  if (typeof value === 'string') return cleanText(value);
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, index) => {
      const cleaned = cleanValue(item);
      if (cleaned !== item) {
        copy ??= [...value];
        copy[index] = cleaned;
      }
    });
    return copy ?? value;
  }
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) {
    return value;
  }
  let copy: Record<string, unknown> | undefined;
  const entries = Object.entries(value);
  for (const [key, item] of entries) {
    const cleanedKey = cleanText(key);
    const cleaned = cleanValue(item);
    if (cleanedKey !== key || cleaned !== item) {
      copy ??= {};
      break;
    }
  }
  if (!copy) return value;
  for (const [key, item] of entries) copy[cleanText(key)] = cleanValue(item);
  return copy;
}

/**
 * Cleans text that arrives in pieces (a model's streamed deltas). A high surrogate at the end of a piece
 * is held back until the next one, so an emoji split between two deltas survives whole.
 */
export class StreamingTextCleaner {
  private held = '';

  push(piece: string): string {
    // Controls go first, so that a surrogate pair with a control character between its halves pairs up
    // exactly as it does when the whole text is cleaned at once.
    const text = (this.held + piece).replace(controlCharacters, '');
    this.held = '';
    if (isHighSurrogate(text.charCodeAt(text.length - 1))) {
      this.held = text.slice(-1);
      return wellFormed(text.slice(0, -1));
    }
    return wellFormed(text);
  }

  /** What is still held back, cleaned (a high surrogate that never got its partner becomes U+FFFD). */
  flush(): string {
    const rest = this.held;
    this.held = '';
    return cleanText(rest);
  }
}

/** "ops", "ops and docs", "ops, docs and triage". */
export function joinNames(names: readonly string[]): string {
  if (names.length <= 1) return names[0] ?? '';
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * The longest prefix of `text` of at most `limit` UTF-16 units that ends between two graphemes: an emoji,
 * a flag or a letter with its accents is never cut in half. Whether there is a boundary before a character
 * depends only on it and what comes before, so only the first `limit` units and the whole character after
 * them (two units when it is a surrogate pair) are segmented.
 */
export function graphemePrefix(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let cut = 0;
  for (const { index } of graphemes.segment(text.slice(0, limit + 2))) {
    if (index > limit) break;
    cut = index;
  }
  return text.slice(0, cut);
}

/** `text` in at most `limit` UTF-16 units, ending with "…" when it was cut (on a grapheme boundary). */
export function truncateText(text: string, limit: number): string {
  if (text.length <= limit) return text;
  return `${graphemePrefix(text, Math.max(0, limit - 1))}…`;
}

/**
 * Characters that change how text around them reads without showing themselves: bidirectional overrides
 * and isolates (which can make `rm -rf /` display as something else) and zero-width characters.
 */
const invisibleControls =
  /[\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\u3164\ufeff]/g;

/** Shows invisible formatting characters as `<U+202E>`, where a person must see exactly what is there. */
export function visibleControls(text: string): string {
  return text.replace(
    invisibleControls,
    (character) => `<U+${character.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}>`,
  );
}

/**
 * Markdown as the plain line a chat list or a notification shows: markers, fences, link targets and table
 * pipes removed, whitespace collapsed. Not a renderer: just never raw `**`, backticks or half a link.
 */
export function markdownToPlainText(markdown: string): string {
  return markdown
    .replace(/^\s*```.*$/gm, ' ')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/^\s{0,3}(#{1,6}|>|[-*+]|\d+[.)])\s+/gm, '')
    .replace(/^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/gm, ' ')
    .replace(/\*\*(?=\S)(.+?)\*\*/g, '$1')
    .replace(/(^|\W)__(?=\S)(.+?)__(?!\w)/g, '$1$2')
    .replace(/~~(?=\S)(.+?)~~/g, '$1')
    .replace(/`([^`\n]+)`/g, '$1')
    .replace(/(^|\s)[*_](\S(?:.*?\S)?)[*_](?=\s|$|[.,;:!?])/g, '$1$2')
    .replace(/^[ \t]*\||\|[ \t]*$/gm, '')
    .replace(/[ \t]*\|[ \t]*/g, ' · ')
    .replace(/\s+/g, ' ')
    .trim();
}
