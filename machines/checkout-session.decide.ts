import { transition } from 'xstate';
import { ConflictError, InvalidStateError, ValidationError } from '../src/shared/errors.ts';
import { type ExactAmount, exactToApi, owedInChainUnits } from '../src/shared/money.ts';
import { addedUp, confirmedAmount, gasFeeChoosing, totalOf, withDiscount } from './checkout-session.evolve.ts';
import { confirmedExact, outstandingExact, withoutBookkeeping } from './checkout-session.received.ts';
import type { CheckoutSessionSnapshot } from './checkout-session.aggregate.ts';
import { checkoutSessionMachine } from './checkout-session.machine.ts';
import type {
  CheckoutSession,
  CheckoutSessionEvent,
  DiscountedLineTax,
  SessionDiscount,
  SessionPayment,
  SessionSweep,
  SweptAmount,
  RecordedSweepBroadcast,
} from './checkout-session.types.ts';
import { NOT_IN_FINAL_BLOCK, RECONCILIATION_TRANSACTION_PREFIX, type SeenBlock } from './checkout-session.types.ts';

/** A transfer as the matcher reports it: a payment before the session gives it a status. */
type RecordedTransfer = Omit<SessionPayment, 'status' | 'detectedAt' | 'confirmedAt' | 'late'>;

export type CheckoutSessionCommand =
  | { type: 'CreateCheckoutSession'; session: CheckoutSession }
  | { type: 'SelectPaymentMethod'; addressId: string }
  | { type: 'RecordTransfer'; payment: RecordedTransfer }
  /** `settled`: the matcher's final at the greatest height it was seen at named another block (see `SessionPayment.settled`). */
  | { type: 'WithdrawTransfer'; transferId: string; reason: string; settled?: true }
  /** `blockHash`: the final block it was mined in, one it was seen in (absent: the block it is in now). */
  | { type: 'ConfirmTransfer'; transferId: string; blockHash?: string }
  | { type: 'ReinstateTransfer'; transferId: string; blockHash: string }
  | { type: 'ExpireCheckoutSession' }
  | { type: 'CancelCheckoutSession'; reason: string | null }
  /** `reason`: why the system completes it (its invoice was settled another way); absent when the merchant does. */
  | { type: 'CompletePartialCheckoutSession'; reason?: string }
  /** `moved` is the sum of the transfers the sweep is recorded with (decided here). */
  | { type: 'RecordSweep'; sweep: Omit<SessionSweep, 'at' | 'moved'> }
  /**
   * The deposit `depositAddress` on `network` was read empty on chain though confirmed transfers
   * to it are listed by no sweep: those a sweep recorded already moved (mined at or after their
   * block) are found swept by it. Others (someone else's flush emptied it) stay as they are.
   */
  | { type: 'FindSweptTransfers'; network: string; depositAddress: string }
  | { type: 'RecordSweepBroadcast'; broadcast: Omit<RecordedSweepBroadcast, 'at'> }
  | { type: 'DropSweepBroadcast'; network: string; transactionHash: string; mayBeMined?: boolean }
  | { type: 'EndSweepLookUp'; network: string; transactionHash: string }
  | {
      type: 'ApplyDiscount';
      discount: Omit<SessionDiscount, 'at'>;
      /** Each line's tax on its discounted amount (see `taxesAfterDiscount`); absent without tax. */
      lineTaxes?: DiscountedLineTax[];
    }
  /** The payer's email, given on the hosted page (checked to be one by the route). */
  | { type: 'CollectCustomerEmail'; email: string }
  | { type: 'MarkPaymentRefunded'; comment: string | null }
  | { type: 'RequestPaymentReceipt'; to: string; receiptNumber: string };

export type DecideContext = { now: string };

/** The session's status: the top-level state (`open` has substates). */
const statusOf = (snapshot: CheckoutSessionSnapshot): string =>
  typeof snapshot.value === 'string' ? snapshot.value : Object.keys(snapshot.value)[0]!;

/**
 * The expiry the chart takes at `now`: only an open session awaiting payment (none pending, see
 * the machine) whose `expiresAt` has passed expires; otherwise nothing.
 */
