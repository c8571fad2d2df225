import type { CheckoutSession } from '../../machines/checkout-session.types.ts';
import type { ApiKey } from '../actors/api-key.ts';
import type { Organization } from '../actors/organization.ts';
import type { WebhookEndpoint } from '../actors/webhook-endpoint.ts';

/** The checkout session as merchants see it (API responses and webhook payloads). */
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
  return {
    ...rest,
    // The blocks a transfer was seen in before a reorg, and whether a session waits for it to come
    // back, are the matcher's bookkeeping: a payment shows the block it is in and its status.
    payments: session.payments.map(({ seenIn: _seenIn, mayReturn: _mayReturn, ...payment }) => payment),
    livemode: session.environment === 'live',
    paymentIntent: {
      ...session.paymentIntent,
      transactions: session.payments
        .filter((p) => p.status !== 'withdrawn')
        .map((p) => ({
          type: 'incoming',
          transactionHash: p.transactionHash,
          fromAddress: p.fromAddress,
          toAddress: p.toAddress,
          currency: p.asset.currency,
          amount: p.amount,
          amountRaw: p.amountRaw,
          assetId: p.asset.id,
          asset: p.asset,
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
  return { ...rest, addresses: withdrawalAddresses };
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

export function publicWebhookEndpoint(endpoint: WebhookEndpoint, secret: string) {
  return {
    id: endpoint.id,
    description: endpoint.description,
    url: endpoint.url,
    secret,
    isDisabled: endpoint.isDisabled,
    enabledEvents: endpoint.enabledEvents,
    createdAt: endpoint.createdAt,
    updatedAt: endpoint.updatedAt,
  };
}
