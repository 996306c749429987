// A probe of a peer's address: a bare TCP connect, closed at once, that tells a peer whose process is gone
// (its host refuses the connection: nothing listens on the port) from one that is only silent (paused, busy,
// starved of CPU or cut off: the kernel still accepts, or nothing answers at all). Only a refusal is evidence
// of death; the failure detector's silence is not. See docs/design.md, "Confirmed deaths".
import { connect } from 'node:net';
import type { NodeAddress } from '../address.js';
import type { ProbeResult } from './transport.js';

/** How long a probe waits for the connect to open or be refused before it answers `unknown`. */
export const PROBE_TIMEOUT_MS = 1_000;

export function probeAddress(peer: NodeAddress, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeResult> {
  const host = peer.host.startsWith('[') ? peer.host.slice(1, -1) : peer.host;
  return new Promise<ProbeResult>((resolve) => {
    const socket = connect({ host, port: peer.port });
    let done = false;
    const finish = (result: ProbeResult): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish('unknown'), timeoutMs);
    timer.unref?.();
    socket.once('connect', () => finish('accepting'));
    socket.once('error', (error: NodeJS.ErrnoException) =>
      finish(error.code === 'ECONNREFUSED' ? 'refused' : 'unknown'),
    );
  });
}
