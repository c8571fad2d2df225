import { exactToApi } from '../src/shared/money.ts';
import { confirmedExact } from './checkout-session.received.ts';
import { discountShares, exclusiveTaxOf } from '../src/shared/tax.ts';
import type {
  CheckoutSession,
  CheckoutSessionEvent,
  DiscountedLineTax,
  SessionAddress,
  SessionDiscount,
  SessionPayment,
  SweptAmount,
} from './checkout-session.types.ts';

/**
 * The confirmed payments on the 10^8 scale, summed exactly in their chain units and then rounded
 * down: never shown as more than arrived (a session 1 wei short shows 10^-8 still owed).
 */
export const confirmedAmount = (payments: SessionPayment[]): bigint => exactToApi(confirmedExact(payments), 'down');

const replacePayment = (
  payments: SessionPayment[],
  transferId: string,
  change: Partial<SessionPayment>,
): SessionPayment[] => payments.map((p) => (p.transferId === transferId ? { ...p, ...change } : p));

/**
 * `payment` seen again (after a reorg took away the block `known` was in) in place of `known`:
 * the blocks it was seen in before stay listed (`seenIn`), the one it is in now aside. It keeps
 * the time it was first detected: whether it was paid in time is judged by that (A→B→A past expiry);
 * and whether it was seen before a cancel (the detection's event does not carry it).
 */
function seenAgain(known: SessionPayment, payment: SessionPayment): SessionPayment {
  const now = payment.blockHash.toLowerCase();
  const seenIn = [...(known.seenIn ?? []), { number: known.blockNumber, hash: known.blockHash }].filter(
    (block, i, all) =>
      block.hash.toLowerCase() !== now && all.findIndex((b) => b.hash.toLowerCase() === block.hash.toLowerCase()) === i,
  );
  const again = {
    ...payment,
    detectedAt: known.detectedAt,
    ...(known.seenBeforeClose ? { seenBeforeClose: true as const } : {}),
  };
  return seenIn.length > 0 ? { ...again, seenIn } : again;
}

/**
 * The payments not confirmed when the session closed (canceled, or expired) marked as seen before
 * it: once final they are late money, though sent before the close. Marked in the log's order, not
 * by timestamps, which cannot order a close and a payment in the same millisecond.
 */
const seenBeforeClose = (payments: SessionPayment[]): SessionPayment[] =>
  payments.map((p) => (p.status === 'confirmed' ? p : { ...p, seenBeforeClose: true as const }));

const atMost = (a: bigint, b: bigint): bigint => (a < b ? a : b);
const owedPast = (due: string, paid: bigint): bigint => (BigInt(due) > paid ? BigInt(due) - paid : 0n);

/**
 * What of the session's fee and gas fee the payment `transferId` pays as it is confirmed: the first
 * money confirmed pays them, each payment up to its amount, the fee first, of what is owed now less
 * what the payments confirmed before it paid. Fixed once confirmed: a gas fee raised later (the payer
 * switched asset) is paid by the money after it; together they never pay more than the fees owed.
 */
function feeShareOf(session: CheckoutSession, transferId: string): SessionPayment['feeShare'] {
  const payment = session.payments.find((p) => p.transferId === transferId);
  if (!payment) return undefined;
  let paidFee = 0n;
  let paidGasFee = 0n;
  for (const p of session.payments)
    if (p.status === 'confirmed' && p.transferId !== transferId && p.feeShare) {
      paidFee += BigInt(p.feeShare.fee);
      paidGasFee += BigInt(p.feeShare.gasFee);
    }
  const amount = BigInt(payment.amount);
  const fee = atMost(amount, owedPast(session.amountFee, paidFee));
  const gasFee = atMost(amount - fee, owedPast(session.amountGasFee, paidGasFee));
  return { fee: fee.toString(), gasFee: gasFee.toString() };
}

/** The exclusive tax of the lines: what their totals add to their subtotals (inclusive tax is in the price). */
export const exclusiveTaxOfSession = (session: Pick<CheckoutSession, 'lineItems'>): bigint =>
  session.lineItems.data.reduce((sum, item) => sum + BigInt(item.amountTotal) - BigInt(item.amountSubtotal), 0n);

