import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CommandHandler } from '../actors/command-handler.ts';
import type { Environment } from '../event-store/event-store.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import { SWEEPS, type SweepDoc } from '../projections/sweeps.projection.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import { createDueWorkLoop } from '../shared/due-work-loop.ts';
import { doublingDelay } from '../shared/backoff.ts';

export type SweepRequest = { checkoutSessionId: string; depositAddress: string; merchantAddress: string; assets: string[] };

export type SweepResult = { transactionHash: string; gasUsed: bigint; gasCost: bigint };

/**
 * Moves funds from deposit addresses to merchant wallets on one network, in one transaction:
 * all of `requests` or, when it throws, none of them.
 */
export type SweepExecutor = {
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

/** What a batch came to: the deposits swept (and recorded), and those that failed even alone, with why. */
type BatchOutcome = { swept: SweepDoc[]; failedAlone: { doc: SweepDoc; reason: string }[] };

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
 * per network. The gas of each transaction sent is recorded on the sessions it swept.
 *
 * A batch is one transaction, so one deposit that can never be swept (a merchant contract wallet
 * that refuses the native coin, a token whose transfer always reverts) would make it revert
 * forever. A failed batch is therefore split in halves, each flushed at once, down to single
 * deposits: the others are swept in the same run, and a deposit that fails alone waits on its own
 * backoff (`retryAfterMs`, doubling, at most `maxRetryAfterMs`), never holding back the network.
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
  let unsubscribe: (() => void) | null = null;

  const dueAt = (doc: SweepDoc) =>
    Math.max(Date.parse(doc.updatedAt) + batchDelayMs, networkRetryAt.get(doc.network) ?? 0, depositBackoff.get(doc._id)?.retryAt ?? 0);

  async function recordSweep(network: string, swept: SweepDoc[], result: SweepResult): Promise<void> {
    for (const [index, doc] of swept.entries()) {
      const recorded = await commands.handle(checkoutSessionAggregate, doc.checkoutSessionId, {
        type: 'RecordSweep',
        sweep: {
          network, chainId: doc.chainId, transactionHash: result.transactionHash, transferIds: doc.transferIds,
          gasUsed: shareOf(result.gasUsed, swept.length, index).toString(), gasCost: shareOf(result.gasCost, swept.length, index).toString(),
        },
      }, { organizationId: doc.organizationId, environment: doc.environment as Environment, actor: 'system:sweeper' });
      if (recorded.position !== null) await projections.waitFor(recorded.position, 30_000);
    }
  }

  /**
   * Flushes `part` in one transaction and records it; if the flush fails, flushes each half of it
   * right away, down to single deposits. A failed flush of k > 1 deposits leads to exactly two
   * more, so the flushes form a binary tree with at most n leaves: n deposits cost at most 2n − 1
   * flushes in a run (99 for a batch of 50), and one bad deposit among n about 2·log2(n) + 1.
   */
  async function flushIsolatingFailures(executor: SweepExecutor, network: string, part: SweepDoc[]): Promise<BatchOutcome> {
    let result: SweepResult;
    try {
      result = await executor.flush(part.map((d) => ({ checkoutSessionId: d.checkoutSessionId, depositAddress: d.depositAddress, merchantAddress: d.merchantAddress, assets: d.assets })));
    } catch (error) {
      if (part.length === 1) return { swept: [], failedAlone: [{ doc: part[0]!, reason: reasonOf(error) }] };
      const middle = Math.ceil(part.length / 2);
      const first = await flushIsolatingFailures(executor, network, part.slice(0, middle));
      const second = await flushIsolatingFailures(executor, network, part.slice(middle));
      return { swept: [...first.swept, ...second.swept], failedAlone: [...first.failedAlone, ...second.failedAlone] };
    }
    await recordSweep(network, part, result);
    return { swept: part, failedAlone: [] };
  }

  async function sweepNetwork(network: string, batch: SweepDoc[]): Promise<void> {
    let outcome: BatchOutcome;
    try {
      outcome = await flushIsolatingFailures(executors.get(network)!, network, batch);
    } catch (error) {
      // Only recording throws (the flushes' failures are caught above): the event store is the
      // problem, not a deposit. What was swept but not recorded stays pending and is tried again.
      networkRetryAt.set(network, clock.now() + retryAfterMs);
      log(`recording a sweep on ${network} failed, retrying in ${seconds(retryAfterMs)}: ${reasonOf(error)}`);
      return;
    }
    for (const doc of outcome.swept) depositBackoff.delete(doc._id);
    const { failedAlone } = outcome;
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
    networkRetryAt.delete(network);
    for (const { doc, reason } of failedAlone) {
      const failures = (depositBackoff.get(doc._id)?.failures ?? 0) + 1;
      const waitMs = doublingDelay(failures, retryAfterMs, maxRetryAfterMs);
      depositBackoff.set(doc._id, { failures, retryAt: clock.now() + waitMs });
      log(
        `sweep of deposit address ${doc.depositAddress} (checkout session ${doc.checkoutSessionId}) on ${network} failed on its own ` +
          `(${failures} time(s) in a row), retrying it in ${seconds(waitMs)}; the other deposits go on: ${reason}`,
      );
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
