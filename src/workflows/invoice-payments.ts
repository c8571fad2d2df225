import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import type { InvoiceCommand } from '../../machines/invoice.decide.ts';
import { actingFor, commandFor, type Correlation, type Workflow, type WorkflowCommand } from './workflow.ts';

/** A checkout session opened to pay an invoice: the invoice (null for another session), and whether its end was decided. */
export type InvoicePaymentState = { invoiceId: string | null; ended: boolean };

const SESSION_PREFIX = 'checkout_session-';

/** Why a session opened for an invoice ended without paying it, by the event that ended it. */
export const FAILURE_REASONS: Partial<Record<CheckoutSessionEvent['type'], string>> = {
  CheckoutSessionExpired: 'the checkout session expired before it was paid',
  CheckoutSessionCanceled: 'the checkout session was canceled',
};

const ends = (type: string): boolean => type === 'CheckoutSessionCompleted' || type in FAILURE_REASONS;
const PARTIAL = 'CheckoutSessionPartiallyPaid';

/**
 * Invoice payments, per checkout session opened to pay an invoice (its pay page): when the session
 * receives part of its amount, the invoice records it (`RecordInvoicePartialPayment`: it stays
 * open, and can no longer be voided); when the session completes, the invoice records the payment
 * (`RecordInvoicePayment`, and becomes paid); when it expires or is canceled, the invoice records
 * the failed attempt. The invoice's decider answers
 * nothing for a repeat, and keeps a payment to an invoice paid or voided meanwhile on its session
 * alone, so a redelivery or a replay of the log changes nothing. The other way (a settled invoice
 * cancels its sessions still open) is the invoice session closing workflow.
 */
export const invoicePayments: Workflow<InvoicePaymentState, WorkflowCommand> = {
  name: 'invoice-payments',
  // 2: a partial payment is recorded on the invoice (folded again from the log, so an invoice
  // partly paid before is told too; the decider answers nothing for what it has).
  version: 2,
  categories: ['checkout_session'],
  aggregates: [invoiceAggregate],
  correlate(event): Correlation {
    const typed = event as unknown as CheckoutSessionEvent;
    if (typed.type === 'CheckoutSessionCreated')
      return typed.data.session.invoiceId ? event.streamId.slice(SESSION_PREFIX.length) : false;
    return ends(typed.type) || typed.type === PARTIAL ? null : false;
  },
  initialState: () => ({ invoiceId: null, ended: false }),
  evolve(state, event) {
    const typed = event as unknown as CheckoutSessionEvent;
    if (typed.type === 'CheckoutSessionCreated')
      return { invoiceId: typed.data.session.invoiceId ?? null, ended: false };
    return ends(typed.type) && !state.ended ? { ...state, ended: true } : state;
  },
  decide(event, state) {
    const typed = event as unknown as CheckoutSessionEvent;
    if (!(ends(typed.type) || typed.type === PARTIAL) || state.ended || state.invoiceId === null) return [];
    const checkoutSessionId = event.streamId.slice(SESSION_PREFIX.length);
    const command: InvoiceCommand =
      typed.type === 'CheckoutSessionCompleted'
        ? {
            type: 'RecordInvoicePayment',
            checkoutSessionId,
            transactionHash: typed.data.transactionHash,
            amountReceived: typed.data.amountReceived,
          }
        : typed.type === PARTIAL
          ? { type: 'RecordInvoicePartialPayment', checkoutSessionId, amountReceived: typed.data.amountReceived }
          : { type: 'RecordInvoicePaymentFailure', checkoutSessionId, reason: FAILURE_REASONS[typed.type]! };
    // Acting for the session's tenant: an invoice of another tenant is not found, and the command dropped.
    return [
      commandFor(
        invoiceAggregate,
        state.invoiceId,
        command,
        actingFor(event, 'system:invoice-payments', checkoutSessionId),
      ),
    ];
  },
};
