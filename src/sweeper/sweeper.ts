import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CheckoutSessionCommand } from '../../machines/checkout-session.decide.ts';
import type { CheckoutSessionEvent, SessionSweepTron } from '../../machines/checkout-session.types.ts';
import type { CommandHandler } from '../actors/command-handler.ts';
import type { Environment } from '../event-store/event-store.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import { SWEEPS, type SweepBroadcastDoc, type SweepDoc } from '../projections/sweeps.projection.ts';
import type { Collection, ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import { createProcessor, dueWork } from '../processing/processor.ts';
import { doublingDelay } from '../shared/backoff.ts';
import { noMetrics, secondsBetween, type Metrics } from '../shared/metrics.ts';
import {
  SweepNodeError,
  SweepReceiptLostError,
  SweepRejectedError,
  SweepRevertedError,
  SweepWaitingError,
  type SweepTransaction,
  type TronSweepResources,
} from './sweep-errors.ts';

export type SweepRequest = {
  checkoutSessionId: string;
  depositAddress: string;
  merchantAddress: string;
  assets: string[];
};

export type SweepResult = SweepTransaction;

/** A sweep transaction found mined: it swept, or it reverted (its gas paid all the same). */
export type MinedSweep = { transaction: SweepTransaction; reverted: boolean };

/** A sweep transaction signed, not sent yet: its hash, and the signed transaction to hand the node again if it never had it. */
export type SignedSweep = { transactionHash: string; signedTransaction: string };

/**
 * Moves funds from deposit addresses to merchant wallets on one network, in one transaction:
 * all of `requests` or, when it throws, none of them (as far as it knows: a flush whose receipt
 * never came may still have been mined, which `minedSweep` or `funded` then shows).
 */
export type SweepExecutor = {
  /** For each of `requests`, in order, whether its deposit address still holds something to sweep (reads, no transaction). */
  funded(requests: SweepRequest[]): Promise<boolean[]>;
  /**
   * Signs one transaction for `requests` and awaits `beforeSend` with it; only then sends it, and
   * waits for its receipt. If `beforeSend` throws, nothing is sent and its error is thrown as it
   * came. Throws {@link SweepRevertedError} when the transaction was mined but reverted,
   * {@link SweepRejectedError} when the node refused it and does not have it (never sent),
   * {@link SweepWaitingError} when the node did not take it for now but it may yet be mined,
   * {@link SweepReceiptLostError} (with the hash) when it was sent, or may have been, and its
   * receipt could not be had, {@link SweepNodeError} when the node failed before anything was signed.
   * The transaction mined (returned, or reverted) may be a repriced copy of the one signed, mined in
   * its place under another hash.
   */
  flush(requests: SweepRequest[], beforeSend: (signed: SignedSweep) => Promise<void>): Promise<SweepResult>;
  /**
   * The transaction `transactionHash` as mined, or null when it is not (yet, or ever). Given it as
   * signed (`signedTransaction`), a repriced copy of it mined in its place (the same call with the
   * same nonce at a higher fee: sped up in a wallet) is the sweep mined, under the copy's hash.
   * Throws {@link SweepNodeError} when the node failed.
   */
  minedSweep(transactionHash: string, signedTransaction: string | null): Promise<MinedSweep | null>;
  /**
   * For a transaction not mined: 'pending' when the node has it; otherwise `signedTransaction`
   * (the very same transaction, so it is mined once at most) is handed to the node again:
   * 'resent' when it takes it, 'waiting' when it does not for now but it may yet be mined (another
   * pending transaction of the account has its nonce), 'absent' when it refuses it for good (its
   * nonce taken, the account unable to pay). Without `signedTransaction`, 'absent' when the node
   * does not have it. Throws {@link SweepNodeError} when the node failed.
   */
  rebroadcast(
    transactionHash: string,
    signedTransaction: string | null,
  ): Promise<'pending' | 'resent' | 'waiting' | 'absent'>;
};

export type Sweeper = { start(): void; stop(): Promise<void> };

/** Split a batch's gas over its sessions; the remainder goes to the first, so the parts add up. */
export function shareOf(total: bigint, parts: number, index: number): bigint {
  const share = total / BigInt(parts);
  return index === 0 ? share + (total - share * BigInt(parts)) : share;
}

/** A session's share of a Tron sweep's resources and fees, as the log keeps them (integer strings). */
export function tronShareOf(tron: TronSweepResources, parts: number, index: number): SessionSweepTron {
  const share = (total: bigint) => shareOf(total, parts, index).toString();
  return {
    energyUsed: share(tron.energyUsed),
    bandwidthUsed: share(tron.bandwidthUsed),
    trxBurnt: share(tron.trxBurnt),
    energySource: tron.energySource,
    ...(tron.rentalCost === undefined ? {} : { rentalCost: share(tron.rentalCost) }),
  };
}

/** A deposit whose flush failed on its own `failures` times in a row: not tried again before `retryAt`. */
type DepositBackoff = { failures: number; retryAt: number };

/** A deposit whose flush failed alone; `byNode` when the node failed, which says nothing about the deposit. */
type FailedAlone = { doc: SweepDoc; reason: string; byNode: boolean };

/** One deposit's part of a sweep transaction: the transfers it was sent for, and its share (`index` of `count`) of the gas. */
type SweepPart = { doc: SweepDoc; transferIds: string[]; index: number; count: number };

const partsOf = (docs: SweepDoc[]): SweepPart[] =>
  docs.map((doc, index) => ({ doc, transferIds: doc.transferIds, index, count: docs.length }));

/**
 * A sweep transaction recorded as broadcast whose outcome is not recorded yet. `mined` once known
 * (its recording failed: recorded on the next round without looking it up); `dropping` once it is
 * known never to be mined (why; a failed recording of the drop is finished on the next round);
 * otherwise looked up by its hash from `lookAt` on, sent again (`signed`) when the node does not
 * have it, and dropped (its deposits flushed again if still funded) once not mined for
 * `dropAfterMs` after `sentAt`. One `waiting` (the node does not take it for now: another pending
 * transaction of the account has its nonce) is not dropped for its age: its `sentAt` is when the
 * node takes it.
 */
type InFlight = {
  network: string;
  transactionHash: string;
  sentAt: number;
  lookAt: number;
  parts: SweepPart[];
  /** The signed transaction, when known (recorded with the last part of the batch). */
  signed: string | null;
  mined: MinedSweep | null;
  dropping: string | null;
  waiting: boolean;
  /** Whether it was sent again once: its age restarts then, never again (a node may forget it every time). */
  resent: boolean;
  /** The outcomes its sessions' commands wrote (FundsSwept, SweepDropped), over every try: the metrics count those only. */
  written: Set<'mined' | 'dropped'>;
  /** Dropped for its age: the node may still mine it, so it is recorded as looked up still, and looked up. */
  mayBeMined: boolean;
};

/**
 * Whether every deposit the transaction was signed for is in the flight. One recorded on only some
 * of them (the process died, or the store failed, while recording it) was never sent, and must
 * never be: it would sweep deposits with no record of it.
 */
function isComplete(flight: InFlight): boolean {
  const count = flight.parts[0]?.count;
  return count !== undefined && new Set(flight.parts.map((part) => part.index)).size === count;
}

/** A flight as it starts: sent at `sentAt`, first looked up at `lookAt`, nothing known of its outcome. */
function newFlight(
  at: Pick<InFlight, 'network' | 'transactionHash' | 'sentAt' | 'lookAt' | 'parts' | 'mayBeMined'>,
): InFlight {
  return { ...at, signed: null, mined: null, dropping: null, waiting: false, resent: false, written: new Set() };
}

/** A flush sent (or maybe sent) whose receipt was not had, or one the node did not take for now (`waiting`), and why. */
type ReceiptLost = { flight: InFlight; reason: string; waiting: boolean };

/**
 * What a batch came to: the deposits swept (and recorded), those that failed even alone, with why,
 * those found empty on chain though not recorded as swept (so not flushed), and the flushes sent
 * whose receipt was not had (their deposits are not flushed again until their outcome is known).
 */
type BatchOutcome = {
  swept: SweepDoc[];
  failedAlone: FailedAlone[];
  seenEmpty: SweepDoc[];
  receiptLost: ReceiptLost[];
};

const nothingSwept: BatchOutcome = { swept: [], failedAlone: [], seenEmpty: [], receiptLost: [] };

const joined = (outcomes: BatchOutcome[]): BatchOutcome => ({
  swept: outcomes.flatMap((o) => o.swept),
  failedAlone: outcomes.flatMap((o) => o.failedAlone),
  seenEmpty: outcomes.flatMap((o) => o.seenEmpty),
  receiptLost: outcomes.flatMap((o) => o.receiptLost),
});

const requestsOf = (docs: SweepDoc[]): SweepRequest[] =>
  docs.map((d) => ({
    checkoutSessionId: d.checkoutSessionId,
    depositAddress: d.depositAddress,
    merchantAddress: d.merchantAddress,
    assets: d.assets,
  }));

/**
 * The failure's message for the log, with URLs left out: an RPC URL may carry a provider's API
 * key, and viem puts the URL in some messages.
 */
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, '<url>');
}

