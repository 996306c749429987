// Plain-text tables for the operator commands: fixed-width columns, no colours, safe to pipe.

export function table(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

/** Compresses a sorted list of shard ids into ranges: [1,2,3,7] -> "1-3,7". */
export function shardRanges(shards: readonly number[], marked: ReadonlySet<number> = new Set()): string {
  const sorted = [...shards].sort((a, b) => a - b);
  const parts: string[] = [];
  let start: number | undefined;
  let previous: number | undefined;
  const flush = () => {
    if (start === undefined || previous === undefined) return;
    parts.push(start === previous ? String(start) : `${start}-${previous}`);
  };
  for (const shard of sorted) {
    if (marked.has(shard)) {
      flush();
      start = previous = undefined;
      parts.push(`${shard}*`);
      continue;
    }
    if (previous !== undefined && shard === previous + 1) {
      previous = shard;
      continue;
    }
    flush();
    start = previous = shard;
  }
  flush();
  return parts.join(',');
}
