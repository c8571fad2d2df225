import Router from '@koa/router';
import { checkoutSessionAggregate } from '../../../machines/checkout-session.aggregate.ts';
import type { AssetRef, CheckoutSession } from '../../../machines/checkout-session.types.ts';
import type { CreateCheckoutSession } from '../../actors/create-checkout-session.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../../projections/collections.ts';
import { CUSTOMERS, type CustomerDoc } from '../../projections/customers.projection.ts';
import { publicCheckoutSession } from '../../projections/public-views.ts';
import type { Recovery, RecoveryRequest as RecoveryCommand } from '../../chain-ingest/evm/recover-transaction.ts';
import { NotFoundError, UnprocessableError, ValidationError, WeirError } from '../../shared/errors.ts';
import { CheckoutSessionCreate } from '../schema/checkout-session-create.ts';
import {
  CheckoutSessionSchema,
  RecoveryRequest,
  SESSION_LIST_FILTERS,
  SESSION_STATUS_VALUES,
} from '../schema/checkout-session.ts';
import {
  idParams,
  invalidFields,
  listOf,
  listQuery,
  notFound,
  queryFilter,
  timestamp,
  walletInvalid,
  z,
} from '../schema/fields.ts';
import { schemaRoutes } from '../schema/route.ts';
import type { Collection } from '../../read-store/read-store.ts';
import { type ApiContext, type ApiDeps, type ApiState, idsOf } from '../api-context.ts';
import { commandFor, ownedBy } from '../command.ts';
import { cachedJson } from '../json-cache.ts';
import { listPage } from '../pagination.ts';
import { ExportQuery, exportCheckoutSessions } from './checkout-session-export.ts';
import { assetWithChainPresenter } from './chains.ts';

/** The tenant's own session; another tenant's, or none, is a 404. */
async function ownedSession(
  sessions: Collection<CheckoutSessionDoc>,
  ctx: ApiContext,
  id: string,
): Promise<CheckoutSessionDoc> {
  const doc = await sessions.get(id);
  if (!ownedBy(ctx, doc)) throw new NotFoundError('checkout session', id);
  return doc;
}

/**
 * Recovery outcomes that credit nothing are client errors naming the problem: a wrong claim is a
 * 404 (the transaction pays nothing of this tenant; another tenant's session is never revealed,
 * so that answer is the same as for an unrelated transaction), and a wrong token or network a 422
 * (a real transaction to the tenant's deposit address, but in something that session cannot take).
 */
function creditedOrThrow(recovery: Recovery): Exclude<Recovery, { outcome: 'wrong_claim' | 'wrong_token_or_network' }> {
  if (recovery.outcome === 'wrong_claim') throw new WeirError(404, 'Not Found', 'wrong_claim', recovery.message);
  if (recovery.outcome === 'wrong_token_or_network')
    throw new UnprocessableError(recovery.message, 'wrong_token_or_network');
  return recovery;
}

/**
 * The session as the reference shows it: each address's, payment's and the payment method's asset
 * with its network and flags, and the payment intent's `paymentMethodId` (null until the payer picks an asset).
 */
export function sessionPresenter(deps: Pick<ApiDeps, 'rail' | 'publicUrl'>) {
  const assetWithChain = assetWithChainPresenter(deps);
  return (doc: CheckoutSession & { _id?: string }) => {
    const view = publicCheckoutSession(doc);
    const withChain = <T extends { asset: AssetRef }>(item: T) => ({
      ...item,
      asset: assetWithChain(doc.environment, item.asset),
    });
    return {
      ...view,
      addresses: view.addresses.map(withChain),
      paymentIntent: {
        ...view.paymentIntent,
        paymentMethod: view.paymentIntent.paymentMethod && withChain(view.paymentIntent.paymentMethod),
        transactions: view.paymentIntent.transactions.map(withChain),
        paymentMethodId: view.paymentIntent.paymentMethod?.id ?? null,
      },
    };
  };
}