/** What the payer owes in all: the goods, less the discount, plus exclusive tax and the network (gas) fee. */
export const totalOf = (session: Pick<CheckoutSession, 'amountSubtotal' | 'amountDetails' | 'lineItems'>): bigint =>
  BigInt(session.amountSubtotal) -
  BigInt(session.amountDetails.amountDiscount) +
  exclusiveTaxOfSession(session) +
  BigInt(session.amountDetails.amountGasFee);

/** Whether money was sent to `address`: a payment in its asset on its network, confirmed, confirming, or awaited back after a reorg. */
const paidInto = (payments: SessionPayment[], address: Pick<SessionAddress, 'network' | 'asset'>): boolean =>
  payments.some(
    (p) =>
      p.network === address.network &&
      p.asset.id === address.asset.id &&
      (p.status !== 'withdrawn' || p.mayReturn === true),
  );

/**
 * The network fee the payer owes once `address` is chosen (gas collection on): its sweep gas plus that
 * of every other address money was sent to, each deposit being swept on its own. A switch of asset
 * after part was paid never drops a sweep already owed, so the merchant is never short for it.
 */
export const gasFeeChoosing = (
  session: Pick<CheckoutSession, 'addresses' | 'payments'>,
  address: Pick<SessionAddress, 'id' | 'gasAmount'>,
): bigint =>
  session.addresses.reduce(
    (fee, other) =>
      other.id !== address.id && paidInto(session.payments, other) ? fee + BigInt(other.gasAmount ?? '0') : fee,
    BigInt(address.gasAmount ?? '0'),
  );

/** The session charging `gasFee` (10^8) as its network fee, before its totals are recomputed. */
const withGasFee = (session: CheckoutSession, gasFee: string): CheckoutSession => ({
  ...session,
  amountGasFee: gasFee,
  amountDetails: { ...session.amountDetails, amountGasFee: gasFee, applyGasFee: gasFee !== '0' },
});

/**
 * What the merchant nets after Weir's fee: once complete, of what payers sent (a session completed
 * partly paid nets its part, an overpaid one all of it); until then, of what is asked.
 */
const netOf = (session: Pick<CheckoutSession, 'status' | 'amountTotal' | 'amountReceived' | 'amountFee'>): string =>
  (
    BigInt(session.status === 'complete' ? session.amountReceived : session.amountTotal) - BigInt(session.amountFee)
  ).toString();

/**
 * The session with `discount` applied, before its totals are recomputed: each line taxed again on its
 * discounted amount when `lineTaxes` says how (exclusive tax still added to the line's total).
 */
export function withDiscount(
  session: CheckoutSession,
  discount: SessionDiscount,
  lineTaxes: DiscountedLineTax[] | undefined,
): CheckoutSession {
  // Each line's share of the discount, as its tax was figured on (and as the volume report counts it).
  const shares = discountShares(
    session.lineItems.data.map((line) => BigInt(line.amountSubtotal)),
    BigInt(discount.amountDiscount),
  );
  const lines = session.lineItems.data.map((line, i) => {
    const amountDiscount = shares[i]!.toString();
    if (!lineTaxes) return { ...line, amountDiscount };
    const tax = lineTaxes[i] ?? { amountTax: '0', taxRates: [] };
    const total = BigInt(line.amountSubtotal) + exclusiveTaxOf(tax.taxRates);
    return { ...line, amountDiscount, amountTax: tax.amountTax, taxRates: tax.taxRates, amountTotal: total.toString() };
  });
  const amountTax = lineTaxes
    ? lineTaxes.reduce((sum, t) => sum + BigInt(t.amountTax), 0n).toString()
    : session.amountDetails.amountTax;
  return {
    ...session,
    lineItems: { ...session.lineItems, data: lines },
    discounts: [...session.discounts, discount],
    amountDetails: {
      ...session.amountDetails,
      amountDiscount: discount.amountDiscount,
      amountTax,
      discountAmounts: [
        { amount: discount.amountDiscount, couponId: discount.couponId, promotionCodeId: discount.promotionCodeId },
      ],
    },
  };
}

