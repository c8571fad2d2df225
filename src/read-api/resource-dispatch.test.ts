import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import test from 'ava';
import Koa from 'koa';
import type { ApiContext, ApiState } from './api-context.ts';
import { compose } from './compose.ts';
import { allowedMethods, dispatchByResource, routedBy, routedByResource } from './resource-dispatch.ts';

/**
 * Routers shaped like Weir's: prefixes per resource, a literal route registered after a `:id`
 * route of the same shape (both match; the first registered answers), a route that passes on,
 * two routers sharing a resource, and nested params.
 */
function routers(): Router<ApiState>[] {
  const answer = (label: string) => (ctx: ApiContext) => {
    ctx.body = { label, params: ctx.params, method: ctx.method };
  };
  const sessions = new Router<ApiState>({ prefix: '/api/v1/checkout/sessions' });
  sessions.get('/', answer('list sessions'));
  sessions.post('/', answer('create session'));
  sessions.get('/:id', answer('get session'));
  sessions.get('/:id/status', answer('session status'));
  sessions.post('/:id/cancel', answer('cancel session'));
  const endpoints = new Router<ApiState>({ prefix: '/api/v1/webhook-endpoints' });
  endpoints.get('/:id', async (ctx, next) => {
    if (ctx.params['id'] === 'pass') return next();
    answer('get endpoint')(ctx);
  });
  endpoints.get('/event-types', answer('event types'));
  endpoints.get('/pass', answer('passed on to the next route'));
  endpoints.delete('/:id', answer('delete endpoint'));
  const catalog = new Router<ApiState>({ prefix: '/api/v1' });
  catalog.get('/products/:id', answer('get product'));
  catalog.put('/products/:id', answer('update product'));
  catalog.get('/prices/:id', answer('get price'));
  const moreCatalog = new Router<ApiState>({ prefix: '/api/v1/products' });
  moreCatalog.post('/:id/archive', answer('archive product'));
  moreCatalog.get('/:productId/prices/:priceId', answer('price of product'));
  return [sessions, endpoints, catalog, moreCatalog];
}

/** An app that ends like Weir's error middleware: what nothing answered is a JSON 404. */
function app(api: Koa.Middleware<ApiState>): Koa<ApiState> {
  const koa = new Koa<ApiState>();
  koa.silent = true;
  koa.use(async (ctx, next) => {
    await next();
    if (ctx.status === 404 && ctx.body === undefined) {
      ctx.body = { unrouted: `${ctx.method} ${ctx.path}` };
      ctx.status = 404;
    }
  });
  koa.use(api);
  return koa;
}

type Answer = { status: number; allow: string | undefined; body: string };

async function ask(server: Server, method: string, path: string): Promise<Answer> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, allow: res.headers.allow, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function listen(koa: Koa<ApiState>): Promise<Server> {
  const server = koa.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return server;
}

const REQUESTS: [string, string][] = [
  ['GET', '/api/v1/checkout/sessions'],
  ['POST', '/api/v1/checkout/sessions'],
  ['GET', '/api/v1/checkout/sessions/cs_1'],
  ['HEAD', '/api/v1/checkout/sessions/cs_1'],
  ['GET', '/api/v1/checkout/sessions/cs_%E2%9C%93'],
  ['GET', '/api/v1/checkout/sessions/cs_1/status'],
  ['POST', '/api/v1/checkout/sessions/cs_1/cancel'],
  ['GET', '/api/v1/checkout/sessions/cs_1/cancel'],
  ['PUT', '/api/v1/checkout/sessions/cs_1'],
  ['DELETE', '/api/v1/checkout/sessions'],
  ['OPTIONS', '/api/v1/checkout/sessions/cs_1'],
  ['PURGE', '/api/v1/checkout/sessions/cs_1'],
  ['PURGE', '/api/v1/checkout/nothing-here'],
  ['GET', '/api/v1/checkout/sessions/cs_1/unknown'],
  ['GET', '/api/v1/webhook-endpoints/event-types'],
  ['GET', '/api/v1/webhook-endpoints/we_1'],
  ['GET', '/api/v1/webhook-endpoints/pass'],
  ['DELETE', '/api/v1/webhook-endpoints/event-types'],
  ['POST', '/api/v1/webhook-endpoints/we_1'],
  ['GET', '/api/v1/products/prod_1'],
  ['PUT', '/api/v1/products/prod_1'],
  ['POST', '/api/v1/products/prod_1/archive'],
  ['GET', '/api/v1/products/prod_1/prices/price_2'],
  ['DELETE', '/api/v1/products/prod_1'],
  ['GET', '/api/v1/prices/price_1'],
  ['GET', '/api/v1/unknown-resource/x'],
  ['PURGE', '/api/v1/unknown-resource/x'],
  ['GET', '/api/v1/'],
  ['GET', '/elsewhere'],
];

const mountedInTurn = (): Koa.Middleware<ApiState> =>
  compose<ApiState>(
    routers().flatMap((r) => [r.routes() as unknown as Koa.Middleware<ApiState>, allowedMethods<ApiState>()]),
  );

test('dispatch by resource answers every request exactly as mounting each router in turn does', async (t) => {
  const reference = await listen(app(mountedInTurn()));
  const dispatched = await listen(app(dispatchByResource(routers())));
  t.teardown(() => {
    reference.close();
    dispatched.close();
  });
  for (const [method, path] of REQUESTS) {
    const expected = await ask(reference, method, path);
    t.deepEqual(await ask(dispatched, method, path), expected, `${method} ${path}`);
  }
  // The matrix covers what matters: routes, params, 405 with Allow, OPTIONS, and fall-through.
  const statuses = new Set<number>();
  for (const [method, path] of REQUESTS) statuses.add((await ask(reference, method, path)).status);
  t.deepEqual([...statuses].sort(), [200, 404, 405]);
});

test('unknown methods answer 405 with Allow, not 501: PROPFIND, TRACE, QUERY on a path that has routes; a path without routes stays 404', async (t) => {
  for (const api of [dispatchByResource(routers()), mountedInTurn()]) {
    const server = await listen(app(api));
    t.teardown(() => server.close());
    for (const method of ['PROPFIND', 'TRACE', 'QUERY', 'PURGE', 'MKCOL']) {
      t.like(await ask(server, method, '/api/v1/checkout/sessions/cs_1'), { status: 405, allow: 'HEAD, GET' }, method);
      t.like(await ask(server, method, '/api/v1/checkout/sessions'), { status: 405, allow: 'HEAD, GET, POST' }, method);
      t.is((await ask(server, method, '/api/v1/checkout/nothing-here')).status, 404, method);
    }
  }
});

test('routedByResource says a route takes a path and method exactly when asking each router does', (t) => {
  const byResource = routedByResource(routers());
  const inTurn = routedBy(routers());
  const methods = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PURGE'];
  for (const [, path] of REQUESTS)
    for (const method of methods) t.is(byResource(path, method), inTurn(path, method), `${method} ${path}`);
  t.true(byResource('/api/v1/products/prod_1/archive', 'POST'));
  t.false(byResource('/api/v1/checkout/sessions', 'PUT'));
});

test('a router with router-level middleware is refused rather than dispatched differently', (t) => {
  const router = new Router<ApiState>({ prefix: '/api/v1/things' });
  router.use(async (_ctx, next) => next());
  router.get('/:id', (ctx) => {
    ctx.body = 'thing';
  });
  t.throws(() => dispatchByResource([router]), { message: /router-level middleware/ });
});
