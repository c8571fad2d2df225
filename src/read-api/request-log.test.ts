import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import Koa from 'koa';
import { createLineLogger } from '../shared/logger.ts';
import type { ApiState } from './api-context.ts';
import { errorMiddleware, requestLogMiddleware } from './middleware.ts';

type Line = Record<string, unknown>;

/** Weir's edge: the request log, the error middleware, then a route that fails unexpectedly on /boom. */
async function loggedApp(t: import('ava').ExecutionContext) {
  const lines: Line[] = [];
  const logger = createLineLogger((line) => lines.push(JSON.parse(line) as Line));
  const app = new Koa<ApiState>();
  app.silent = true;
  app.use(requestLogMiddleware(logger));
  app.use(errorMiddleware(logger));
  app.use((ctx) => {
    if (ctx.path === '/boom') throw new Error('the store fell over');
    ctx.body = { ok: true };
  });
  const server: Server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, lines };
}

test('one line per request without its query string; a sane X-Request-Id is kept and echoed, anything else replaced', async (t) => {
  const { url, lines } = await loggedApp(t);
  const kept = await fetch(`${url}/api/v1/things?token=abc123secret`, {
    headers: { 'x-request-id': 'req_01J9-abc.def:1', authorization: 'Bearer sk_test_abcdef' },
  });
  t.is(kept.headers.get('x-request-id'), 'req_01J9-abc.def:1');
  for (const odd of ['has space', 'x'.repeat(129), 'quote"inside', 'semi;colon']) {
    const answer = await fetch(`${url}/ok`, { headers: { 'x-request-id': odd } });
    t.regex(answer.headers.get('x-request-id') ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-/, odd);
  }
  const none = await fetch(`${url}/ok`);
  t.regex(none.headers.get('x-request-id') ?? '', /^[0-9a-f]{8}-/);
  t.like(lines[0], {
    component: 'http',
    event: 'http.request',
    requestId: 'req_01J9-abc.def:1',
    method: 'GET',
    path: '/api/v1/things',
    status: 200,
  });
  t.is(typeof lines[0]!.ms, 'number');
  t.is(lines.length, 6);
  const text = JSON.stringify(lines);
  t.false(text.includes('abc123secret'));
  t.false(text.includes('sk_test_'));
});

test('an unexpected error is logged once at error level with the id of its request, answered 500 with that id', async (t) => {
  const { url, lines } = await loggedApp(t);
  const answer = await fetch(`${url}/boom?q=1`, { headers: { 'x-request-id': 'failing-request-1' } });
  t.is(answer.status, 500);
  t.is(answer.headers.get('x-request-id'), 'failing-request-1');
  const error = lines.find((line) => line.event === 'http.error');
  t.like(error, { level: 50, requestId: 'failing-request-1', method: 'GET', path: '/boom' });
  t.is((error?.err as { message?: string } | undefined)?.message, 'the store fell over');
  t.like(
    lines.find((line) => line.event === 'http.request'),
    { requestId: 'failing-request-1', status: 500 },
  );
});
