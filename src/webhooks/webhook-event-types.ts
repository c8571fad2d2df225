/**
 * A signed checkpoint of the log's hash chain (see src/audit/checkpoints.ts). It is no tenant's: it
 * goes to every organization's endpoints that name it, never through `*`, since its position tells
 * the size of the whole log, every tenant's events counted.
 */
export const AUDIT_CHECKPOINT_EVENT_TYPE = 'audit.checkpoint';

/**
 * Event kinds an endpoint may subscribe to (the reference API's enum, the specification's name for
 * one of them, and Weir's own; `*` means all but `audit.checkpoint`).
 */
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
  'payment_intent.failed',
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

/**
 * The specification's names for kinds the reference API names otherwise (reference name → the
 * specification's): one event under two names, subscribed to by either.
 */
const SPEC_NAMES: Readonly<Record<string, WebhookEventType>> = {
  'payment_intent.payment_failed': 'payment_intent.failed',
};

/** The specification's other name for a kind sent under the reference API's name, if it has one. */
export const specNameOf = (type: string): WebhookEventType | undefined =>
  Object.hasOwn(SPEC_NAMES, type) ? SPEC_NAMES[type] : undefined;

/** The reference API's name of a kind, whichever of its names `type` is (what its payload is made by). */
export const referenceNameOf = (type: string): string =>
  Object.keys(SPEC_NAMES).find((reference) => SPEC_NAMES[reference] === type) ?? type;

export const isWebhookEventType = (value: unknown): value is WebhookEventType =>
  typeof value === 'string' && (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);

/** Kinds an endpoint receives only when it names them: `*` does not take them in. */
const NAMED_ONLY: readonly string[] = [AUDIT_CHECKPOINT_EVENT_TYPE];

/**
 * The name an endpoint receives a kind under, or null when it does not receive it: the name it
 * listed; for a kind with two names, the specification's only when it listed that one and not the
 * reference's (`*` with the specification's name too: the name it chose); `*` otherwise.
 */
export function deliveredAs(enabled: readonly string[], type: string): string | null {
  if (type === TEST_WEBHOOK_EVENT_TYPE || enabled.includes(type)) return type;
  const specName = specNameOf(type);
  if (specName !== undefined && enabled.includes(specName)) return specName;
  return enabled.includes('*') && !NAMED_ONLY.includes(type) ? type : null;
}

export const subscribes = (enabled: readonly string[], type: string): boolean => deliveredAs(enabled, type) !== null;
