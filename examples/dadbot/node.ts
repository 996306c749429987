// One DadBot node for real processes: `node dist/examples/dadbot/node.js --port P --http-port H --seed ADDR...
// [--data-dir DIR] [--entity-store lmdb:DIR|postgres://...] [--host HOST] [--gateway]`. System `app`, host
// 127.0.0.1 unless --host says otherwise; a gateway routes chats and hosts no Dad. The Dads are durable: their
// memory goes to the entity store (default lmdb:.dadbot/entities, shared by the nodes started here). SIGINT or SIGTERM leaves the cluster gracefully. --quiet-ms and
// --think-ms shorten Dad's 2.5 s quiet period and 2 s of thinking (tests use them).
import { parseArgs } from 'node:util';
import { parseEntityStore, runNode } from '@actor-ts/placement';
import { DAD_ROLE, dadbot } from './app.js';
import { Timeline } from './timeline.js';

const USAGE =
  'usage: node dist/examples/dadbot/node.js --port P --http-port H [--seed ADDR]... [--data-dir DIR] ' +
  '[--entity-store lmdb:DIR|postgres://...] [--host HOST] [--gateway]';
/** Every node started in one directory shares it: a Dad survives a kill -9 of his host. */
const DEFAULT_STORE = 'lmdb:.dadbot/entities';

function port(name: string, value: string | undefined): number {
  const parsed = Number(value);
  if (value === undefined || !Number.isInteger(parsed) || parsed < 0 || parsed > 65_535)
    throw new Error(`--${name} must be a port (0..65535)\n${USAGE}`);
  return parsed;
}

function duration(name: string, value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`--${name} must be a positive integer (ms)\n${USAGE}`);
  return parsed;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      'http-port': { type: 'string' },
      seed: { type: 'string', multiple: true },
      'data-dir': { type: 'string' },
      'entity-store': { type: 'string' },
      host: { type: 'string' },
      gateway: { type: 'boolean' },
      'log-level': { type: 'string' },
      'quiet-ms': { type: 'string' },
      'think-ms': { type: 'string' },
    },
    allowPositionals: false,
  });
  const host = values.host ?? '127.0.0.1';
  const timeline = new Timeline((line) => process.stdout.write(`${line}\n`));
  const controller = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => controller.abort());
  const how = await runNode(
    {
      system: 'app',
      host,
      port: port('port', values.port),
      http: { host, port: port('http-port', values['http-port']) },
      seeds: values.seed ?? [],
      roles: values.gateway === true ? [] : [DAD_ROLE],
      logLevel: values['log-level'] ?? 'warn',
      ...(values['data-dir'] === undefined ? {} : { dataDir: values['data-dir'] }),
      // Where the Dads' memory is committed; by default one lmdb directory every node on this machine shares.
      entityStore: parseEntityStore(values['entity-store'] ?? DEFAULT_STORE),
      ...dadbot({
        onEvent: (event) => timeline.event(event),
        ...(values['quiet-ms'] === undefined ? {} : { quietMs: duration('quiet-ms', values['quiet-ms']) }),
        ...(values['think-ms'] === undefined ? {} : { thinkMs: duration('think-ms', values['think-ms']) }),
      }),
    },
    {
      signal: controller.signal,
      onStarted: (node) =>
        timeline.line(
          `${node.address.toString()} serving chats on ${node.httpUrl}${values.gateway === true ? ' (gateway: hosts no Dad)' : ''}`,
        ),
    },
  );
  timeline.line(`stopped (${how})`);
  return how === 'left' ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  },
);
