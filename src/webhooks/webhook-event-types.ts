/**
 * A signed checkpoint of the log's hash chain (see src/audit/checkpoints.ts). It is no tenant's: it
 * goes to every organization's endpoints that name it, never through `*`, since its position tells
 * the size of the whole log, every tenant's events counted.
 */
export const AUDIT_CHECKPOINT_EVENT_TYPE = 'audit.checkpoint';

/** Event kinds an endpoint may subscribe to (the reference API's enum and Weir's own; `*` means all but `audit.checkpoint`). */
export const WEBHOOK_EVENT_TYPES = [
  'withdrawal_address.created',
  'withdrawal_address.updated',
  'withdrawal_address.deleted',
  'checkout_session.completed',
  'checkout_session.expired',
  'checkout_session.canceled',
  'checkout_session.late_payment',
  'checkout_session.overpayment',
  'customer.subscription.created',
  'customer.subscription.started',
  'customer.subscription.deleted',
  'customer.subscription.past_due',
  'customer.subscription.unpaid',
  'customer.subscription.incomplete_expired',
  'payment_intent.payment_failed',
  'payment_intent.canceled',
  'payment_intent.succeeded',
  'invoice.finalized',
  'invoice.paid',
  'invoice.marked_as_paid',
  'invoice.marked_uncollectible',
  'invoice.payment_failed',
  'invoice.finalization_failed',
  AUDIT_CHECKPOINT_EVENT_TYPE,
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Sent only by the endpoint's test operation, whatever its subscriptions. */
export const TEST_WEBHOOK_EVENT_TYPE = 'webhook_endpoint.test';

/** The specification's names for kinds sent under the reference API's name, to say so when one is asked for. */
export const SPEC_EVENT_TYPE_NAMES: Readonly<Record<string, WebhookEventType>> = {
  'payment_intent.failed': 'payment_intent.payment_failed',
};

export const isWebhookEventType = (value: unknown): value is WebhookEventType =>
  typeof value === 'string' && (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);

/** Kinds an endpoint receives only when it names them: `*` does not take them in. */
const NAMED_ONLY: readonly string[] = [AUDIT_CHECKPOINT_EVENT_TYPE];

export const subscribes = (enabled: string[], type: string): boolean =>
  type === TEST_WEBHOOK_EVENT_TYPE || enabled.includes(type) || (enabled.includes('*') && !NAMED_ONLY.includes(type));
