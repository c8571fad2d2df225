import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CommandHandler } from '../actors/command-handler.ts';
import type { Environment } from '../event-store/event-store.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import { SWEEPS, type SweepDoc } from '../projections/sweeps.projection.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import { createDueWorkLoop } from '../shared/due-work-loop.ts';
import { doublingDelay } from '../shared/backoff.ts';
import { SweepNodeError, SweepRevertedError, type SweepTransaction } from './sweep-errors.ts';

export type SweepRequest = { checkoutSessionId: string; depositAddress: string; merchantAddress: string; assets: string[] };

export type SweepResult = SweepTransaction;

/**
 * Moves funds from deposit addresses to merchant wallets on one network, in one transaction:
 * all of `requests` or, when it throws, none of them (as far as it knows: a flush whose receipt
 * never came may still have been mined, which `funded` then shows).
 */
export type SweepExecutor = {
  /** For each of `requests`, in order, whether its deposit address still holds something to sweep (reads, no transaction). */
  funded(requests: SweepRequest[]): Promise<boolean[]>;
  /** Throws {@link SweepRevertedError} when the transaction was mined but reverted, {@link SweepNodeError} when the node failed. */
  flush(requests: SweepRequest[]): Promise<SweepResult>;
};

export type Sweeper = { start(): void; stop(): Promise<void> };

/** Split a batch's gas over its sessions; the remainder goes to the first, so the parts add up. */
export function shareOf(total: bigint, parts: number, index: number): bigint {
  const share = total / BigInt(parts);
  return index === 0 ? share + (total - share * BigInt(parts)) : share;
}

/** A deposit whose flush failed on its own `failures` times in a row: not tried again before `retryAt`. */
type DepositBackoff = { failures: number; retryAt: number };

/** A deposit whose flush failed alone; `byNode` when the node failed, which says nothing about the deposit. */
type FailedAlone = { doc: SweepDoc; reason: string; byNode: boolean };

/**
 * What a batch came to: the deposits swept (and recorded), those that failed even alone, with why,
 * and those found empty on chain though not recorded as swept (so not flushed).
 */
type BatchOutcome = { swept: SweepDoc[]; failedAlone: FailedAlone[]; seenEmpty: SweepDoc[] };

const nothingSwept: BatchOutcome = { swept: [], failedAlone: [], seenEmpty: [] };

const joined = (outcomes: BatchOutcome[]): BatchOutcome => ({
  swept: outcomes.flatMap((o) => o.swept), failedAlone: outcomes.flatMap((o) => o.failedAlone), seenEmpty: outcomes.flatMap((o) => o.seenEmpty),
});

/** One session's part of a mined transaction, to record as a FundsSwept: a reverted one moved nothing, but its gas was paid. */
type SweepRecord = { doc: SweepDoc; network: string; transaction: SweepTransaction; transferIds: string[]; gasUsed: bigint; gasCost: bigint; reverted: boolean };

/** The records of `transaction` for the deposits it was sent for, its gas split over them. */
function recordsOf(network: string, docs: SweepDoc[], transaction: SweepTransaction, reverted: boolean): SweepRecord[] {
  return docs.map((doc, index) => ({
    doc, network, transaction, reverted,
    transferIds: reverted ? [] : doc.transferIds,
    gasUsed: shareOf(transaction.gasUsed, docs.length, index),
    gasCost: shareOf(transaction.gasCost, docs.length, index),
  }));
}

