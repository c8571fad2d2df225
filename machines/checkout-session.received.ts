import { type ExactAmount, ZERO_EXACT, addExact, exactOfApi, subtractExact } from '../src/shared/money.ts';
import type { SessionPayment } from './checkout-session.types.ts';

/**
 * A payment's exact amount: its chain units at its asset's decimals. Its `amount` is the same cut
 * to 10^8 for display; summing those would lose what a DAI transfer carries below 10^-8.
 */
export const paymentExact = (payment: Pick<SessionPayment, 'amountRaw' | 'asset'>): ExactAmount => ({
  units: BigInt(payment.amountRaw),
  decimals: payment.asset.decimals,
});

/**
 * A payment without the session's bookkeeping about it (the blocks a reorg took it from, whether it is
 * awaited back, a failure sent, its settlement, its order against a cancel or a mark of refunded, the
 * fees it paid):
 * what the chain says of it and its status, for events built from it and for the API.
 */
export const withoutBookkeeping = ({
  seenIn: _seenIn,
  mayReturn: _mayReturn,
  failureSent: _failureSent,
  settled: _settled,
  seenBeforeClose: _seenBeforeClose,
  coveredByRefundMark: _coveredByRefundMark,
  feeShare: _feeShare,
  ...payment
}: SessionPayment) => payment;

/** The exact sum of the payments in one of `statuses`. */
export const sumOfPayments = (payments: SessionPayment[], statuses: SessionPayment['status'][]): ExactAmount =>
  payments.reduce((sum, p) => (statuses.includes(p.status) ? addExact(sum, paymentExact(p)) : sum), ZERO_EXACT);

/** The exact sum of the confirmed payments: what decides whether a session is paid. */
export const confirmedExact = (payments: SessionPayment[]): ExactAmount => sumOfPayments(payments, ['confirmed']);

/** What is left of `total` (10^8) once `paid` is counted, exact; below zero when more was paid. */
export const outstandingExact = (total: bigint, paid: ExactAmount): ExactAmount =>
  subtractExact(exactOfApi(total), paid);
