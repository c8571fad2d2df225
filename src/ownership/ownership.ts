import type { Clock } from '../shared/clock.ts';
import type { Log } from '../shared/logger.ts';
import { noMetrics, type Metrics } from '../shared/metrics.ts';
import { createLease, type Lease } from './lease.ts';
import type { LeaseStore } from './lease-store.ts';

/** Runs `write` only while the work's lease is proven held (see Lease.fence); else throws LeaseLostError. */
export type Fence = <T>(write: () => Promise<T>) => Promise<T>;

/** A piece of background work started by its owner, stopped when the lease moves or Weir stops. */
export type RunningWork = { stop(): Promise<void> };

/** Starts the work; `fence` guards its side effects (a stale owner's are refused). */
export type StartWork = (fence: Fence) => Promise<RunningWork>;

export type OwnedWork = {
  readonly kind: string;
  /** Whether the work runs in this instance now. */
  running(): boolean;
};

export type Ownership = {
  /** Who this instance is in the leases (host, pid and a random part). */
  readonly owner: string;
  /**
   * Runs the work while this instance holds the lease of `kind`, and stops it as soon as it loses
   * it. Resolves after the first attempt: started when the lease was free, else on standby.
   */
  own(kind: string, start: StartWork): Promise<OwnedWork>;
  /** Every kind and whether it runs here. */
  status(): { kind: string; running: boolean }[];
  /** Stops every work and releases its lease, so other instances take over at once. */
  stop(): Promise<void>;
};

/**
 * Each kind of background work owned by one instance at a time through a lease per kind: started
 * when the lease is acquired, stopped at once when it is lost (its renewal refused), its side
 * effects fenced by the lease. Moves are logged and counted (weir_ownership_*). Without a lease
 * store (one process, no NATS) this instance owns everything and fences nothing.
 */
export function createOwnership(deps: {
  /** null: the single-process default, which always owns. */
  store: LeaseStore | null;
  owner: string;
  clock: Clock;
  log: Log;
  metrics?: Metrics;
  /** Default a third of the store's TTL. */
  renewEveryMs?: number;
}): Ownership {
  const { store, owner, clock, log } = deps;
  const metrics = deps.metrics ?? noMetrics;
  type Entry = { kind: string; lease: Lease | null; running: RunningWork | null; moves: Promise<void> };
  const entries = new Map<string, Entry>();
  const moves = metrics.counter<'kind' | 'move'>({
    name: 'weir_ownership_moves_total',
    help: 'Ownership moves of background work in this instance, by work kind and move (acquired, lost, released)',
    labelNames: ['kind', 'move'],
  });
  metrics.gauge<'kind'>(
    {
      name: 'weir_ownership_owned',
      help: 'Background work this instance runs now (1) or stands by for (0), by work kind',
      labelNames: ['kind'],
    },
    () => [...entries.values()].map((e) => ({ labels: { kind: e.kind }, value: e.running ? 1 : 0 })),
  );
  let stopping = false;

  const moved = (entry: Entry, move: 'acquired' | 'lost' | 'released', detail: string) => {
    moves.inc({ kind: entry.kind, move });
    log(`[ownership] ${entry.kind}: ${move} by ${owner} (${detail})`, {
      level: move === 'lost' ? 'warn' : 'info',
      event: `ownership.${move}`,
      kind: entry.kind,
      owner,
    });
  };

  /** Starts and stops of one kind happen in order. */
  const enqueue = (entry: Entry, move: () => Promise<void>) => {
    entry.moves = entry.moves
      .then(move)
      .catch((error: unknown) =>
        log(`[ownership] ${entry.kind}: ${(error as Error).stack ?? error}`, { level: 'error' }),
      );
    return entry.moves;
  };

  const startWork = (entry: Entry, fence: Fence) =>
    enqueue(entry, async () => {
      if (entry.running || stopping || (entry.lease && !entry.lease.held())) return;
      try {
        entry.running = await start.get(entry.kind)!(fence);
      } catch (error) {
        // Held but not running would leave the work undone: let another instance (or a later step) try.
        log(`[ownership] ${entry.kind}: could not start, letting the lease go: ${(error as Error).message}`, {
          level: 'error',
        });
        await entry.lease?.release();
      }
    });

  const stopWork = (entry: Entry) =>
    enqueue(entry, async () => {
      const running = entry.running;
      entry.running = null;
      await running?.stop();
    });

  const start = new Map<string, StartWork>();

  return {
    owner,
    async own(kind, startWork_) {
      if (entries.has(kind)) throw new Error(`work ${kind} is owned twice`);
      start.set(kind, startWork_);
      const entry: Entry = { kind, lease: null, running: null, moves: Promise.resolve() };
      entries.set(kind, entry);
      if (!store) {
        await startWork(entry, (write) => write());
      } else {
        const lease = createLease({
          store,
          key: `work.${kind.replace(/[^-a-zA-Z0-9_]/g, '_')}`,
          owner,
          clock,
          renewEveryMs: deps.renewEveryMs,
          onAcquired: (revision) => {
            moved(entry, 'acquired', `lease revision ${revision}`);
            void startWork(entry, lease.fence);
          },
          onLost: (reason) => {
            moved(entry, 'lost', reason);
            void stopWork(entry);
          },
        });
        entry.lease = lease;
        await lease.start();
        await entry.moves;
      }
      return { kind, running: () => entry.running !== null };
    },
    status: () => [...entries.values()].map((e) => ({ kind: e.kind, running: e.running !== null })),
    async stop() {
      stopping = true;
      await Promise.all(
        [...entries.values()].map(async (entry) => {
          await stopWork(entry);
          if (entry.lease?.held()) moved(entry, 'released', 'stopping');
          await entry.lease?.stop();
        }),
      );
    },
  };
}
