/**
 * Where the tables of a markdown text are: the card markdown renders each GFM table (a row with pipes, then a
 * delimiter row of as many cells) as a table component, and a card holds only a few of them.
 */

export interface TableSpan {
  /** Offset of the header row's first character. */
  start: number;
  /** Offset just past the last row (its newline included). */
  end: number;
}

const fenceLine = /^\s{0,3}(`{3,}|~{3,})(.*)$/;
const delimiterCell = /^\s*:?-+:?\s*$/;
const blockStart = /^\s{0,3}(#|>|`{3,}|~{3,})/;

/** A row's cells: outer pipes (and quote markers) dropped, split on pipes that are not escaped. */
function cells(line: string): string[] {
  let row = line.trim().replace(/^(>\s*)+/, '');
  if (row.startsWith('|')) row = row.slice(1);
  if (row.endsWith('|') && !row.endsWith('\\|')) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/);
}

function startsTable(header: string, next: string | undefined): boolean {
  if (next === undefined || !header.includes('|')) return false;
  const delimiter = cells(next);
  return delimiter.length === cells(header).length && delimiter.every((cell) => delimiterCell.test(cell));
}

/** Rows go on until a blank line or the start of another block, as in GFM. */
function continuesTable(line: string | undefined): boolean {
  return line !== undefined && line.trim() !== '' && !blockStart.test(line);
}

/** The tables of `markdown` outside code blocks, in order. */
export function markdownTables(markdown: string): TableSpan[] {
  const lines = markdown.split('\n');
  const offsets: number[] = [];
  let offset = 0;
  for (const line of lines) {
    offsets.push(offset);
    offset += line.length + 1;
  }
  const spans: TableSpan[] = [];
  let fence: string | undefined;
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index] as string;
    const match = fenceLine.exec(line);
    if (fence !== undefined) {
      const marker = match?.[1];
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && !match?.[2]?.trim())
        fence = undefined;
      continue;
    }
    if (match) {
      fence = match[1];
      continue;
    }
    if (!startsTable(line, lines[index + 1])) continue;
    let last = index + 1;
    while (continuesTable(lines[last + 1])) last += 1;
    const end = (offsets[last] as number) + (lines[last] as string).length + 1;
    spans.push({ start: offsets[index] as number, end: Math.min(end, markdown.length) });
    index = last;
  }
  return spans;
}

export function tableCount(markdown: string): number {
  return markdownTables(markdown).length;
}
