import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import type { InvoiceCommand } from '../../machines/invoice.decide.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { actingFor, commandFor, type Correlation, type Workflow, type WorkflowCommand } from './workflow.ts';

/**
 * A checkout session opened to pay an invoice: the invoice (null for another session), whether its
 * end was decided, the chain of each transaction that paid it (by hash), for the invoice to show its hash as
 * that chain's tools do, the transaction of each transfer (by id), for a late one to name its own,
 * and the network fee it charges on top of the invoice (that of the payment method chosen last, as
 * the session's `amountGasFee`), which the invoice does not count.
 */
export type InvoicePaymentState = {
  invoiceId: string | null;
  ended: boolean;
  chains: Record<string, number>;
  hashes: Record<string, string>;
  gasFee: string;
  /**
   * The session's `amountOverpaid` the invoice counted (10^8, "0" until it completed past its total):
   * what its completion received, then each overpayment after it. An `OverpaymentReceived` saying no more
   * is the completion's own, counted with what the completion received.
   */
  overpaid: string;
};

const SESSION_PREFIX = 'checkout_session-';

/** Why a session opened for an invoice ended without paying it, by the event that ended it. */
export const FAILURE_REASONS: Partial<Record<CheckoutSessionEvent['type'], string>> = {
  CheckoutSessionExpired: 'the checkout session expired before it was paid',
  CheckoutSessionCanceled: 'the checkout session was canceled',
};

const fresh = (): InvoicePaymentState => ({
  invoiceId: null,
  ended: false,
  chains: {},
  hashes: {},
  gasFee: '0',
  overpaid: '0',
});

const ends = (type: string): boolean => type === 'CheckoutSessionCompleted' || type in FAILURE_REASONS;
const PARTIAL = 'CheckoutSessionPartiallyPaid';
const DETECTED = 'PaymentDetected';
const SELECTED = 'PaymentMethodSelected';
const LATE = 'LatePaymentReceived';
const OVERPAID = 'OverpaymentReceived';

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
 * it on the session alone. Money a session receives after it expired or was canceled (a late
 * payment, or money within its total after it was completed short) is in the merchant's wallet too: the invoice counts it (`RecordInvoiceLatePayment`, with
 * the fee), as a part while open, paid once it covers the rest, an overpayment once paid; a void one
 * keeps it on the session. So is money past its total a complete session receives (`OverpaymentReceived`):
 * the paid invoice counts it as its overpayment, once per transfer. The invoice's decider answers nothing for a repeat, an older amount or a
 * transfer counted already, so a redelivery or a replay of the log changes nothing. The other way
 * (a settled invoice cancels its sessions still open) is the invoice session closing workflow.
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
  // 6: money a session receives after it expired or was canceled counts on its invoice, so an
  // invoice whose session was paid late before is told too (paid, if it covers it); each transfer once.
  // 7: so does money a session receives after it was completed short (complete-partial), which paid its invoice.
  // 8: so does money past its total a session receives once complete (`OverpaymentReceived` after its completion),
  // the invoice's overpayment, so an invoice overpaid so before is told too; the completion's own overpayment is
  // counted with what the completion received (`overpaid`).
  version: 8,
  categories: ['checkout_session'],
  aggregates: [invoiceAggregate],
  correlate(event): Correlation {
    const typed = event as unknown as CheckoutSessionEvent;
    if (typed.type === 'CheckoutSessionCreated')
      return typed.data.session.invoiceId ? event.streamId.slice(SESSION_PREFIX.length) : false;
    return ends(typed.type) || [PARTIAL, DETECTED, SELECTED, LATE, OVERPAID].includes(typed.type) ? null : false;
  },
  initialState: fresh,
  evolve(state, event) {
    const typed = event as unknown as CheckoutSessionEvent;
    if (typed.type === 'CheckoutSessionCreated') return { ...fresh(), invoiceId: typed.data.session.invoiceId ?? null };
    // As the session reads it: an event stored before the fee was recorded had none.
    if (typed.type === SELECTED) return { ...state, gasFee: typed.data.amountGasFee ?? '0' };
    if (typed.type === DETECTED) {
      const { transactionHash, chainId, transferId } = typed.data.payment;
      return {
        ...state,
        chains: { ...state.chains, [transactionHash]: chainId },
        hashes: { ...state.hashes, [transferId]: transactionHash },
      };
    }
    if (typed.type === 'CheckoutSessionCompleted')
      return { ...state, ended: true, overpaid: typed.data.amountOverpaid };
    if (typed.type === OVERPAID)
      return isOverpaidBeyond(state, typed.data.amountOverpaid)
        ? { ...state, overpaid: typed.data.amountOverpaid }
        : state;
    return ends(typed.type) && !state.ended ? { ...state, ended: true } : state;
  },
  decide(event, state) {
    const typed = event as unknown as CheckoutSessionEvent;
    if (state.invoiceId === null) return [];
    const checkoutSessionId = event.streamId.slice(SESSION_PREFIX.length);
    const fee = state.gasFee === '0' ? {} : { amountGasFee: state.gasFee };
    // Late after an expiry or a cancel, or after a short completion (complete-partial) paid the invoice with what it
    // had: the money is in the merchant's wallet all the same, so the invoice counts it (a void one keeps it off).
    if (typed.type === LATE)
      return [toInvoice(state, event, checkoutSessionId, lateCommand(state, checkoutSessionId, typed.data, fee))];
    // Past the total once complete: in the merchant's wallet too, the invoice's overpayment. One saying no more
    // than the invoice counted is the completion's own (its amountReceived held it). Logs from before a session
    // completed short took late money as over it (a negative excess): late money, counted as such.
    if (typed.type === OVERPAID) {
      const { amountOverpaid } = typed.data;
      if (!amountOverpaid.startsWith('-') && !isOverpaidBeyond(state, amountOverpaid)) return [];
      return [toInvoice(state, event, checkoutSessionId, lateCommand(state, checkoutSessionId, typed.data, fee))];
    }
    if (!(ends(typed.type) || typed.type === PARTIAL) || state.ended) return [];
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
    return [toInvoice(state, event, checkoutSessionId, command)];
  },
};

