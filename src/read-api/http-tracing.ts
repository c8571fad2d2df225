import { context, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import type Koa from 'koa';
import type { ApiState } from './api-context.ts';
import { routeOf } from './http-metrics.ts';

const propagator = new W3CTraceContextPropagator();

/** Runs `work` in the trace a request's `traceparent` (and `tracestate`) header names, if any. */
function withRemoteParent<T>(headers: Record<string, string | string[] | undefined>, work: () => T): T {
  const parent = propagator.extract(context.active(), headers, {
    get: (carrier, key) => carrier[key],
    keys: (carrier) => Object.keys(carrier),
  });
  return context.with(parent, work);
}

/**
 * A server span per HTTP request, named for its route's pattern (never the path's ids), with its
 * status; in the caller's trace when it sends a `traceparent`. Mounted first, so the commands and
 * appends the request makes are its children. The path is recorded without its query string.
 * Loaded only when tracing is on (its OpenTelemetry modules are not on a plain start's path).
 */
export function httpTracingMiddleware(tracer: Tracer): Koa.Middleware<ApiState> {
  return (ctx, next) =>
    withRemoteParent(ctx.headers, () =>
      tracer.startActiveSpan(
        `${ctx.method} request`,
        { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: ctx.method, [ATTR_URL_PATH]: ctx.path } },
        async (span) => {
          try {
            await next();
          } finally {
            const route = routeOf(ctx);
            span.updateName(`${ctx.method} ${route}`);
            span.setAttribute(ATTR_HTTP_ROUTE, route);
            span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, ctx.status);
            if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
            span.end();
          }
        },
      ),
    );
}
