import { assign, setup } from 'xstate';
import { evolveInvoice } from './invoice.evolve.ts';
import type { Invoice, InvoiceEvent } from './invoice.types.ts';

export type InvoiceMachineContext = { invoice: Invoice | null };

const apply = assign<InvoiceMachineContext, InvoiceEvent, undefined, InvoiceEvent, never>(({ context, event }) => ({
  invoice: evolveInvoice(context.invoice, event),
}));

/**
 * Lifecycle of an invoice (reference statuses `draft`, `open`, `paid`, `void`, `uncollectible`,
 * plus `new` before it exists and `deleted` for a discarded draft). The machine is driven by the
 * invoice's recorded events (facts), so folding the stream through `transition()` rebuilds its
 * state; an event the current state does not accept is a fact the decider must never produce.
 *
 * Only a draft can be edited or deleted. Finalizing opens it for payment (and, for a recurring
 * invoice, schedules the next one, unscheduled again if its subscription ends); one with nothing to pay is paid at once. An open invoice is paid on chain through a checkout session
 * or marked paid out of band; it can be voided or written off as uncollectible, and an
 * uncollectible one can still be paid or voided. Once part of it is paid (a session's partial
 * payment) it is no longer voided: the decider refuses. A paid invoice still counts money another
 * of its sessions receives after (the payer paid twice), so the merchant sees what to refund; a
 * void one does not (the money stays on its session).
 */
export const invoiceMachine = setup({
  types: {
    context: {} as InvoiceMachineContext,
    events: {} as InvoiceEvent,
  },
  actions: { apply },
  guards: {
    recurringAndUnscheduled: ({ context }) =>
      context.invoice?.invoiceType === 'recurring' && context.invoice.nextInvoice === null,
  },
}).createMachine({
  id: 'invoice',
  context: { invoice: null },
  initial: 'new',
  states: {
    new: {
      on: { InvoiceCreated: { target: 'draft', actions: 'apply' } },
    },
    draft: {
      on: {
        InvoiceUpdated: { actions: 'apply' },
        InvoiceFinalizationFailed: { actions: 'apply' },
        InvoiceDeleted: { target: 'deleted', actions: 'apply' },
        InvoiceFinalized: { target: 'open', actions: 'apply' },
      },
    },
    open: {
      on: {
        NextRecurringInvoiceScheduled: { guard: 'recurringAndUnscheduled', actions: 'apply' },
        NextRecurringInvoiceUnscheduled: { actions: 'apply' },
        InvoiceSent: { actions: 'apply' },
        InvoiceReminderSent: { actions: 'apply' },
        InvoiceReminderSkipped: { actions: 'apply' },
        InvoicePaymentAttemptStarted: { actions: 'apply' },
        InvoicePartialPaymentReceived: { actions: 'apply' },
        InvoicePaymentFailed: { actions: 'apply' },
        InvoicePaid: { target: 'paid', actions: 'apply' },
        InvoiceMarkedAsPaid: { target: 'paid', actions: 'apply' },
        InvoiceVoided: { target: 'void', actions: 'apply' },
        InvoiceMarkedUncollectible: { target: 'uncollectible', actions: 'apply' },
      },
    },
    uncollectible: {
      on: {
        NextRecurringInvoiceUnscheduled: { actions: 'apply' },
        InvoicePaymentAttemptStarted: { actions: 'apply' },
        InvoicePartialPaymentReceived: { actions: 'apply' },
        InvoicePaymentFailed: { actions: 'apply' },
        InvoicePaid: { target: 'paid', actions: 'apply' },
        InvoiceMarkedAsPaid: { target: 'paid', actions: 'apply' },
        InvoiceVoided: { target: 'void', actions: 'apply' },
      },
    },
    // Not final: another of its sessions can still receive money (the payer paid twice), which it counts.
    paid: {
      on: {
        InvoicePaymentReceivedAfterPaid: { actions: 'apply' },
        NextRecurringInvoiceUnscheduled: { actions: 'apply' },
      },
    },
    void: { type: 'final' },
    deleted: { type: 'final' },
  },
});
