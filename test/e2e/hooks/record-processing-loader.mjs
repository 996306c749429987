// Module loader of record-processing.mjs: rewrites the compiled demo Counter (dist/src/node/counter.js) as it
// loads, so the HTTP route passes the request's x-e2e-tag header inside the reliable increment and the entity
// reports every increment it applies. A rewrite that no longer matches the source fails the node's start
// loudly rather than letting a test count nothing.
const REWRITES = [
  ["ref.send({ op: 'increment' }", "ref.send({ op: 'increment', tag: request.headers['x-e2e-tag'] }"],
  ['value += by;', 'value += by; globalThis.__e2eProcessed?.(ctx.entityId, command.tag, value);'],
];

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  if (!url.endsWith('/dist/src/node/counter.js')) return result;
  let source = String(result.source);
  for (const [from, to] of REWRITES) {
    if (source.split(from).length !== 2) throw new Error(`record-processing: "${from}" not found once in ${url}`);
    source = source.replace(from, to);
  }
  return { ...result, source };
}