function expiresNow(snapshot: CheckoutSessionSnapshot, now: string): CheckoutSessionEvent[] {
  const expiry: CheckoutSessionEvent = { type: 'CheckoutSessionExpired', data: { at: now } };
  return snapshot.matches({ open: 'awaitingPayment' }) && snapshot.can(expiry) ? [expiry] : [];
}

/** Whether `transactionHash` was broadcast for the session and recorded as dropped (it may still be found mined). */
const wasDropped = (session: CheckoutSession, transactionHash: string | undefined): boolean =>
  transactionHash !== undefined && (session.sweepsDropped ?? []).includes(transactionHash);

/** Whether `transactionHash` was broadcast for the session and its outcome is not recorded yet. */
const isBroadcast = (session: CheckoutSession, transactionHash: string | undefined): boolean =>
  (session.sweepsBroadcast ?? []).some((b) => b.transactionHash === transactionHash);

/** The assets `sweep` flushed: as recorded, or (on sweeps recorded before that) those of the transfers it moved. */
function assetsOf(session: CheckoutSession, sweep: Omit<SessionSweep, 'at'>): string[] {
  const assets =
    sweep.assets ??
    session.payments.filter((p) => sweep.transferIds.includes(p.transferId)).map((p) => p.asset.address);
  return assets.map((asset) => asset.toLowerCase());
}

/**
 * Whether the mined `sweep` moved `payment`, a confirmed transfer no sweep lists: a flush sends the
 * whole balance of each asset it flushes, so one of the payment's deposit address and asset mined
 * in a later block did. In the same block the transfer may have come after it, which the block
 * does not tell: there only when the deposit was read empty since (`sameBlock`).
 */
function sweepMoved(
  session: CheckoutSession,
  sweep: Omit<SessionSweep, 'at'>,
  payment: SessionPayment,
  sameBlock: boolean,
): boolean {
  if (sweep.reverted || sweep.blockNumber === undefined || sweep.depositAddress === undefined) return false;
  if (sweep.network !== payment.network || sweep.depositAddress.toLowerCase() !== payment.toAddress.toLowerCase())
    return false;
  if (!assetsOf(session, sweep).includes(payment.asset.address.toLowerCase())) return false;
  return sameBlock ? sweep.blockNumber >= payment.blockNumber : sweep.blockNumber > payment.blockNumber;
}

/** What `payments` moved, per asset (in the order first met), in chain units. */
const movedBy = (payments: SessionPayment[]): SweptAmount[] =>
  addedUp(
    [],
    payments.map((p) => ({ asset: p.asset.address, amountRaw: p.amountRaw })),
  );

/**
 * `payments` (confirmed, listed by no sweep) that a sweep recorded already moved, each found on the
 * first such sweep: one TransfersFoundSwept per sweep. See sweepMoved for `sameBlock`.
 */
function foundSwept(
  session: CheckoutSession,
  payments: SessionPayment[],
  sameBlock: boolean,
  now: string,
): CheckoutSessionEvent[] {
  const sweeps = [...(session.sweeps ?? [])].sort((a, b) => (a.blockNumber ?? 0) - (b.blockNumber ?? 0));
  const found = new Map<SessionSweep, SessionPayment[]>();
  for (const payment of payments) {
    const sweep = sweeps.find((s) => sweepMoved(session, s, payment, sameBlock));
    if (sweep) found.set(sweep, [...(found.get(sweep) ?? []), payment]);
  }
  return [...found].map(([sweep, moved]) => ({
    type: 'TransfersFoundSwept',
    data: {
      network: sweep.network,
      transactionHash: sweep.transactionHash,
      blockNumber: sweep.blockNumber!,
      depositAddress: sweep.depositAddress!,
      transferIds: moved.map((p) => p.transferId),
      moved: movedBy(moved),
      at: now,
    },
  }));
}

/** The session's confirmed transfers that no sweep lists yet. */
function unswept(session: CheckoutSession): SessionPayment[] {
  const swept = new Set((session.sweeps ?? []).flatMap((s) => s.transferIds));
  return session.payments.filter((p) => p.status === 'confirmed' && !swept.has(p.transferId));
}