const seconds = (ms: number) => `${ms / 1000} s`;

/**
 * Sweeps confirmed payments to merchant wallets. Pending work is a read model of the log, so a
 * restart resumes it; confirmations arriving close together are batched into one transaction
 * per network. The gas of each transaction mined, swept or reverted, is recorded on the sessions
 * it was sent for (FundsSwept; a reverted one with `reverted` and no transfers).
 *
 * A batch is one transaction, so one deposit that can never be swept (a merchant contract wallet
 * that refuses the native coin, a token whose transfer always reverts) would make it revert
 * forever. A failed batch is therefore split in halves, each flushed at once, down to single
 * deposits: the others are swept in the same run, and a deposit that fails alone waits on its own
 * backoff (`retryAfterMs`, doubling, at most `maxRetryAfterMs`), never holding back the network.
 * A failure of the node (SweepNodeError) blames no deposit: the network's round backs off.
 *
 * A deposit is never flushed twice for the same money, and no flush goes unrecorded: each flush is
 * signed, then recorded (SweepBroadcast on each session of the batch, with its share of the gas;
 * the last with the signed transaction), and only then sent; if recording fails, it is not sent.
 * A flush whose receipt was lost, whose recording failed, or that was recorded before a restart
 * (sent or not: the process may have died before the node had it) is looked up by its hash and
 * recorded once mined, without flushing its deposits again (or once a repriced copy of it, the same
 * call sped up in the operator's wallet, is mined in its place: the copy is the sweep, recorded
 * with its own hash and gas as replacing it); one the node does not have is sent
 * again, the very same signed transaction, so it is mined once at most. One the node refuses (its
 * nonce taken by another, the account unable to pay) is recorded as dropped at once, as is one
 * never mined within `dropAfterMs`; their deposits are flushed again if still funded (at once, in
 * one flush, when another transaction took the nonce). One the node does not take for now (another
 * pending transaction of the account has its nonce) waits like one whose receipt was lost, however
 * long: dropping it would only queue a new flush behind that same transaction. One dropped for
 * its age may still be mined (the node held it): it is looked up until then, until a later flush
 * of the network is mined (its nonce used by then), or for `lateDropLookUpMs` at most, across restarts (its sessions record it as looked
 * up until then), and recorded with its gas if found mined, once
 * (the sessions record a transaction once; a copy of it mined in a re-flush's place ends that
 * re-flush as dropped). Before a
 * flush, after a failure whose outcome is not known, the deposits are read on chain and the empty
 * ones left out; a flush with nothing left to sweep is not sent. A deposit read empty whose transfers
 * were confirmed after a sweep of it mined at or after their block (a flush sends the whole balance)
 * has them recorded as moved by that sweep (TransfersFoundSwept); one emptied by a flush Weir has no
 * record of waits on its own backoff, said in the log. Flushes on one network are sent
 * one at a time, each with the node's pending nonce, so signing ahead leaves no gap: a signed
 * flush never sent only loses its nonce to the next one, and is then refused and dropped.
 */
