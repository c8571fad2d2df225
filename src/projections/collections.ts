import type { CheckoutSession } from '../../machines/checkout-session.types.ts';
import type { ApiKey, ApiKeyScope } from '../actors/api-key.ts';
import type { Organization } from '../actors/organization.ts';
import type { WebhookEndpoint } from '../actors/webhook-endpoint.ts';
import type { ReadDocument } from '../read-store/read-store.ts';

/** Names and document shapes of every read model. */
export const COLLECTIONS = {
  organizations: 'organizations',
  apiKeys: 'api_keys',
  apiKeySecrets: 'api_key_secrets',
  checkoutSessions: 'checkout_sessions',
  depositAddresses: 'deposit_addresses',
  chainPayments: 'chain_payments',
  settledBlocks: 'settled_blocks',
  timers: 'timers',
  webhookEndpoints: 'webhook_endpoints',
  webhookDeliveries: 'webhook_deliveries',
} as const;

/** `_revision`: the organization stream's revision it reflects. */
export type OrganizationDoc = ReadDocument & Organization & { organizationId: string; _revision?: number };
export type ApiKeyDoc = ReadDocument & ApiKey;
export type ApiKeySecretDoc = ReadDocument & {
  keyId: string;
  organizationId: string;
  environment: string;
  /** Absent on documents written before scopes: a full key. */
  scope?: ApiKeyScope;
};
/** `_revision`: the session stream's revision the document reflects. */
export type CheckoutSessionDoc = ReadDocument & CheckoutSession & { _revision?: number };
export type DepositAddressDoc = ReadDocument & {
  network: string;
  address: string;
  checkoutSessionId: string;
  organizationId: string;
  environment: string;
};
export type ChainPaymentDoc = ReadDocument & {
  network: string;
  blockNumber: number;
  blockHash: string;
  /**
   * `withdrawn`: a final may yet bring it back (its block's) or give it up; `settled`: withdrawn,
   * a final block at every height it was seen at another (`SessionPayment.settled`), so finals,
   * which read the withdrawn ones, no longer read it.
   */
  status: 'pending' | 'confirmed' | 'withdrawn' | 'settled';
  /** The other blocks it was seen in before a reorg took each away (see `SessionPayment.seenIn`); absent when one. */
  seenIn?: { number: number; hash: string }[];
  checkoutSessionId: string;
  organizationId: string;
  environment: string;
};
/**
 * The settled chain payments seen in one block (`_id`: `settledBlockKey(network, hash)`), each of
 * its blocks: a final reads those of its block by that key, never every settled one. Shared by
 * tenants (a block holds anyone's transfers): each transfer's chain payment carries its tenant.
 */
export type SettledBlockDoc = ReadDocument & { network: string; blockHash: string; transferIds: string[] };
/**
 * A pending durable timer. `kind` picks its handler; `recordId` is the record its command goes to;
 * `version` (the record's stream revision when it was set) tells a rescheduling at the same fire
 * time from the one already spent; `args` carries what the command needs beyond the record.
 */
export type TimerDoc = ReadDocument & {
  kind: string;
  recordId: string;
  organizationId: string;
  environment: string;
  fireAt: number;
  version?: number;
  args?: Record<string, string | number>;
};
/** `_position`: the log position of the last event of the endpoint folded in (a decimal string). */
export type WebhookEndpointDoc = ReadDocument & WebhookEndpoint & { _position?: string };
export type WebhookAttemptLog = {
  attempt: number;
  at: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** The start of the receiver's answer body (attempts recorded before it was kept have none). */
  response?: string | null;
};
export type WebhookDeliveryDoc = ReadDocument & {
  id: string;
  organizationId: string;
  environment: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  eventObject: string;
  /** The log event the payload is rendered from (the same bytes on every attempt while the configuration stays). */
  source: { streamId: string; revision: number };
  createdAt: string;
  firstDueAt: number;
  status: 'pending' | 'succeeded' | 'failed' | 'canceled';
  attempts: number;
  nextAttemptAt: number | null;
  log: WebhookAttemptLog[];
  /** Why a canceled delivery ended: its endpoint was deleted or disabled before it succeeded. */
  canceled?: { at: string; reason: string };
  /** Attempts asked for by hand (resend): when, by whom (user or API key) and the attempt it made due. */
  resends?: { at: string; by: string; attempt: number }[];
  /** The delivery stream's revision it reflects; absent before its first event. */
  _revision?: number;
};
