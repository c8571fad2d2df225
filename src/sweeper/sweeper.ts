import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CommandHandler } from '../actors/command-handler.ts';
import type { Environment } from '../event-store/event-store.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import { SWEEPS, type SweepDoc } from '../projections/sweeps.projection.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import { createDueWorkLoop } from '../shared/due-work-loop.ts';

export type SweepRequest = { checkoutSessionId: string; depositAddress: string; merchantAddress: string; assets: string[] };

/** Moves funds from deposit addresses to merchant wallets on one network, in one transaction. */
export type SweepExecutor = {
  flush(requests: SweepRequest[]): Promise<{ transactionHash: string; gasUsed: bigint; gasCost: bigint }>;
};

export type Sweeper = { start(): void; stop(): Promise<void> };

/** Split a batch's gas over its sessions; the remainder goes to the first, so the parts add up. */
export function shareOf(total: bigint, parts: number, index: number): bigint {
  const share = total / BigInt(parts);
  return index === 0 ? share + (total - share * BigInt(parts)) : share;
}

/**
 * Sweeps confirmed payments to merchant wallets. Pending work is a read model of the log, so a
 * restart resumes it; confirmations arriving close together are batched into one transaction
 * per network. The gas spent is recorded on each session.
 */
export function createSweeper(deps: {
  clock: Clock;
  readStore: ReadStore;
  projections: ProjectionRunner;
  commands: CommandHandler;
  executors: ReadonlyMap<string, SweepExecutor>;
  batchDelayMs?: number;
  batchSize?: number;
  retryAfterMs?: number;
  log?: (line: string) => void;
}): Sweeper {
  const { clock, readStore, projections, commands, executors } = deps;
  const batchDelayMs = deps.batchDelayMs ?? 5_000;
  const batchSize = deps.batchSize ?? 50;
  const retryAfterMs = deps.retryAfterMs ?? 30_000;
  const log = deps.log ?? ((line: string) => console.warn(`[sweeper] ${line}`));
  const sweeps = readStore.collection<SweepDoc>(SWEEPS);
  const retryAt = new Map<string, number>();
  let unsubscribe: (() => void) | null = null;

  const dueAt = (doc: SweepDoc) => Math.max(Date.parse(doc.updatedAt) + batchDelayMs, retryAt.get(doc.network) ?? 0);

  async function sweepNetwork(network: string, batch: SweepDoc[]): Promise<void> {
    const executor = executors.get(network)!;
    try {
      const result = await executor.flush(batch.map((d) => ({ checkoutSessionId: d.checkoutSessionId, depositAddress: d.depositAddress, merchantAddress: d.merchantAddress, assets: d.assets })));
      retryAt.delete(network);
      for (const [index, doc] of batch.entries()) {
        const recorded = await commands.handle(checkoutSessionAggregate, doc.checkoutSessionId, {
          type: 'RecordSweep',
          sweep: {
            network, chainId: doc.chainId, transactionHash: result.transactionHash, transferIds: doc.transferIds,
            gasUsed: shareOf(result.gasUsed, batch.length, index).toString(), gasCost: shareOf(result.gasCost, batch.length, index).toString(),
          },
        }, { organizationId: doc.organizationId, environment: doc.environment as Environment, actor: 'system:sweeper' });
        if (recorded.position !== null) await projections.waitFor(recorded.position, 30_000);
      }
    } catch (error) {
      retryAt.set(network, clock.now() + retryAfterMs);
      log(`sweep of ${batch.length} deposit address(es) on ${network} failed, retrying in ${retryAfterMs / 1000} s: ${(error as Error).message}`);
    }
  }

  const loop = createDueWorkLoop({
    name: 'sweeper',
    clock,
    async runDue(now) {
      const pending = await sweeps.find({ pending: true }, { sort: { updatedAt: 1 } });
      const byNetwork = new Map<string, SweepDoc[]>();
      for (const doc of pending) {
        if (!executors.has(doc.network) || dueAt(doc) > now) continue;
        const list = byNetwork.get(doc.network) ?? [];
        if (list.length < batchSize) list.push(doc);
        byNetwork.set(doc.network, list);
      }
      for (const [network, batch] of byNetwork) await sweepNetwork(network, batch);
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