export function createSweeper(deps: {
  clock: Clock;
  readStore: ReadStore;
  projections: ProjectionRunner;
  commands: CommandHandler;
  executors: ReadonlyMap<string, SweepExecutor>;
  batchDelayMs?: number;
  batchSize?: number;
  /** Wait after a failure: of the network (its node), or the first of a deposit that fails alone. Default 30 s. */
  retryAfterMs?: number;
  /** Ceiling of a deposit's doubling wait. Default 1 h. */
  maxRetryAfterMs?: number;
  /**
   * A flush sent but not mined this long after is taken as dropped: its deposits are flushed again if
   * still funded. One the node does not take, behind another pending transaction with its nonce, is
   * not: it waits, counted from when the node takes it. Default 30 min.
   */
  dropAfterMs?: number;
  /**
   * A flush dropped for its age and not found mined this long after it was dropped is no longer
   * looked up: a Tron transaction has expired by then (24 h at most), and an EVM node has long let
   * it go from its pool. Without it, one on a network with no later flush mined is looked up for
   * ever, and again after each restart. Default 24 h.
   */
  lateDropLookUpMs?: number;
  log?: (line: string) => void;
  metrics?: Metrics;
}): Sweeper {
  const { clock, readStore, projections, commands, executors } = deps;
  const batchDelayMs = deps.batchDelayMs ?? 5_000;
  const batchSize = deps.batchSize ?? 50;
  const retryAfterMs = deps.retryAfterMs ?? 30_000;
  const maxRetryAfterMs = deps.maxRetryAfterMs ?? 60 * 60_000;
  const dropAfterMs = deps.dropAfterMs ?? 30 * 60_000;
  const lateDropLookUpMs = deps.lateDropLookUpMs ?? 24 * 60 * 60_000;
  const log = deps.log ?? ((line: string) => console.warn(`[sweeper] ${line}`));
  const sweeps = readStore.collection<SweepDoc>(SWEEPS);
  /** Per network: its node (or the sweeping account) failed every flush; nothing is tried before. */
  const networkRetryAt = new Map<string, number>();
  /** Per sweep document (`_id`): it failed on its own. */
  const depositBackoff = new Map<string, DepositBackoff>();
  /** Sweep transactions sent whose outcome is not recorded, by hash, and by the sweep document (`_id`) of each of their deposits. */
  const inFlight = new Map<string, InFlight>();
  const flightOfDoc = new Map<string, InFlight>();
  /**
   * Flushes dropped for their age, by hash: the node may still mine one (it held it), its gas paid.
   * Looked up from `lookAt` on until found mined (recorded then), until a flush of the network
   * sent after it is recorded mined (`lastLook`): by then its nonce is used, by it or another, or
   * until `lateDropLookUpMs` after it was dropped.
   * Recorded on their sessions (SweepDropped `mayBeMined`, until FundsSwept or SweepLookUpEnded),
   * so a restart takes them up again from the read model (see adoptLateDrops).
   */
  const lateDrops = new Map<string, { flight: InFlight; droppedAt: number; lookAt: number; lastLook: boolean }>();
  const meter = sweepMetrics(deps.metrics ?? noMetrics, sweeps, [...deps.executors.keys()], {
    flights: () => inFlight.values(),
    now: () => clock.now(),
  });

  const dueAt = (doc: SweepDoc) =>
    Math.max(
      Date.parse(doc.updatedAt) + batchDelayMs,
      networkRetryAt.get(doc.network) ?? 0,
      depositBackoff.get(doc._id)?.retryAt ?? 0,
      flightOfDoc.get(doc._id)?.lookAt ?? 0,
    );

  const lateDueAt = (late: { flight: InFlight; lookAt: number }) =>
    Math.max(late.lookAt, networkRetryAt.get(late.flight.network) ?? 0);

  /** The flight of `transactionHash`, known or new (signed now for `parts`). */
  function flightOf(network: string, transactionHash: string, parts: SweepPart[]): InFlight {
    const known = inFlight.get(transactionHash);
    if (known) return known;
    const now = clock.now();
    const flight = newFlight({
      network,
      transactionHash,
      sentAt: now,
      lookAt: now + retryAfterMs,
      parts,
      mayBeMined: false,
    });
    inFlight.set(transactionHash, flight);
    for (const part of parts) flightOfDoc.set(part.doc._id, flight);
    return flight;
  }

  function waitingIf(flight: InFlight, waiting: boolean): InFlight {
    flight.waiting = waiting;
    return flight;
  }

  function forget(flight: InFlight): void {
    inFlight.delete(flight.transactionHash);
    for (const part of flight.parts) if (flightOfDoc.get(part.doc._id) === flight) flightOfDoc.delete(part.doc._id);
  }

  /**
   * Runs `command` on the deposit's session and waits until the read models have it. Says which
   * events it wrote (none when the session had recorded it already), told to `wrote` before waiting.
   */
  async function handle(
    doc: SweepDoc,
    command: CheckoutSessionCommand,
    wrote?: (types: ReadonlySet<string>) => void,
  ): Promise<CheckoutSessionEvent[]> {
    const recorded = await commands.handle(checkoutSessionAggregate, doc.checkoutSessionId, command, {
      organizationId: doc.organizationId,
      environment: doc.environment as Environment,
      actor: 'system:sweeper',
    });
    wrote?.(new Set(recorded.events.map((event) => event.type)));
    if (recorded.position !== null) await projections.waitFor(recorded.position, 30_000);
    return recorded.events as unknown as CheckoutSessionEvent[];
  }

  /** Notes on `flight` what a command wrote, so its outcome is counted once, and only if recorded. */
  const noteOn = (flight: InFlight) => (types: ReadonlySet<string>) => {
    if (types.has('FundsSwept')) flight.written.add('mined');
    if (types.has('SweepDropped')) flight.written.add('dropped');
  };

  /**
   * Records the mined `flight` on each of its sessions (FundsSwept with its share of the gas; a
   * reverted one with no transfers; one mined under another hash, a repriced copy, replaces it),
   * then forgets it. On a failure it stays, with `mined`, for the next round, and the failure is
   * thrown; sessions already recorded then record nothing twice.
   */
  async function record(flight: InFlight, mined: MinedSweep): Promise<void> {
    flight.mined = mined;
    const { transaction, reverted } = mined;
    for (const part of flight.parts) {
      await handle(
        part.doc,
        {
          type: 'RecordSweep',
          sweep: {
            network: flight.network,
            chainId: part.doc.chainId,
            transactionHash: transaction.transactionHash,
            ...(transaction.blockNumber === undefined ? {} : { blockNumber: Number(transaction.blockNumber) }),
            depositAddress: part.doc.depositAddress,
            merchantAddress: part.doc.merchantAddress,
            transferIds: reverted ? [] : part.transferIds,
            assets: part.doc.assets,
            gasUsed: shareOf(transaction.gasUsed, part.count, part.index).toString(),
            gasCost: shareOf(transaction.gasCost, part.count, part.index).toString(),
            ...(transaction.tron ? { tron: tronShareOf(transaction.tron, part.count, part.index) } : {}),
            ...(reverted ? { reverted: true } : {}),
            ...(transaction.transactionHash === flight.transactionHash ? {} : { replaces: flight.transactionHash }),
          },
        },
        noteOn(flight),
      );
    }
    // Counted only when written: a transaction the sessions had recorded already (a dropped flush
    // mined as the copy of a re-flush recorded first, or the other way round) is not counted again;
    // a flight ended by such a copy is counted dropped.
    if (flight.written.has('mined')) meter.mined(flight.network, mined, flight.parts.length);
    else if (flight.written.has('dropped')) meter.dropped(flight.network);
    forget(flight);
    // A dropped flush mined as this one's copy is recorded here; the others' nonces are used by now.
    lateDrops.delete(transaction.transactionHash);
    for (const late of lateDrops.values())
      if (late.flight.network === flight.network && late.droppedAt <= flight.sentAt) late.lastLook = true;
  }

  /**
   * Looks up the flushes of `network` dropped for their age: one found mined is recorded like every
   * mined flush (FundsSwept with its gas; the sessions record it once). A copy mined in its place
   * that is one of the flights is theirs to record.
   */
  async function lookUpLateDrops(executor: SweepExecutor, network: string, now: number): Promise<void> {
    for (const [hash, late] of lateDrops) {
      if (late.flight.network !== network || late.lookAt > now) continue;
      const mined = await executor.minedSweep(hash, late.flight.signed);
      const minedHash = mined?.transaction.transactionHash;
      const copyInFlight = minedHash !== undefined && minedHash !== hash && inFlight.has(minedHash);
      if (mined === null || copyInFlight) {
        const tooOld = now >= late.droppedAt + lateDropLookUpMs;
        if (late.lastLook || copyInFlight || tooOld) {
          await endLookUp(late.flight);
          lateDrops.delete(hash);
          if (tooOld && !late.lastLook && !copyInFlight)
            log(
              `sweep transaction ${hash} on ${network}, dropped as not mined in time, is still not mined ${seconds(now - late.droppedAt)} after: no longer looked up`,
            );
        } else late.lookAt = Math.min(now + retryAfterMs, late.droppedAt + lateDropLookUpMs);
        continue;
      }
      await record(late.flight, mined);
      // Mined as a copy recorded already, its sessions recorded nothing of it: the look-up ends all the same.
      await endLookUp(late.flight);
      lateDrops.delete(hash);
      log(
        late.flight.written.has('mined')
          ? `sweep transaction ${hash} on ${network}, dropped as not mined in time, was mined after all: recorded with its gas on its ${late.flight.parts.length} deposit address(es)`
          : `sweep transaction ${hash} on ${network}, dropped as not mined in time, was mined after all as ${minedHash}, recorded already`,
      );
    }
  }

  /**
   * Records that `signed` is about to be sent for `parts`, on each of their sessions in order, the
   * last with the signed transaction; it is kept in memory too. If recording fails, the error is
   * thrown (so the flush is not sent) and what was recorded is dropped on the next round.
   */
  async function recordBroadcast(network: string, signed: SignedSweep, parts: SweepPart[]): Promise<void> {
    const { transactionHash, signedTransaction } = signed;
    const flight = flightOf(network, transactionHash, parts);
    try {
      for (const { doc, transferIds, index, count } of parts) {
        await handle(doc, {
          type: 'RecordSweepBroadcast',
          broadcast: {
            network,
            chainId: doc.chainId,
            transactionHash,
            transferIds,
            share: { index, count },
            ...(index === count - 1 ? { signedTransaction } : {}),
          },
        });
      }
    } catch (error) {
      flight.dropping = 'recording it failed, so it was never sent';
      throw error;
    }
    flight.signed = signedTransaction;
  }

  /** Records `flight` as dropped on each of its sessions (never mined: `why`), and forgets it; a failure is finished on the next round. */
  async function drop(flight: InFlight, why: string): Promise<void> {
    flight.dropping = why;
    const { network, transactionHash } = flight;
    const mayBeMined = flight.mayBeMined;
    for (const part of flight.parts)
      await handle(part.doc, { type: 'DropSweepBroadcast', network, transactionHash, mayBeMined }, noteOn(flight));
    if (flight.written.has('dropped')) meter.dropped(network);
    forget(flight);
    log(
      `sweep transaction ${transactionHash} on ${network} ${why}, its ${flight.parts.length} deposit address(es) are flushed again if they still hold funds`,
    );
  }

  /** Looks `flight`, dropped for its age, up from `retryAfterMs` on (its outcome then counted anew, if written). */
  function lookLater(flight: InFlight, now: number): void {
    flight.written.clear();
    lateDrops.set(flight.transactionHash, {
      flight,
      droppedAt: now,
      lookAt: now + retryAfterMs,
      lastLook: false,
    });
  }

  /** Records on each of its sessions that the dropped `flight` is no longer looked up (SweepLookUpEnded). */
  async function endLookUp(flight: InFlight): Promise<void> {
    const { network, transactionHash } = flight;
    for (const part of flight.parts) await handle(part.doc, { type: 'EndSweepLookUp', network, transactionHash });
  }

  /** Whether the late drops recorded by an earlier process were taken up (see adoptLateDrops). */
  let lateDropsAdopted = false;

  /**
   * Takes the flushes dropped for their age that the read model says are looked up still (recorded
   * by an earlier process) into the late drops, looked up at once; those known already are left.
   * Once per process: later drops are this process's own, known in memory, and `lookingUp` is no
   * indexed field, so each read goes over every sweeps document ever written.
   */
  async function adoptLateDrops(): Promise<void> {
    if (lateDropsAdopted) return;
    const now = clock.now();
    for (const doc of await sweeps.find({ lookingUp: true })) {
      if (!executors.has(doc.network)) continue;
      for (const dropped of doc.lateDrops ?? []) {
        const known = lateDrops.get(dropped.transactionHash);
        if (known?.flight.parts.some((part) => part.doc._id === doc._id)) continue;
        const flight =
          known?.flight ??
          newFlight({
            network: doc.network,
            transactionHash: dropped.transactionHash,
            sentAt: Date.parse(dropped.at),
            lookAt: now,
            parts: [],
            mayBeMined: true,
          });
        flight.parts.push({ doc, transferIds: dropped.transferIds, ...dropped.share });
        flight.signed ??= dropped.signedTransaction ?? null;
        if (!known)
          lateDrops.set(flight.transactionHash, {
            flight,
            droppedAt: Date.parse(dropped.droppedAt),
            lookAt: now,
            lastLook: false,
          });
      }
    }
    lateDropsAdopted = true;
  }

  /**
   * Settles a flight whose outcome is not recorded: mined, it is recorded; known never to be mined
   * (refused by the node when sent again, recorded on only some of its deposits, or not mined
   * `dropAfterMs` after it was sent) it is recorded as dropped; otherwise it is looked up again
   * later, sent again first if the node does not have it. Says whether its deposits may be flushed
   * again (dropped, or reverted).
   */
  async function settle(executor: SweepExecutor, flight: InFlight, now: number): Promise<boolean> {
    if (flight.dropping !== null) {
      await drop(flight, flight.dropping);
      if (flight.mayBeMined) lookLater(flight, now);
      return true;
    }
    const mined = flight.mined ?? (await executor.minedSweep(flight.transactionHash, flight.signed));
    if (mined) {
      await record(flight, mined);
      return mined.reverted;
    }
    const { network, transactionHash } = flight;
    // Recorded before it was sent: the process may have died before the node had it, or the send
    // was lost. The same signed transaction is sent again; one recorded on only some of its
    // deposits was never sent. A broadcast recorded without it (before Weir kept it) only waits.
    // Asked before its age counts: whether it was waiting is kept in memory only, so after a
    // restart only the node's answer tells a waiting flush from one not mined in time.
    const complete = isComplete(flight);
    let state: 'pending' | 'resent' | 'waiting' | 'absent' = 'pending';
    if (!complete || flight.signed !== null)
      state = await executor.rebroadcast(transactionHash, complete ? flight.signed : null);
    // Its age counts from when the node takes it: after waiting, or first sent again (it did not have it,
    // say after a restart); only once, or a node that forgets it each time would keep it young for ever.
    if ((state === 'resent' && !flight.resent) || (flight.waiting && state !== 'waiting')) flight.sentAt = now;
    if (state === 'resent') flight.resent = true;
    flight.waiting = state === 'waiting';
    // One not taken for now, behind another pending transaction with its nonce, may yet be mined,
    // and dropping it would only queue a new flush behind that same one: it waits, however long,
    // until the node takes it (its age counted from then) or its nonce is used (refused: dropped).
    if (state !== 'absent' && !flight.waiting && now >= flight.sentAt + dropAfterMs) {
      // The node may mine it yet: its gas is recorded then.
      flight.mayBeMined = true;
      await drop(flight, `was not mined ${seconds(dropAfterMs)} after it was sent: taken as dropped`);
      lookLater(flight, now);
      return true;
    }
    if (state === 'absent') {
      await drop(
        flight,
        complete
          ? 'is not known to the node, which refused it when sent again (its nonce is taken, or the account cannot pay for it): dropped'
          : 'was recorded on only some of its deposit addresses, so it was never sent, and the node does not have it: dropped',
      );
      return true;
    }
    flight.lookAt = flight.waiting ? now + retryAfterMs : Math.min(now + retryAfterMs, flight.sentAt + dropAfterMs);
    const why = {
      pending: '',
      resent: ' (the node did not have it: sent again)',
      waiting: ' (the node did not take it again: another pending transaction of the account has its nonce)',
    }[state];
    log(
      `sweep transaction ${transactionHash} on ${network} is not mined ${seconds(now - flight.sentAt)} after it was sent` +
        `${why}; not flushing its ${flight.parts.length} deposit address(es) again, looking it up again in ${seconds(flight.lookAt - now)}`,
    );
    return false;
  }

  /**
   * Flushes `part` in one transaction and records it; if the flush fails, flushes each half of it
   * right away, down to single deposits. A failed flush of k > 1 deposits leads to exactly two
   * more, so the flushes form a binary tree with at most n leaves: n deposits cost at most 2n − 1
   * flushes in a run (99 for a batch of 50), and one bad deposit among n about 2·log2(n) + 1.
   * With `readFirst`, the deposits are read on chain first and the empty ones left out: at the
   * start of a round, and after a failure other than a revert (the transaction may have been mined).
   * A flush refused because another transaction took its nonce is no deposit's failure: the same
   * deposits are flushed again at once with the next nonce, once (`nonceRetried` after that).
   */
  async function flushIsolatingFailures(
    executor: SweepExecutor,
    network: string,
    docs: SweepDoc[],
    readFirst: boolean,
    nonceRetried = false,
  ): Promise<BatchOutcome> {
    let part = docs;
    let seenEmpty: SweepDoc[] = [];
    if (readFirst) {
      let funded: boolean[];
      try {
        funded = await executor.funded(requestsOf(docs));
      } catch (error) {
        // Reading balances fails for no deposit's fault: the node's.
        return { ...nothingSwept, failedAlone: docs.map((doc) => ({ doc, reason: reasonOf(error), byNode: true })) };
      }
      part = docs.filter((_, index) => funded[index]);
      seenEmpty = docs.filter((_, index) => !funded[index]);
      if (part.length === 0) return { ...nothingSwept, seenEmpty };
    }
    const parts = partsOf(part);
    const signing: { recorded: SignedSweep | null; recordingFailed: boolean } = {
      recorded: null,
      recordingFailed: false,
    };
    let result: SweepResult;
    try {
      result = await executor.flush(requestsOf(part), async (signed) => {
        try {
          await recordBroadcast(network, signed, parts);
        } catch (error) {
          signing.recordingFailed = true;
          throw error;
        }
        signing.recorded = signed;
      });
    } catch (error) {
      // Recording the broadcast failed, so nothing was sent: the store is the problem, not a
      // deposit (see sweepNetwork); what was recorded of it is dropped on the next round.
      if (signing.recordingFailed) throw error;
      const reverted = error instanceof SweepRevertedError;
      const rejected = error instanceof SweepRejectedError;
      // Sent or maybe sent, outcome not known, or waiting behind another transaction with its
      // nonce: not flushed again until it is looked up (see settle), which sends it again.
      const waiting = error instanceof SweepWaitingError;
      const lostHash =
        error instanceof SweepReceiptLostError || waiting
          ? error.transactionHash
          : (signing.recorded?.transactionHash ?? null);
      if (!reverted && !rejected && lostHash !== null)
        return {
          ...nothingSwept,
          seenEmpty,
          receiptLost: [
            { flight: waitingIf(flightOf(network, lostHash, parts), waiting), reason: reasonOf(error), waiting },
          ],
        };
      // Refused, never sent: its record must not hold the deposits back; the flush failed like every other.
      if (rejected)
        await drop(
          flightOf(network, error.transactionHash, parts),
          error.nonceUsed
            ? 'was refused by the node: another transaction of the sweeping account was mined with its nonce, so it can never be'
            : 'was refused by the node, which does not have it',
        );
      // Signed again with the next nonce, the balances read first: the transaction that took the
      // nonce may have emptied some. A second time, the node or the account is at fault, not a deposit.
      if (rejected && error.nonceUsed) {
        if (nonceRetried)
          return {
            ...nothingSwept,
            seenEmpty,
            failedAlone: part.map((doc) => ({ doc, reason: reasonOf(error), byNode: true })),
          };
        const again = await flushIsolatingFailures(executor, network, part, true, true);
        return joined([{ ...nothingSwept, seenEmpty }, again]);
      }
      // The flight is the transaction signed; the one mined may be a repriced copy of it.
      if (reverted)
        await record(flightOf(network, signing.recorded?.transactionHash ?? error.transaction.transactionHash, parts), {
          transaction: error.transaction,
          reverted: true,
        });
      if (part.length === 1)
        return {
          ...nothingSwept,
          seenEmpty,
          failedAlone: [{ doc: part[0]!, reason: reasonOf(error), byNode: error instanceof SweepNodeError }],
        };
      const middle = Math.ceil(part.length / 2);
      // A revert or a refusal moved nothing: no need to read the halves on chain first.
      const movedNothing = reverted || rejected;
      const first = await flushIsolatingFailures(executor, network, part.slice(0, middle), !movedNothing);
      const second = await flushIsolatingFailures(executor, network, part.slice(middle), !movedNothing);
      return joined([{ ...nothingSwept, seenEmpty }, first, second]);
    }
    await record(flightOf(network, signing.recorded?.transactionHash ?? result.transactionHash, parts), {
      transaction: result,
      reverted: false,
    });
    return { ...nothingSwept, swept: part, seenEmpty };
  }

  /**
   * Of the deposits read empty though confirmed transfers to them are listed by no sweep, those that
   * are not so once their session finds those transfers moved by a sweep of Weir's recorded before
   * they were confirmed (mined at or after their block: a flush sends the whole balance) are left.
   */
  async function unexplainedEmpty(network: string, seenEmpty: SweepDoc[]): Promise<SweepDoc[]> {
    const left: SweepDoc[] = [];
    for (const doc of seenEmpty) {
      let events: CheckoutSessionEvent[];
      try {
        events = await handle(doc, { type: 'FindSweptTransfers', network, depositAddress: doc.depositAddress });
      } catch (error) {
        // Found on its next look: it waits as a deposit seen empty, holding back no other.
        log(`recording what moved deposit address ${doc.depositAddress} on ${network} failed: ${reasonOf(error)}`);
        left.push(doc);
        continue;
      }
      const found = events.flatMap((event) => (event.type === 'TransfersFoundSwept' ? [event.data] : []));
      for (const { transactionHash, blockNumber, transferIds } of found)
        log(
          `deposit address ${doc.depositAddress} (checkout session ${doc.checkoutSessionId}) on ${network} holds nothing on chain: ` +
            `${transferIds.length} confirmed transfer(s) not recorded as swept were mined at or before block ${blockNumber} ` +
            `of Weir's sweep transaction ${transactionHash}, which sent the whole balance: recorded as moved by sweep transaction ${transactionHash}`,
        );
      const foundIds = new Set(found.flatMap((f) => f.transferIds));
      const transferIds = doc.transferIds.filter((id) => !foundIds.has(id));
      if (transferIds.length > 0) left.push({ ...doc, transferIds });
      else depositBackoff.delete(doc._id);
    }
    return left;
  }

  /** Doubles the deposit's own wait, and says why. */
  function backOffDeposit(doc: SweepDoc, network: string, what: (failures: number, waitMs: number) => string): void {
    const failures = (depositBackoff.get(doc._id)?.failures ?? 0) + 1;
    const waitMs = doublingDelay(failures, retryAfterMs, maxRetryAfterMs);
    depositBackoff.set(doc._id, { failures, retryAt: clock.now() + waitMs });
    log(
      `deposit address ${doc.depositAddress} (checkout session ${doc.checkoutSessionId}) on ${network} ${what(failures, waitMs)}`,
    );
  }

  async function sweepNetwork(network: string, due: SweepDoc[]): Promise<void> {
    const executor = executors.get(network)!;
    let outcome: BatchOutcome;
    let batch = due;
    try {
      // Dropped ones first: one found mined ends before a copy of it in flight is settled.
      await lookUpLateDrops(executor, network, clock.now());
      if (due.length === 0) return;
      // Sent but not recorded as mined (or dropped): settle those first; their deposits are not
      // flushed this round unless the transaction was dropped or reverted.
      const held = new Set<string>();
      const flights = new Set(due.flatMap((doc) => flightOfDoc.get(doc._id) ?? []));
      for (const flight of flights) {
        if (!(await settle(executor, flight, clock.now()))) for (const part of flight.parts) held.add(part.doc._id);
      }
      // A deposit pending only for a broadcast's outcome (its transfers swept by a drop mined late) has nothing to flush.
      batch = due.filter((doc) => !held.has(doc._id) && doc.transferIds.length > 0);
      outcome = batch.length ? await flushIsolatingFailures(executor, network, batch, true) : nothingSwept;
    } catch (error) {
      // Only recording and looking a flight up throw (the flushes' failures are caught above):
      // the event store or the node is the problem, not a deposit. What was sent but not
      // recorded is settled on the next round.
      networkRetryAt.set(network, clock.now() + retryAfterMs);
      const what =
        error instanceof SweepNodeError
          ? `looking up a sweep transaction on ${network}`
          : `recording a sweep on ${network}`;
      log(`${what} failed, retrying in ${seconds(retryAfterMs)}: ${reasonOf(error)}`);
      return;
    }
    for (const { flight, reason, waiting } of outcome.receiptLost) {
      const which = `sweep transaction ${flight.transactionHash} (${flight.parts.length} deposit address(es)) on ${network}`;
      log(
        `${waiting ? `${which} was not taken by the node for now` : `the receipt of ${which} was not had`}; ` +
          `not flushing them again, looking it up in ${seconds(flight.lookAt - clock.now())}: ${reason}`,
      );
    }
    for (const doc of outcome.swept) depositBackoff.delete(doc._id);
    for (const doc of await unexplainedEmpty(network, outcome.seenEmpty)) {
      backOffDeposit(
        doc,
        network,
        (failures, waitMs) =>
          `holds nothing on chain though ${doc.transferIds.length} confirmed transfer(s) are not recorded as swept ` +
          `(a flush Weir has no record of emptied it: one sent by another account, or by a Weir before it recorded flushes ahead of sending them); ` +
          `not flushing it, looking again in ${seconds(waitMs)} (${failures} time(s) in a row)`,
      );
    }
    const byNode = outcome.failedAlone.filter((f) => f.byNode);
    const failedAlone = outcome.failedAlone.filter((f) => !f.byNode);
    // The node failed: no deposit is blamed for it; the network's round waits the fixed
    // `retryAfterMs`, and the deposits go in the first round once the node answers.
    if (byNode.length) {
      networkRetryAt.set(network, clock.now() + retryAfterMs);
      log(
        `the node of ${network} failed sweeping ${byNode.length} deposit address(es), retrying in ${seconds(retryAfterMs)}: ${byNode[0]!.reason}`,
      );
    }
    // Every deposit failed, each alone too, and all for one same reason: that is the node, the
    // RPC or the sweeping account (out of gas), not the deposits (two refusing merchant wallets
    // fail with different reasons, naming the wallet). Back off the whole network by the fixed
    // `retryAfterMs`, as before, and blame no deposit, so none waits longer once the node is back.
    // The bisection still runs first, so that no combination of bad deposits can starve good ones;
    // its cost is bounded (2n − 1 flushes, see flushIsolatingFailures), and networks are swept
    // side by side so a slow node only delays its own network. A batch of one deposit proves
    // nothing either way: it gets the deposit's own (doubling) backoff.
    if (outcome.swept.length === 0 && failedAlone.length > 1 && new Set(failedAlone.map((f) => f.reason)).size === 1) {
      networkRetryAt.set(network, clock.now() + retryAfterMs);
      log(
        `sweep of ${batch.length} deposit address(es) on ${network} failed, each alone too, retrying in ${seconds(retryAfterMs)}: ${failedAlone[0]!.reason}`,
      );
      return;
    }
    if (!byNode.length) networkRetryAt.delete(network);
    for (const { doc, reason } of failedAlone) {
      backOffDeposit(
        doc,
        network,
        (failures, waitMs) =>
          `failed on its own (${failures} time(s) in a row), retrying it in ${seconds(waitMs)}; the other deposits go on: ${reason}`,
      );
    }
  }

  /**
   * Takes the broadcast recorded on `doc` by an earlier process into the flights, as sent at the
   * time recorded, and looks it up at once: that process may have died before the node had it.
   */
  function adopt(doc: SweepDoc, broadcast: SweepBroadcastDoc): void {
    const flight =
      inFlight.get(broadcast.transactionHash) ??
      newFlight({
        network: doc.network,
        transactionHash: broadcast.transactionHash,
        sentAt: Date.parse(broadcast.at),
        lookAt: clock.now(),
        parts: [],
        mayBeMined: false,
      });
    inFlight.set(flight.transactionHash, flight);
    flight.parts.push({ doc, transferIds: broadcast.transferIds, ...broadcast.share });
    flight.signed ??= broadcast.signedTransaction ?? null;
    flightOfDoc.set(doc._id, flight);
  }

  const networks = [...executors.keys()];
  // A round whose pending sweeps cannot be read looks again after a second, doubling to five minutes.
  const loop = createProcessor({
    // One per network in Weir (its ownership kind); the name labels its figures.
    name: networks.length === 1 ? `sweeper.${networks[0]}` : 'sweeper',
    clock,
    metrics: deps.metrics,
    retry: { firstMs: 1_000, maxMs: 5 * 60_000 },
    work: dueWork({
      async runDue(now) {
        const pending = await sweeps.find({ pending: true }, { sort: { updatedAt: 1 } });
        // A deposit swept meanwhile (or whose money was otherwise accounted for) owes no backoff.
        const pendingIds = new Set(pending.map((d) => d._id));
        for (const id of depositBackoff.keys()) if (!pendingIds.has(id)) depositBackoff.delete(id);
        for (const [id, flight] of flightOfDoc) {
          if (pendingIds.has(id)) continue;
          flightOfDoc.delete(id);
          flight.parts = flight.parts.filter((part) => part.doc._id !== id);
          if (flight.parts.length === 0) inFlight.delete(flight.transactionHash);
        }
        // Sent before a restart (or by this process, recorded): known from the read model.
        for (const doc of pending) if (doc.broadcast && !flightOfDoc.has(doc._id)) adopt(doc, doc.broadcast);
        await adoptLateDrops();
        const byNetwork = new Map<string, SweepDoc[]>();
        for (const late of lateDrops.values())
          if (lateDueAt(late) <= now) byNetwork.set(late.flight.network, byNetwork.get(late.flight.network) ?? []);
        for (const doc of pending) {
          if (!executors.has(doc.network) || dueAt(doc) > now) continue;
          const list = byNetwork.get(doc.network) ?? [];
          if (list.length < batchSize) list.push(doc);
          byNetwork.set(doc.network, list);
        }
        await Promise.all([...byNetwork].map(([network, batch]) => sweepNetwork(network, batch)));
      },
      async nextDue() {
        const pending = (await sweeps.find({ pending: true })).filter((d) => executors.has(d.network));
        await adoptLateDrops();
        const due = [...pending.map(dueAt), ...[...lateDrops.values()].map(lateDueAt)];
        return due.length ? Math.min(...due) : null;
      },
      subscribe: (poke) =>
        projections.onAdvanced((_p, touched) => {
          if (touched.has(SWEEPS)) poke();
        }),
    }),
  });

  return {
    start() {
      void loop.start();
    },
    async stop() {
      await loop.stop();
    },
  };
}

