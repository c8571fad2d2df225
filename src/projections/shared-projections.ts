import type { EventStore } from '../event-store/event-store.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { createProcessor } from '../processing/processor.ts';
import { createSystemClock, type Clock } from '../shared/clock.ts';
import { ReadModelsBehindError } from '../shared/errors.ts';
import { yieldToEventLoop } from '../shared/yield-to-event-loop.ts';
import { PROJECTION_CHANGES, positionKey, type ProjectionChangesDoc } from './projection-changes.ts';
import {
  PROJECTIONS_CHECKPOINT,
  type AdvanceListener,
  type ProjectionFailure,
  type ProjectionRunner,
} from './projection-runner.ts';
import { categoryOf, type Projection } from './projection.ts';

export type SharedProjections = ProjectionRunner & {
  /** The projections' writer runs here now (its health is ours), or no longer (null). */
  writing(writer: Pick<ProjectionRunner, 'health'> | null): void;
  /** The writer here advanced: look at the shared checkpoint now rather than at the next poll. */
  nudge(): void;
};

/** How often the shared checkpoint is read while the log is ahead of it (or someone waits). */
const DEFAULT_POLL_MS = 50;
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30_000;
const BATCH = 250;
const CHANGES_PAGE = 500;

/**
 * The read models of a read store several instances share (MongoDB), as every instance sees them:
 * one instance (the `projections` lease's owner) writes them with its runner, and this follows the
 * checkpoint that writer stores. Its position is the shared store's, so a request that waits for
 * its own write ("read models caught up") waits for the shared store, whoever projects. The
 * documents that changed come from the writer's journal (projection-changes.ts); the in-memory
 * projections (`local`: watched addresses, Solana references) are applied here, from the log,
 * up to the shared checkpoint.
 */
