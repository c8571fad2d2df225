import { exactToApi } from '../src/shared/money.ts';
import { sumOfPayments } from './checkout-session.received.ts';
import type { CheckoutSession, SessionPayment } from './checkout-session.types.ts';

// Weir's one rule for late money (confirmed on a session after it expired or was canceled): the
// payer's page, its status poll, the dashboard and the sessions export all read it from here.

/**
 * The late payments the merchant still has to settle: those no mark of refunded covers (once per
 * session: it covers what had been confirmed by then, `coveredByRefundMark`), all of them when there
 * is no mark, less those that paid its invoice (`paidInvoice`). By the log's order, not timestamps: a payment confirmed in the mark's millisecond, or
 * on an instance with another clock, would tell no order or the wrong one.
 */
const lateToSettle = (session: CheckoutSession): SessionPayment[] =>
  session.payments.filter((p) => p.late && p.coveredByRefundMark !== true && p.paidInvoice !== true);

/**
 * `session` with the late payments its invoice counted while owed marked `paidInvoice` (`transferIds`,
 * the invoice's `latePaidTransferIds`): money in the merchant's wallet that paid the invoice, owed to
 * no one, so none of it is to settle. The caller reads the invoice; a session of none is as it was.
 */
export function withInvoicePaidLate<S extends CheckoutSession>(session: S, transferIds: readonly string[]): S {
  const paid = new Set(transferIds);
  if (!session.payments.some((p) => p.late && paid.has(p.transferId))) return session;
  return {
    ...session,
    payments: session.payments.map((p) =>
      p.late && paid.has(p.transferId) ? { ...p, paidInvoice: true as const } : p,
    ),
  };
}

/** The confirmed late payments that paid the session's invoice (`withInvoicePaidLate`): the page names the invoice. */
export const latePaidInvoice = (session: CheckoutSession): SessionPayment[] =>
  session.payments.filter((p) => p.late && p.paidInvoice === true && p.status === 'confirmed');

/** The late money that paid the session's invoice (`latePaidInvoice`), told as the invoice's on the payer's page. */
export const latePaidInvoiceMoney = (session: CheckoutSession): ClosedMoney =>
  closedMoney(session, latePaidInvoice(session), 'confirmed');

/**
 * Whether the merchant has late money to settle: a confirmed late payment no mark covers, whatever
 * it comes to at the 10^8 scale (18-decimal dust reads 0 there, yet is money that came). Home lists
 * such a session and the sessions list badges it, by this one rule.
 */
export const hasLateToSettle = (session: CheckoutSession): boolean =>
  lateToSettle(session).some((p) => p.status === 'confirmed');

/**
 * When the merchant marked the late money refunded, if that mark covers all of it (no late payment
 * confirmed after it): null otherwise. Weir holds no funds; the mark is the merchant's word, so the
 * payer is told it as such. Its comment is the merchant's own note (the dashboard's "Note"), not the payer's.
 * The dashboard reads it too: money confirmed after the mark still needs the merchant.
 */
export function refundMarkedAt(session: CheckoutSession): string | null {
  const at = session.paymentIntent.markRefundedAt;
  if (!session.paymentIntent.isMarkRefunded || !at) return null;
  return hasLateToSettle(session) ? null : at;
}

/**
 * Money that reached a closed session, as the payer's page and the dashboard both tell it: `amount`
 * (10^8-scaled) in `payments`, of which `sentBefore` was seen before the close, named `close` ("the
 * cancel", "expiry"). An open session can be canceled while a payment seen in time is confirming:
 * that one was sent before the close, not after it, though the machine takes it as late money once
 * final. An expiry waits for such a payment, yet logs from before that rule expired with one pending,
 * and one a reorg took for good may be mined again after the expiry.
 */
export type ClosedMoney = {
  amount: bigint;
  payments: SessionPayment[];
  sentBefore: bigint;
  /** The payments of `payments` seen before the close: what tells how it was sent (`howSent`), not `sentBefore`. */
  paymentsBefore: SessionPayment[];
  close: string;
};

