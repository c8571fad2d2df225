/**
 * The receiver of bench/webhooks.ts, in a process of its own: answers every POST 200 at once and
 * remembers, per request, its path (one per endpoint), `x-webhook-id`, the body's `created` and
 * when it arrived. The parent asks for what arrived (`report`) and clears it (`reset`) over IPC.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Arrival = [path: string, eventId: string, created: number, arrivedAt: number];
export type SinkMessage = { type: 'ready'; url: string } | { type: 'report'; arrivals: Arrival[] };
export type SinkCommand = { type: 'report' } | { type: 'reset' } | { type: 'stop' };

let arrivals: Arrival[] = [];
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const arrivedAt = Date.now();
    const body = Buffer.concat(chunks).toString('utf8');
    // `created` is near the start of Weir's body and of the bare sender's: no full parse needed.
    const created = Number(/"created":(\d+)/.exec(body)?.[1] ?? Number.NaN);
    arrivals.push([req.url ?? '', String(req.headers['x-webhook-id'] ?? ''), created, arrivedAt]);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.send?.({ type: 'ready', url: `http://127.0.0.1:${port}` } satisfies SinkMessage);
});
process.on('message', (message: SinkCommand) => {
  if (message.type === 'report') process.send?.({ type: 'report', arrivals } satisfies SinkMessage);
  else if (message.type === 'reset') arrivals = [];
  else {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
process.on('disconnect', () => process.exit(0));
