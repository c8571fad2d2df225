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

/** Whether some route takes a request's path and method. */
export type Routed = (path: string, method: string) => boolean;

/** `Routed` by asking each router in turn (for a few routers: the public pages). */
export const routedBy =
  <S>(routers: readonly Router<S>[]): Routed =>
  (path, method) =>
    routers.some((router) => router.match(path, method).route);

/**
 * `body` (the middlewares that read a request's body, and what needs it) only when a route takes the
 * request's path and method: a method the path does not take is answered 405 with `Allow` (a path none
 * has, 404) whatever was sent, without reading a body nobody would use or refusing it as unreadable.
 */
export function bodyWhenRouted<S>(routed: Routed, body: Koa.Middleware<S>): Koa.Middleware<S> {
  return (ctx, next) => (routed(ctx.path, ctx.method) ? body(ctx, next) : next());
}

/**
 * The routers' layers indexed by resource (the path's first segment under `/api/v1/`), in their
 * order; layers whose first segment is a pattern, or outside `/api/v1/`, are in every resource's
 * list. Refuses router-level middleware (`router.use`), which dispatching by layer does not reproduce.
 */
function indexByResource<T extends { layer: Layer }>(
  routers: Router<ApiState>[],
  entry: (layer: Layer, router: Router<ApiState>) => T,
): (path: string) => T[] {
  const everywhere: T[] = [];
  const byResource = new Map<string, T[]>();
  const ordered: { item: T; resource: string | null }[] = [];
  for (const router of routers) {
    for (const layer of router.stack) {
      if (layer.methods.length === 0)
        throw new Error(`dispatchByResource: router-level middleware (${String(layer.path)}) is not supported`);
      const resource = typeof layer.path === 'string' ? resourceOf(layer.path) : '';
      const general = resource === '' || /[:(*]/.test(resource);
      ordered.push({ item: entry(layer, router), resource: general ? null : resource });
    }
  }
  for (const { resource } of ordered) if (resource !== null && !byResource.has(resource)) byResource.set(resource, []);
  for (const { item, resource } of ordered) {
    if (resource === null) {
      everywhere.push(item);
      for (const items of byResource.values()) items.push(item);
    } else {
      byResource.get(resource)!.push(item);
    }
  }
  return (path: string) => byResource.get(resourceOf(path)) ?? everywhere;
}

/** `Routed` for the routers `dispatchByResource` serves, looking only at the path's resource. */
export function routedByResource(routers: Router<ApiState>[]): Routed {
  const layersOf = indexByResource(routers, (layer) => ({ layer }));
  return (path, method) => layersOf(path).some(({ layer }) => layer.methods.includes(method) && layer.match(path));
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
  const routesOf = indexByResource(
    routers,
    (layer, router): Route => ({ layer, router, handlers: compose(layer.stack as Koa.Middleware<ApiState>[]) }),
  );

  return (koaCtx, next) => {
    // A router context from here on: `params` and `router` are set before any handler runs.
    const ctx = koaCtx as ApiContext;
    const path = ctx.path;
    const pathRoutes: Route[] = [];
    const matched: Route[] = [];
    for (const route of routesOf(path)) {
      if (!route.layer.match(path)) continue;
      pathRoutes.push(route);
      if (route.layer.methods.includes(ctx.method)) matched.push(route);
    }
    const done = matched.length === 0 ? next() : runRoutes(matched, 0, ctx, path, next);
    return done.then(() => answerAllowedMethods(ctx, [...new Set(pathRoutes.flatMap((route) => route.layer.methods))]));
  };
}
