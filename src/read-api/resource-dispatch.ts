import type Router from '@koa/router';
import type Koa from 'koa';
import type { ApiState } from './api-context.ts';
import { compose } from './compose.ts';

const API_PREFIX = '/api/v1/';

/** The resource a path under `/api/v1/` names: its first segment (`checkout` for `/api/v1/checkout/sessions/…`). */
function resourceOf(path: string): string {
  if (!path.startsWith(API_PREFIX)) return '';
  const slash = path.indexOf('/', API_PREFIX.length);
  return slash < 0 ? path.slice(API_PREFIX.length) : path.slice(API_PREFIX.length, slash);
}

/**
 * The routers of `/api/v1`, each request handed only to the routers that have a route for its
 * resource (the first path segment), in their order. A router whose routes cannot match the path
 * would pass it on anyway, so the answers are the same as running every router in turn; a request
 * no longer pays each router's matching. A route whose first segment is a pattern (or a router
 * outside `/api/v1/`) is tried for every resource.
 */
export function dispatchByResource(routers: Router<ApiState>[]): Koa.Middleware<ApiState> {
  const byResource = new Map<string, Router<ApiState>[]>();
  const everywhere: Router<ApiState>[] = [];
  for (const router of routers) {
    const resources = new Set(router.stack.map((layer) => (typeof layer.path === 'string' ? resourceOf(layer.path) : '')));
    if ([...resources].some((resource) => resource === '' || /[:(*]/.test(resource))) { everywhere.push(router); continue; }
    for (const resource of resources) byResource.set(resource, [...(byResource.get(resource) ?? []), router]);
  }
  const chainOf = (list: Router<ApiState>[]) => {
    const ordered = routers.filter((router) => list.includes(router) || everywhere.includes(router));
    return compose<ApiState>(ordered.flatMap((r) => [r.routes(), r.allowedMethods()] as unknown as Koa.Middleware<ApiState>[]));
  };
  const chains = new Map([...byResource].map(([resource, list]) => [resource, chainOf(list)]));
  const fallback = chainOf([]);
  return (ctx, next) => (chains.get(resourceOf(ctx.path)) ?? fallback)(ctx, next);
}
