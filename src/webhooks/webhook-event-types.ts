/** Event kinds an endpoint may subscribe to (the reference API's enum; `*` means all). */
export const WEBHOOK_EVENT_TYPES = [
  'withdrawal_address.created',
  'withdrawal_address.updated',
  'withdrawal_address.deleted',
  'checkout_session.completed',
  'checkout_session.expired',
  'checkout_session.canceled',
  'checkout_session.late_payment',
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

export const subscribes = (enabled: string[], type: string): boolean =>
  type === TEST_WEBHOOK_EVENT_TYPE || enabled.includes('*') || enabled.includes(type);
