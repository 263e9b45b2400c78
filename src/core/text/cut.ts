/** Shortening text for platforms' limits: never through a grapheme (an emoji, a flag, an accented letter). */

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
