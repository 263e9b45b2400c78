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