const requestsOf = (docs: SweepDoc[]): SweepRequest[] =>
  docs.map((d) => ({ checkoutSessionId: d.checkoutSessionId, depositAddress: d.depositAddress, merchantAddress: d.merchantAddress, assets: d.assets }));

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
 * A deposit is never flushed twice for the same money: a flush mined but not recorded (the event
 * store failed) is recorded on the next round without flushing again, and before a flush, after a
 * failure whose outcome is not known, the deposits are read on chain and the empty ones left out;
 * a flush with nothing left to sweep is not sent.
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
  log?: (line: string) => void;
}): Sweeper {
  const { clock, readStore, projections, commands, executors } = deps;
  const batchDelayMs = deps.batchDelayMs ?? 5_000;
  const batchSize = deps.batchSize ?? 50;
  const retryAfterMs = deps.retryAfterMs ?? 30_000;
  const maxRetryAfterMs = deps.maxRetryAfterMs ?? 60 * 60_000;
  const log = deps.log ?? ((line: string) => console.warn(`[sweeper] ${line}`));
  const sweeps = readStore.collection<SweepDoc>(SWEEPS);
  /** Per network: its node (or the sweeping account) failed every flush; nothing is tried before. */
  const networkRetryAt = new Map<string, number>();
  /** Per sweep document (`_id`): it failed on its own. */
  const depositBackoff = new Map<string, DepositBackoff>();
  /** Transactions mined whose recording failed: recorded on the deposit's next round, instead of flushing it again. */
  let unrecorded: SweepRecord[] = [];
  let unsubscribe: (() => void) | null = null;

  const dueAt = (doc: SweepDoc) =>
    Math.max(Date.parse(doc.updatedAt) + batchDelayMs, networkRetryAt.get(doc.network) ?? 0, depositBackoff.get(doc._id)?.retryAt ?? 0);

  /** Records each in turn; on a failure, it and the rest are kept in `unrecorded` for the next round, and the failure thrown. */
  async function record(records: SweepRecord[]): Promise<void> {
    for (const [index, r] of records.entries()) {
      try {
        const recorded = await commands.handle(checkoutSessionAggregate, r.doc.checkoutSessionId, {
          type: 'RecordSweep',
          sweep: {
            network: r.network, chainId: r.doc.chainId, transactionHash: r.transaction.transactionHash, transferIds: r.transferIds,
            gasUsed: r.gasUsed.toString(), gasCost: r.gasCost.toString(), ...(r.reverted ? { reverted: true } : {}),
          },
        }, { organizationId: r.doc.organizationId, environment: r.doc.environment as Environment, actor: 'system:sweeper' });
        if (recorded.position !== null) await projections.waitFor(recorded.position, 30_000);
      } catch (error) {
        unrecorded.push(...records.slice(index));
        throw error;
      }
    }
  }

  /**
   * Flushes `part` in one transaction and records it; if the flush fails, flushes each half of it
   * right away, down to single deposits. A failed flush of k > 1 deposits leads to exactly two
   * more, so the flushes form a binary tree with at most n leaves: n deposits cost at most 2n − 1
   * flushes in a run (99 for a batch of 50), and one bad deposit among n about 2·log2(n) + 1.
   * With `readFirst`, the deposits are read on chain first and the empty ones left out: at the
   * start of a round, and after a failure other than a revert (the transaction may have been mined).
   */
  async function flushIsolatingFailures(executor: SweepExecutor, network: string, docs: SweepDoc[], readFirst: boolean): Promise<BatchOutcome> {
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
    let result: SweepResult;
    try {
      result = await executor.flush(requestsOf(part));
    } catch (error) {
      const reverted = error instanceof SweepRevertedError;
      if (reverted) await record(recordsOf(network, part, error.transaction, true));
      if (part.length === 1) return { ...nothingSwept, seenEmpty, failedAlone: [{ doc: part[0]!, reason: reasonOf(error), byNode: error instanceof SweepNodeError }] };
      const middle = Math.ceil(part.length / 2);
      const first = await flushIsolatingFailures(executor, network, part.slice(0, middle), !reverted);
      const second = await flushIsolatingFailures(executor, network, part.slice(middle), !reverted);
      return joined([{ ...nothingSwept, seenEmpty }, first, second]);
    }
    await record(recordsOf(network, part, result, false));
    return { swept: part, failedAlone: [], seenEmpty };
  }

  /** Doubles the deposit's own wait, and says why. */
  function backOffDeposit(doc: SweepDoc, network: string, what: (failures: number, waitMs: number) => string): void {
    const failures = (depositBackoff.get(doc._id)?.failures ?? 0) + 1;
    const waitMs = doublingDelay(failures, retryAfterMs, maxRetryAfterMs);
    depositBackoff.set(doc._id, { failures, retryAt: clock.now() + waitMs });
    log(`deposit address ${doc.depositAddress} (checkout session ${doc.checkoutSessionId}) on ${network} ${what(failures, waitMs)}`);
  }

  async function sweepNetwork(network: string, due: SweepDoc[]): Promise<void> {
    let outcome: BatchOutcome;
    let batch = due;
    try {
      // Mined but not recorded: record it now, and do not flush these deposits this round.
      const owed = unrecorded.filter((r) => r.network === network);
      unrecorded = unrecorded.filter((r) => r.network !== network);
      await record(owed);
      const recordedIds = new Set(owed.filter((r) => !r.reverted).map((r) => r.doc._id));
      batch = due.filter((doc) => !recordedIds.has(doc._id));
      outcome = batch.length ? await flushIsolatingFailures(executors.get(network)!, network, batch, true) : nothingSwept;
    } catch (error) {
      // Only recording throws (the flushes' failures are caught above): the event store is the
      // problem, not a deposit. What was swept but not recorded is recorded on the next round.
      networkRetryAt.set(network, clock.now() + retryAfterMs);
      log(`recording a sweep on ${network} failed, retrying in ${seconds(retryAfterMs)}: ${reasonOf(error)}`);
      return;
    }
    for (const doc of outcome.swept) depositBackoff.delete(doc._id);
    for (const doc of outcome.seenEmpty) {
      backOffDeposit(doc, network, (failures, waitMs) =>
        `holds nothing on chain though ${doc.transferIds.length} confirmed transfer(s) are not recorded as swept ` +
          `(an earlier flush whose outcome was not known went through); not flushing it, looking again in ${seconds(waitMs)} (${failures} time(s) in a row)`);
    }
    const byNode = outcome.failedAlone.filter((f) => f.byNode);
    const failedAlone = outcome.failedAlone.filter((f) => !f.byNode);
    // The node failed: no deposit is blamed for it; the network's round waits the fixed
    // `retryAfterMs`, and the deposits go in the first round once the node answers.
    if (byNode.length) {
      networkRetryAt.set(network, clock.now() + retryAfterMs);
      log(`the node of ${network} failed sweeping ${byNode.length} deposit address(es), retrying in ${seconds(retryAfterMs)}: ${byNode[0]!.reason}`);
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
      log(`sweep of ${batch.length} deposit address(es) on ${network} failed, each alone too, retrying in ${seconds(retryAfterMs)}: ${failedAlone[0]!.reason}`);
      return;
    }
    if (!byNode.length) networkRetryAt.delete(network);
    for (const { doc, reason } of failedAlone) {
      backOffDeposit(doc, network, (failures, waitMs) =>
        `failed on its own (${failures} time(s) in a row), retrying it in ${seconds(waitMs)}; the other deposits go on: ${reason}`);
    }
  }

  const loop = createDueWorkLoop({
    name: 'sweeper',
    clock,
    async runDue(now) {
      const pending = await sweeps.find({ pending: true }, { sort: { updatedAt: 1 } });
      // A deposit swept meanwhile (or whose money was otherwise accounted for) owes no backoff.
      const pendingIds = new Set(pending.map((d) => d._id));
      for (const id of depositBackoff.keys()) if (!pendingIds.has(id)) depositBackoff.delete(id);
      unrecorded = unrecorded.filter((r) => pendingIds.has(r.doc._id));
      const byNetwork = new Map<string, SweepDoc[]>();
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
      return pending.length ? Math.min(...pending.map(dueAt)) : null;
    },
  });

  return {
    start() {
      unsubscribe = projections.onAdvanced((_p, touched) => { if (touched.has(SWEEPS)) loop.poke(); });
      loop.poke();
    },
    async stop() {
      unsubscribe?.();
      await loop.stop();
    },
  };
}
