import type {
  AssetRef,
  CheckoutSession,
  SessionDiscount,
  SessionPayment,
} from '../../machines/checkout-session.types.ts';
import { withoutBookkeeping } from '../../machines/checkout-session.received.ts';
import { shownAddress } from '../shared/evm-address.ts';
import { shownHashOn } from '../chain-ingest/tron/networks.ts';
import type { ApiKey } from '../actors/api-key.ts';
import type { Organization } from '../actors/organization.ts';
import { previousSecretExpiry, type WebhookEndpoint } from '../actors/webhook-endpoint.ts';

/** The transfers the payment intent shows, in its order (`paymentIntent.transactions`): those not withdrawn. */
export const intentTransfers = (session: Pick<CheckoutSession, 'payments'>): SessionPayment[] =>
  session.payments.filter((p) => p.status !== 'withdrawn');

/** The chain a transaction hash of the session is on: the transfer's it carries, else the chosen asset's. */
export const sessionHashChainOf = (
  session: Pick<CheckoutSession, 'payments' | 'paymentIntent'>,
  hash: string,
): number | undefined =>
  session.payments.find((p) => p.transactionHash === hash)?.chainId ??
  session.paymentIntent.paymentMethod?.asset.chainId;

/** A transaction hash of the session as shown: on the chain of the transfer it carries, else of the asset chosen. */
export function shownSessionHash(
  session: Pick<CheckoutSession, 'payments' | 'paymentIntent'>,
  hash: string | null,
): string | null {
  if (hash === null) return null;
  const chainId = sessionHashChainOf(session, hash);
  return chainId === undefined ? hash : shownHashOn(chainId, hash);
}

/** An asset with its token contract as answers show addresses (EIP-55 on EVM networks). */
export const shownAsset = <T extends AssetRef>(asset: T): T => ({ ...asset, address: shownAddress(asset.address) });

/**
 * A discount as the reference shows it: its amount and coupon beside Weir's own fields. A discount
 * applied before the coupon's terms were recorded with it names the coupon by its code alone.
 */
const shownDiscount = (discount: SessionDiscount) => {
  const { coupon, ...rest } = discount;
  return {
    ...rest,
    amount: discount.amountDiscount,
    coupon: {
      name: coupon?.name ?? discount.code,
      percentOff: coupon?.percentOff ?? null,
      amountOff: coupon?.amountOff ?? null,
      currency: coupon?.currency ?? null,
      code: discount.code,
    },
  };
};

/**
 * The payer's details with the reference's tax id fields: the session's copy has no id of its own
 * (the customer's tax ids carry theirs) and names the session's customer.
 */
const shownCustomerDetails = ({ customerDetails, customerId }: CheckoutSession) =>
  customerDetails?.taxIds
    ? {
        ...customerDetails,
        taxIds: {
          ...customerDetails.taxIds,
          data: customerDetails.taxIds.data.map((t) => ({ id: null, customerId: customerId ?? null, ...t })),
        },
      }
    : customerDetails;

/**
 * The checkout session as merchants see it (API responses and webhook payloads). Its transaction
 * and block hashes as their networks' tools show them: a Tron txID or block id bare (the session keeps `0x…`).
 */
export function publicCheckoutSession(session: CheckoutSession & { _id?: string; _revision?: number }) {
  // Transfers a reconciliation credit already held, and the sweeper's broadcasts and drops, are the log's
  // and the operator's, not the reference's shape.
  const {
    environment: _environment,
    _id,
    _revision,
    reconciledTransfers: _reconciled,
    sweepsBroadcast: _broadcast,
    sweepsDropped: _dropped,
    sweepsLookedUp: _lookedUp,
    ...rest
  } = session;
  const { paymentMethod } = session.paymentIntent;
  const shown = (hash: string | null) => shownSessionHash(session, hash);
  return {
    ...rest,
    livemode: session.environment === 'live',
    transactionHash: shown(session.transactionHash),
    addresses: session.addresses.map((a) => ({
      ...a,
      asset: shownAsset(a.asset),
      paymentAddress: shownAddress(a.paymentAddress),
      merchantAddress: shownAddress(a.merchantAddress),
    })),
    customerDetails: shownCustomerDetails(session),
    discounts: session.discounts.map(shownDiscount),
    // The blocks a transfer was seen in before a reorg, and whether a session waits for it to come
    // back, are the matcher's bookkeeping (seen before a cancel, covered by a mark of refunded: the
    // pages' wording): a payment shows the block it is in and its status.
    payments: session.payments.map(withoutBookkeeping).map((p) => ({
      ...p,
      transactionHash: shownHashOn(p.chainId, p.transactionHash),
      blockHash: shownHashOn(p.chainId, p.blockHash),
      fromAddress: shownAddress(p.fromAddress),
      toAddress: shownAddress(p.toAddress),
      asset: shownAsset(p.asset),
    })),
    // Documents from before sweeps were recorded hold none.
    // What each sweep flushed and moved is the log's (the sweep's amount is its transaction's, GET /transactions).
    ...(session.sweeps && {
      sweeps: session.sweeps.map(({ assets: _assets, moved: _moved, ...sweep }) => ({
        ...sweep,
        transactionHash: shownHashOn(sweep.chainId, sweep.transactionHash),
      })),
    }),
    paymentIntent: {
      ...session.paymentIntent,
      paymentMethod: paymentMethod && {
        ...paymentMethod,
        accountAddress: shownAddress(paymentMethod.accountAddress),
        assetId: paymentMethod.asset.id,
        asset: shownAsset(paymentMethod.asset),
        options: {
          wallet: {
            ...paymentMethod.options.wallet,
            transactionHash: shown(paymentMethod.options.wallet.transactionHash),
            contractAddress: shownAddress(paymentMethod.options.wallet.contractAddress),
          },
        },
      },
      transactions: intentTransfers(session).map((p) => ({
        type: 'incoming',
        transactionHash: shownHashOn(p.chainId, p.transactionHash),
        fromAddress: shownAddress(p.fromAddress),
        toAddress: shownAddress(p.toAddress),
        currency: p.asset.currency,
        amount: p.amount,
        amountRaw: p.amountRaw,
        assetId: p.asset.id,
        asset: shownAsset(p.asset),
        chainId: p.chainId,
        blockNumber: p.blockNumber,
        status: p.status,
        late: p.late,
        createdAt: p.detectedAt,
      })),
    },
  };
}

export function publicOrganization(org: Organization & { _id?: string; organizationId?: string; _revision?: number }) {
  const { paymentSetting: _ps, withdrawalAddresses, _id, organizationId: _org, _revision, ...rest } = org;
  return {
    ...rest,
    addresses: withdrawalAddresses.map((w) => ({ ...w, address: shownAddress(w.address) })),
  };
}

export function publicApiKey(key: ApiKey) {
  return {
    id: key.id,
    name: key.name,
    environment: key.environment,
    // Documents written before scopes (on a durable read store) hold none: full keys.
    scope: key.scope ?? 'full',
    maskedKey: `sk_${key.environment}_…${key.last4}`,
    createdAt: key.createdAt,
    updatedAt: key.updatedAt,
  };
}

export function publicWebhookEndpoint(endpoint: WebhookEndpoint, secret: string, nowMs: number) {
  return {
    id: endpoint.id,
    description: endpoint.description,
    url: endpoint.url,
    secret,
    previousSecretExpiresAt: previousSecretExpiry(endpoint, nowMs),
    isDisabled: endpoint.isDisabled,
    enabledEvents: endpoint.enabledEvents,
    createdAt: endpoint.createdAt,
    updatedAt: endpoint.updatedAt,
  };
}