/**
 * The sweeper's figures: transactions by outcome, deposits swept, gas used and paid (in the
 * network's smallest unit, wei on EVM) counted once a transaction's outcome is recorded; deposits
 * waiting to be swept read from the read model at scrape time.
 */
export function sweepMetrics(
  metrics: Metrics,
  sweeps: Collection<SweepDoc>,
  networks: readonly string[],
  inFlight?: { flights: () => Iterable<Pick<InFlight, 'network' | 'sentAt' | 'waiting'>>; now: () => number },
) {
  const transactions = metrics.counter({
    name: 'weir_sweep_transactions_total',
    help: 'Sweep transactions whose outcome is recorded, by network and outcome: swept, reverted (gas paid, nothing moved), dropped (never mined)',
    labelNames: ['network', 'outcome'],
  });
  const deposits = metrics.counter({
    name: 'weir_sweep_deposits_swept_total',
    help: 'Deposit addresses emptied into merchant wallets, by network',
    labelNames: ['network'],
  });
  const gasUsed = metrics.counter({
    name: 'weir_sweep_gas_used_total',
    help: 'Gas used by mined sweep transactions (swept or reverted), by network',
    labelNames: ['network'],
  });
  const gasCost = metrics.counter({
    name: 'weir_sweep_gas_cost_wei_total',
    help: "Fees paid by the sweeper account for mined sweep transactions, in the network coin's smallest unit (wei), by network",
    labelNames: ['network'],
  });
  const energyUsed = metrics.counter({
    name: 'weir_sweep_tron_energy_used_total',
    help: 'Tron: energy used by mined sweep transactions, by network and energy source (burn, staked, rented)',
    labelNames: ['network', 'source'],
  });
  const bandwidthUsed = metrics.counter({
    name: 'weir_sweep_tron_bandwidth_used_total',
    help: 'Tron: bandwidth (bytes) used by mined sweep transactions, by network',
    labelNames: ['network'],
  });
  const trxBurnt = metrics.counter({
    name: 'weir_sweep_tron_trx_burnt_sun_total',
    help: "Tron: TRX burnt (sun) for the energy and bandwidth mined sweeps used beyond the sweeper account's own, by network",
    labelNames: ['network'],
  });
  const rentalCost = metrics.counter({
    name: 'weir_sweep_tron_energy_rental_sun_total',
    help: 'Tron: paid (sun) to the energy rental provider for mined sweeps, by network',
    labelNames: ['network'],
  });
  metrics.gauge(
    {
      name: 'weir_sweeps_pending',
      help: 'Deposit addresses holding confirmed payments not swept yet, by network',
      labelNames: ['network'],
    },
    async () => {
      const byNetwork = new Map<string, number>();
      // Its own networks only: one sweeper per network reads into one family.
      for (const doc of await sweeps.find({ pending: true }))
        if (networks.includes(doc.network)) byNetwork.set(doc.network, (byNetwork.get(doc.network) ?? 0) + 1);
      return [...byNetwork].map(([network, value]) => ({ labels: { network }, value }));
    },
  );
  // A flush the node does not take for now waits however long (see settle): only these tell an operator.
  const waitingFlushes = () => {
    const byNetwork = new Map(networks.map((network) => [network, { count: 0, oldestSentAt: null as number | null }]));
    for (const flight of inFlight?.flights() ?? []) {
      const figures = byNetwork.get(flight.network);
      if (!flight.waiting || !figures) continue;
      figures.count += 1;
      figures.oldestSentAt = Math.min(figures.oldestSentAt ?? flight.sentAt, flight.sentAt);
    }
    return [...byNetwork];
  };
  metrics.gauge(
    {
      name: 'weir_sweep_flushes_waiting',
      help: 'Sweep transactions the node does not take for now (another pending transaction of the sweeper account has their nonce): they wait, never dropped for their age, by network',
      labelNames: ['network'],
    },
    () => waitingFlushes().map(([network, { count }]) => ({ labels: { network }, value: count })),
  );
  metrics.gauge(
    {
      name: 'weir_sweep_flush_waiting_seconds',
      help: 'Seconds since the oldest waiting sweep transaction (see weir_sweep_flushes_waiting) was sent, 0 when none waits, by network',
      labelNames: ['network'],
    },
    () =>
      waitingFlushes().map(([network, { oldestSentAt }]) => ({
        labels: { network },
        value: oldestSentAt === null || !inFlight ? 0 : secondsBetween(oldestSentAt, inFlight.now()),
      })),
  );
  return {
    mined(network: string, { transaction, reverted }: MinedSweep, depositCount: number): void {
      transactions.inc({ network, outcome: reverted ? 'reverted' : 'swept' });
      if (!reverted) deposits.inc({ network }, depositCount);
      gasUsed.inc({ network }, Number(transaction.gasUsed));
      gasCost.inc({ network }, Number(transaction.gasCost));
      const tron = transaction.tron;
      if (tron) {
        energyUsed.inc({ network, source: tron.energySource }, Number(tron.energyUsed));
        bandwidthUsed.inc({ network }, Number(tron.bandwidthUsed));
        trxBurnt.inc({ network }, Number(tron.trxBurnt));
        if (tron.rentalCost !== undefined) rentalCost.inc({ network }, Number(tron.rentalCost));
      }
    },
    dropped(network: string): void {
      transactions.inc({ network, outcome: 'dropped' });
    },
  };
}