/**
 * The reconciliation credit that already holds a transfer's money, if any: a credit at the same
 * address and asset read from a balance at or after the transfer's block, with room left for it
 * beside the transfers it already covers. That balance included the transfer, so crediting its
 * log as well would count the same money twice.
 */
function reconciliationCovering(session: CheckoutSession, payment: RecordedTransfer): string | null {
  if (payment.transactionHash.startsWith(RECONCILIATION_TRANSACTION_PREFIX)) return null;
  for (const credit of session.payments) {
    if (
      !credit.transactionHash.startsWith(RECONCILIATION_TRANSACTION_PREFIX) ||
      credit.status === 'withdrawn' ||
      credit.network !== payment.network ||
      credit.toAddress !== payment.toAddress ||
      credit.asset.id !== payment.asset.id ||
      credit.blockNumber < payment.blockNumber
    )
      continue;
    const covered = (session.reconciledTransfers ?? [])
      .filter((t) => t.coveredBy === credit.transferId)
      .reduce((sum, t) => sum + BigInt(t.amountRaw), 0n);
    if (covered + BigInt(payment.amountRaw) <= BigInt(credit.amountRaw)) return credit.transferId;
  }
  return null;
}

/** The block among those `payment` was seen in (now or before a reorg) whose hash is `blockHash`, if any. */
const seenBlock = (payment: SessionPayment, blockHash: string): SeenBlock | undefined =>
  [{ number: payment.blockNumber, hash: payment.blockHash }, ...(payment.seenIn ?? [])].find(
    (block) => block.hash.toLowerCase() === blockHash.toLowerCase(),
  );

/**
 * A pending transfer seen in `block` too: recorded as detected there (the session keeps its first
 * detectedAt and lists the block it was in under `seenIn`), so that block's final finds it.
 */
function movedTo(payment: SessionPayment, block: SeenBlock, now: string): CheckoutSessionEvent {
  const {
    seenIn: _seenIn,
    mayReturn: _mayReturn,
    failureSent: _failureSent,
    seenBeforeClose: _seenBeforeClose,
    coveredByRefundMark: _coveredByRefundMark,
    feeShare: _feeShare,
    ...transfer
  } = payment;
  return {
    type: 'PaymentDetected',
    data: { payment: { ...transfer, blockNumber: block.number, blockHash: block.hash, detectedAt: now } },
  };
}

/**
 * A subscription session with no customer and no email: its renewal invoices would reach no one,
 * so its page asks the payer's email before a payment method can be chosen (a payment link's page
 * collects it on its form). Recorded with `CollectCustomerEmail`.
 */
export const needsCustomerEmail = (
  session: Pick<CheckoutSession, 'mode' | 'customerId' | 'customerDetails'>,
): boolean => session.mode === 'subscription' && !session.customerId && !session.customerDetails?.email;

function requireSession(snapshot: CheckoutSessionSnapshot): CheckoutSession {
  const session = snapshot.context.session;
  if (!session) throw new InvalidStateError('checkout session does not exist', 'resource_missing');
  return session;
}

/**
 * A session completed by its confirmed `payments`, `outstanding` the rest of its total (none, or
 * below none when more was sent), `last` the transfer that took it there (none with nothing received).
 */
function completedBy(
  session: CheckoutSession,
  payments: SessionPayment[],
  outstanding: ExactAmount,
  last: SessionPayment | undefined,
  now: string,
): CheckoutSessionEvent[] {
  // Paid or not is decided on the exact sum (no dust is forgiven: the spec has no tolerance); the
  // 10^8 figures recorded are rounded down, what arrived and what was sent over never overstated.
  const overpaid = exactToApi({ ...outstanding, units: -outstanding.units }, 'down');
  const completed: CheckoutSessionEvent = {
    type: 'CheckoutSessionCompleted',
    data: {
      amountReceived: confirmedAmount(payments).toString(),
      amountOverpaid: overpaid.toString(),
      transactionHash: last?.transactionHash ?? null,
      partial: false,
      at: now,
    },
  };
  // A completion past the total is an overpayment too: the merchant hears of it as of one after
  // completion (logs from before hold the completion alone).
  return last && announced(session, overpaid) ? [completed, overpaymentBy(last, overpaid, now)] : [completed];
}

