import type Router from '@koa/router';
import type Koa from 'koa';
import type { ApiKeyScope } from '../actors/api-key.ts';
import { ForbiddenError } from '../shared/errors.ts';
import type { ApiState } from './api-context.ts';
import { declaredPost } from './schema/route.ts';

/** The code of every refusal for a key's scope (a 403). */
export const SCOPE_REFUSED = 'api_key_scope';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A key of a reading scope (`read`, `audit`) only reads: GET, and the POSTs of `routers` declared
 * `readsOnly` (an analyst's query sends its pipeline as a body); anything else is a 403 naming its scope.
 */
export function scopeGuard(routers: readonly Router<ApiState>[]): Koa.Middleware<ApiState> {
  const readingPost = declaredPost(routers, (route) => route.readsOnly === true);
  return (ctx, next) => {
    const scope = ctx.state.tenant?.scope ?? 'full';
    const reads = READS.has(ctx.method) || (ctx.method === 'POST' && readingPost(ctx.path));
    if (scope !== 'full' && !reads)
      throw new ForbiddenError(
        `this API key's scope is ${scope}: it may only read (GET); ${ctx.method} needs a full key`,
        SCOPE_REFUSED,
      );
    return next();
  };
}

/** For a route only some scopes open (full keys always do): a 403 naming the scope it needs otherwise. */
export function requireScope(ctx: { state: ApiState }, scope: Exclude<ApiKeyScope, 'full'>): void {
  const own = ctx.state.tenant.scope ?? 'full';
  if (own !== 'full' && own !== scope)
    throw new ForbiddenError(
      `this route needs an API key with the ${scope} scope (or a full key); this key's scope is ${own}`,
      SCOPE_REFUSED,
    );
}
