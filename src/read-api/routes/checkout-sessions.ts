import Router from '@koa/router';
import type Koa from 'koa';
import { checkoutSessionAggregate } from '../../../machines/checkout-session.aggregate.ts';
import type { CreateCheckoutSession } from '../../actors/create-checkout-session.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../../projections/collections.ts';
import { publicCheckoutSession } from '../../projections/public-views.ts';
import { NotFoundError } from '../../shared/errors.ts';
import type { Collection, ReadStore } from '../../read-store/read-store.ts';
import type { ApiContext, ApiDeps, ApiState } from '../api-context.ts';
import { commandFor, ownedBy } from '../command.ts';
import { cachedJson } from '../json-cache.ts';
import { listPage } from '../pagination.ts';

const SESSION_PATH = '/api/v1/checkout/sessions/';

/** The tenant's own session; another tenant's, or none, is a 404. */
async function ownedSession(sessions: Collection<CheckoutSessionDoc>, ctx: ApiContext, id: string): Promise<CheckoutSessionDoc> {
  const doc = await sessions.get(id);
  if (!ownedBy(ctx, doc)) throw new NotFoundError('checkout session', id);
  return doc;
}

/** Answers GET of one session: the tenant's own, as cached JSON; another tenant's is a 404. One per read store, so the route and the polling middleware share the cache. */
type SessionReader = (ctx: ApiContext, id: string) => Promise<void>;
const readers = new WeakMap<ReadStore, SessionReader>();

function sessionReader(readStore: ReadStore): SessionReader {
  let reader = readers.get(readStore);
  if (!reader) {
    const sessions = readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
    const respondWithSession = cachedJson(publicCheckoutSession);
    reader = async (ctx, id) => respondWithSession(ctx, await ownedSession(sessions, ctx, id));
    readers.set(readStore, reader);
  }
  return reader;
}

const decodeSegment = (text: string): string => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

/**
 * `GET /api/v1/checkout/sessions/{id}`, the request a merchant's client repeats while it waits
 * for a payment, answered ahead of the routers (place it after the key check): the same tenancy
 * check and the same body as the route, without the router's matching and middleware chain,
 * which cost about a fifth of the server's time per request. Any other request (another method,
 * a trailing slash, a sub-resource) goes on to the routers.
 */
export function checkoutSessionPolling(deps: Pick<ApiDeps, 'readStore'>): Koa.Middleware<ApiState> {
  const read = sessionReader(deps.readStore);
  return (ctx, next) => {
    if (ctx.method !== 'GET') return next();
    const path = ctx.path;
    if (!path.startsWith(SESSION_PATH) || path.length === SESSION_PATH.length || path.includes('/', SESSION_PATH.length)) return next();
    return read(ctx as ApiContext, decodeSegment(path.slice(SESSION_PATH.length)));
  };
}

export function checkoutSessionRoutes(deps: ApiDeps & { createCheckoutSession: CreateCheckoutSession }): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1/checkout/sessions' });
  const sessions = deps.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);

  const load = (ctx: ApiContext): Promise<CheckoutSessionDoc> => ownedSession(sessions, ctx, ctx.params.id!);

  router.post('/', async (ctx) => {
    const { tenant } = ctx.state;
    const { session, position } = await deps.createCheckoutSession(ctx.state.body, { ...tenant, actor: `api_key:${tenant.keyId}` });
    if (position !== null) await deps.projections.waitFor(position);
    ctx.body = publicCheckoutSession((await sessions.get(session.id)) ?? session);
  });

  router.get('/', async (ctx) => {
    ctx.body = await listPage(ctx, sessions, {
      present: publicCheckoutSession,
      filters: {
        ids: { field: 'id', kind: 'csv' },
        paymentLinkId: {},
        subscriptionId: {},
        invoiceId: {},
        customerId: {},
        mode: { values: ['payment', 'subscription'] },
        status: { values: ['open', 'complete', 'incomplete', 'expired', 'canceled'] },
        paymentStatus: { values: ['unpaid', 'paid'] },
      },
    });
  });

  const read = sessionReader(deps.readStore);
  router.get('/:id', (ctx) => read(ctx, ctx.params.id!));

  router.get('/:id/completed_webhook_delivered', async (ctx) => {
    const session = await load(ctx);
    ctx.body = { completed: session.status === 'complete', transactionHash: session.transactionHash, status: session.status, updatedAt: session.updatedAt };
  });

  router.post('/:id/complete-partial-checkout-session', async (ctx) => {
    const session = await load(ctx);
    await commandFor(deps, ctx, checkoutSessionAggregate, session.id, { type: 'CompletePartialCheckoutSession' });
    ctx.body = publicCheckoutSession((await sessions.get(session.id))!);
  });

  router.post('/:id/cancel', async (ctx) => {
    const session = await load(ctx);
    await commandFor(deps, ctx, checkoutSessionAggregate, session.id, { type: 'CancelCheckoutSession', reason: 'canceled by the merchant' });
    ctx.body = publicCheckoutSession((await sessions.get(session.id))!);
  });

  return router;
}
