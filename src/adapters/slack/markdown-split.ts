/** Where to cut streamed Markdown when a reply rolls over into a new Slack message. Pure functions. */

/**
 * Length of the longest prefix of `text` (at most `limit` characters) that ends at a natural break:
 * a paragraph, a line, a sentence, a word; a hard cut only when there is none in the second half.
 */
export function splitPoint(text: string, limit: number): number {
  if (text.length <= limit) return text.length;
  const window = text.slice(0, limit);
  for (const separator of ['\n\n', '\n', '. ', ' ']) {
    const at = window.lastIndexOf(separator);
    if (at >= limit / 2) return at + separator.length;
  }
  // Never split a surrogate pair.
  const code = text.charCodeAt(limit - 1);
  return code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit;
}

/** The opening line of a code fence left open at the end of `text` (```` ```ts ````), if any. */
export function openFence(text: string): string | undefined {
  let open: string | undefined;
  for (const line of text.split('\n')) {
    const fence = /^\s*(```.*)$/.exec(line);
    if (fence?.[1]) open = open === undefined ? fence[1].trim() : undefined;
  }
  return open;
}