/**
 * Whether `overpaid` is an overpayment to announce: the API's `amountOverpaid` (rounded down) goes
 * up, never one saying 0 is owed, nor dust under 10^-8 that the amount cannot show. The chain
 * units stay exact in the payments, so the next transfer to pass a unit announces it.
 */
const announced = (session: CheckoutSession, overpaid: bigint): boolean => overpaid > BigInt(session.amountOverpaid);

const overpaymentBy = (payment: SessionPayment, overpaid: bigint, now: string): CheckoutSessionEvent => ({
  type: 'OverpaymentReceived',
  data: { transferId: payment.transferId, amount: payment.amount, amountOverpaid: overpaid.toString(), at: now },
});

/** The events that follow a confirmation: completion, partial payment, overpayment or a late payment. */
function afterConfirmation(
  session: CheckoutSession,
  status: string,
  payment: SessionPayment,
  now: string,
): CheckoutSessionEvent[] {
  const confirmed = session.payments.map((p) =>
    p.transferId === payment.transferId ? { ...p, status: 'confirmed' as const } : p,
  );
  const outstanding = outstandingExact(BigInt(session.amountTotal), confirmedExact(confirmed));
  if (status === 'open' || status === 'incomplete') {
    if (outstanding.units <= 0n) return completedBy(session, confirmed, outstanding, payment, now);
    return [
      {
        type: 'CheckoutSessionPartiallyPaid',
        data: { amountReceived: confirmedAmount(confirmed).toString(), at: now },
      },
    ];
  }
  // A session completed short (complete-partial) is owed nothing: money up to its total is late, not over.
  const overpaid = exactToApi({ ...outstanding, units: -outstanding.units }, 'down');
  if (status === 'complete' && outstanding.units < 0n)
    return announced(session, overpaid) ? [overpaymentBy(payment, overpaid, now)] : [];
  return [{ type: 'LatePaymentReceived', data: { transferId: payment.transferId, amount: payment.amount, at: now } }];
}

/**
 * The events that record `payment` as detected (pending), or as already counted by a
 * reconciliation credit, or none when it is one of those the credit covers.
 */
function detection(session: CheckoutSession, payment: RecordedTransfer, now: string): CheckoutSessionEvent[] {
  if (session.reconciledTransfers?.some((t) => t.transferId === payment.transferId)) return [];
  const coveredBy = reconciliationCovering(session, payment);
  if (coveredBy !== null) {
    const { transferId, transactionHash, blockNumber, amountRaw } = payment;
    return [
      {
        type: 'TransferAlreadyReconciled',
        data: { transfer: { transferId, transactionHash, blockNumber, amountRaw, coveredBy, at: now } },
      },
    ];
  }
  return [
    {
      type: 'PaymentDetected',
      data: { payment: { ...payment, status: 'pending', detectedAt: now, confirmedAt: null, late: false } },
    },
  ];
}

/**
 * Decide which facts a command produces. Repeating a command that already took effect (the same
 * transfer twice, a second expiry) produces no events, so redelivered messages change nothing.
 */
