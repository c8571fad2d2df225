import { randomBytes } from 'node:crypto';
import type { Weir } from '../../src/app/start-weir.ts';
import { createTestRail } from '../../src/chain-ingest/test-rail.ts';
import { httpRouters } from '../../src/read-api/app.ts';
import { createSecretBox } from '../../src/tenancy/secrets.ts';
import { recordingMailer } from '../support/recording-mailer.ts';
import { ADMIN_TOKEN } from '../support/weir-harness.ts';

type Routers = ReturnType<typeof httpRouters>;

/** Where a route is mounted (a key of `httpRouters`), which says how a caller authenticates; `none` is no route. */
export type Area = keyof Routers | 'health' | 'metrics' | 'none';

/** One route Weir serves: a method and a path template (`/api/v1/customers/:id`). */
export type Route = { area: Area; method: string; path: string };

export const routeKey = (route: Pick<Route, 'method' | 'path'>) => `${route.method} ${route.path}`;

/**
 * Every route of the server, read from the routers `createApiApp` mounts (see `httpRouters`), so a
 * route added to a router is in the list without anyone editing the suite. HEAD, which the routers
 * add to every GET, is left to the generator's method choice. `/health` and `/metrics` are not a router's.
 */
/** Every route layer of the routers `createApiApp` mounts, with the area it is mounted in (no route is run). */
export function mountedLayers(
  weir: Pick<Weir, 'url' | 'clock' | 'eventStore' | 'readStore' | 'commands' | 'projections'>,
) {
  const routers = httpRouters({
    clock: weir.clock,
    eventStore: weir.eventStore,
    readStore: weir.readStore,
    commands: weir.commands,
    projections: weir.projections,
    rail: createTestRail(),
    secretBox: createSecretBox(randomBytes(32)),
    publicUrl: weir.url,
    createCheckoutSession: () => Promise.reject(new Error('the route table never runs a route')),
    mailer: recordingMailer().mailer,
    adminToken: ADMIN_TOKEN,
    devnet: null,
  });
  // Every area httpRouters lists, so an area added there is in the table at once.
  return (Object.entries(routers) as [keyof Routers, Routers[keyof Routers]][]).flatMap(([area, mounted]) =>
    (mounted === null ? [] : Array.isArray(mounted) ? mounted : [mounted]).flatMap((router) =>
      router.stack.map((layer) => ({ area, layer })),
    ),
  );
}

export function routeTable(
  weir: Pick<Weir, 'url' | 'clock' | 'eventStore' | 'readStore' | 'commands' | 'projections'>,
) {
  const routes: Route[] = [];
  for (const { area, layer } of mountedLayers(weir)) {
    if (typeof layer.path !== 'string') throw new Error(`route table: a route path that is not a string in ${area}`);
    // Router-level middleware (the admin token check) has no methods of its own.
    for (const method of layer.methods) if (method !== 'HEAD') routes.push({ area, method, path: layer.path });
  }
  routes.push({ area: 'health', method: 'GET', path: '/health' }, { area: 'metrics', method: 'GET', path: '/metrics' });
  return routes;
}
