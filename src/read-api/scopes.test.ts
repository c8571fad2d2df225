import Router from '@koa/router';
import test from 'ava';
import type Koa from 'koa';
import { ForbiddenError } from '../shared/errors.ts';
import type { ApiState } from './api-context.ts';
import { SCOPE_REFUSED, scopeGuard } from './scopes.ts';
import { schemaRoutes } from './schema/route.ts';

/** A router with a read-only POST declared as such, and a POST that writes. */
function reportRouter(): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1/forecasts' });
  const routes = schemaRoutes(router, { tag: 'Reports', auth: 'secretKey' });
  routes.route({ method: 'post', path: '/search', summary: 'Search forecasts', readsOnly: true }, () => ({}));
  routes.route({ method: 'post', path: '/', summary: 'Create a forecast' }, () => ({}));
  return router;
}

const run = async (guard: Koa.Middleware<ApiState>, method: string, path: string, scope: 'read' | 'full') => {
  let passed = false;
  const ctx = { method, path, state: { tenant: { scope } } } as unknown as Koa.ParameterizedContext<ApiState>;
  await guard(ctx, async () => {
    passed = true;
  });
  return passed;
};

test('a POST declared readsOnly is open to a reading key with no list to keep in step; any other POST is a 403 naming the scope', async (t) => {
  const guard = scopeGuard([reportRouter()]);
  t.true(await run(guard, 'POST', '/api/v1/forecasts/search', 'read'));
  t.true(await run(guard, 'GET', '/api/v1/forecasts', 'read'));
  const refused = await t.throwsAsync(run(guard, 'POST', '/api/v1/forecasts', 'read'), {
    instanceOf: ForbiddenError,
  });
  t.is(refused?.code, SCOPE_REFUSED);
  t.regex(refused?.message ?? '', /scope is read/);
  t.true(await run(guard, 'POST', '/api/v1/forecasts', 'full'));
  // A route's path, not a prefix of it: /search/more is not the declared route.
  await t.throwsAsync(run(guard, 'POST', '/api/v1/forecasts/search/more', 'read'), { instanceOf: ForbiddenError });
});
