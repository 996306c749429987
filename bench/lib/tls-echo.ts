// The far end of scenario 14 (TLS cost): a TcpTransport in a process of its own, with mutual TLS when BENCH_TLS_CERT,
// BENCH_TLS_KEY and BENCH_TLS_CA name certificate files, plain TCP otherwise. It prints its address, counts the
// PlacementUpdate messages it receives, and answers every Heartbeat with a HeartbeatAck whose sequence is the count
// since the last one: the sender's "how many arrived?".
import { TcpTransport } from '../../src/cluster/transport/tcp-transport.js';
import { MESSAGE_FAMILIES } from '../../src/protocol.js';
import { loadTlsMaterial } from '../../src/tls/tls-files.js';

const { BENCH_TLS_CERT: cert, BENCH_TLS_KEY: key, BENCH_TLS_CA: ca } = process.env;
const material = cert && key && ca ? loadTlsMaterial({ cert, key, ca }) : undefined;
const transport = await TcpTransport.start({
  system: 'bench',
  ...(material === undefined ? {} : { tls: { current: () => material } }),
});
for (const family of MESSAGE_FAMILIES) transport.register(family);
let count = 0;
transport.onMessage((from, message) => {
  if (message.type === 'PlacementUpdate') count++;
  else if (message.type === 'Heartbeat') {
    transport.send(from, { type: 'HeartbeatAck', sequence: count, incarnation: transport.incarnation });
    count = 0;
  }
});
console.log(transport.self.toString());
process.on('SIGTERM', () => void transport.close().then(() => process.exit(0)));
