import { assign, setup } from 'xstate';
import { evolveCheckoutSession } from './checkout-session.evolve.ts';
import type { CheckoutSession, CheckoutSessionEvent } from './checkout-session.types.ts';

export type CheckoutSessionMachineContext = { session: CheckoutSession | null };

const apply = assign<CheckoutSessionMachineContext, CheckoutSessionEvent, undefined, CheckoutSessionEvent, never>(
  ({ context, event }) => ({ session: evolveCheckoutSession(context.session, event) }),
);

/** A payment pending, or withdrawn by a reorg and free to be mined again (`mayReturn`): the session waits for it. */
const hasPendingPayment = (session: CheckoutSession | null): boolean =>
  session?.payments.some((p) => p.status === 'pending' || p.mayReturn === true) ?? false;

/**
 * Lifecycle of a checkout session and its payment intent. The machine is driven by the session's
 * recorded events (facts), so folding the stream through `transition()` rebuilds its state; an
 * event the current state does not accept is a fact the decider must never produce.
 *
 * Payments may be detected, withdrawn (reorg) and confirmed in every state: money that reaches
 * a deposit address is always recorded, even after expiry.
 *
 * An open session is `awaitingPayment` or, while a detected payment waits for its confirmations,
 * `processing`. Only an `awaitingPayment` session expires, and only once its `expiresAt` has
 * passed: a payment sent in time is never turned into a late one by the wait for its block to be
 * final, nor by a reorg that takes it away for a while (`SessionPayment.mayReturn`). The decider
 * asks this chart whether a session expires now (`expiresNow`).
 */
export const checkoutSessionMachine = setup({
  types: {
    context: {} as CheckoutSessionMachineContext,
    events: {} as CheckoutSessionEvent,
  },
  actions: { apply },
  guards: {
    hasSession: ({ context }) => context.session !== null,
    paymentPending: ({ context }) => hasPendingPayment(context.session),
    noPaymentPending: ({ context }) => !hasPendingPayment(context.session),
    expiresAtReached: ({ context, event }) =>
      event.type === 'CheckoutSessionExpired' &&
      context.session !== null &&
      Date.parse(event.data.at) >= Date.parse(context.session.expiresAt),
  },
}).createMachine({
  id: 'checkoutSession',
  context: { session: null },
  initial: 'new',
  on: {
    PaymentDetected: { guard: 'hasSession', actions: 'apply' },
    PaymentWithdrawn: { guard: 'hasSession', actions: 'apply' },
    PaymentConfirmed: { guard: 'hasSession', actions: 'apply' },
    TransferAlreadyReconciled: { guard: 'hasSession', actions: 'apply' },
    FundsSwept: { guard: 'hasSession', actions: 'apply' },
    TransfersFoundSwept: { guard: 'hasSession', actions: 'apply' },
    SweepBroadcast: { guard: 'hasSession', actions: 'apply' },
    SweepDropped: { guard: 'hasSession', actions: 'apply' },
    SweepLookUpEnded: { guard: 'hasSession', actions: 'apply' },
    // A refund made outside Weir can follow any payment received, whatever the session's state.
    PaymentMarkedRefunded: { guard: 'hasSession', actions: 'apply' },
    PaymentReceiptRequested: { guard: 'hasSession', actions: 'apply' },
  },
  states: {
    new: {
      on: { CheckoutSessionCreated: { target: 'open', actions: 'apply' } },
    },
    open: {
      on: {
        PaymentMethodSelected: { actions: 'apply' },
        DiscountApplied: { actions: 'apply' },
        CustomerEmailCollected: { actions: 'apply' },
        CheckoutSessionPartiallyPaid: { target: 'incomplete', actions: 'apply' },
        CheckoutSessionCompleted: { target: 'complete', actions: 'apply' },
        CheckoutSessionCanceled: { target: 'canceled', actions: 'apply' },
      },
      initial: 'awaitingPayment',
      states: {
        awaitingPayment: {
          always: { guard: 'paymentPending', target: 'processing' },
          on: {
            CheckoutSessionExpired: { guard: 'expiresAtReached', target: '#checkoutSession.expired', actions: 'apply' },
          },
        },
        processing: {
          description:
            'A detected payment waits for its confirmations: expiry waits for it. Confirmed, it completes or part-pays the session. Withdrawn by a reorg, one detected before expiresAt is still waited for: mined again (another block, or its own back) it counts on time; once a final block at its height is another, it is gone, and with nothing else pending the session expires then if its expiresAt has passed.',
          always: { guard: 'noPaymentPending', target: 'awaitingPayment' },
          on: {
            CheckoutSessionExpired: {
              guard: 'expiresAtReached',
              target: '#checkoutSession.expired',
              actions: 'apply',
              description: 'Only in logs recorded before expiry waited for pending payments; never decided now.',
            },
          },
        },
      },
    },
    incomplete: {
      on: {
        PaymentMethodSelected: { actions: 'apply' },
        CheckoutSessionPartiallyPaid: { actions: 'apply' },
        CheckoutSessionCompleted: { target: 'complete', actions: 'apply' },
      },
    },
    complete: {
      on: {
        OverpaymentReceived: { actions: 'apply' },
        LatePaymentReceived: {
          actions: 'apply',
          description:
            'Completed short (complete-partial): money that does not take it past its total is late, not over.',
        },
      },
    },
    expired: {
      on: { LatePaymentReceived: { actions: 'apply' } },
    },
    canceled: {
      on: { LatePaymentReceived: { actions: 'apply' } },
    },
  },
});
