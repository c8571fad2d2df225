import type { RouterContext } from '@koa/router';
import type Router from '@koa/router';
import type Koa from 'koa';
import type { ApiContext, ApiState } from './api-context.ts';
import { compose } from './compose.ts';

const API_PREFIX = '/api/v1/';

type Layer = Router<ApiState>['stack'][number];

/** A route of one of the routers: its layer, its router, and its handlers composed once. */
type Route = { layer: Layer; router: Router<ApiState>; handlers: Koa.Middleware<ApiState> };

/** The resource a path under `/api/v1/` names: its first segment (`checkout` for `/api/v1/checkout/sessions/…`). */
function resourceOf(path: string): string {
  if (!path.startsWith(API_PREFIX)) return '';
  const slash = path.indexOf('/', API_PREFIX.length);
  return slash < 0 ? path.slice(API_PREFIX.length) : path.slice(API_PREFIX.length, slash);
}

/** Run the matched routes in order, each with the params of its own path, as `@koa/router` chains them. */
function runRoutes(routes: Route[], index: number, ctx: ApiContext, path: string, next: Koa.Next): Promise<void> {
  if (index === routes.length) return next();
  const { layer, router, handlers } = routes[index]!;
  const params = layer.params(path, layer.captures(path), ctx.params);
  ctx.request.params = params;
  ctx.params = params;
  ctx.router = router;
  // The route's pattern, as `@koa/router` records it: the request metrics label requests by it.
  ctx._matchedRoute = layer.path;
  return Promise.resolve(handlers(ctx, () => runRoutes(routes, index + 1, ctx, path, next)));
}

/**
 * What a path answers when no route took the request: OPTIONS lists the path's methods, any other
 * method it does not have is a 405 with `Allow`, whether or not some router knows that method
 * (`@koa/router` answers 501 to a method no router implements, a 5xx for what is the client's
 * mistake). A path no route has stays a 404.
 */
export function answerAllowedMethods(ctx: Koa.Context, allowed: readonly string[]): void {
  if ((ctx.status && ctx.status !== 404) || allowed.length === 0) return;
  if (ctx.method === 'OPTIONS') {
    ctx.status = 200;
    ctx.body = '';
    ctx.set('Allow', allowed.join(', '));
  } else if (!allowed.includes(ctx.method)) {
    ctx.status = 405;
    ctx.set('Allow', allowed.join(', '));
  }
}

/** `router.allowedMethods()` with `answerAllowedMethods`' rules, for a router mounted with `router.routes()`. */
export function allowedMethods<S>(): Koa.Middleware<S> {
  return (koaCtx, next) =>
    next().then(() => {
      // Set by `router.routes()`: the layers whose path matched, whatever their methods.
      const matched = (koaCtx as unknown as Partial<Pick<RouterContext<S>, 'matched'>>).matched;
      if (matched) answerAllowedMethods(koaCtx, [...new Set(matched.flatMap((layer) => layer.methods))]);
    });
}

/**
 * `body` (the middleware that reads a request's body) only when one of `routers` has a route for the
 * request's path and method: a method the path does not take is answered 405 with `Allow` (a path none
 * has, 404) whatever was sent, without reading a body nobody would use or refusing it as unreadable.
 */
export function bodyWhenRouted<S>(routers: readonly Router<S>[], body: Koa.Middleware<S>): Koa.Middleware<S> {
  return (ctx, next) => (routers.some((router) => router.match(ctx.path, ctx.method).route) ? body(ctx, next) : next());
}

/**
 * The routers of `/api/v1` as one middleware that answers exactly as mounting each router's
 * `routes()` and then `allowedMethods()` (this module's) in turn would (the same layers in the same order, the same
 * params, 405/OPTIONS from `answerAllowedMethods`), but without `@koa/router`'s per-request work: a
 * request is matched only against the routes of its resource (the path's first segment under
 * `/api/v1/`), each route's handlers are composed once rather than per request, and nothing else
 * (host check, the list of matched layers) runs but recording the route's pattern. Routes whose
 * first segment is a pattern, or outside `/api/v1/`, are tried for every resource; a router with
 * router-level middleware (`router.use`) is refused, as this does not reproduce it.
 */
export function dispatchByResource(routers: Router<ApiState>[]): Koa.Middleware<ApiState> {
  const everywhere: Route[] = [];
  const byResource = new Map<string, Route[]>();
  const ordered: { route: Route; resource: string | null }[] = [];
  for (const router of routers) {
    for (const layer of router.stack) {
      if (layer.methods.length === 0)
        throw new Error(`dispatchByResource: router-level middleware (${String(layer.path)}) is not supported`);
      const resource = typeof layer.path === 'string' ? resourceOf(layer.path) : '';
      const general = resource === '' || /[:(*]/.test(resource);
      ordered.push({
        route: { layer, router, handlers: compose(layer.stack as Koa.Middleware<ApiState>[]) },
        resource: general ? null : resource,
      });
    }
  }
  for (const { resource } of ordered) if (resource !== null && !byResource.has(resource)) byResource.set(resource, []);
  for (const { route, resource } of ordered) {
    if (resource === null) {
      everywhere.push(route);
      for (const routes of byResource.values()) routes.push(route);
    } else {
      byResource.get(resource)!.push(route);
    }
  }

  return (koaCtx, next) => {
    // A router context from here on: `params` and `router` are set before any handler runs.
    const ctx = koaCtx as ApiContext;
    const path = ctx.path;
    const pathRoutes: Route[] = [];
    const matched: Route[] = [];
    for (const route of byResource.get(resourceOf(path)) ?? everywhere) {
      if (!route.layer.match(path)) continue;
      pathRoutes.push(route);
      if (route.layer.methods.includes(ctx.method)) matched.push(route);
    }
    const done = matched.length === 0 ? next() : runRoutes(matched, 0, ctx, path, next);
    return done.then(() => answerAllowedMethods(ctx, [...new Set(pathRoutes.flatMap((route) => route.layer.methods))]));
  };
}
