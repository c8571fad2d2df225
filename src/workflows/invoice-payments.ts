import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import type { InvoiceCommand } from '../../machines/invoice.decide.ts';
import { actingFor, commandFor, type Correlation, type Workflow, type WorkflowCommand } from './workflow.ts';

/**
 * A checkout session opened to pay an invoice: the invoice (null for another session), whether its
 * end was decided, the chain of each transaction that paid it (by hash), for the invoice to show
 * its hash as that chain's tools do, and the network fee it charges on top of the invoice (that of
 * the payment method chosen last, as the session's `amountGasFee`), which the invoice does not count.
 */
export type InvoicePaymentState = {
  invoiceId: string | null;
  ended: boolean;
  chains: Record<string, number>;
  gasFee: string;
};

const SESSION_PREFIX = 'checkout_session-';

/** Why a session opened for an invoice ended without paying it, by the event that ended it. */
export const FAILURE_REASONS: Partial<Record<CheckoutSessionEvent['type'], string>> = {
  CheckoutSessionExpired: 'the checkout session expired before it was paid',
  CheckoutSessionCanceled: 'the checkout session was canceled',
};

const ends = (type: string): boolean => type === 'CheckoutSessionCompleted' || type in FAILURE_REASONS;
const PARTIAL = 'CheckoutSessionPartiallyPaid';
const DETECTED = 'PaymentDetected';
const SELECTED = 'PaymentMethodSelected';

/**
 * Invoice payments, per checkout session opened to pay an invoice (its pay page): when the session
 * receives part of its amount, the invoice records it (`RecordInvoicePartialPayment`: it stays
 * open, and can no longer be voided); when the session completes, the invoice records the payment
 * (`RecordInvoicePayment`, and becomes paid); when it expires or is canceled, the invoice records
 * the failed attempt. The payment carries the chain of its transaction (from the session's
 * PaymentDetected of that hash), so the invoice shows a Tron txID bare as its session does; the
 * log keeps the hash as the session has it. Both carry the network fee the session charged on top
 * (`applyGasFee`), so the invoice counts what was paid for it, not the fee. A session that receives
 * money once its invoice is paid (the payer paid twice) is told to the invoice the same way: the
 * paid invoice counts it (`InvoicePaymentReceivedAfterPaid`, its overpayment), while a void one keeps
 * it on the session alone. The invoice's decider answers nothing for a repeat or an older amount, so
 * a redelivery or a replay of the log changes nothing. The other way (a settled invoice
 * cancels its sessions still open) is the invoice session closing workflow.
 */
export const invoicePayments: Workflow<InvoicePaymentState, WorkflowCommand> = {
  name: 'invoice-payments',
  // 2: a partial payment is recorded on the invoice (folded again from the log, so an invoice
  // partly paid before is told too; the decider answers nothing for what it has).
  // 3: the chains of the session's transactions (a paid invoice answers nothing: its record stays).
  // 4: the session's network fee, for the sessions open now to learn theirs (a paid invoice answers
  // nothing, nor one whose part recorded is as much: invoices keep what they recorded).
  // 5: a paid invoice counts what its other sessions received after it was paid (the payer paid
  // twice), so an invoice paid twice before is told too; what it recorded already (its paying
  // session, a part counted while open) answers nothing.
  version: 5,
  categories: ['checkout_session'],
  aggregates: [invoiceAggregate],
  correlate(event): Correlation {
    const typed = event as unknown as CheckoutSessionEvent;
    if (typed.type === 'CheckoutSessionCreated')
      return typed.data.session.invoiceId ? event.streamId.slice(SESSION_PREFIX.length) : false;
    return ends(typed.type) || [PARTIAL, DETECTED, SELECTED].includes(typed.type) ? null : false;
  },
  initialState: () => ({ invoiceId: null, ended: false, chains: {}, gasFee: '0' }),
  evolve(state, event) {
    const typed = event as unknown as CheckoutSessionEvent;
    if (typed.type === 'CheckoutSessionCreated')
      return { invoiceId: typed.data.session.invoiceId ?? null, ended: false, chains: {}, gasFee: '0' };
    // As the session reads it: an event stored before the fee was recorded had none.
    if (typed.type === SELECTED) return { ...state, gasFee: typed.data.amountGasFee ?? '0' };
    if (typed.type === DETECTED) {
      const { transactionHash, chainId } = typed.data.payment;
      return { ...state, chains: { ...state.chains, [transactionHash]: chainId } };
    }
    return ends(typed.type) && !state.ended ? { ...state, ended: true } : state;
  },
  decide(event, state) {
    const typed = event as unknown as CheckoutSessionEvent;
    if (!(ends(typed.type) || typed.type === PARTIAL) || state.ended || state.invoiceId === null) return [];
    const checkoutSessionId = event.streamId.slice(SESSION_PREFIX.length);
    const fee = state.gasFee === '0' ? {} : { amountGasFee: state.gasFee };
    const command: InvoiceCommand =
      typed.type === 'CheckoutSessionCompleted'
        ? {
            type: 'RecordInvoicePayment',
            checkoutSessionId,
            transactionHash: typed.data.transactionHash,
            ...chainOf(state, typed.data.transactionHash),
            amountReceived: typed.data.amountReceived,
            ...fee,
          }
        : typed.type === PARTIAL
          ? {
              type: 'RecordInvoicePartialPayment',
              checkoutSessionId,
              amountReceived: typed.data.amountReceived,
              ...fee,
            }
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

/** `{ chainId }` of the session's transaction `hash`, or nothing when it has none (no transfer of it seen). */
function chainOf(state: InvoicePaymentState, hash: string | null): { chainId?: number } {
  const chainId = hash === null ? undefined : state.chains[hash];
  return chainId === undefined ? {} : { chainId };
}