/** The session with its totals recomputed after a change of discount or gas fee. */
function withTotals(session: CheckoutSession, at: string): CheckoutSession {
  const total = totalOf(session).toString();
  return {
    ...session,
    amountTotal: total,
    amountNet: netOf({ ...session, amountTotal: total }),
    amountDetails: { ...session.amountDetails, amountTotal: total },
    paymentIntent: { ...session.paymentIntent, amount: total, updatedAt: at },
    updatedAt: at,
  };
}

/** `session` no longer looking up the dropped sweep transactions `transactionHashes` (found mined, or given up). */
const withoutLookUp = (session: CheckoutSession, ...transactionHashes: (string | undefined)[]): CheckoutSession =>
  session.sweepsLookedUp
    ? { ...session, sweepsLookedUp: session.sweepsLookedUp.filter((hash) => !transactionHashes.includes(hash)) }
    : session;

/** The session without the broadcasts of `transactionHashes` (their outcome is recorded); a session that never had one is left as it was. */
const withoutBroadcast = (session: CheckoutSession, ...transactionHashes: (string | undefined)[]): CheckoutSession =>
  session.sweepsBroadcast
    ? {
        ...session,
        sweepsBroadcast: session.sweepsBroadcast.filter((b) => !transactionHashes.includes(b.transactionHash)),
      }
    : session;

/**
 * The one place that computes a session's data from its events. The statechart calls it from
 * its actions and the projection calls it directly, so the write and read sides cannot drift.
 */
