import { newSubscription, type NewSubscriptionInput } from './subscription.decide.ts';
import type { Subscription, SubscriptionBill, SubscriptionEvent, SubscriptionItem } from './subscription.types.ts';

export const SUBSCRIPTION_ID = '22222222-2222-4222-8222-222222222222';
export const T0 = '2026-01-01T00:00:00.000Z';

/** 10 USDC a month. */
export function itemFixture(overrides: Partial<SubscriptionItem> = {}): SubscriptionItem {
  return {
    priceId: 'price-1',
    productId: 'prod-1',
    quantity: 1,
    unitAmount: '1000000000',
    currency: 'usdc',
    interval: 'month',
    intervalCount: 1,
    ...overrides,
  };
}

/**
 * A monthly subscription of 10 USDC created at 2026-01-01T00:00Z by checkout session `cs-1`
 * (expiring an hour later); renewal invoices are due 3 days into their period.
 */
export function subscriptionFixture(overrides: Partial<NewSubscriptionInput> = {}): Subscription {
  return newSubscription({
    id: SUBSCRIPTION_ID,
    organizationId: 'org-1',
    environment: 'test',
    customerId: 'cus-1',
    items: [itemFixture()],
    createdAt: T0,
    daysUntilDue: 3,
    firstBill: { id: 'cs-1', kind: 'checkout_session', dueAt: '2026-01-01T01:00:00.000Z' },
    ...overrides,
  });
}

/** The same subscription with a 14-day trial and no first payment. */
export const trialFixture = (): Subscription =>
  subscriptionFixture({ trialEnd: '2026-01-15T00:00:00.000Z', firstBill: null });

export const created = (subscription = subscriptionFixture()): SubscriptionEvent => ({
  type: 'SubscriptionCreated',
  data: { subscription, dueIsInstant: true },
});
export const started = (invoiceId = 'cs-1', at = '2026-01-01T00:10:00.000Z'): SubscriptionEvent => ({
  type: 'SubscriptionStarted',
  data: { invoiceId, at },
});
export const incompleteExpired = (at = '2026-01-01T01:00:00.000Z'): SubscriptionEvent => ({
  type: 'SubscriptionIncompleteExpired',
  data: { invoiceId: 'cs-1', at },
});

export function renewalBill(
  id: string,
  periodStart: string,
  periodEnd: string,
  issuedAt = periodStart,
  dueAt = new Date(Date.parse(periodStart) + 3 * 86_400_000).toISOString(),
): SubscriptionBill {
  return {
    id,
    kind: 'invoice',
    amountDue: '1000000000',
    periodStart,
    periodEnd,
    issuedAt,
    dueAt,
    status: 'open',
    paidAt: null,
  };
}

/** The February renewal invoice `inv-2` of the fixture, issued 2026-02-01, due 2026-02-04. */
export const issued = (
  invoice = renewalBill('inv-2', '2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z'),
): SubscriptionEvent => ({
  type: 'RenewalInvoiceIssued',
  data: { invoice, at: invoice.issuedAt, dueIsInstant: true },
});
export const missed = (invoiceId = 'inv-2', at = '2026-02-04T00:00:00.000Z'): SubscriptionEvent => ({
  type: 'RenewalPaymentMissed',
  data: { invoiceId, at },
});
export const markedUnpaid = (at = '2026-02-11T00:00:00.000Z'): SubscriptionEvent => ({
  type: 'SubscriptionMarkedUnpaid',
  data: { at },
});
export const renewalPaid = (invoiceId = 'inv-2', at = '2026-02-02T00:00:00.000Z'): SubscriptionEvent => ({
  type: 'RenewalPaid',
  data: { invoiceId, at },
});
export const paused = (at = '2026-01-10T00:00:00.000Z'): SubscriptionEvent => ({
  type: 'SubscriptionPaused',
  data: { at },
});
export const canceled = (at = '2026-01-10T00:00:00.000Z', atPeriodEnd = false): SubscriptionEvent => ({
  type: 'SubscriptionCanceled',
  data: { atPeriodEnd, comment: null, at },
});
export const cancelScheduled = (
  at = '2026-01-10T00:00:00.000Z',
  cancelAt = '2026-02-01T00:00:00.000Z',
): SubscriptionEvent => ({
  type: 'SubscriptionCancelScheduled',
  data: { cancelAt, comment: null, at },
});

/** A history that leaves the fixture in each status. */
export const HISTORIES = {
  incomplete: [created()],
  incomplete_expired: [created(), incompleteExpired()],
  trialing: [created(trialFixture())],
  active: [created(), started()],
  past_due: [created(), started(), issued(), missed()],
  unpaid: [created(), started(), issued(), missed(), markedUnpaid()],
  paused: [created(), started(), paused()],
  canceled: [created(), started(), canceled()],
} satisfies Record<Subscription['status'], SubscriptionEvent[]>;

export const ENDED_AT = '2026-02-02T00:00:00.000Z';
/** Every way the fixture ends after it started, over its open renewal invoice `inv-2`, at ENDED_AT. */
export const ENDINGS_AFTER_START: Record<string, SubscriptionEvent[]> = {
  'ended while active': [created(), started(), issued(), canceled(ENDED_AT)],
  'ended while past due': [created(), started(), issued(), missed(), canceled(ENDED_AT)],
  'ended while unpaid': [created(), started(), issued(), missed(), markedUnpaid(), canceled(ENDED_AT)],
  'ended while paused': [created(), started(), issued(), paused('2026-02-01T12:00:00.000Z'), canceled(ENDED_AT)],
  'ended while trialing': [created(trialFixture()), issued(), canceled(ENDED_AT)],
  'canceled at period end': [
    created(),
    started(),
    issued(),
    missed(),
    cancelScheduled('2026-02-01T12:00:00.000Z', ENDED_AT),
    canceled(ENDED_AT, true),
  ],
};