/** Whether the session's `amountOverpaid` is past what its invoice counted (a negative one, from older logs, never). */
const isOverpaidBeyond = (state: InvoicePaymentState, amountOverpaid: string): boolean =>
  !amountOverpaid.startsWith('-') && BigInt(amountOverpaid) > BigInt(state.overpaid);

/** `command` to the session's invoice, acting for the session's tenant: an invoice of another tenant is not found, and the command dropped. */
function toInvoice(
  state: InvoicePaymentState,
  event: RecordedEvent,
  checkoutSessionId: string,
  command: InvoiceCommand,
): WorkflowCommand {
  return commandFor(
    invoiceAggregate,
    state.invoiceId!,
    command,
    actingFor(event, 'system:invoice-payments', checkoutSessionId),
  );
}

/** The late payment `data` to its invoice, with its transaction (from its PaymentDetected) and the session's fee. */
function lateCommand(
  state: InvoicePaymentState,
  checkoutSessionId: string,
  data: { transferId: string; amount: string },
  fee: { amountGasFee?: string },
): InvoiceCommand {
  const transactionHash = state.hashes[data.transferId] ?? null;
  return {
    type: 'RecordInvoiceLatePayment',
    checkoutSessionId,
    transferId: data.transferId,
    amount: data.amount,
    transactionHash,
    ...chainOf(state, transactionHash),
    ...fee,
  };
}

/** `{ chainId }` of the session's transaction `hash`, or nothing when it has none (no transfer of it seen). */
function chainOf(state: InvoicePaymentState, hash: string | null): { chainId?: number } {
  const chainId = hash === null ? undefined : state.chains[hash];
  return chainId === undefined ? {} : { chainId };
}
