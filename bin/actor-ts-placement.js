#!/usr/bin/env node
// Entry point of the `actor-ts-placement` CLI; the TypeScript sources are compiled to dist/ by `npm ci`.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('actor-ts-placement: dist/ is missing; run `npm run build` (npm ci does it for you)\n');
  process.exit(1);
}
const { main } = await import(entry.href);
process.exit(await main(process.argv));