/**
 * `money`'s amount as `format` writes it; "less than" the 10^-8 unit when money came that the 10^8
 * scale reads as 0 (18-decimal dust): late money by the one rule, never told as nothing.
 */
export const amountOf = (
  money: Pick<ClosedMoney, 'amount' | 'payments'>,
  format: (amount: bigint) => string,
): string => (money.amount === 0n && money.payments.length > 0 ? `less than ${format(1n)}` : format(money.amount));

/**
 * How `money` was sent: all of it before the close, all after it, or both. By its payments, not its
 * amounts: 18-decimal dust seen before the close reads 0 at the 10^8 scale, yet was sent before it.
 */
export const howSent = ({ payments, paymentsBefore }: ClosedMoney): 'before' | 'after' | 'both' =>
  paymentsBefore.length === 0 ? 'after' : paymentsBefore.length === payments.length ? 'before' : 'both';

/** Whether all of `money` was sent before the close, none after it (at least one payment). */
export const allSentBefore = (money: ClosedMoney): boolean => howSent(money) === 'before';

/** What of `money` was sent before the close, to tell with `amountOf` ("less than" when it is dust). */
export const sentBeforeMoney = (money: ClosedMoney): Pick<ClosedMoney, 'amount' | 'payments'> => ({
  amount: money.sentBefore,
  payments: money.paymentsBefore,
});

/** `payments` as ClosedMoney; `amount` when the caller cut their sum itself (`receivedSplit`). */
function closedMoney(
  session: CheckoutSession,
  payments: SessionPayment[],
  status: SessionPayment['status'],
  amount?: bigint,
) {
  const sum = (of: SessionPayment[]) => exactToApi(sumOfPayments(of, [status]), 'down');
  // By the log's order (the close marks what it found), not timestamps: a payment and a cancel in
  // one millisecond, or on two instances' clocks, would tell no order or the wrong one.
  const closed = session.status === 'canceled' || session.status === 'expired';
  const before = payments.filter((p) => closed && p.seenBeforeClose === true);
  const close = session.status === 'expired' ? 'expiry' : 'the cancel';
  const total = amount ?? sum(payments);
  // All of it sent before: the whole amount, as cut, so "sent before" tells whatever unit the cut carried.
  const sentBefore = before.length > 0 && before.length === payments.length ? total : sum(before);
  return { amount: total, payments, sentBefore, paymentsBefore: before, close };
}

/**
 * A session's confirmed money split at its close (the API's amountReceived counts both), as the
 * payer's page and the dashboard's Summary list it: `beforeClose` (10^8-scaled) counts toward the
 * order; `afterClose` is every late payment (dust, and what a mark of refunded covered, included),
 * never added to what a closed session was paid. One cut only: `beforeClose` is its exact sum cut
 * down to 10^8, `afterClose` the rest of amountReceived, so the two add up to it to the unit (each
 * cut on its own, an 18-decimal session's parts came to a unit short). Late dust that carries no
 * unit over reads 0 with its payments listed, as before.
 */
export function receivedSplit(session: CheckoutSession): {
  beforeClose: Pick<ClosedMoney, 'amount' | 'payments'>;
  afterClose: ClosedMoney;
} {
  const confirmed = session.payments.filter((p) => p.status === 'confirmed');
  const onTime = confirmed.filter((p) => !p.late);
  const received = BigInt(session.amountReceived);
  const counted = exactToApi(sumOfPayments(onTime, ['confirmed']), 'down');
  // Never above amountReceived, so the late part is never below nothing.
  const before = counted < received ? counted : received;
  return {
    beforeClose: { amount: before, payments: onTime },
    afterClose: closedMoney(
      session,
      confirmed.filter((p) => p.late),
      'confirmed',
      received - before,
    ),
  };
}

