import { assign, setup } from 'xstate';
import { evolveCheckoutSession } from './checkout-session.evolve.ts';
import type { CheckoutSession, CheckoutSessionEvent } from './checkout-session.types.ts';

export type CheckoutSessionMachineContext = { session: CheckoutSession | null };

const apply = assign<CheckoutSessionMachineContext, CheckoutSessionEvent, undefined, CheckoutSessionEvent, never>(
  ({ context, event }) => ({ session: evolveCheckoutSession(context.session, event) }),
);

/**
 * Lifecycle of a checkout session and its payment intent. The machine is driven by the session's
 * recorded events (facts), so folding the stream through `transition()` rebuilds its state; an
 * event the current state does not accept is a fact the decider must never produce.
 *
 * Payments may be detected, withdrawn (reorg) and confirmed in every state: money that reaches
 * a deposit address is always recorded, even after expiry.
 */
export const checkoutSessionMachine = setup({
  types: {
    context: {} as CheckoutSessionMachineContext,
    events: {} as CheckoutSessionEvent,
  },
  actions: { apply },
}).createMachine({
  id: 'checkoutSession',
  context: { session: null },
  initial: 'new',
  on: {
    PaymentDetected: { guard: ({ context }) => context.session !== null, actions: 'apply' },
    PaymentWithdrawn: { guard: ({ context }) => context.session !== null, actions: 'apply' },
    PaymentConfirmed: { guard: ({ context }) => context.session !== null, actions: 'apply' },
    FundsSwept: { guard: ({ context }) => context.session !== null, actions: 'apply' },
  },
  states: {
    new: {
      on: { CheckoutSessionCreated: { target: 'open', actions: 'apply' } },
    },
    open: {
      on: {
        PaymentMethodSelected: { actions: 'apply' },
        DiscountApplied: { actions: 'apply' },
        CheckoutSessionPartiallyPaid: { target: 'incomplete', actions: 'apply' },
        CheckoutSessionCompleted: { target: 'complete', actions: 'apply' },
        CheckoutSessionExpired: { target: 'expired', actions: 'apply' },
        CheckoutSessionCanceled: { target: 'canceled', actions: 'apply' },
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
      on: { OverpaymentReceived: { actions: 'apply' } },
    },
    expired: {
      on: { LatePaymentReceived: { actions: 'apply' } },
    },
    canceled: {
      on: { LatePaymentReceived: { actions: 'apply' } },
    },
  },
});