export function decideCheckoutSession(
  snapshot: CheckoutSessionSnapshot,
  command: CheckoutSessionCommand,
  ctx: DecideContext,
): CheckoutSessionEvent[] {
  const status = statusOf(snapshot);
  if (command.type === 'CreateCheckoutSession') {
    if (status !== 'new') return [];
    return [{ type: 'CheckoutSessionCreated', data: { session: command.session } }];
  }
  const session = requireSession(snapshot);
  switch (command.type) {
    case 'SelectPaymentMethod': {
      if (status !== 'open' && status !== 'incomplete') {
        throw new InvalidStateError(
          `checkout session is ${status}; a payment method can only be chosen while it is open or incomplete`,
        );
      }
      if (needsCustomerEmail(session))
        throw new ValidationError(
          'email',
          'your email is needed before choosing how to pay, since the renewal invoices of this subscription are sent to it',
          'parameter_missing',
        );
      const address = session.addresses.find((a) => a.id === command.addressId);
      if (!address) throw new ValidationError('assetId', 'is not offered by this checkout session');
      // With gas collection on, the sweep gas of the chosen address, and of every other one paid
      // into (its deposit is swept all the same), is part of what the payer owes.
      const gasFee = gasFeeChoosing(session, address).toString();
      const outstanding = outstandingExact(
        totalOf({ ...session, amountDetails: { ...session.amountDetails, amountGasFee: gasFee } }),
        confirmedExact(session.payments),
      );
      // The rest rounded up to the asset's smallest unit: one left by a finer asset (18-decimal USDC)
      // is payable in a coarser one, at most a unit over; a finer one is asked it exactly (1 wei short: 1 wei).
      const amountDue = owedInChainUnits(outstanding, address.asset.decimals);
      const current = session.paymentIntent.paymentMethod;
      if (
        current &&
        current.id === address.id &&
        current.amountDue === amountDue.toString() &&
        session.amountDetails.amountGasFee === gasFee
      )
        return [];
      const selected: CheckoutSessionEvent = {
        type: 'PaymentMethodSelected',
        data: { addressId: address.id, amountDue: amountDue.toString(), amountGasFee: gasFee, at: ctx.now },
      };
      if (outstanding.units > 0n) return [selected];
      // Nothing owed at the new price (the money came in an asset cheaper to sweep than the one chosen
      // before): completed now, as no transfer may ever come to complete it.
      const last = session.payments.findLast((p) => p.status === 'confirmed');
      return [selected, ...completedBy(session, session.payments, outstanding, last, ctx.now)];
    }
    case 'RecordTransfer': {
      const { payment } = command;
      // A transfer withdrawn with its block (reorg) may be mined again in another: the same money,
      // seen again. Seen again in a block it was seen in before, the message may be a stale one of
      // a removed block: that block's final decides (ReinstateTransfer).
      // Still pending and seen in a block it was never seen in, no reorg told before it (a missed
      // one): it is in that block now, its former kept in `seenIn`, so either block's final decides.
      const known = session.payments.find((p) => p.transferId === payment.transferId);
      if (known?.status === 'pending' && seenBlock(known, payment.blockHash) === undefined)
        return [movedTo(known, { number: payment.blockNumber, hash: payment.blockHash }, ctx.now)];
      if (known && !(known.status === 'withdrawn' && seenBlock(known, payment.blockHash) === undefined)) return [];
      return detection(session, payment, ctx.now);
    }
    case 'WithdrawTransfer': {
      const payment = session.payments.find((p) => p.transferId === command.transferId);
      const settles = command.settled === true;
      const gone = settles || command.reason === NOT_IN_FINAL_BLOCK;
      // One the session still waits for after a reorg is gone once its height is final in another
      // block; one it no longer waits for is recorded settled then, once: finals look for it no more.
      const givenUp =
        payment?.status === 'withdrawn' &&
        gone &&
        (payment.mayReturn === true || (settles && payment.settled !== true));
      if (!payment || !(payment.status === 'pending' || givenUp)) return [];
      // Paid in time and taken away by a reorg alone: its transaction may be mined again (the mempool
      // keeps it), and it would count on time, so the session waits for it rather than expire.
      const mayReturn = !gone && status === 'open' && Date.parse(payment.detectedAt) < Date.parse(session.expiresAt);
      const withdrawal: CheckoutSessionEvent = {
        type: 'PaymentWithdrawn',
        data: {
          transferId: command.transferId,
          reason: command.reason,
          at: ctx.now,
          ...(mayReturn ? { mayReturn: true as const } : {}),
          ...(settles ? { settled: true as const } : {}),
        },
      };
      // The expiry timer that fired while it was pending will not fire again: a session past its
      // expiry that no longer waits for any payment expires with the withdrawal.
      const [afterWithdrawal] = transition(checkoutSessionMachine, snapshot, withdrawal);
      // The intent waited for this payment alone and needs a payment again: its attempt failed
      // (`payment_intent.payment_failed`). Not while the payment is awaited back (the intent stays
      // processing), nor when the session expires with the withdrawal: it can take no payment again;
      // nor a second time when the withdrawal that awaited it told it already (logs before the rule).
      const expiry = expiresNow(afterWithdrawal, ctx.now);
      const failed =
        expiry.length === 0 &&
        payment.failureSent !== true &&
        session.paymentIntent.status === 'processing' &&
        afterWithdrawal.context.session?.paymentIntent.status === 'requires_payment_method';
      const withdrawn: CheckoutSessionEvent = failed
        ? { type: 'PaymentWithdrawn', data: { ...withdrawal.data, paymentFailed: true } }
        : withdrawal;
      return [withdrawn, ...expiry];
    }
    case 'ConfirmTransfer': {
      const payment = session.payments.find((p) => p.transferId === command.transferId);
      if (!payment || payment.status !== 'pending') return [];
      // Final in a block it was seen in before its latest (a missed reorg): it was mined there.
      const block = command.blockHash === undefined ? undefined : seenBlock(payment, command.blockHash);
      if (command.blockHash !== undefined && block === undefined) return [];
      const moved =
        block !== undefined && block.hash.toLowerCase() !== payment.blockHash.toLowerCase()
          ? [movedTo(payment, block, ctx.now)]
          : [];
      // Mined before a sweep recorded already (confirmed after it was sent), it went with it.
      const confirmed = { ...payment, blockNumber: block?.number ?? payment.blockNumber, status: 'confirmed' as const };
      return [
        ...moved,
        { type: 'PaymentConfirmed', data: { transferId: command.transferId, at: ctx.now } },
        ...afterConfirmation(session, status, payment, ctx.now),
        ...foundSwept(session, [confirmed], false, ctx.now),
      ];
    }
    case 'ReinstateTransfer': {
      // Its very block is final after all (the chain came back to it, or a lagging node had
      // called it gone): the transfer was mined there, so it counts now, once. A final block
      // proves more than its redetection could, which the same block hash does not get.
      // Its final block may be one it was seen in before being mined again elsewhere (a chain A→B→A).
      const payment = session.payments.find((p) => p.transferId === command.transferId);
      const block = payment?.status === 'withdrawn' ? seenBlock(payment, command.blockHash) : undefined;
      if (!payment || !block) return [];
      const {
        status: _status,
        detectedAt: _detectedAt,
        confirmedAt: _confirmedAt,
        late: _late,
        ...transfer
      } = withoutBookkeeping(payment);
      const detected = detection(session, { ...transfer, blockNumber: block.number, blockHash: block.hash }, ctx.now);
      if (detected[0]?.type !== 'PaymentDetected') return detected;
      return [
        ...detected,
        { type: 'PaymentConfirmed', data: { transferId: payment.transferId, at: ctx.now } },
        ...afterConfirmation(session, status, payment, ctx.now),
        ...foundSwept(session, [{ ...payment, blockNumber: block.number, status: 'confirmed' }], false, ctx.now),
      ];
    }
    case 'ExpireCheckoutSession':
      // Nothing while a payment detected in time waits for its confirmations: it completes or
      // part-pays the session when final, or expires it if withdrawn (see WithdrawTransfer).
      return expiresNow(snapshot, ctx.now);
    case 'CancelCheckoutSession': {
      if (status === 'canceled') return [];
      // Money received stays accounted for: a partly paid session ends only by being completed
      // as is (or paid in full); it no longer expires either, so that is the way out.
      if (status === 'incomplete')
        throw new InvalidStateError(
          `checkout session is incomplete: part of its amount was received, and a partly paid session cannot be canceled; complete it with the amount received (POST /api/v1/checkout/sessions/${session.id}/complete-partial-checkout-session), or let the payer send the rest`,
        );
      if (status !== 'open')
        throw new InvalidStateError(`checkout session is ${status}; only an open session can be canceled`);
      return [{ type: 'CheckoutSessionCanceled', data: { at: ctx.now, reason: command.reason } }];
    }
    case 'ApplyDiscount': {
      const applied = session.discounts[0];
      if (applied) {
        if (applied.promotionCodeId === command.discount.promotionCodeId) return [];
        throw new ValidationError(
          'code',
          `promotion code ${applied.code} is already applied to this checkout session`,
          'parameters_exclusive',
        );
      }
      if (!session.allowPromotionCodes)
        throw new ValidationError(
          'code',
          'this checkout session does not accept promotion codes',
          'promotion_codes_not_allowed',
        );
      if (status !== 'open')
        throw new InvalidStateError(
          `checkout session is ${status}; a promotion code can only be applied while it is open`,
        );
      // A 100% code completes the session at once: the subscription it starts needs the email its renewals go to.
      if (needsCustomerEmail(session))
        throw new ValidationError(
          'email',
          'your email is needed before applying a promotion code, since the renewal invoices of this subscription are sent to it',
          'parameter_missing',
        );
      // Pending, or taken away by a reorg and awaited back: counted against the discounted total, it would read as over.
      if (session.payments.some((p) => p.status !== 'withdrawn' || p.mayReturn === true)) {
        throw new ConflictError(
          'a payment to this checkout session is pending (sent, or taken away by a chain reorganization and awaited back); a promotion code can only be applied before paying',
          'payment_pending',
        );
      }
      // Past its expiresAt the session is about to be recorded as expired: a code applied now could never be used.
      if (Date.parse(ctx.now) >= Date.parse(session.expiresAt))
        throw new InvalidStateError(`checkout session expired at ${session.expiresAt}`, 'checkout_session_expired');
      const discount = { ...command.discount, at: ctx.now };
      const discounted = withDiscount(session, discount, command.lineTaxes);
      const data = { discount, ...(command.lineTaxes ? { lineTaxes: command.lineTaxes } : {}) };
      const goods = totalOf({ ...discounted, amountDetails: { ...discounted.amountDetails, amountGasFee: '0' } });
      if (goods > 0n) return [{ type: 'DiscountApplied', data }];
      // No goods left to pay (a 100% coupon), and nothing received (a code applies before paying): no
      // deposit to sweep, so the gas fee of an asset chosen before falls away. Completed at once, as an
      // invoice with nothing to pay is paid at its finalize, since no payment could ever be made to it.
      const noFee = session.amountDetails.amountGasFee === '0' ? {} : { amountGasFee: '0' };
      return [
        { type: 'DiscountApplied', data: { ...data, ...noFee } },
        {
          type: 'CheckoutSessionCompleted',
          data: { amountReceived: '0', amountOverpaid: '0', transactionHash: null, partial: false, at: ctx.now },
        },
      ];
    }
    case 'CollectCustomerEmail': {
      // Given once: the subscription's customer is created from it, so a repeat of the same changes nothing.
      const given = session.customerDetails?.email;
      if (given && given.toLowerCase() === command.email.toLowerCase()) return [];
      if (!needsCustomerEmail(session))
        throw new InvalidStateError(
          given ? 'the email for this checkout was already given' : 'this checkout session does not ask for an email',
        );
      if (status !== 'open')
        throw new InvalidStateError(`checkout session is ${status}; an email can only be given while it is open`);
      return [{ type: 'CustomerEmailCollected', data: { email: command.email, at: ctx.now } }];
    }
    case 'RecordSweep': {
      if (command.sweep.reverted) {
        // Its gas only, once per transaction.
        if ((session.sweeps ?? []).some((s) => s.transactionHash === command.sweep.transactionHash)) return [];
        return [{ type: 'FundsSwept', data: { sweep: { ...command.sweep, transferIds: [], at: ctx.now } } }];
      }
      const { transactionHash, replaces } = command.sweep;
      // A transaction is recorded once. Found mined in place of another broadcast (a copy at its
      // nonce) after it was recorded on its own, it ends that broadcast, never mined.
      if ((session.sweeps ?? []).some((s) => s.transactionHash === transactionHash)) {
        if (replaces === undefined || !isBroadcast(session, replaces)) return [];
        return [
          { type: 'SweepDropped', data: { network: command.sweep.network, transactionHash: replaces, at: ctx.now } },
        ];
      }
      // Those it was sent for, and those confirmed since that were mined before it (confirmed while
      // it was in flight): it sent the whole balance, theirs too.
      const moved = unswept(session).filter(
        (p) => command.sweep.transferIds.includes(p.transferId) || sweepMoved(session, command.sweep, p, false),
      );
      const transferIds = moved.map((p) => p.transferId);
      // A transaction broadcast for this session (or mined in its place, or dropped and found mined
      // later) is recorded even if it swept nothing new: its gas was paid.
      const ours = [transactionHash, replaces].some((hash) => isBroadcast(session, hash) || wasDropped(session, hash));
      if (transferIds.length === 0 && !ours) return [];
      return [
        { type: 'FundsSwept', data: { sweep: { ...command.sweep, transferIds, moved: movedBy(moved), at: ctx.now } } },
      ];
    }
    case 'FindSweptTransfers': {
      const network = command.network;
      const depositAddress = command.depositAddress.toLowerCase();
      const waiting = unswept(session).filter(
        (p) => p.network === network && p.toAddress.toLowerCase() === depositAddress,
      );
      return foundSwept(session, waiting, true, ctx.now);
    }
    case 'RecordSweepBroadcast': {
      const { transactionHash } = command.broadcast;
      if (
        isBroadcast(session, transactionHash) ||
        (session.sweeps ?? []).some((s) => s.transactionHash === transactionHash)
      )
        return [];
      return [{ type: 'SweepBroadcast', data: { broadcast: { ...command.broadcast, at: ctx.now } } }];
    }
    case 'DropSweepBroadcast': {
      if (!isBroadcast(session, command.transactionHash)) return [];
      return [
        {
          type: 'SweepDropped',
          data: {
            network: command.network,
            transactionHash: command.transactionHash,
            at: ctx.now,
            ...(command.mayBeMined ? { mayBeMined: true as const } : {}),
          },
        },
      ];
    }
    case 'EndSweepLookUp': {
      if (!(session.sweepsLookedUp ?? []).includes(command.transactionHash)) return [];
      return [
        {
          type: 'SweepLookUpEnded',
          data: { network: command.network, transactionHash: command.transactionHash, at: ctx.now },
        },
      ];
    }
    case 'MarkPaymentRefunded': {
      // Once recorded, asking again changes nothing (the first comment stays).
      if (session.paymentIntent.isMarkRefunded) return [];
      if (confirmedExact(session.payments).units === 0n)
        throw new InvalidStateError(
          `checkout session is ${status} and has received no confirmed payment; there is nothing to refund`,
        );
      return [{ type: 'PaymentMarkedRefunded', data: { comment: command.comment, at: ctx.now } }];
    }
    case 'RequestPaymentReceipt': {
      // Every request is a mail of its own (a receipt may be sent again); a retried request carries an Idempotency-Key.
      if (session.paymentStatus !== 'paid')
        throw new InvalidStateError(`checkout session is ${status} and not paid; a receipt follows a payment`);
      return [
        {
          type: 'PaymentReceiptRequested',
          data: { to: command.to, receiptNumber: command.receiptNumber, at: ctx.now },
        },
      ];
    }
    case 'CompletePartialCheckoutSession': {
      if (status !== 'incomplete') {
        throw new InvalidStateError(
          `checkout session is ${status}; only an incomplete (partially paid) session can be completed as is`,
        );
      }
      const received = confirmedAmount(session.payments);
      const last = [...session.payments].reverse().find((p) => p.status === 'confirmed');
      return [
        {
          type: 'CheckoutSessionCompleted',
          data: {
            amountReceived: received.toString(),
            amountOverpaid: '0',
            transactionHash: last?.transactionHash ?? null,
            partial: true,
            at: ctx.now,
            ...(command.reason === undefined ? {} : { reason: command.reason }),
          },
        },
      ];
    }
  }
}
