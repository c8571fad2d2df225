import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import type { ReadDocument } from '../read-store/read-store.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from './collections.ts';
import type { Projection } from './projection.ts';

export const SWEEPS = 'sweeps';

/** Confirmed money still sitting in a deposit address, per session and network. */
export type SweepDoc = ReadDocument & {
  checkoutSessionId: string;
  organizationId: string;
  environment: string;
  network: string;
  chainId: number;
  depositAddress: string;
  merchantAddress: string;
  /** Token contracts to flush ('native' for the coin). */
  assets: string[];
  /** Confirmed transfers not yet swept. */
  transferIds: string[];
  /**
   * Confirmed money not recorded as swept (still in the deposit, or moved by `broadcast` whose
   * outcome is not recorded yet), or a `broadcast` whose outcome, its gas, is not recorded yet.
   */
  pending: boolean;
  /**
   * The sweep transaction sent for this deposit whose outcome (mined or dropped) is not recorded
   * yet: the deposit is being swept, not waiting for a first sweep. Null (or absent, on documents
   * written before it existed) when none is.
   */
  broadcast?: SweepBroadcastDoc | null;
  /**
   * Broadcasts dropped for their age that the node may still mine (its gas then paid): the sweeper
   * looks them up, across restarts, until one is recorded mined or it gives up. Absent when none.
   */
  lateDrops?: LateDropDoc[];
  /** Whether `lateDrops` holds any (a filter the read stores all take). */
  lookingUp?: boolean;
  updatedAt: string;
};

/** A broadcast dropped for its age, as it was recorded, and when it was dropped. */
export type LateDropDoc = SweepBroadcastDoc & { droppedAt: string };

/**
 * A broadcast sweep: what it was sent to sweep, and this deposit's share of its gas; on the last
 * deposit of the transaction, the signed transaction too (to send it again if the node never had it).
 */
export type SweepBroadcastDoc = {
  transactionHash: string;
  transferIds: string[];
  share: { index: number; count: number };
  signedTransaction?: string;
  at: string;
};

const sweepId = (sessionId: string, network: string) => `${sessionId}:${network}`;

/**
 * What the sweeper must move: a transfer becomes sweepable when it is confirmed, and stops being
 * so when a FundsSwept event covers it (a reverted sweep covers none), or a TransfersFoundSwept
 * (moved by a sweep recorded before it was confirmed). A SweepBroadcast marks the
 * deposit as being swept by that transaction until its FundsSwept or SweepDropped.
 */
