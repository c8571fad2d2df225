import type { AssetRef, CheckoutSessionEvent, SessionPayment } from '../../machines/checkout-session.types.ts';
import type { ReadDocument } from '../read-store/read-store.ts';
import { paymentExact } from '../../machines/checkout-session.received.ts';
import { addExact, exactToApi, ZERO_EXACT } from '../shared/money.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from './collections.ts';
import type { Projection } from './projection.ts';

export const TRANSACTIONS = 'transactions';

/** A payment's share of a sweep: one confirmed transfer the sweep moved on. */
export type SweptDeposit = { transferId: string; asset: AssetRef; amountRaw: string; amount: string };

type TransactionBase = ReadDocument & {
  id: string;
  organizationId: string;
  environment: string;
  checkoutSessionId: string;
  paymentIntentId: string;
  invoiceId: string | null;
  subscriptionId: string | null;
  network: string;
  chainId: number;
  transactionHash: string;
  fromAddress: string;
  toAddress: string;
  assetId: string | null;
  asset: AssetRef | null;
  /** Chain units; null for a sweep of several assets. */
  amountRaw: string | null;
  /** 10^8-scaled. */
  amount: string;
  createdAt: string;
  updatedAt: string;
};

/** Money a payer sent to a session's deposit address (the reference's `incoming`). */
export type PaymentTransactionDoc = TransactionBase & {
  type: 'incoming';
  /** The asset's currency (`usdc`): a payment is always of one asset. */
  currency: string;
  status: 'pending' | 'confirmed' | 'withdrawn';
  transferId: string;
  logIndex: number;
  blockNumber: number;
  late: boolean;
  confirmedAt: string | null;
};

/** The sweeper moving a deposit on to the merchant's wallet (the reference's `transfer`). */
export type SweepTransactionDoc = TransactionBase & {
  type: 'transfer';
  /** The deposits' currency, only when all of them are in one asset. */
  currency: string | null;
  /** `broadcast` until mined; then `swept`, or `reverted` (gas paid, nothing moved), or `dropped` (never mined). */
  status: 'broadcast' | 'swept' | 'reverted' | 'dropped';
  deposits: SweptDeposit[];
  gasUsed: string | null;
  gasCost: string | null;
  /** Tron: TRX burnt (sun) for the sweep's energy and bandwidth, this session's share; null elsewhere and until mined. */
  trxBurnt: string | null;
  reverted: boolean;
};

export type TransactionDoc = PaymentTransactionDoc | SweepTransactionDoc;

export const paymentTransactionId = (transferId: string) => `payment:${transferId}`;
export const sweepTransactionId = (sessionId: string, transactionHash: string) =>
  `sweep:${sessionId}:${transactionHash.toLowerCase()}`;

function sessionRefs(session: CheckoutSessionDoc) {
  return {
    organizationId: session.organizationId,
    environment: session.environment,
    checkoutSessionId: session.id,
    paymentIntentId: session.paymentIntent.id,
    invoiceId: session.invoiceId,
    subscriptionId: session.subscriptionId,
  };
}

function paymentDoc(session: CheckoutSessionDoc, p: SessionPayment, createdAt: string): PaymentTransactionDoc {
  const id = paymentTransactionId(p.transferId);
  return {
    _id: id,
    id,
    type: 'incoming',
    ...sessionRefs(session),
    network: p.network,
    chainId: p.chainId,
    transactionHash: p.transactionHash,
    logIndex: p.logIndex,
    blockNumber: p.blockNumber,
    transferId: p.transferId,
    fromAddress: p.fromAddress,
    toAddress: p.toAddress,
    currency: p.asset.currency,
    assetId: p.asset.id,
    asset: p.asset,
    amountRaw: p.amountRaw,
    amount: p.amount,
    status: p.status,
    late: p.late,
    confirmedAt: p.confirmedAt,
    createdAt,
    updatedAt: p.confirmedAt ?? createdAt,
  };
}

/** The session's deposit and merchant wallet on `network`, from the payments the sweep moved (or any address there). */
function sweepEnds(session: CheckoutSessionDoc, network: string, deposits: SessionPayment[]) {
  const to = deposits[0]?.toAddress.toLowerCase();
  const address =
    session.addresses.find((a) => a.network === network && a.paymentAddress.toLowerCase() === to) ??
    session.addresses.find((a) => a.network === network);
  return { fromAddress: address?.paymentAddress ?? '', toAddress: address?.merchantAddress ?? '' };
}

function sweepDoc(
  session: CheckoutSessionDoc,
  current: SweepTransactionDoc | null,
  sweep: { network: string; chainId: number; transactionHash: string; transferIds: string[]; at: string },
): SweepTransactionDoc {
  const moved = session.payments.filter((p) => sweep.transferIds.includes(p.transferId));
  const deposits = moved.map((p) => ({
    transferId: p.transferId,
    asset: p.asset,
    amountRaw: p.amountRaw,
    amount: p.amount,
  }));
  const assets = [...new Set(moved.map((p) => p.asset.id))];
  const single = assets.length === 1 ? moved[0]!.asset : null;
  const id = sweepTransactionId(session.id, sweep.transactionHash);
  return {
    _id: id,
    id,
    type: 'transfer',
    ...sessionRefs(session),
    network: sweep.network,
    chainId: sweep.chainId,
    transactionHash: sweep.transactionHash,
    ...sweepEnds(session, sweep.network, moved),
    currency: single?.currency ?? null,
    assetId: single?.id ?? null,
    asset: single,
    amountRaw: single ? moved.reduce((sum, p) => sum + BigInt(p.amountRaw), 0n).toString() : null,
    // Summed exactly in chain units, then cut once, as the session's amountReceived: deposits cut one
    // by one (an 18-decimal asset's digits below 10^-8) would show a sweep of 3 DAI as 2.99999999.
    amount: exactToApi(
      moved.reduce((sum, p) => addExact(sum, paymentExact(p)), ZERO_EXACT),
      'down',
    ).toString(),
    deposits,
    status: 'broadcast',
    gasUsed: null,
    gasCost: null,
    trxBurnt: null,
    reverted: false,
    createdAt: current?.createdAt ?? sweep.at,
    updatedAt: sweep.at,
  };
}

