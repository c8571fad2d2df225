import { PassThrough } from 'node:stream';
import type Koa from 'koa';
import { PRICES, PRODUCTS } from '../projections/catalog.projection.ts';
import { COLLECTIONS } from '../projections/collections.ts';
import { COUPONS, PROMOTION_CODES } from '../projections/coupons.projection.ts';
import { CUSTOMERS } from '../projections/customers.projection.ts';
import { INVOICES } from '../projections/invoices.projection.ts';
import { PAYMENT_LINKS } from '../projections/payment-links.projection.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import { SUBSCRIPTIONS } from '../projections/subscriptions.projection.ts';
import { TRANSACTIONS } from '../projections/transactions.projection.ts';
import type { ReadDocument, ReadStore } from '../read-store/read-store.ts';
import type { DashboardTenant } from './context.ts';

/**
 * What a page can follow live: a topic per read model, announced once the read model has the change,
 * so a fragment reloaded on it shows it. Add a read model here to give its screen a topic.
 */
export const TOPICS = {
  [COLLECTIONS.checkoutSessions]: 'checkout-sessions',
  [TRANSACTIONS]: 'payments',
  [COLLECTIONS.webhookDeliveries]: 'webhooks',
  [COLLECTIONS.webhookEndpoints]: 'webhooks',
  [COLLECTIONS.apiKeys]: 'api-keys',
  [COLLECTIONS.organizations]: 'organization',
  [INVOICES]: 'invoices',
  [SUBSCRIPTIONS]: 'subscriptions',
  [PAYMENT_LINKS]: 'payment-links',
  [PRODUCTS]: 'products',
  [PRICES]: 'products',
  [CUSTOMERS]: 'customers',
  [COUPONS]: 'promo-codes',
  [PROMOTION_CODES]: 'promo-codes',
} as const satisfies Record<string, string>;

export type DashboardTopic = (typeof TOPICS)[keyof typeof TOPICS];

/** Past this many documents in one batch, every tenant is told (reading them all would cost more than a reload). */
const MAX_LOOKUPS = 200;

type Listener = (topics: ReadonlySet<string>) => void;

/**
 * The changes of the read models, per tenant, for the pages' server-sent events. It follows the
 * projection runner only while some page listens; each batch's changed documents are read to learn
 * their tenant, and a listener hears the topics its own tenant's documents changed in.
 */
export type DashboardEvents = {
  subscribe(tenant: DashboardTenant, listener: Listener): () => void;
  listeners(): number;
};

export function createDashboardEvents(deps: { projections: ProjectionRunner; readStore: ReadStore }): DashboardEvents {
  const byTenant = new Map<string, Set<Listener>>();
  let unsubscribes: (() => void)[] = [];
  const key = (organizationId: unknown, environment: unknown) => `${String(environment)}:${String(organizationId)}`;

  async function changed(collection: string, ids: ReadonlySet<string>): Promise<void> {
    const topic = TOPICS[collection as keyof typeof TOPICS];
    const topics = new Set([topic]);
    if (ids.size > MAX_LOOKUPS) {
      for (const listeners of byTenant.values()) for (const listener of listeners) listener(topics);
      return;
    }
    const docs = deps.readStore.collection<ReadDocument>(collection);
    const tenants = new Set<string>();
    for (const id of ids) {
      const doc = await docs.get(id);
      if (doc) tenants.add(key(doc.organizationId, doc.environment));
    }
    for (const tenant of tenants) for (const listener of byTenant.get(tenant) ?? []) listener(topics);
  }

  function follow(): void {
    unsubscribes = Object.keys(TOPICS).map((collection) =>
      deps.projections.onDocumentsChanged(collection, (ids) => {
        changed(collection, new Set(ids)).catch(() => {
          // A read that failed: the page misses one refresh; the next change or a reload shows it.
        });
      }),
    );
  }

  return {
    subscribe(tenant, listener) {
      if (byTenant.size === 0) follow();
      const tenantKey = key(tenant.organizationId, tenant.environment);
      const listeners = byTenant.get(tenantKey) ?? new Set<Listener>();
      byTenant.set(tenantKey, listeners);
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) byTenant.delete(tenantKey);
        if (byTenant.size === 0) {
          for (const unsubscribe of unsubscribes) unsubscribe();
          unsubscribes = [];
        }
      };
    },
    listeners: () => [...byTenant.values()].reduce((n, set) => n + set.size, 0),
  };
}

/** How often an idle stream sends a comment, so proxies do not close it. */
const KEEPALIVE_MS = 25_000;

/**
 * `GET /dashboard/events` for the signed-in tenant: a `text/event-stream` whose messages are the
 * topics that changed (`data: payments checkout-sessions`). It carries no data: a page reloads its
 * fragment on a topic, through its own route and its role check.
 */
export function streamEvents(ctx: Koa.Context, events: DashboardEvents, tenant: DashboardTenant): void {
  const stream = new PassThrough();
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.status = 200;
  ctx.type = 'text/event-stream';
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Accel-Buffering', 'no');
  ctx.body = stream;
  stream.write('retry: 3000\n: connected\n\n');
  const unsubscribe = events.subscribe(tenant, (topics) => {
    stream.write(`data: ${[...topics].join(' ')}\n\n`);
  });
  const keepalive = setInterval(() => stream.write(': keepalive\n\n'), KEEPALIVE_MS);
  keepalive.unref();
  const close = () => {
    clearInterval(keepalive);
    unsubscribe();
    stream.end();
  };
  ctx.req.once('close', close);
}
