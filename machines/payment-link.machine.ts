import { assign, setup } from 'xstate';
import { evolvePaymentLink } from './payment-link.evolve.ts';
import type { PaymentLink, PaymentLinkEvent } from './payment-link.types.ts';

export type PaymentLinkMachineContext = { link: PaymentLink | null };

const apply = assign<PaymentLinkMachineContext, PaymentLinkEvent, undefined, PaymentLinkEvent, never>(
  ({ context, event }) => ({
    link: evolvePaymentLink(context.link, event),
  }),
);

const createdActive = ({ event }: { event: PaymentLinkEvent }) =>
  event.type === 'PaymentLinkCreated' && event.data.link.isActive;

/**
 * Lifecycle of a payment link. Driven by the link's recorded events, so folding the stream
 * through `transition()` rebuilds it. Payers can open checkouts only while it is active; the
 * merchant switches it on and off and may edit it in either state. Deleting is final.
 */
export const paymentLinkMachine = setup({
  types: {
    context: {} as PaymentLinkMachineContext,
    events: {} as PaymentLinkEvent,
  },
  actions: { apply },
  guards: { createdActive },
}).createMachine({
  id: 'paymentLink',
  context: { link: null },
  initial: 'new',
  states: {
    new: {
      on: {
        PaymentLinkCreated: [
          { guard: 'createdActive', target: 'active', actions: 'apply' },
          { target: 'inactive', actions: 'apply' },
        ],
      },
    },
    active: {
      on: {
        PaymentLinkUpdated: { actions: 'apply' },
        PaymentLinkDeactivated: { target: 'inactive', actions: 'apply' },
        PaymentLinkDeleted: { target: 'deleted', actions: 'apply' },
      },
    },
    inactive: {
      on: {
        PaymentLinkUpdated: { actions: 'apply' },
        PaymentLinkActivated: { target: 'active', actions: 'apply' },
        PaymentLinkDeleted: { target: 'deleted', actions: 'apply' },
      },
    },
    deleted: { type: 'final' },
  },
});
