/** Renders rows as an aligned plain-text table, cutting long cells. */
export function table(headers: string[], rows: string[][], maxCell = 60): string {
  const cut = (text: string) => {
    const flat = text.replace(/\s+/g, ' ').trim();
    return flat.length > maxCell ? `${flat.slice(0, maxCell - 1)}…` : flat;
  };
  const cells = [headers, ...rows.map((row) => row.map(cut))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  const line = (row: string[]) =>
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return [
    line(cells[0] as string[]),
    widths.map((w) => '─'.repeat(w)).join('  '),
    ...cells.slice(1).map(line),
  ].join('\n');
}
