import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import Koa from 'koa';
import { rawConnection } from '../../test/support/raw-http.ts';
import type { ApiState } from './api-context.ts';
import { errorMiddleware, jsonBodyMiddleware } from './middleware.ts';

/** An app as Weir's edge reads bodies, recording the status each request ended with (the client may be gone by then). */
async function bodyApp(t: import('ava').ExecutionContext, limit: number) {
  const ended: { status: number; body: unknown }[] = [];
  const app = new Koa<ApiState>();
  app.silent = true;
  app.use(async (ctx, next) => {
    await next();
    ended.push({ status: ctx.status, body: ctx.body });
  });
  app.use(errorMiddleware());
  app.use(jsonBodyMiddleware(limit));
  app.use((ctx) => {
    ctx.body = { received: ctx.state.rawBody.length };
  });
  const server: Server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as AddressInfo).port, ended };
}

const until = async (done: () => boolean) => {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
};

test('a client that goes away mid-body ends as a 400 request_aborted, not a 500 logged as a server failure', async (t) => {
  const { port, ended } = await bodyApp(t, 1024);
  const connection = rawConnection(port);
  await connection.send(
    'POST /x HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"partial":',
  );
  connection.close();
  await until(() => ended.length === 1);
  t.is(ended[0]!.status, 400);
  t.like(ended[0]!.body, { statusCode: 400, code: 'request_aborted' });
});

test('a body within the limit is read whole, in any number of chunks', async (t) => {
  const { port, ended } = await bodyApp(t, 1024);
  const connection = rawConnection(port);
  t.teardown(connection.close);
  await connection.send(
    'POST /x HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
  );
  const body = JSON.stringify({ text: 'y'.repeat(1000) });
  for (let at = 0; at < body.length; at += 100) {
    const part = body.slice(at, at + 100);
    await connection.send(`${part.length.toString(16)}\r\n${part}\r\n`);
  }
  await connection.send('0\r\n\r\n');
  const answer = await connection.exchange((sofar) => sofar.body.endsWith('}'));
  t.is(answer.statusLine, 'HTTP/1.1 200 OK');
  t.deepEqual(JSON.parse(answer.body), { received: body.length });
  t.is(ended[0]!.status, 200);
  t.false(answer.closedByServer, 'an accepted body keeps the connection');
});