/**
 * What a session was paid, split as its page's Paid rows, its status poll and the sessions export
 * tell it: closed (expired or canceled) with late money, `beforeClose` is what came before the close
 * and `afterClose` the late money; otherwise `beforeClose` is all it received (the API's amountReceived)
 * and `afterClose` null. A short completion's late money is the merchant's to keep: received, not split.
 * Split or not, the two add up to amountReceived exactly (`receivedSplit`).
 */
export function paidAtClose(session: CheckoutSession): { beforeClose: bigint; afterClose: ClosedMoney | null } {
  const { beforeClose, afterClose } = receivedSplit(session);
  const closed = session.status === 'expired' || session.status === 'canceled';
  return closed && afterClose.payments.length > 0
    ? { beforeClose: beforeClose.amount, afterClose }
    : { beforeClose: BigInt(session.amountReceived), afterClose: null };
}

/**
 * The confirmed late money a page speaks of: all of it once a mark of refunded covers it (`refundedAt`,
 * the page says it is settled), else what the merchant still has to settle (a mark's money is not asked twice).
 * Its amount is cut from `receivedSplit`'s late part, never on its own, so it is the Paid "after" row to
 * the unit: all of that part, or when a mark covered some, that part less the covered payments cut down.
 */
export function lateMoney(session: CheckoutSession): ClosedMoney & { refundedAt: string | null } {
  const refundedAt = refundMarkedAt(session);
  const { afterClose } = receivedSplit(session);
  // What paid its invoice is neither refunded nor to settle: the page names the invoice instead.
  const payments = refundedAt
    ? afterClose.payments.filter((p) => p.paidInvoice !== true)
    : lateToSettle(session).filter((p) => p.status === 'confirmed');
  const covered = afterClose.payments.filter((p) => !payments.includes(p));
  const rest = afterClose.amount - exactToApi(sumOfPayments(covered, ['confirmed']), 'down');
  // Below nothing only in a log whose amountReceived is short of its exact sums (see `receivedSplit`).
  return { ...closedMoney(session, payments, 'confirmed', rest > 0n ? rest : 0n), refundedAt };
}

/**
 * Expired or canceled, then paid (any confirmed late payment, dust included, settled or marked
 * refunded): the API says `unpaid`, yet the payer's money arrived. The payer's page and the dashboard's
 * session page tell it, as the sessions list badges it and Home lists it (`hasLateToSettle`).
 */
export const paidAfterClose = (session: CheckoutSession): boolean =>
  (session.status === 'expired' || session.status === 'canceled') && lateMoney(session).payments.length > 0;

/** The payments still confirming at an expired or canceled session: late money once final, nothing to settle yet. */
export function confirmingAfterClose(session: CheckoutSession): ClosedMoney {
  const closed = session.status === 'expired' || session.status === 'canceled';
  return closedMoney(session, closed ? session.payments.filter((p) => p.status === 'pending') : [], 'pending');
}

/**
 * A session's money around its close, derived once by the rules above: the payer's status poll and
 * the dashboard's session page read these same figures, so they cannot tell it two ways.
 */
export type MoneyAtClose = {
  /** What it was paid, split at the close (`paidAtClose`). */
  paid: ReturnType<typeof paidAtClose>;
  /** Every confirmed late payment, after a short completion too, settled or not (`receivedSplit`'s `afterClose`). */
  lateReceived: ClosedMoney;
  /** The confirmed late money a page speaks of, and when a mark of refunded covered it (`lateMoney`). */
  late: ReturnType<typeof lateMoney>;
  /** Payments still confirming at an expired or canceled session (`confirmingAfterClose`). */
  confirming: ClosedMoney;
  /** Expired or canceled, then paid (`paidAfterClose`). */
  paidAfterClose: boolean;
};

export const moneyAtClose = (session: CheckoutSession): MoneyAtClose => ({
  paid: paidAtClose(session),
  lateReceived: receivedSplit(session).afterClose,
  late: lateMoney(session),
  confirming: confirmingAfterClose(session),
  paidAfterClose: paidAfterClose(session),
});
