import { assign, setup } from 'xstate';
import { evolveSubscription } from './subscription.evolve.ts';
import type { Subscription, SubscriptionEvent } from './subscription.types.ts';

export type SubscriptionMachineContext = { subscription: Subscription | null };

const apply = assign<SubscriptionMachineContext, SubscriptionEvent, undefined, SubscriptionEvent, never>(
  ({ context, event }) => ({ subscription: evolveSubscription(context.subscription, event) }),
);

/** What leaves a past due or unpaid subscription once no bill of it is overdue any more (see `leavesOverdue`). */
const LEAVES_OVERDUE = [{ guard: 'leavesOverdue', target: 'active', actions: 'apply' }, { actions: 'apply' }] as const;
/**
 * What a past due or unpaid subscription records of its bills: a bill reopened, removed or paid (the first
 * payment of a trialing one that went past due is its start), and a later renewal Weir could not finalize.
 */
const SETTLES_A_BILL = {
  RenewalInvoiceFinalized: LEAVES_OVERDUE,
  RenewalInvoiceDeleted: LEAVES_OVERDUE,
  RenewalInvoiceVoided: LEAVES_OVERDUE,
  RenewalPaid: LEAVES_OVERDUE,
  SubscriptionStarted: [
    { guard: 'startsLateLeavingOverdue', target: 'active', actions: 'apply' },
    { guard: 'startsLate', actions: 'apply' },
  ],
  RenewalInvoiceNotFinalized: { actions: 'apply' },
} as const;

/**
 * Lifecycle of a subscription. The machine is driven by the subscription's recorded events
 * (facts), so folding the stream through `transition()` rebuilds its state; an event the current
 * state does not accept is a fact the decider must never produce. State names are the statuses
 * of the reference API (plus `new`, before the subscription exists).
 *
 * A scheduled cancellation (cancel at period end) is a flag, not a state: the subscription keeps
 * its status until the period ends, and it can be revoked until then.
 */
export const subscriptionMachine = setup({
  types: {
    context: {} as SubscriptionMachineContext,
    events: {} as SubscriptionEvent,
  },
  actions: { apply },
  guards: {
    startsTrialing: ({ event }) =>
      event.type === 'SubscriptionCreated' && event.data.subscription.status === 'trialing',
    // The one rule of `evolveSubscription`: active again unless another bill is still overdue.
    leavesOverdue: ({ context, event }) => evolveSubscription(context.subscription, event)?.status === 'active',
    // A trialing subscription that went past due before it was paid starts at its first payment, whatever its status then.
    startsLate: ({ context }) => context.subscription?.notStarted === true,
    startsLateLeavingOverdue: ({ context, event }) =>
      context.subscription?.notStarted === true && evolveSubscription(context.subscription, event)?.status === 'active',
  },
}).createMachine({
  id: 'subscription',
  context: { subscription: null },
  initial: 'new',
  states: {
    new: {
      on: {
        SubscriptionCreated: [
          { guard: 'startsTrialing', target: 'trialing', actions: 'apply' },
          { target: 'incomplete', actions: 'apply' },
        ],
      },
    },
    incomplete: {
      on: {
        FirstBillDiscounted: { actions: 'apply' },
        SubscriptionStarted: { target: 'active', actions: 'apply' },
        SubscriptionIncompleteExpired: { target: 'incomplete_expired', actions: 'apply' },
        SubscriptionCanceled: { target: 'canceled', actions: 'apply' },
      },
    },
    trialing: {
      on: {
        RenewalInvoiceNotFinalized: { actions: 'apply' },
        RenewalInvoiceFinalized: { actions: 'apply' },
        RenewalInvoiceDeleted: { actions: 'apply' },
        RenewalInvoiceVoided: { actions: 'apply' },
        RenewalInvoiceIssued: { actions: 'apply' },
        SubscriptionStarted: { target: 'active', actions: 'apply' },
        RenewalPaymentMissed: { target: 'past_due', actions: 'apply' },
        SubscriptionCancelScheduled: { actions: 'apply' },
        SubscriptionCancelRevoked: { actions: 'apply' },
        SubscriptionCanceled: { target: 'canceled', actions: 'apply' },
      },
    },
    active: {
      on: {
        // The first payment of a trialing subscription that went past due, then active unpaid (a void).
        SubscriptionStarted: { guard: 'startsLate', actions: 'apply' },
        RenewalInvoiceNotFinalized: { actions: 'apply' },
        RenewalInvoiceFinalized: { actions: 'apply' },
        FirstBillDiscounted: { actions: 'apply' },
        RenewalInvoiceDeleted: { actions: 'apply' },
        RenewalInvoiceVoided: { actions: 'apply' },
        RenewalInvoiceIssued: { actions: 'apply' },
        RenewalPaid: { actions: 'apply' },
        RenewalPaymentMissed: { target: 'past_due', actions: 'apply' },
        SubscriptionCancelScheduled: { actions: 'apply' },
        SubscriptionCancelRevoked: { actions: 'apply' },
        SubscriptionCanceled: { target: 'canceled', actions: 'apply' },
        SubscriptionPaused: { target: 'paused', actions: 'apply' },
      },
    },
    past_due: {
      on: {
        ...SETTLES_A_BILL,
        SubscriptionMarkedUnpaid: { target: 'unpaid', actions: 'apply' },
        SubscriptionCancelScheduled: { actions: 'apply' },
        SubscriptionCancelRevoked: { actions: 'apply' },
        SubscriptionCanceled: { target: 'canceled', actions: 'apply' },
      },
    },
    unpaid: {
      on: {
        ...SETTLES_A_BILL,
        SubscriptionCancelScheduled: { actions: 'apply' },
        SubscriptionCancelRevoked: { actions: 'apply' },
        SubscriptionCanceled: { target: 'canceled', actions: 'apply' },
      },
    },
    paused: {
      on: {
        SubscriptionStarted: { guard: 'startsLate', actions: 'apply' },
        RenewalInvoiceNotFinalized: { actions: 'apply' },
        RenewalInvoiceFinalized: { actions: 'apply' },
        FirstBillDiscounted: { actions: 'apply' },
        RenewalInvoiceDeleted: { actions: 'apply' },
        RenewalInvoiceVoided: { actions: 'apply' },
        RenewalPaid: { actions: 'apply' },
        SubscriptionResumed: { target: 'active', actions: 'apply' },
        SubscriptionCanceled: { target: 'canceled', actions: 'apply' },
      },
    },
    // Not final: money its first checkout session receives after an end without a start is owed back, recorded on its bill.
    incomplete_expired: { on: { FirstBillLatePaymentReceived: { actions: 'apply' } } },
    canceled: { on: { FirstBillLatePaymentReceived: { actions: 'apply' } } },
  },
});
