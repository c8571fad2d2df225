import Router from '@koa/router';
import { checkoutSessionAggregate } from '../../../machines/checkout-session.aggregate.ts';
import type { AssetRef, CheckoutSession } from '../../../machines/checkout-session.types.ts';
import type { CreateCheckoutSession } from '../../actors/create-checkout-session.ts';
import type { Environment } from '../../event-store/event-store.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../../projections/collections.ts';
import { publicCheckoutSession } from '../../projections/public-views.ts';
import type { Recovery, RecoveryRequest } from '../../chain-ingest/evm/recover-transaction.ts';
import { NotFoundError, UnprocessableError, ValidationError, WeirError } from '../../shared/errors.ts';
import { asObject, optionalInteger, requiredString } from '../../shared/input.ts';
import type { Collection } from '../../read-store/read-store.ts';
import { type ApiContext, type ApiDeps, type ApiState, idsOf } from '../api-context.ts';
import { commandFor, ownedBy } from '../command.ts';
import { cachedJson } from '../json-cache.ts';
import { listPage } from '../pagination.ts';
import { exportCheckoutSessions } from './checkout-session-export.ts';
import { presentAsset, presentChain } from './chains.ts';

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

/** The body of both recovery routes, `{chainId, transactionHash}` as in the reference API. */
function recoveryInput(body: unknown): { chainId: number; transactionHash: string } {
  const o = asObject(body, '');
  const chainId = optionalInteger(o, 'chainId', '', { min: 1 });
  if (chainId === undefined)
    throw new ValidationError(
      'chainId',
      'is required: the chain id of the network the transaction is on, e.g. 1 for Ethereum',
      'parameter_missing',
    );
  const transactionHash = requiredString(o, 'transactionHash', '', {
    pattern: /^0x[0-9a-fA-F]{64}$/,
    hint: 'must be a transaction hash: 0x and 64 hex digits',
  });
  return { chainId, transactionHash };
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
 * The session as the reference shows it: each address's and payment's asset with its network and
 * flags, and the payment intent's `paymentMethodId` (null until the payer picks an asset).
 */
export function sessionPresenter(deps: Pick<ApiDeps, 'rail' | 'publicUrl'>) {
  // Each offered asset's network, as GET /chains/{id} shows it (without its asset list), by chain id.
  const chainsOf = new Map<Environment, Map<number, unknown>>();
  const chainOf = (environment: Environment, chainId: number) => {
    let chains = chainsOf.get(environment);
    if (!chains) {
      chains = new Map(
        deps.rail.networks(environment).map((n) => {
          const { assets: _assets, ...chain } = presentChain(n, deps.publicUrl);
          return [n.chainId, chain] as const;
        }),
      );
      chainsOf.set(environment, chains);
    }
    return chains.get(chainId) ?? null;
  };
  return (doc: CheckoutSession & { _id?: string }) => {
    const view = publicCheckoutSession(doc);
    const withChain = <T extends { asset: AssetRef }>(item: T) => ({
      ...item,
      asset: { ...presentAsset(item.asset), chain: chainOf(doc.environment, item.asset.chainId) },
    });
    return {
      ...view,
      addresses: view.addresses.map(withChain),
      paymentIntent: {
        ...view.paymentIntent,
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

  const load = (ctx: ApiContext): Promise<CheckoutSessionDoc> => ownedSession(sessions, ctx, ctx.params.id!);

  router.post('/', async (ctx) => {
    const { tenant } = ctx.state;
    const { session, position } = await deps.createCheckoutSession(
      ctx.state.body,
      { ...tenant, actor: `api_key:${tenant.keyId}` },
      { newId: idsOf(ctx) },
    );
    if (position !== null) await deps.projections.waitFor(position);
    ctx.body = present((await sessions.get(session.id)) ?? session);
  });

  router.get('/', async (ctx) => {
    ctx.body = await listPage(ctx, sessions, {
      present,
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

  const recover = (ctx: ApiContext, checkoutSessionId?: string): Promise<Recovery> => {
    const input = recoveryInput(ctx.state.body);
    if (!deps.transactionRecovery)
      throw new ValidationError(
        'chainId',
        `no network with chain id ${input.chainId}: this Weir follows no EVM network`,
        'chain_unsupported',
      );
    const { organizationId, environment } = ctx.state.tenant;
    const request: RecoveryRequest = {
      organizationId,
      environment,
      ...input,
      ...(checkoutSessionId ? { checkoutSessionId } : {}),
    };
    return deps.transactionRecovery.recover(request);
  };

  // A literal path: registered before the `/:id` routes (those under POST all have a second segment, so none can take it anyway).
  router.post('/auto-recover-by-transaction-hash', async (ctx) => {
    const { outcome, message, session } = creditedOrThrow(await recover(ctx));
    ctx.body = { ...present(session), recovery: { outcome, message } };
  });

  // The reference answers this one with `{message, statusCode}`; `outcome` says the same for programs.
  router.post('/:id/auto-recover', async (ctx) => {
    const session = await load(ctx);
    const { outcome, message } = creditedOrThrow(await recover(ctx, session.id));
    ctx.body = { statusCode: 200, message, outcome };
  });

  // A literal path: registered before `/:id`, which would take `export` for an id.
  router.get('/export', exportCheckoutSessions(sessions, deps.clock));

  // The request a merchant's client repeats while it waits for a payment: cached JSON per document.
  const respondWithSession = cachedJson(present);
  router.get('/:id', async (ctx) => respondWithSession(ctx, await load(ctx)));

  router.get('/:id/completed_webhook_delivered', async (ctx) => {
    const session = await load(ctx);
    ctx.body = {
      completed: session.status === 'complete',
      transactionHash: session.transactionHash,
      status: session.status,
      updatedAt: session.updatedAt,
    };
  });

  router.post('/:id/complete-partial-checkout-session', async (ctx) => {
    const session = await load(ctx);
    await commandFor(deps, ctx, checkoutSessionAggregate, session.id, { type: 'CompletePartialCheckoutSession' });
    ctx.body = present((await sessions.get(session.id))!);
  });

  router.post('/:id/cancel', async (ctx) => {
    const session = await load(ctx);
    await commandFor(deps, ctx, checkoutSessionAggregate, session.id, {
      type: 'CancelCheckoutSession',
      reason: 'canceled by the merchant',
    });
    ctx.body = present((await sessions.get(session.id))!);
  });

  return router;
}
