import Router from '@koa/router';
import { checkoutSessionAggregate } from '../../../machines/checkout-session.aggregate.ts';
import type { CreateCheckoutSession } from '../../actors/create-checkout-session.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../../projections/collections.ts';
import { publicCheckoutSession } from '../../projections/public-views.ts';
import { NotFoundError } from '../../shared/errors.ts';
import type { Collection } from '../../read-store/read-store.ts';
import type { ApiContext, ApiDeps, ApiState } from '../api-context.ts';
import { commandFor, ownedBy } from '../command.ts';
import { cachedJson } from '../json-cache.ts';
import { listPage } from '../pagination.ts';

/** The tenant's own session; another tenant's, or none, is a 404. */
async function ownedSession(sessions: Collection<CheckoutSessionDoc>, ctx: ApiContext, id: string): Promise<CheckoutSessionDoc> {
  const doc = await sessions.get(id);
  if (!ownedBy(ctx, doc)) throw new NotFoundError('checkout session', id);
  return doc;
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

  // The request a merchant's client repeats while it waits for a payment: cached JSON per document.
  const respondWithSession = cachedJson(publicCheckoutSession);
  router.get('/:id', async (ctx) => respondWithSession(ctx, await load(ctx)));

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
