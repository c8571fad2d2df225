import { assign, setup } from 'xstate';
import { evolveSubscription } from './subscription.evolve.ts';
import type { Subscription, SubscriptionEvent } from './subscription.types.ts';

export type SubscriptionMachineContext = { subscription: Subscription | null };

const apply = assign<SubscriptionMachineContext, SubscriptionEvent, undefined, SubscriptionEvent, never>(
  ({ context, event }) => ({ subscription: evolveSubscription(context.subscription, event) }),
);

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
        RenewalInvoiceFinalized: { target: 'active', actions: 'apply' },
        RenewalInvoiceDeleted: { target: 'active', actions: 'apply' },
        RenewalInvoiceVoided: { target: 'active', actions: 'apply' },
        RenewalPaid: { target: 'active', actions: 'apply' },
        SubscriptionMarkedUnpaid: { target: 'unpaid', actions: 'apply' },
        SubscriptionCancelScheduled: { actions: 'apply' },
        SubscriptionCancelRevoked: { actions: 'apply' },
        SubscriptionCanceled: { target: 'canceled', actions: 'apply' },
      },
    },
    unpaid: {
      on: {
        RenewalInvoiceFinalized: { target: 'active', actions: 'apply' },
        RenewalInvoiceDeleted: { target: 'active', actions: 'apply' },
        RenewalInvoiceVoided: { target: 'active', actions: 'apply' },
        RenewalPaid: { target: 'active', actions: 'apply' },
        SubscriptionCancelScheduled: { actions: 'apply' },
        SubscriptionCancelRevoked: { actions: 'apply' },
        SubscriptionCanceled: { target: 'canceled', actions: 'apply' },
      },
    },
    paused: {
      on: {
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
    incomplete_expired: { type: 'final' },
    canceled: { type: 'final' },
  },
});
