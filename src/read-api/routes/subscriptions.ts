import Router from '@koa/router';
import { subscriptionAggregate } from '../../../machines/subscription.aggregate.ts';
import type { SubscriptionCommand } from '../../../machines/subscription.decide.ts';
import { SUBSCRIPTIONS, type SubscriptionDoc } from '../../projections/subscriptions.projection.ts';
import { NotFoundError } from '../../shared/errors.ts';
import { isUuid } from '../../shared/ids.ts';
import type { ApiContext, ApiDeps, ApiState } from '../api-context.ts';
import { commandFor, ownedBy } from '../command.ts';
import { listPage } from '../pagination.ts';
import { subscriptionViews } from '../subscription-views.ts';
import {
  bodyObject,
  idParams,
  invalidFields,
  listOf,
  listQuery,
  notFound,
  optional,
  queryFilter,
  text,
} from '../schema/fields.ts';
import { SubscriptionSchema } from '../schema/resources.ts';
import { schemaRoutes } from '../schema/route.ts';

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
  const views = subscriptionViews(deps.readStore);

  const load = async (ctx: ApiContext): Promise<SubscriptionDoc> => {
    const id = ctx.params.id!;
    const doc = isUuid(id) ? await subscriptions.get(id) : null;
    if (!ownedBy(ctx, doc)) throw new NotFoundError('subscription', id);
    return doc;
  };
  const run = async (ctx: ApiContext, command: SubscriptionCommand) => {
    const subscription = await load(ctx);
    await commandFor(deps, ctx, subscriptionAggregate, subscription.id, command);
    return views.one((await subscriptions.get(subscription.id))!);
  };
  const api = schemaRoutes(router, { tag: 'Subscriptions', auth: 'secretKey' });
  const params = idParams('subscription');
  const CancelBody = bodyObject({
    cancellationComment: optional(text({ max: 500 })).openapi({ example: 'moved to the yearly plan' }),
  }).openapi('SubscriptionCancelRequest');
  const statusErrors = [
    notFound('subscription'),
    {
      status: 400,
      codes: ['status_transition_invalid', 'parameter_invalid'],
      description: "The subscription's status forbids the operation",
    },
  ];

  api.route(
    {
      method: 'get',
      path: '/',
      summary: 'List subscriptions',
      description: 'Newest first.',
      query: listQuery(
        {
          ids: queryFilter('Comma-separated subscription ids'),
          status: queryFilter(`One of ${STATUSES.join(', ')}`),
          customerId: queryFilter("The customer's id"),
          currency: queryFilter('An asset code, such as usdc'),
          clientReferenceId: queryFilter('Your reference given at checkout'),
          priceId: queryFilter('Subscriptions with an item of this price'),
          productId: queryFilter('Subscriptions with an item of this product'),
        },
        { dateFields: ['startDate', 'endedAt'] },
      ),
      response: listOf(SubscriptionSchema),
      errors: [invalidFields()],
    },
    async (ctx) => {
      const page = await listPage(ctx, subscriptions, {
        present: (doc) => doc,
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
      return { ...page, data: await views.many(page.data) };
    },
  );
  api.route(
    {
      method: 'get',
      path: '/:id',
      summary: 'Read a subscription',
      params,
      response: SubscriptionSchema,
      errors: [notFound('subscription')],
    },
    async (ctx) => views.one(await load(ctx)),
  );
  api.route(
    {
      method: 'post',
      path: '/:id/cancel',
      summary: 'Cancel a subscription at the end of its period',
      params,
      body: CancelBody,
      bodyOptional: true,
      response: SubscriptionSchema,
      errors: statusErrors,
    },
    (ctx, { body }) => run(ctx, { type: 'CancelSubscription', comment: body.cancellationComment ?? null }),
  );
  api.route(
    {
      method: 'post',
      path: '/:id/end',
      summary: 'End a subscription at once',
      params,
      body: CancelBody,
      bodyOptional: true,
      response: SubscriptionSchema,
      errors: statusErrors,
    },
    (ctx, { body }) => run(ctx, { type: 'EndSubscription', comment: body.cancellationComment ?? null }),
  );
  api.route(
    {
      method: 'post',
      path: '/:id/resume',
      summary: 'Resume a subscription',
      description: 'Revokes a pending cancel, or restarts a paused subscription.',
      params,
      response: SubscriptionSchema,
      errors: statusErrors,
    },
    (ctx) => run(ctx, { type: 'ResumeSubscription' }),
  );
  api.route(
    {
      method: 'post',
      path: '/:id/pause',
      summary: 'Pause a subscription',
      params,
      response: SubscriptionSchema,
      errors: statusErrors,
    },
    (ctx) => run(ctx, { type: 'PauseSubscription' }),
  );
  return router;
}
