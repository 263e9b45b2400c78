/** Text as people read it: names joined in words, invisible controls shown, Markdown as a plain line. */

/** "ops", "ops and docs", "ops, docs and triage". */
export function joinNames(names: readonly string[]): string {
  if (names.length <= 1) return names[0] ?? '';
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
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
 * A file's name or title as people will see it: one line of at most `maxLength` characters, without control or
 * invisible formatting characters (`invoice-\u202efdp.exe` would show as "invoice-exe.pdf"), never empty.
 */
export function displayName(name: string, maxLength = 200): string {
  const line = name
    .replace(/[\p{Cc}\p{Zl}\p{Zp}]/gu, ' ')
    .replace(/\p{Cf}/gu, '')
    .replace(invisibleControls, '')
    .replace(/\s+/g, ' ')
    .trim();
  return [...line].slice(0, maxLength).join('').trim() || 'file';
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
