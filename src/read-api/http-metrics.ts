import { isIP } from 'node:net';
import type Koa from 'koa';
import { ForbiddenError, ValidationError } from '../shared/errors.ts';
import type { Metrics } from '../shared/metrics.ts';
import { internalAddressKind } from '../webhooks/webhook-target.ts';
import type { ApiState } from './api-context.ts';
import { unknownQueryParameter } from './schema/fields.ts';

/** What `GET /metrics` serves, and to whom. */
export type MetricsEndpoint = {
  scrape(): Promise<string>;
  contentType: string;
  /**
   * `anyone` who reaches the port (Weir listens on loopback only, with no proxy in front), or the
   * `operator` alone (`Authorization: Bearer <WEIR_ADMIN_TOKEN>`; refused outright without one set).
   */
  access: 'anyone' | 'operator';
};

/**
 * Who may read `/metrics`. Everyone only when nothing but this machine can reach Weir, that is it
 * listens on a loopback address and no proxy forwards to it (a proxy makes loopback public).
 */
export function metricsAccess(listen: { host: string; trustProxy?: boolean }): MetricsEndpoint['access'] {
  const host = listen.host.toLowerCase();
  const loopback = host === 'localhost' || (isIP(host) !== 0 && internalAddressKind(host) === 'loopback');
  return loopback && !listen.trustProxy ? 'anyone' : 'operator';
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** Where a request no route took belongs, by its path's first segment: never the path itself (unbounded). */
const AREAS = new Set(['api', 'checkout', 'invoices', 'pay', 'assets', 'admin', 'dashboard', 'docs']);

/** The route's pattern (`/api/v1/checkout/sessions/:id`), or the area of a request no route took (`/api/*`, a 401 before routing). */
export function routeOf(ctx: Koa.Context): string {
  const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
  if (matched !== undefined) return String(matched);
  const path = ctx.path;
  if (path === '/health' || path === '/metrics') return path;
  const slash = path.indexOf('/', 1);
  const area = slash < 0 ? path.slice(1) : path.slice(1, slash);
  return AREAS.has(area) ? `/${area}/*` : 'unmatched';
}

/**
 * `weir_http_request_duration_seconds{method,route,status}`: its `_count` is the requests by route
 * and status. Mounted first, so it times the whole answer and sees the status errors settled on.
 */
export function httpMetricsMiddleware(metrics: Metrics): Koa.Middleware<ApiState> {
  const requests = metrics.histogram({
    name: 'weir_http_request_duration_seconds',
    help: 'HTTP requests by method, route pattern and status, and how long each took to answer',
    labelNames: ['method', 'route', 'status'],
    buckets: LATENCY_BUCKETS,
  });
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      requests.observe(
        { method: METHODS.has(ctx.method) ? ctx.method : 'other', route: routeOf(ctx), status: String(ctx.status) },
        (performance.now() - started) / 1000,
      );
    }
  };
}

/**
 * `GET /metrics` in the Prometheus text format. `authenticateOperator` checks the admin token (and
 * counts failures against the client's address) when the endpoint is for the operator alone.
 */
export function metricsRoute(
  endpoint: MetricsEndpoint,
  authenticateOperator: Koa.Middleware<ApiState> | null,
): Koa.Middleware<ApiState> {
  const serve: Koa.Middleware<ApiState> = async (ctx) => {
    // Closed like every other operator route: a parameter it takes none of is a typo, not a filter.
    const unknown = unknownQueryParameter(undefined, ctx.query);
    if (unknown) throw new ValidationError(unknown.name, unknown.message);
    ctx.set('Cache-Control', 'no-store');
    ctx.type = endpoint.contentType;
    ctx.body = await endpoint.scrape();
  };
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      // The error middleware writes the body, as for any route's 405.
      ctx.status = 405;
      ctx.set('Allow', 'GET, HEAD');
      return;
    }
    if (endpoint.access === 'anyone') return serve(ctx, next);
    if (!authenticateOperator)
      throw new ForbiddenError(
        '/metrics is for the operator when Weir listens beyond loopback: set WEIR_ADMIN_TOKEN and send Authorization: Bearer <WEIR_ADMIN_TOKEN>',
        'metrics_need_admin_token',
      );
    return authenticateOperator(ctx, () => serve(ctx, next));
  };
}
