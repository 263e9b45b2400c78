import { graphemePrefix } from '../../core/text/index.js';
import { toCardMarkdown } from './markdown.js';
import { markdownTables } from './markdown-tables.js';

/**
 * How a long reply is laid out over several cards: where to cut, and how to render a slice so that a code
 * block cut in two still renders as code on both sides.
 */

const fenceLine = /^\s{0,3}(`{3,}|~{3,})(.*)$/;

/** The opening line of the code block still open at the end of `text`, if any. */
export function openFenceAt(text: string): string | undefined {
  let open: { marker: string; line: string } | undefined;
  for (const line of text.split('\n')) {
    const match = fenceLine.exec(line);
    if (!match) continue;
    const marker = match[1] ?? '';
    if (!open) {
      open = { marker, line: line.trim() };
    } else if (
      marker[0] === open.marker[0] &&
      marker.length >= open.marker.length &&
      (match[2] ?? '').trim() === ''
    ) {
      open = undefined;
    }
  }
  return open?.line;
}

/** Renders `text.slice(start, end)` as card markdown, reopening and closing code blocks cut by the slice. */
export function renderSlice(text: string, start: number, end: number): string {
  const reopened = openFenceAt(text.slice(0, start));
  let slice = text.slice(start, end);
  if (reopened) slice = `${reopened}\n${slice}`;
  const stillOpen = openFenceAt(slice);
  if (stillOpen) {
    const marker = fenceLine.exec(stillOpen)?.[1] ?? '```';
    slice = `${slice}${slice.endsWith('\n') ? '' : '\n'}${marker}`;
  }
  return toCardMarkdown(slice);
}

/** Where a table moving to the next card takes the heading or "…:" line before it along, if there is one. */
function introductionStart(text: string, start: number, tableStart: number): number {
  const before = text.slice(start, tableStart).replace(/\n+$/, '');
  const lineStart = before.lastIndexOf('\n') + 1;
  const introduces = /^\s{0,3}#|:\s*$/.test(before.slice(lineStart));
  return introduces && lineStart > 0 ? start + lineStart : tableStart;
}

/**
 * The offset at which to end a card that starts at `start`, so that its rendered content still `fits`: after
 * a paragraph if possible, else a line, else a word, else anywhere; never inside a table that begins later in
 * the card (the table moves to the next card whole). Always > start.
 */
export function chooseCut(text: string, start: number, fits: (rendered: string) => boolean): number {
  // Rendering grows with the slice (escapes, a reopened fence, one more table): search for the longest fit.
  let low = start + 1;
  let high = text.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (fits(renderSlice(text, start, middle))) low = middle;
    else high = middle - 1;
  }
  const end = low;
  const splitTable = markdownTables(text).find(
    (table) => table.start > start && table.start < end && end < table.end,
  );
  if (splitTable) return introductionStart(text, start, splitTable.start);
  if (end >= text.length) return end;
  const window = text.slice(start, end);
  const minimum = Math.floor(window.length / 2);
  const boundary = [
    window.lastIndexOf('\n\n') + 2,
    window.lastIndexOf('\n') + 1,
    window.lastIndexOf(' ') + 1,
  ].find((index) => index > minimum);
  if (boundary !== undefined) return start + boundary;
  // Anywhere, but never inside a grapheme (an emoji, a flag, a letter with its accents).
  const whole = graphemePrefix(text.slice(start), end - start).length;
  return whole > 0 ? start + whole : end;
}