/**
 * The tenant's on-chain money movements, for `GET /transactions`: every transfer credited to a
 * checkout session (with its confirmation state) and every sweep of a session's deposit to the
 * merchant's wallet (with its outcome and this session's share of the gas). Runs after the
 * checkout sessions projection, whose session (as of the event) it reads.
 */
export const transactionsProjection: Projection = {
  name: 'transactions',
  // 2: a sweep's amount is the exact sum of its deposits cut once, not the sum of each cut.
  version: 2,
  collections: [TRANSACTIONS],
  categories: ['checkout_session'],
  async apply(event, store) {
    if (!event.streamId.startsWith('checkout_session-')) return;
    const typed = event as unknown as CheckoutSessionEvent;
    const transactions = store.collection<TransactionDoc>(TRANSACTIONS);
    const sessionId = event.streamId.slice('checkout_session-'.length);
    const session = () => store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(sessionId);
    const refreshPayment = async (transferId: string) => {
      const s = await session();
      const payment = s?.payments.find((p) => p.transferId === transferId);
      const current = await transactions.get(paymentTransactionId(transferId));
      if (s && payment) await transactions.put(paymentDoc(s, payment, current?.createdAt ?? payment.detectedAt));
    };
    /** A sweep broadcast never mined: dropped, or replaced by a repriced copy mined in its place. */
    const neverMined = async (transactionHash: string, at: string) => {
      const current = (await transactions.get(
        sweepTransactionId(sessionId, transactionHash),
      )) as SweepTransactionDoc | null;
      if (current && current.status === 'broadcast')
        await transactions.put({ ...current, status: 'dropped', updatedAt: at });
    };
    switch (typed.type) {
      case 'PaymentDetected':
        return refreshPayment(typed.data.payment.transferId);
      case 'PaymentConfirmed':
      case 'PaymentWithdrawn':
      case 'LatePaymentReceived':
        return refreshPayment(typed.data.transferId);
      case 'SweepBroadcast': {
        const s = await session();
        if (!s) return;
        const { broadcast } = typed.data;
        const id = sweepTransactionId(sessionId, broadcast.transactionHash);
        const current = (await transactions.get(id)) as SweepTransactionDoc | null;
        // Its outcome may already be recorded (a replay repeats events in order, so only a
        // re-applied broadcast meets it): the outcome stands.
        if (current && current.status !== 'broadcast') return;
        await transactions.put(sweepDoc(s, current, broadcast));
        return;
      }
      case 'FundsSwept': {
        const s = await session();
        if (!s) return;
        const { sweep } = typed.data;
        const id = sweepTransactionId(sessionId, sweep.transactionHash);
        const current = (await transactions.get(id)) as SweepTransactionDoc | null;
        // A reverted sweep moved nothing: it still shows what it (or the one it was mined in place of) was sent to move.
        const sent =
          current ??
          (sweep.replaces === undefined
            ? null
            : ((await transactions.get(sweepTransactionId(sessionId, sweep.replaces))) as SweepTransactionDoc | null));
        const transferIds = sweep.reverted && sent ? sent.deposits.map((d) => d.transferId) : sweep.transferIds;
        await transactions.put({
          ...sweepDoc(s, current, { ...sweep, transferIds }),
          status: sweep.reverted ? 'reverted' : 'swept',
          gasUsed: sweep.gasUsed,
          gasCost: sweep.gasCost,
          trxBurnt: sweep.tron?.trxBurnt ?? null,
          reverted: sweep.reverted === true,
        });
        if (sweep.replaces !== undefined) await neverMined(sweep.replaces, sweep.at);
        return;
      }
      case 'TransfersFoundSwept': {
        // The sweep moved these too: it shows all it moved, as the session's sweep now lists them.
        const s = await session();
        const { transactionHash, at } = typed.data;
        const current = (await transactions.get(
          sweepTransactionId(sessionId, transactionHash),
        )) as SweepTransactionDoc | null;
        const sweep = s?.sweeps.find(
          (candidate) => candidate.transactionHash === transactionHash && !candidate.reverted,
        );
        if (!s || !current || !sweep) return;
        const { status, gasUsed, gasCost, trxBurnt, reverted } = current;
        await transactions.put({
          ...sweepDoc(s, current, { ...sweep, at }),
          status,
          gasUsed,
          gasCost,
          trxBurnt,
          reverted,
        });
        return;
      }
      case 'SweepDropped':
        return neverMined(typed.data.transactionHash, typed.data.at);
      default:
        return;
    }
  },
};
