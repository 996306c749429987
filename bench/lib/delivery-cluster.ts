// The parent side of S10's node processes (lib/delivery-node.ts): forks them, calls their operations over IPC
// (typed by DeliveryOps) and kills them whatever happens, so each node of the run is its own OS process and
// every remote message crosses TCP between processes.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { DeliveryOps } from './delivery-node.js';

const NODE_ENTRY = fileURLToPath(new URL('./delivery-node.js', import.meta.url));

type Reply = { readonly id: number; readonly result?: unknown; readonly error?: string };

/** One forked node: `call` runs an operation there and resolves with its result. */
export class DeliveryNode {
  private nextId = 0;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  readonly child: ChildProcess;
  address = '';

  constructor() {
    this.child = fork(NODE_ENTRY, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (reply: Reply) => {
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (reply.error !== undefined) waiting?.reject(new Error(`S10 node: ${reply.error}`));
      else waiting?.resolve(reply.result);
    });
    this.child.once('exit', (code, signal) => {
      for (const waiting of this.pending.values()) waiting.reject(new Error(`S10 node exited (${code ?? signal})`));
      this.pending.clear();
    });
  }

  get port(): number {
    return Number(this.address.slice(this.address.lastIndexOf(':') + 1));
  }

  call<K extends keyof DeliveryOps>(op: K, ...args: Parameters<DeliveryOps[K]>): Promise<ReturnType<DeliveryOps[K]>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.child.send({ id, op, args });
    });
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

/** `count` node processes that know each other, every type's regions registered at the coordinator. */
export async function startDeliveryNodes(
  count: number,
  tlsOf?: (i: number) => Parameters<DeliveryOps['start']>[0],
  store?: Parameters<DeliveryOps['join']>[1],
): Promise<DeliveryNode[]> {
  const nodes = Array.from({ length: count }, () => new DeliveryNode());
  try {
    for (const [i, node] of nodes.entries()) node.address = await node.call('start', tlsOf?.(i));
    await Promise.all(
      nodes.map((node) =>
        node.call(
          'join',
          nodes.map((n) => n.address),
          store,
        ),
      ),
    );
    // Every region registered first, or the first shards would all go to the only region known.
    const deadline = performance.now() + 30_000;
    while (!(await Promise.all(nodes.map((n) => n.call('regions')))).some((regions) => regions === count)) {
      if (performance.now() > deadline) throw new Error('S10: regions not registered within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return nodes;
  } catch (error) {
    for (const node of nodes) node.kill();
    throw error;
  }
}
