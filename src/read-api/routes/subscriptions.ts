import Router from '@koa/router';
import { subscriptionAggregate } from '../../../machines/subscription.aggregate.ts';
import type { SubscriptionCommand } from '../../../machines/subscription.decide.ts';
import { publicSubscription, SUBSCRIPTIONS, type SubscriptionDoc } from '../../projections/subscriptions.projection.ts';
import { NotFoundError } from '../../shared/errors.ts';
import { isUuid } from '../../shared/ids.ts';
import { asObject, optionalString } from '../../shared/input.ts';
import type { ApiContext, ApiDeps, ApiState } from '../api-context.ts';
import { commandFor, ownedBy } from '../command.ts';
import { listPage } from '../pagination.ts';

const STATUSES = [
  'incomplete',
  'incomplete_expired',
  'trialing',
  'active',
  'past_due',
  'unpaid',
  'canceled',
  'paused',
] as const;

/**
 * Subscriptions are created by a `mode: subscription` checkout session or a recurring invoice;
 * here they are listed (by `status`, `customerId`, `currency`, `clientReferenceId`, `priceId`,
 * `productId`, `ids` and date bounds on `createdAt`, `startDate`, `endedAt`), read, canceled at
 * period end (`cancel`), resumed (a pending cancel revoked, or a paused one restarted), ended at
 * once (`end`) and paused. A status that forbids the operation is a 400 naming it.
 */
export function subscriptionRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1/subscriptions' });
  const subscriptions = deps.readStore.collection<SubscriptionDoc>(SUBSCRIPTIONS);

  const load = async (ctx: ApiContext): Promise<SubscriptionDoc> => {
    const id = ctx.params.id!;
    const doc = isUuid(id) ? await subscriptions.get(id) : null;
    if (!ownedBy(ctx, doc)) throw new NotFoundError('subscription', id);
    return doc;
  };
  const run = async (ctx: ApiContext, command: SubscriptionCommand) => {
    const subscription = await load(ctx);
    await commandFor(deps, ctx, subscriptionAggregate, subscription.id, command);
    ctx.body = publicSubscription((await subscriptions.get(subscription.id))!);
  };
  const comment = (ctx: ApiContext): string | null => {
    const body = ctx.state.body === undefined || ctx.state.body === null ? {} : asObject(ctx.state.body, '');
    return optionalString(body, 'cancellationComment', '', { max: 500 }) ?? null;
  };

  router.get('/', async (ctx) => {
    ctx.body = await listPage(ctx, subscriptions, {
      present: publicSubscription,
      dateFields: ['startDate', 'endedAt'],
      filters: {
        ids: { field: 'id', kind: 'csv' },
        status: { values: STATUSES },
        customerId: {},
        currency: {},
        clientReferenceId: {},
        priceId: { field: 'items.priceId' },
        productId: { field: 'items.productId' },
      },
    });
  });
  router.get('/:id', async (ctx) => {
    ctx.body = publicSubscription(await load(ctx));
  });
  router.post('/:id/cancel', (ctx) => run(ctx, { type: 'CancelSubscription', comment: comment(ctx) }));
  router.post('/:id/end', (ctx) => run(ctx, { type: 'EndSubscription', comment: comment(ctx) }));
  router.post('/:id/resume', (ctx) => run(ctx, { type: 'ResumeSubscription' }));
  router.post('/:id/pause', (ctx) => run(ctx, { type: 'PauseSubscription' }));
  return router;
}
