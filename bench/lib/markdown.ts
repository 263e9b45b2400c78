/** Markdown tables for bench/results. */

export function table(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const escapeText = (cell: string) => cell.replaceAll('|', '\\|').replaceAll('\n', ' ');
  const lines = [
    `| ${headers.map(escapeText).join(' | ')} |`,
    `| ${headers.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.map(escapeText).join(' | ')} |`),
  ];
  return lines.join('\n');
}

export function bullets(lines: readonly string[]): string {
  return lines.map((line) => `- ${line}`).join('\n');
}
