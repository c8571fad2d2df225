/**
 * Baseline for bench/http.ts: a bare Koa hello-world on a free loopback port, in its own process.
 * Same Node, same Koa and the same HTTP server settings as Weir, nothing else.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { serveParent } from './target-ipc.ts';

const app = new Koa();
app.use((ctx) => {
  ctx.body = 'Hello World';
});
const server = createServer(app.callback());
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  serveParent(`http://127.0.0.1:${port}`, () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }));
});