export const sweepsProjection: Projection = {
  name: 'sweeps',
  collections: [SWEEPS],
  categories: ['checkout_session'],
  async apply(event, store) {
    if (!event.streamId.startsWith('checkout_session-')) return;
    const typed = event as unknown as CheckoutSessionEvent;
    if (
      typed.type !== 'PaymentConfirmed' &&
      typed.type !== 'FundsSwept' &&
      typed.type !== 'SweepBroadcast' &&
      typed.type !== 'SweepDropped' &&
      typed.type !== 'SweepLookUpEnded' &&
      typed.type !== 'TransfersFoundSwept'
    )
      return;
    const sessionId = event.streamId.slice('checkout_session-'.length);
    const session = await store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(sessionId);
    if (!session) return;
    const sweeps = store.collection<SweepDoc>(SWEEPS);
    if (typed.type === 'PaymentConfirmed') {
      const payment = session.payments.find((p) => p.transferId === typed.data.transferId);
      if (!payment) return;
      const address = session.addresses.find(
        (a) => a.network === payment.network && a.paymentAddress.toLowerCase() === payment.toAddress.toLowerCase(),
      );
      if (!address) return;
      const id = sweepId(sessionId, payment.network);
      const current = await sweeps.get(id);
      const transferIds = [...new Set([...(current?.transferIds ?? []), payment.transferId])];
      const assets = [...new Set([...(current?.assets ?? []), payment.asset.address])];
      await sweeps.put({
        _id: id,
        checkoutSessionId: sessionId,
        organizationId: session.organizationId,
        environment: session.environment,
        network: payment.network,
        chainId: payment.chainId,
        depositAddress: address.paymentAddress,
        merchantAddress: address.merchantAddress,
        assets,
        transferIds,
        pending: true,
        broadcast: current?.broadcast ?? null,
        ...(current ? lookingUpFor(current, []) : {}),
        updatedAt: typed.data.at,
      });
      return;
    }
    if (typed.type === 'TransfersFoundSwept') {
      // Moved by a sweep recorded before they were confirmed: no longer waiting.
      const { network, transferIds: found, at } = typed.data;
      const current = await sweeps.get(sweepId(sessionId, network));
      if (!current) return;
      const transferIds = current.transferIds.filter((t) => !found.includes(t));
      const pending = transferIds.length > 0 || (current.broadcast ?? null) !== null;
      await sweeps.put({ ...current, transferIds, pending, updatedAt: at });
      return;
    }
    if (typed.type === 'SweepBroadcast') {
      const { network, transactionHash, transferIds, share, signedTransaction, at } = typed.data.broadcast;
      const current = await sweeps.get(sweepId(sessionId, network));
      const signed = signedTransaction === undefined ? {} : { signedTransaction };
      if (current) await sweeps.put({ ...current, broadcast: { transactionHash, transferIds, share, ...signed, at } });
      return;
    }
    const { network, transactionHash } = typed.type === 'FundsSwept' ? typed.data.sweep : typed.data;
    // A sweep mined in place of the one broadcast (the same call repriced) ends that one too.
    const ended = [transactionHash, typed.type === 'FundsSwept' ? typed.data.sweep.replaces : undefined];
    const current = await sweeps.get(sweepId(sessionId, network));
    if (!current) return;
    if (typed.type === 'SweepLookUpEnded') {
      await sweeps.put({ ...current, ...lookingUpFor(current, ended) });
      return;
    }
    const broadcast = ended.includes(current.broadcast?.transactionHash) ? null : (current.broadcast ?? null);
    // A dropped transaction, or a reverted one, moved nothing: the money still waits, as it did.
    const stillWaiting = { ...current, pending: current.transferIds.length > 0 || broadcast !== null, broadcast };
    if (typed.type === 'SweepDropped') {
      // Dropped for its age, it is looked up still: kept as it was broadcast, its signed transaction with it.
      const late =
        typed.data.mayBeMined && current.broadcast?.transactionHash === transactionHash
          ? [{ ...current.broadcast, droppedAt: typed.data.at }]
          : [];
      await sweeps.put({ ...stillWaiting, ...lookingUpFor(current, [], late) });
      return;
    }
    if (typed.data.sweep.reverted) {
      // Mined, reverted: no longer looked up, if it was a drop looked up still.
      await sweeps.put({ ...stillWaiting, ...lookingUpFor(current, ended) });
      return;
    }
    const { sweep } = typed.data;
    const transferIds = current.transferIds.filter((t) => !sweep.transferIds.includes(t));
    // A broadcast still open (a dropped flush was found mined, its re-flush not): pending until its
    // outcome is recorded, its gas with it.
    const pending = transferIds.length > 0 || broadcast !== null;
    await sweeps.put({
      ...current,
      transferIds,
      pending,
      broadcast,
      ...lookingUpFor(current, ended),
      updatedAt: sweep.at,
    });
  },
};

/**
 * The late drops left once those of `ended` are found mined or given up, with `added` (a drop for
 * its age), and whether any is; nothing on a document that never had one.
 */
function lookingUpFor(doc: Pick<SweepDoc, 'lateDrops'>, ended: (string | undefined)[], added: LateDropDoc[] = []) {
  const gone = [...ended, ...added.map((d) => d.transactionHash)];
  const lateDrops = [...(doc.lateDrops ?? []).filter((d) => !gone.includes(d.transactionHash)), ...added];
  if (lateDrops.length === 0 && doc.lateDrops === undefined) return {};
  return { lateDrops, lookingUp: lateDrops.length > 0 };
}