export function createSharedProjections(deps: {
  eventStore: EventStore;
  readStore: ReadStore;
  /** Projections that keep their state in this process (no collections). */
  local: Projection[];
  clock?: Clock;
  log?: (line: string) => void;
  pollIntervalMs?: number;
}): SharedProjections {
  const { eventStore, readStore, local } = deps;
  const clock = deps.clock ?? createSystemClock();
  const log = deps.log ?? ((line: string) => console.warn(line));
  const pollMs = deps.pollIntervalMs ?? DEFAULT_POLL_MS;
  const changes = readStore.collection<ProjectionChangesDoc>(PROJECTION_CHANGES);
  const listeners = new Set<AdvanceListener>();
  const documentListeners = new Map<string, Set<(ids: ReadonlySet<string>) => void>>();
  const waiters = new Set<{ position: bigint; resolve: () => void }>();
  let checkpoint: bigint | null = null;
  let writer: Pick<ProjectionRunner, 'health'> | null = null;
  let stopped = false;
  let pollTimer: NodeJS.Timeout | null = null;

  const localFor = (streamId: string) => {
    const category = categoryOf(streamId);
    return local.filter((p) => p.categories === undefined || p.categories.includes(category));
  };

  /** The in-memory projections see the log's events after `from` up to `to`. */
  async function applyLocal(from: bigint | null, to: bigint): Promise<void> {
    if (local.length === 0) return;
    for (let after = from; ; ) {
      const events = await eventStore.readAll(after, BATCH);
      for (const event of events) {
        if (event.position > to) return;
        for (const projection of localFor(event.streamId)) await projection.apply(event, readStore);
      }
      if (events.length < BATCH) return;
      after = events[events.length - 1]!.position;
      await yieldToEventLoop();
    }
  }

  /** The journal's entries over `(from, to]`, merged; `complete` when they chain without a gap. */
  async function changedBetween(from: bigint | null, to: bigint) {
    const merged = new Map<string, Set<string>>();
    let expected = positionKey(from);
    let complete = true;
    for (let after = positionKey(from); ; ) {
      const page = await changes.find(
        { _id: { $gt: after, $lte: positionKey(to) } },
        { sort: { _id: 1 }, limit: CHANGES_PAGE },
      );
      for (const entry of page) {
        if (entry.from !== expected) complete = false;
        expected = entry._id;
        for (const [name, ids] of Object.entries(entry.changed)) {
          let set = merged.get(name);
          if (!set) {
            set = new Set();
            merged.set(name, set);
          }
          for (const id of ids) set.add(id);
        }
      }
      if (page.length < CHANGES_PAGE) break;
      after = page[page.length - 1]!._id;
    }
    if (expected !== positionKey(to)) complete = false;
    return { merged, complete };
  }

  function notify(merged: Map<string, Set<string>>): void {
    const current = checkpoint;
    if (current === null) return;
    for (const waiter of waiters)
      if (waiter.position <= current) {
        waiters.delete(waiter);
        waiter.resolve();
      }
    for (const [collection, ids] of merged)
      for (const listener of documentListeners.get(collection) ?? []) listener(ids);
    const touched = new Set(merged.keys());
    for (const listener of listeners) listener(current, touched);
  }

  /** Move to the shared checkpoint, if it moved on; then look again later while the log is ahead. */
  async function sync(): Promise<void> {
    const shared = await readStore.getCheckpoint(PROJECTIONS_CHECKPOINT);
    if (shared !== null && (checkpoint === null || shared > checkpoint)) {
      await applyLocal(checkpoint, shared);
      const { merged, complete } = await changedBetween(checkpoint, shared);
      if (!complete)
        log(
          `[projections] the shared read models' journal misses changes between log positions ${checkpoint ?? 'start'} and ${shared}: documents changed there are not announced here`,
        );
      checkpoint = shared;
      notify(merged);
    }
  }

  function schedulePoll(): void {
    if (stopped || pollTimer !== null) return;
    pollTimer = setTimeout(() => {
      pollTimer = null;
      void wake();
    }, pollMs);
    pollTimer.unref();
  }

  /**
   * Reads the shared checkpoint on each pass: poked by appends here, by the writer here, and (on
   * real time, `pollMs`) while the log is ahead of it or someone waits; a failed read is retried on
   * the clock with doubling waits.
   */
  const reader = createProcessor({
    name: 'shared-projections',
    clock,
    retry: { firstMs: RETRY_FIRST_MS, maxMs: RETRY_MAX_MS },
    log,
    failureLine: ({ error, attempts, waitMs }) =>
      `[projections] reading the shared read models' checkpoint failed (attempt ${attempts}): ${error instanceof Error ? error.message : String(error)}; retrying in ${waitMs / 1000} s`,
    recoveryLine: ({ attempts }) => `[projections] the shared read models are read again (after ${attempts} failures)`,
    work: {
      subscribe: (poke) => eventStore.onAppended(poke),
      pass: async () => {
        await sync();
        // Behind the log (the writer is at work) or someone waits: the checkpoint is read again soon.
        const head = await eventStore.headPosition();
        if (waiters.size > 0 || (head !== null && (checkpoint === null || head > checkpoint))) schedulePoll();
        return {};
      },
    },
  });
  const wake = (): Promise<void> => (stopped ? Promise.resolve() : reader.poke());
  const failure = (): ProjectionFailure | null => {
    const failing = reader.status().failing;
    return failing ? { error: failing.error, since: failing.since, attempts: failing.attempts } : null;
  };

  return {
    async start() {
      // What the shared store holds is current to its checkpoint: the in-memory projections were loaded from it.
      checkpoint = await readStore.getCheckpoint(PROJECTIONS_CHECKPOINT);
      await reader.start();
    },
    waitFor(position, timeoutMs = 5000) {
      if (checkpoint !== null && checkpoint >= position) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const waiter = {
          position,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          const writing = writer?.health().failing;
          const reading = failure();
          const why = writing
            ? `: catching up fails (${writing.error})`
            : reading
              ? `: reading them fails (${reading.error})`
              : writer
                ? ''
                : ' (the shared read models are written by the instance that owns the projections)';
          reject(
            new ReadModelsBehindError(
              `read models did not reach log position ${position} within ${timeoutMs} ms${why}; what was written stays written: send the same request with the same Idempotency-Key again`,
            ),
          );
        }, timeoutMs);
        waiters.add(waiter);
        void wake();
      });
    },
    async rebuild() {
      throw new Error('the shared read models are rebuilt by `weir replay`, with every instance stopped');
    },
    onAdvanced(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    onDocumentsChanged(collection, listener) {
      let forCollection = documentListeners.get(collection);
      if (!forCollection) {
        forCollection = new Set();
        documentListeners.set(collection, forCollection);
      }
      forCollection.add(listener);
      return () => {
        forCollection.delete(listener);
        if (forCollection.size === 0) documentListeners.delete(collection);
      };
    },
    position: () => checkpoint,
    health() {
      const failing = writer?.health().failing ?? failure();
      return { position: checkpoint?.toString() ?? null, failing: failing ?? null };
    },
    writing(running_) {
      writer = running_;
    },
    nudge: () => void wake(),
    async stop() {
      stopped = true;
      if (pollTimer !== null) clearTimeout(pollTimer);
      pollTimer = null;
      await reader.stop();
    },
  };
}
