// Test helper for the metrics tests: the sample lines of a Prometheus scrape as `name{labels}` -> value, comments
// and blank lines dropped.
export function parseSamples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    out.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return out;
}