export function evolveCheckoutSession(
  session: CheckoutSession | null,
  event: CheckoutSessionEvent,
): CheckoutSession | null {
  if (event.type === 'CheckoutSessionCreated') return event.data.session;
  if (session === null) return null;
  switch (event.type) {
    case 'PaymentMethodSelected': {
      const address = session.addresses.find((a) => a.id === event.data.addressId);
      if (!address) return session;
      const priced = withTotals(withGasFee(session, event.data.amountGasFee ?? '0'), event.data.at);
      return {
        ...priced,
        paymentIntent: {
          ...priced.paymentIntent,
          paymentMethod: {
            id: address.id,
            type: 'wallet',
            accountAddress: address.paymentAddress,
            asset: address.asset,
            amountDue: event.data.amountDue,
            options: {
              wallet: { assetId: address.asset.id, transactionHash: null, contractAddress: address.asset.address },
            },
          },
        },
      };
    }
    case 'PaymentDetected': {
      const { payment } = event.data;
      return {
        ...session,
        updatedAt: payment.detectedAt,
        // Detected again after its block was reorged away: it takes the withdrawn record's place.
        payments: session.payments.some((p) => p.transferId === payment.transferId)
          ? session.payments.map((p) => (p.transferId === payment.transferId ? seenAgain(p, payment) : p))
          : [...session.payments, payment],
        paymentIntent: {
          ...session.paymentIntent,
          updatedAt: payment.detectedAt,
          status:
            session.paymentIntent.status === 'requires_payment_method' ? 'processing' : session.paymentIntent.status,
        },
      };
    }
    case 'PaymentWithdrawn': {
      // Waited for only while this withdrawal says it may be mined again (a later one ends that).
      const payments = session.payments.map((p) => {
        if (p.transferId !== event.data.transferId) return p;
        const { mayReturn: _mayReturn, failureSent: _failureSent, settled: _settled, ...rest } = p;
        if (!event.data.mayReturn)
          return { ...rest, status: 'withdrawn' as const, ...(event.data.settled ? { settled: true as const } : {}) };
        // Logs from before the rule may tell payment_failed with the withdrawal that awaits it back.
        return {
          ...rest,
          status: 'withdrawn' as const,
          mayReturn: true as const,
          ...(event.data.paymentFailed ? { failureSent: true as const } : {}),
        };
      });
      // One awaited back after a reorg keeps the intent processing: the payer is told not to pay again.
      const stillPending = payments.some((p) => p.status === 'pending' || p.mayReturn === true);
      const intentStatus =
        session.paymentIntent.status === 'processing' && !stillPending && confirmedExact(payments).units === 0n
          ? 'requires_payment_method'
          : session.paymentIntent.status;
      // Withdrawn already and awaited back by nobody, the intent as it was: a final settling it
      // changes nothing the API or the payer's page shows, so updatedAt stays (or a settle long
      // after a session closed brings it to the top of lists by update time). Giving up one awaited
      // back does change the session: it stops waiting for that money.
      const before = session.payments.find((p) => p.transferId === event.data.transferId);
      if (before?.status === 'withdrawn' && before.mayReturn !== true && intentStatus === session.paymentIntent.status)
        return { ...session, payments };
      return {
        ...session,
        updatedAt: event.data.at,
        payments,
        paymentIntent: { ...session.paymentIntent, status: intentStatus, updatedAt: event.data.at },
      };
    }
    case 'PaymentConfirmed': {
      const payments = replacePayment(session.payments, event.data.transferId, {
        status: 'confirmed',
        confirmedAt: event.data.at,
        feeShare: feeShareOf(session, event.data.transferId),
      });
      const received = confirmedAmount(payments).toString();
      return {
        ...session,
        updatedAt: event.data.at,
        payments,
        amountReceived: received,
        amountNet: netOf({ ...session, amountReceived: received }),
        paymentIntent: { ...session.paymentIntent, amountReceived: received, updatedAt: event.data.at },
      };
    }
    case 'CheckoutSessionPartiallyPaid':
      return { ...session, status: 'incomplete', updatedAt: event.data.at, amountReceived: event.data.amountReceived };
    case 'CheckoutSessionCompleted': {
      const { paymentMethod } = session.paymentIntent;
      return {
        ...session,
        status: 'complete',
        paymentStatus: 'paid',
        updatedAt: event.data.at,
        completedAt: event.data.at,
        amountReceived: event.data.amountReceived,
        amountNet: netOf({ ...session, status: 'complete', amountReceived: event.data.amountReceived }),
        amountOverpaid: event.data.amountOverpaid,
        transactionHash: event.data.transactionHash,
        paymentIntent: {
          ...session.paymentIntent,
          status: 'succeeded',
          amountReceived: event.data.amountReceived,
          updatedAt: event.data.at,
          paymentMethod: paymentMethod
            ? {
                ...paymentMethod,
                options: { wallet: { ...paymentMethod.options.wallet, transactionHash: event.data.transactionHash } },
              }
            : null,
        },
      };
    }
    case 'TransferAlreadyReconciled':
      return {
        ...session,
        updatedAt: event.data.transfer.at,
        reconciledTransfers: [...(session.reconciledTransfers ?? []), event.data.transfer],
      };
    case 'LatePaymentReceived':
      return {
        ...session,
        updatedAt: event.data.at,
        payments: replacePayment(session.payments, event.data.transferId, { late: true }),
      };
    case 'OverpaymentReceived':
      // Logs from before a session completed short took late money as over it: a negative excess.
      if (event.data.amountOverpaid.startsWith('-'))
        return {
          ...session,
          updatedAt: event.data.at,
          payments: replacePayment(session.payments, event.data.transferId, { late: true }),
        };
      return { ...session, updatedAt: event.data.at, amountOverpaid: event.data.amountOverpaid };
    case 'CheckoutSessionExpired':
      return {
        ...session,
        status: 'expired',
        // An expiry waits for a payment confirming, or awaited back, but logs from before that rule
        // expired with one pending; and one a reorg took for good may be mined again after it.
        payments: seenBeforeClose(session.payments),
        updatedAt: event.data.at,
        expiredAt: event.data.at,
        paymentIntent: { ...session.paymentIntent, status: 'canceled', updatedAt: event.data.at },
      };
    case 'DiscountApplied': {
      const { discount, lineTaxes, amountGasFee } = event.data;
      const discounted = withDiscount(session, discount, lineTaxes);
      return withTotals(amountGasFee === undefined ? discounted : withGasFee(discounted, amountGasFee), discount.at);
    }
    case 'CustomerEmailCollected': {
      const details = session.customerDetails ?? { name: null, email: null, phone: null, address: null };
      return { ...session, updatedAt: event.data.at, customerDetails: { ...details, email: event.data.email } };
    }
    case 'FundsSwept':
      return {
        ...withoutLookUp(
          withoutBroadcast(session, event.data.sweep.transactionHash, event.data.sweep.replaces),
          event.data.sweep.transactionHash,
          event.data.sweep.replaces,
        ),
        updatedAt: event.data.sweep.at,
        sweeps: [...(session.sweeps ?? []), event.data.sweep],
      };
    case 'TransfersFoundSwept': {
      const { transactionHash, transferIds, moved, at } = event.data;
      return {
        ...session,
        updatedAt: at,
        sweeps: (session.sweeps ?? []).map((sweep) =>
          sweep.transactionHash !== transactionHash || sweep.reverted
            ? sweep
            : {
                ...sweep,
                transferIds: [...sweep.transferIds, ...transferIds],
                // A sweep recorded before `moved` was kept says nothing of its own amount: left so.
                ...(sweep.moved ? { moved: addedUp(sweep.moved, moved) } : {}),
              },
        ),
      };
    }
    case 'SweepBroadcast': {
      // The signed transaction is the sweeper's, kept in the log: not part of the session.
      const { signedTransaction: _signed, ...broadcast } = event.data.broadcast;
      return {
        ...session,
        updatedAt: broadcast.at,
        sweepsBroadcast: [...(session.sweepsBroadcast ?? []), broadcast],
      };
    }
    case 'SweepDropped':
      return {
        ...withoutBroadcast(session, event.data.transactionHash),
        sweepsDropped: [...(session.sweepsDropped ?? []), event.data.transactionHash],
        ...(event.data.mayBeMined
          ? { sweepsLookedUp: [...(session.sweepsLookedUp ?? []), event.data.transactionHash] }
          : {}),
        updatedAt: event.data.at,
      };
    case 'SweepLookUpEnded':
      return { ...withoutLookUp(session, event.data.transactionHash), updatedAt: event.data.at };
    case 'PaymentMarkedRefunded':
      return {
        ...session,
        updatedAt: event.data.at,
        // The mark is of the money confirmed by then (a late payment is confirmed and told late in one
        // decision, so none is between): marked here, in the log's order, not by timestamps.
        payments: session.payments.map((p) =>
          p.status === 'confirmed' ? { ...p, coveredByRefundMark: true as const } : p,
        ),
        paymentIntent: {
          ...session.paymentIntent,
          isMarkRefunded: true,
          markRefundedAt: event.data.at,
          markRefundedComment: event.data.comment,
          updatedAt: event.data.at,
        },
      };
    case 'PaymentReceiptRequested':
      // The mail is the mails read model's; the session itself does not change.
      return session;
    case 'CheckoutSessionCanceled':
      return {
        ...session,
        status: 'canceled',
        // A cancel may come while a payment confirms, or is awaited back after a reorg.
        payments: seenBeforeClose(session.payments),
        updatedAt: event.data.at,
        canceledAt: event.data.at,
        paymentIntent: { ...session.paymentIntent, status: 'canceled', updatedAt: event.data.at },
      };
  }
}

/** `a` and `b` summed per asset (in the order first met). */
export function addedUp(a: SweptAmount[], b: SweptAmount[]): SweptAmount[] {
  const byAsset = new Map<string, bigint>();
  for (const { asset, amountRaw } of [...a, ...b]) byAsset.set(asset, (byAsset.get(asset) ?? 0n) + BigInt(amountRaw));
  return [...byAsset].map(([asset, amount]) => ({ asset, amountRaw: amount.toString() }));
}
