import Router from '@koa/router';
import { shownHashOn } from '../../chain-ingest/tron/networks.ts';
import { explorerLinkOf } from '../../chain-ingest/network-definition.ts';
import type { Environment } from '../../event-store/event-store.ts';
import { TRANSACTIONS, type TransactionDoc } from '../../projections/transactions.projection.ts';
import type { Filter } from '../../read-store/read-store.ts';
import { TransactionSchema } from '../schema/checkout-session.ts';
import { invalidFields, listOf, listQuery, queryFilter, withCode, z } from '../schema/fields.ts';
import { schemaRoutes } from '../schema/route.ts';
import type { ApiDeps, ApiState } from '../api-context.ts';
import { listPage } from '../pagination.ts';
import { shownAddress } from '../../shared/evm-address.ts';
import { assetWithChainPresenter } from './chains.ts';

/** The reference's transaction types; Weir records `incoming` (payments) and `transfer` (sweeps) only. */
const TYPES = ['incoming', 'outgoing', 'event', 'transfer'] as const;
const STATUSES = ['pending', 'confirmed', 'withdrawn', 'broadcast', 'swept', 'reverted', 'dropped'] as const;
/** With 0x (EVM) or without (a Tron txID as Tronscan shows it): the 0x form is what the documents keep. */
const TX_HASH = /^(?:0x)?([0-9a-fA-F]{64})$/;

const given = (v: string | undefined): v is string => v !== undefined && v !== '';

/** `confirmedAt[gt|gte|lt|lte]`: payments by the time the volume report counts them (a sweep has none). */
const CONFIRMATION = ['confirmedAt'];

/** The filters `listPage` cannot say itself: a numeric chain id, and a transaction hash in any case. */
function extraFilters(query: { chainId?: string | undefined; transactionHash?: string | undefined }): Filter {
  const filter: Filter = {};
  if (given(query.chainId)) filter.chainId = Number(query.chainId);
  const hex = given(query.transactionHash) ? TX_HASH.exec(query.transactionHash)?.[1] : undefined;
  if (hex !== undefined) filter.transactionHash = { $regex: `^0x${hex}$`, $options: 'i' };
  return filter;
}

/** A query filter checked here (an empty value is no filter, as `listPage` reads them). */
const checkedFilter = (test: RegExp, message: string, description: string) =>
  z
    .string()
    .optional()
    .refine((v) => !given(v) || test.test(v), withCode(message))
    .openapi({ description });

const TransactionsQuery = listQuery(
  {
    chainId: checkedFilter(/^[1-9][0-9]{0,15}$/, 'must be a positive integer', 'The network (a chain id)'),
    transactionHash: checkedFilter(
      TX_HASH,
      'must be a transaction hash: 64 hex digits, with or without 0x',
      'The on-chain transaction, in any case, with or without 0x (a Tron txID is shown without)',
    ),
    ids: queryFilter('Comma-separated transaction ids'),
    type: queryFilter(TYPES.join(', ')),
    status: queryFilter(STATUSES.join(', ')),
    network: queryFilter(
      "The network's name, as `GET /chains` shows it (`network`): one Weir offers, or one the tenant has transactions on",
    ),
    currency: queryFilter('The asset currency'),
    assetId: queryFilter('The asset'),
    checkoutSessionId: queryFilter("The session's transactions"),
    paymentIntentId: queryFilter("The payment intent's transactions"),
    invoiceId: queryFilter("The invoice's transactions"),
    subscriptionId: queryFilter("The subscription's transactions"),
    late: queryFilter('true or false: payments confirmed after their session ended'),
    // The volume report counts each payment at its confirmation: these bounds reconcile it day by day.
  },
  { dateFields: CONFIRMATION },
);

/**
 * `GET /transactions`: the tenant's on-chain money movements, newest first: payments credited to
 * its checkout sessions (`incoming`) and the sweeps of its deposits to its wallets (`transfer`).
 */
export function transactionRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1/transactions' });
  const transactions = deps.readStore.collection<TransactionDoc>(TRANSACTIONS);

  const explorerUrl = (environment: Environment, doc: TransactionDoc): string | null => {
    const network = deps.rail.networks(environment).find((n) => n.network === doc.network);
    return network ? explorerLinkOf(network, doc.transactionHash) : null;
  };

  const assetWithChain = assetWithChainPresenter(deps);

  const api = schemaRoutes(router, { tag: 'Transactions', auth: 'secretKey' });
  api.route(
    {
      method: 'get',
      path: '/',
      summary: 'List transactions',
      description:
        'Payments credited to checkout sessions (`incoming`) and the sweeps of their deposits (`transfer`), newest first. `confirmedAt[gt|gte|lt|lte]` selects payments by their confirmation, the time the volume report counts them by (a sweep has none, so it is left out): `type=incoming&status=confirmed&confirmedAt[gte]=2026-11-02&confirmedAt[lte]=2026-11-02` are the payments the volume report counts on 2 November UTC (add `timezone=Europe/Paris` for those it counts on 2 November in Paris, as the report given that zone does).',
      query: TransactionsQuery,
      response: listOf(TransactionSchema),
      errors: [invalidFields()],
    },
    async (ctx, { query }) => {
      const { organizationId, environment } = ctx.state.tenant;
      const offered = deps.rail.networks(environment).map((n) => n.network);
      // A network no longer configured still names the tenant's transactions made on it.
      const { network } = query;
      const held =
        given(network) &&
        !offered.includes(network) &&
        (await transactions.count({ organizationId, environment, network })) > 0;
      return listPage(ctx, transactions, {
        base: extraFilters(query),
        dateFields: CONFIRMATION,
        filters: {
          ids: { field: 'id', kind: 'csv' },
          type: { values: TYPES },
          status: { values: STATUSES },
          // The networks Weir offers the environment: a name it does not know is a 400 listing them, not an empty page.
          network: { values: [...new Set(held ? [...offered, network] : offered)] },
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
            transactionHash: shownHashOn(doc.chainId, doc.transactionHash),
            fromAddress: shownAddress(doc.fromAddress),
            toAddress: shownAddress(doc.toAddress),
            asset: doc.asset && assetWithChain(environment, doc.asset),
            object: 'transaction',
            livemode: doc.environment === 'live',
            transactionUrl: explorerUrl(environment, doc),
          };
        },
      });
    },
  );

  return router;
}
