import Router from '@koa/router';
import type { Environment } from '../../event-store/event-store.ts';
import { TRANSACTIONS, type TransactionDoc } from '../../projections/transactions.projection.ts';
import type { Filter } from '../../read-store/read-store.ts';
import { ValidationError } from '../../shared/errors.ts';
import type { ApiContext, ApiDeps, ApiState } from '../api-context.ts';
import { listPage } from '../pagination.ts';

/** The reference's transaction types; Weir records `incoming` (payments) and `transfer` (sweeps) only. */
const TYPES = ['incoming', 'outgoing', 'event', 'transfer'] as const;
const STATUSES = ['pending', 'confirmed', 'withdrawn', 'broadcast', 'swept', 'reverted', 'dropped'] as const;
const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

const lastQuery = (ctx: ApiContext, name: string): string | undefined => {
  const v = ctx.query[name];
  const raw = Array.isArray(v) ? v[v.length - 1] : v;
  return raw === undefined || raw === '' ? undefined : raw;
};

/** The filters `listPage` cannot say itself: a numeric chain id, and a transaction hash in any case. */
function extraFilters(ctx: ApiContext): Filter {
  const filter: Filter = {};
  const chainId = lastQuery(ctx, 'chainId');
  if (chainId !== undefined) {
    if (!/^[1-9][0-9]{0,15}$/.test(chainId)) throw new ValidationError('chainId', 'must be a positive integer');
    filter.chainId = Number(chainId);
  }
  const hash = lastQuery(ctx, 'transactionHash');
  if (hash !== undefined) {
    if (!TX_HASH.test(hash))
      throw new ValidationError('transactionHash', 'must be a transaction hash: 0x and 64 hex digits');
    filter.transactionHash = { $regex: `^${hash}$`, $options: 'i' };
  }
  return filter;
}

/**
 * `GET /transactions`: the tenant's on-chain money movements, newest first: payments credited to
 * its checkout sessions (`incoming`) and the sweeps of its deposits to its wallets (`transfer`).
 */
export function transactionRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1/transactions' });
  const transactions = deps.readStore.collection<TransactionDoc>(TRANSACTIONS);

  const explorerUrl = (environment: Environment, doc: TransactionDoc): string | null => {
    const network = deps.rail.networks(environment).find((n) => n.network === doc.network);
    return network?.explorerTxUrl ? network.explorerTxUrl.replace('{hash}', doc.transactionHash) : null;
  };

  router.get('/', async (ctx) => {
    const { environment } = ctx.state.tenant;
    ctx.body = await listPage(ctx, transactions, {
      base: extraFilters(ctx),
      filters: {
        ids: { field: 'id', kind: 'csv' },
        type: { values: TYPES },
        status: { values: STATUSES },
        network: {},
        currency: {},
        assetId: {},
        checkoutSessionId: {},
        paymentIntentId: {},
        invoiceId: {},
        subscriptionId: {},
        late: { kind: 'boolean' },
      },
      present: (doc) => {
        const { _id, environment: _environment, ...transaction } = doc;
        return {
          ...transaction,
          object: 'transaction',
          livemode: doc.environment === 'live',
          transactionUrl: explorerUrl(environment, doc),
        };
      },
    });
  });

  return router;
}
