/**
 * Baselines for bench/http.ts: a bare Koa app on a free loopback port, in its own process, with
 * the same Node, Koa and HTTP server settings as Weir and nothing else. It answers every request
 * with `Hello World`, or, when BENCH_JSON_BODY holds a JSON document, with that document as a
 * JSON body (serialized per response, as Koa does for Weir), to separate the cost of the payload
 * from the cost of Weir's own work.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { serveParent } from './target-ipc.ts';

const json = process.env.BENCH_JSON_BODY;
const document: unknown = json ? JSON.parse(json) : null;
const app = new Koa();
app.use((ctx) => {
  ctx.body = document ?? 'Hello World';
});
const server = createServer(app.callback());
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  serveParent(
    `http://127.0.0.1:${port}`,
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
});