export function checkoutSessionRoutes(
  deps: ApiDeps & { createCheckoutSession: CreateCheckoutSession },
): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1/checkout/sessions' });
  const sessions = deps.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);

  const present = sessionPresenter(deps);

  const load = (ctx: ApiContext, id: string): Promise<CheckoutSessionDoc> => ownedSession(sessions, ctx, id);

  const api = schemaRoutes(router, { tag: 'Checkout sessions', auth: 'secretKey' });
  const params = idParams('checkout session');
  const missing = notFound('checkout session');

  api.route(
    {
      method: 'post',
      path: '/',
      summary: 'Create a checkout session',
      description:
        'A session for its line items (existing prices, or `priceData` created with it), with a deposit address per offered asset.',
      body: CheckoutSessionCreate,
      response: CheckoutSessionSchema,
      errors: [
        invalidFields(
          'payment_method_not_available',
          'amount_too_large',
          'resource_missing',
          'product_inactive',
          'tax_rate_inactive',
        ),
        walletInvalid('the session'),
      ],
    },
    async (ctx, { body }) => {
      const { tenant } = ctx.state;
      const { session, position } = await deps.createCheckoutSession(
        body,
        { ...tenant, actor: tenant.actor },
        { newId: idsOf(ctx) },
      );
      if (position !== null) await deps.projections.waitFor(position);
      return present((await sessions.get(session.id)) ?? session);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/',
      summary: 'List checkout sessions',
      query: listQuery({
        ids: queryFilter('Comma-separated session ids'),
        paymentLinkId: queryFilter("The payment link's sessions"),
        subscriptionId: queryFilter("The subscription's sessions"),
        invoiceId: queryFilter("The invoice's sessions"),
        customerId: queryFilter("The customer's sessions"),
        mode: queryFilter('payment or subscription'),
        status: queryFilter(SESSION_STATUS_VALUES.join(', ')),
        paymentStatus: queryFilter('unpaid or paid'),
        couponId: queryFilter('Sessions discounted with this coupon'),
        paymentMethodTypes: queryFilter('Comma-separated payment method types'),
      }),
      response: listOf(CheckoutSessionSchema),
      errors: [invalidFields()],
    },
    (ctx) =>
      listPage(ctx, sessions, {
        present,
        filters: SESSION_LIST_FILTERS,
      }),
  );

  const recover = (
    ctx: ApiContext,
    input: { chainId: number; transactionHash: string },
    checkoutSessionId?: string,
  ): Promise<Recovery> => {
    if (!deps.transactionRecovery)
      throw new ValidationError(
        'chainId',
        `no network with chain id ${input.chainId}: this Weir follows no EVM network`,
        'chain_unsupported',
      );
    const { organizationId, environment } = ctx.state.tenant;
    const request: RecoveryCommand = {
      organizationId,
      environment,
      ...input,
      ...(checkoutSessionId ? { checkoutSessionId } : {}),
    };
    return deps.transactionRecovery.recover(request);
  };
  const recoveryErrors = [
    invalidFields('chain_unsupported'),
    { status: 404, codes: ['wrong_claim'], description: "The transaction pays none of the organization's sessions" },
    {
      status: 404,
      codes: ['transaction_not_found'],
      description: 'No such transaction on the chain, or not mined yet',
    },
    { status: 422, codes: ['transaction_failed'], description: 'The transaction failed (reverted) and moved nothing' },
    { status: 502, codes: ['chain_unavailable'], description: "The network's RPC endpoints gave no usable answer" },
    {
      status: 503,
      codes: ['follower_unavailable'],
      description: "The network's follower cannot take the transfer now",
    },
    {
      status: 422,
      codes: ['wrong_token_or_network'],
      description: 'The transaction pays a deposit address in something that session cannot take',
    },
    {
      status: 409,
      codes: ['chain_reorganizing', 'internal_transfers_unavailable'],
      description:
        "The chain is reorganizing under the transaction, or only internal calls could pay the session and the network's RPC endpoints serve no call trace",
    },
  ];

  // A literal path: registered before the `/:id` routes (those under POST all have a second segment, so none can take it anyway).
  api.route(
    {
      method: 'post',
      path: '/auto-recover-by-transaction-hash',
      summary: 'Credit a missed payment by its transaction hash',
      description: 'Finds the session the transaction paid and credits it; answers the session with the outcome.',
      body: RecoveryRequest,
      response: CheckoutSessionSchema.extend({
        recovery: z.object({ outcome: z.string(), message: z.string() }),
      }),
      errors: recoveryErrors,
    },
    async (ctx, { body }) => {
      const { outcome, message, session } = creditedOrThrow(await recover(ctx, body));
      return { ...present(session), recovery: { outcome, message } };
    },
  );

  // The reference answers this one with `{message, statusCode}`; `outcome` says the same for programs.
  api.route(
    {
      method: 'post',
      path: '/:id/auto-recover',
      summary: 'Credit a missed payment to this session',
      params,
      body: RecoveryRequest,
      response: z.object({ statusCode: z.literal(200), message: z.string(), outcome: z.string() }),
      errors: [...recoveryErrors, missing],
    },
    async (ctx, { params: { id }, body }) => {
      const session = await load(ctx, id);
      const { outcome, message } = creditedOrThrow(await recover(ctx, body, session.id));
      return { statusCode: 200, message, outcome };
    },
  );

  // A literal path: registered before `/:id`, which would take `export` for an id.
  const exportSessions = exportCheckoutSessions(
    sessions,
    deps.readStore.collection<CustomerDoc>(CUSTOMERS),
    deps.clock,
  );
  api.route(
    {
      method: 'get',
      path: '/export',
      summary: 'Export checkout sessions as CSV',
      description:
        'The sessions the filters select, newest first, as `text/csv` (streamed; a header row, then one row per session). A listing: `from` / `to` select by creation (`createdAt`), unless `dateField=completedAt` selects by completion (the volume report counts each payment by its confirmation, and by product by completion).',
      query: ExportQuery,
      errors: [invalidFields()],
    },
    (ctx) => exportSessions(ctx),
  );

  // The request a merchant's client repeats while it waits for a payment: cached JSON per document.
  const respondWithSession = cachedJson(present);
  api.route(
    {
      method: 'get',
      path: '/:id',
      summary: 'Read a checkout session',
      description:
        "The session as Weir last recorded it: its status, payment status, line items and amounts (received, fees, net). A session of another organization or of the key's other environment answers 404, as an unknown id does.",
      params,
      response: CheckoutSessionSchema,
      errors: [missing],
    },
    async (ctx, { params: { id } }) => respondWithSession(ctx, await load(ctx, id)),
  );

  api.route(
    {
      method: 'get',
      path: '/:id/completed_webhook_delivered',
      summary: 'Whether the session completed',
      params,
      response: z.object({
        completed: z.boolean(),
        transactionHash: z.string().nullable(),
        status: z.enum(SESSION_STATUS_VALUES),
        updatedAt: timestamp(),
      }),
      errors: [missing],
    },
    async (ctx, { params: { id } }) => {
      const session = await load(ctx, id);
      return {
        completed: session.status === 'complete',
        transactionHash: session.transactionHash,
        status: session.status,
        updatedAt: session.updatedAt,
      };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/:id/complete-partial-checkout-session',
      summary: 'Complete a partly paid session',
      params,
      response: CheckoutSessionSchema,
      errors: [
        missing,
        { status: 400, codes: ['status_transition_invalid'], description: 'The session is not partly paid' },
      ],
    },
    async (ctx, { params: { id } }) => {
      const session = await load(ctx, id);
      await commandFor(deps, ctx, checkoutSessionAggregate, session.id, { type: 'CompletePartialCheckoutSession' });
      return present((await sessions.get(session.id))!);
    },
  );

  api.route(
    {
      method: 'post',
      path: '/:id/cancel',
      summary: 'Cancel an open session',
      description:
        'A partly paid (`incomplete`) session cannot be canceled, as the money received stays accounted for: complete it with the amount received (`complete-partial-checkout-session`), or wait for the rest.',
      params,
      response: CheckoutSessionSchema,
      errors: [
        missing,
        {
          status: 400,
          codes: ['status_transition_invalid'],
          description:
            'The session is no longer open, or is partly paid (complete it with complete-partial-checkout-session)',
        },
      ],
    },
    async (ctx, { params: { id } }) => {
      const session = await load(ctx, id);
      await commandFor(deps, ctx, checkoutSessionAggregate, session.id, {
        type: 'CancelCheckoutSession',
        reason: 'canceled by the merchant',
      });
      return present((await sessions.get(session.id))!);
    },
  );

  return router;
}
