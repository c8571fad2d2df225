import type { EventStore } from '../event-store/event-store.ts';
import type { ReadDocument } from '../read-store/read-store.ts';
import type { LoggedCheckpoint } from './checkpoints.ts';
import { verifyChain, type ChainProgress, type ChainReport } from './verify-chain.ts';
import {
  notCompared,
  verifyReadModels,
  type AbsentReadModels,
  type LiveReadModels,
  type ReadModelProgress,
  type ReadModelReport,
} from './verify-read-models.ts';

/** What `weir audit verify` and `GET /api/v1/audit/verify` answer. */
export type AuditReport = {
  /** The chain, every checkpoint and every compared read model hold. */
  holds: boolean;
  startedAt: string;
  ms: number;
  chain: ChainReport;
  readModels: ReadModelReport;
};

export type AuditProgress = ({ phase: 'chain' } & ChainProgress) | ReadModelProgress;

/**
 * The whole check: the chain and its checkpoints, then the read models rebuilt and compared with
 * the live ones (when there are live ones to compare with; `live.absent` says why not, and
 * `live.fails` that this does not hold).
 */
export async function verifyAudit(deps: {
  eventStore: EventStore;
  trustedKeys: readonly string[];
  /** Checkpoints published outside the log. */
  published?: readonly LoggedCheckpoint[];
  live: LiveReadModels | AbsentReadModels;
  includes?: (doc: ReadDocument) => boolean;
  /** See `verifyReadModels`. */
  within?: { field: string; value: string };
  onProgress?: (progress: AuditProgress) => void;
  now?: () => number;
}): Promise<AuditReport> {
  const now = deps.now ?? Date.now;
  const startedAt = new Date(now()).toISOString();
  const started = performance.now();
  const chain = await verifyChain({
    eventStore: deps.eventStore,
    trustedKeys: deps.trustedKeys,
    published: deps.published,
    onProgress: (progress) => deps.onProgress?.({ phase: 'chain', ...progress }),
  });
  const readModels =
    'absent' in deps.live
      ? { ...notCompared(deps.live.absent), holds: deps.live.fails !== true }
      : await verifyReadModels({
          eventStore: deps.eventStore,
          live: deps.live,
          includes: deps.includes,
          within: deps.within,
          onProgress: deps.onProgress,
        });
  return {
    holds: chain.holds && readModels.holds,
    startedAt,
    ms: Math.round(performance.now() - started),
    chain,
    readModels,
  };
}
