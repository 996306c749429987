// Plain-text and Markdown renderings of one result table, so the console and the README show the same rows.

export interface Table {
  readonly title: string;
  readonly headers: readonly string[];
  readonly rows: ReadonlyArray<readonly string[]>;
  /** Shown under the table: units, what is simulated and what is wall-clock. */
  readonly note?: string;
}

export function renderText(table: Table): string {
  const widths = table.headers.map((header, i) =>
    Math.max(header.length, ...table.rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: readonly string[]): string =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ');
  const out = [`== ${table.title}`, line(table.headers), widths.map((w) => '-'.repeat(w)).join('  ')];
  for (const row of table.rows) out.push(line(row));
  if (table.note) out.push(table.note);
  return out.join('\n');
}

export function renderMarkdown(table: Table): string {
  const escape = (cell: string): string => cell.replace(/\|/g, '\\|');
  const out = [
    `#### ${table.title}`,
    '',
    `| ${table.headers.map(escape).join(' | ')} |`,
    `|${table.headers.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`,
    ...table.rows.map((row) => `| ${row.map(escape).join(' | ')} |`),
  ];
  if (table.note) out.push('', table.note);
  return out.join('\n');
}
