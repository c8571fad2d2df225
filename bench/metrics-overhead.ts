/**
 * What metrics add to each API request, in isolation: the HTTP middleware (two clock reads and one
 * histogram observation with three labels) and the event store's count per appended event, each
 * against the same work without metrics. In process, no server: the figures are CPU time per
 * operation, the best of 7 runs (the least disturbed by other work on the machine).
 *
 *   node --import tsx bench/metrics-overhead.ts [--ops 300000]   (npm run bench:metrics)
 *
 * Levels (lags, queue depths) are read at scrape time and cost the request path nothing.
 * Not a test: `npm test` never runs bench/.
 */
import type Koa from 'koa';
import { createPrometheusMetrics } from '../src/app/prometheus-metrics.ts';
import type { EventStore, NewEvent } from '../src/event-store/event-store.ts';
import { meteredEventStore } from '../src/event-store/metered-event-store.ts';
import type { ApiState } from '../src/read-api/api-context.ts';
import { httpMetricsMiddleware } from '../src/read-api/http-metrics.ts';
import { cliArgs } from './support/cli-args.ts';

const ops = cliArgs(process.argv.slice(2)).integer('--ops', 300_000, 10_000_000);

async function nanosecondsPerOp(work: () => Promise<unknown>): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let run = 0; run < 7; run++) {
    const started = performance.now();
    for (let i = 0; i < ops; i++) await work();
    best = Math.min(best, ((performance.now() - started) * 1e6) / ops);
  }
  return Math.round(best);
}

const metrics = createPrometheusMetrics();
const ctx = {
  method: 'POST',
  status: 200,
  path: '/api/v1/checkout/sessions',
  _matchedRoute: '/api/v1/checkout/sessions',
} as unknown as Koa.ParameterizedContext<ApiState>;
const next = async () => {};
const plain: Koa.Middleware<ApiState> = async (_ctx, next) => next();
const metered = httpMetricsMiddleware(metrics);

// A store whose append costs nothing, so only the wrapper's work is timed.
const result = { nextExpectedRevision: 0, position: 1n };
const store = { append: async () => result } as unknown as EventStore;
const counted = meteredEventStore(store, metrics);
const event = (type: string): NewEvent => ({
  id: 'e',
  type,
  data: {},
  metadata: { organizationId: 'o', environment: 'test', actor: 'a', correlationId: 'c', occurredAt: '' },
});
// A session create with inline price data appends these.
const events = [event('ProductCreated'), event('PriceCreated'), event('CheckoutSessionCreated')];

const rows = [
  ['a request through a middleware that does nothing', await nanosecondsPerOp(() => plain(ctx, next))],
  ['a request through the HTTP metrics middleware', await nanosecondsPerOp(() => metered(ctx, next))],
  ['an append of 3 events, no metrics', await nanosecondsPerOp(() => store.append('s', events, 'any'))],
  ['an append of 3 events, counted by type', await nanosecondsPerOp(() => counted.append('s', events, 'any'))],
] as const;
console.log(`| Operation | ns, best of 7 × ${ops} |\n| --- | ---: |`);
for (const [what, ns] of rows) console.log(`| ${what} | ${ns} |`);
