import type { Tracer } from '@opentelemetry/api';
import type { EventStore, RecordedEvent } from '../event-store/event-store.ts';
import type { Collection, ReadDocument, ReadStore } from '../read-store/read-store.ts';
import { createProcessor, logWork } from '../processing/processor.ts';
import { createSystemClock, type Clock } from '../shared/clock.ts';
import { ReadModelsBehindError } from '../shared/errors.ts';
import { categoryOf, type Projection } from './projection.ts';
import { yieldToEventLoop } from '../shared/yield-to-event-loop.ts';
import { noMetrics, secondsBetween, type Metrics } from '../shared/metrics.ts';
import {
  PROJECTION_CHANGES,
  PROJECTION_CHANGES_KEPT_MS,
  positionKey,
  trimProjectionChanges,
  type ProjectionChangesDoc,
} from './projection-changes.ts';

/** The read store checkpoint the runner keeps: the log position every projection has processed. */
export const PROJECTIONS_CHECKPOINT = 'projections';
/** One document per projection that owns collections: the `version` its stored documents were written with. */
export const PROJECTION_VERSIONS = 'projection_versions';
type ProjectionVersionDoc = ReadDocument & { version: number };

export type RebuildProgress = { events: number; position: bigint; head: bigint | null };

export type AdvanceListener = (position: bigint, touched: ReadonlySet<string>) => void;

/** Catching up has failed since `since` (ms, on the runner's clock), `attempts` times in a row; `error` is the last error's message. */
export type ProjectionFailure = { error: string; since: number; attempts: number };

/** First and longest wait before catching up again after a failure. */
const RETRY = { firstMs: 1000, maxMs: 60_000 };

export type ProjectionRunner = {
  /**
   * Catch up from the stored checkpoint (from zero on the in-memory read store), then follow the log.
   * On a durable store whose documents were written by other versions of the projections (see
   * `Projection.version`), every read model is first dropped and rebuilt from the log.
   */
  start(): Promise<void>;
  /**
   * Resolves once every projection has processed `position`; rejects after `timeoutMs` (saying so,
   * and why when catching up is failing: a failing runner retries, so a wait is not failed sooner).
   */
  waitFor(position: bigint, timeoutMs?: number): Promise<void>;
  /** Drop every read model and rebuild it from the whole log. */
  rebuild(onProgress?: (progress: RebuildProgress) => void): Promise<{ events: number; ms: number }>;
  /** Called after each batch with the collections it wrote. */
  onAdvanced(listener: AdvanceListener): () => void;
  /**
   * Called after each batch that wrote documents of `collection`, with their ids (put or deleted),
   * so a consumer follows one read model without querying it whole. Returns an unsubscribe function.
   */
  onDocumentsChanged(collection: string, listener: (ids: ReadonlySet<string>) => void): () => void;
  position(): bigint | null;
  /**
   * The log position processed (as a string) and, while catching up fails, how: the runner tries
   * again on its own (after 1 s, doubling up to 1 min) and on every append, and this is null again
   * once a pass succeeds.
   */
  health(): { position: string | null; failing: ProjectionFailure | null };
  stop(): Promise<void>;
};

/**
 * A read store whose writes are recorded, so listeners learn which collections a batch touched,
 * and which documents of the collections someone watches (`changed`, keyed by collection).
 */
function trackingStore(
  store: ReadStore,
  touched: Set<string>,
  changed: Map<string, Set<string>>,
  /** Every collection's ids, when the runner keeps the changes journal. */
  journaled: Map<string, Set<string>> | null,
): ReadStore {
  const record = (name: string, id: string) => {
    touched.add(name);
    changed.get(name)?.add(id);
    if (!journaled) return;
    let ids = journaled.get(name);
    if (!ids) {
      ids = new Set();
      journaled.set(name, ids);
    }
    ids.add(id);
  };
  const cache = new Map<string, Collection<ReadDocument>>();
  return {
    ...store,
    collection<T extends ReadDocument>(name: string): Collection<T> {
      let tracked = cache.get(name);
      if (!tracked) {
        const inner = store.collection<ReadDocument>(name);
        tracked = {
          ...inner,
          put: (doc) => {
            record(name, doc._id);
            return inner.put(doc);
          },
          delete: (id) => {
            record(name, id);
            return inner.delete(id);
          },
        };
        cache.set(name, tracked);
      }
      return tracked as unknown as Collection<T>;
    },
  };
}

export function createProjectionRunner(deps: {
  eventStore: EventStore;
  readStore: ReadStore;
  projections: Projection[];
  batchSize?: number;
  clock?: Clock;
  log?: (line: string) => void;
  metrics?: Metrics;
  /**
   * Keep the changes journal (`projection_changes`) beside the checkpoint: the read store is shared
   * by instances that do not project (see shared-projections.ts).
   */
  journal?: boolean;
  /** Guards each batch's checkpoint (and journal entry) write: the projections' lease, when owned. */
  commit?: <T>(write: () => Promise<T>) => Promise<T>;
  /** Each batch projected is a span ('projections batch'). */
  tracer?: Tracer;
}): ProjectionRunner {
  const { eventStore, readStore, projections } = deps;
  const commit = deps.commit ?? ((write) => write());
  const journaled = deps.journal ? new Map<string, Set<string>>() : null;
  /** Journal entries this runner wrote (position, when), to trim the old ones. */
  const written: { position: bigint; at: number }[] = [];
  const clock = deps.clock ?? createSystemClock();
  const log = deps.log ?? ((line: string) => console.warn(line));
  // Events read per batch. Small on purpose: the whole batch stays alive until its last event is
  // applied, so with 2,000 the garbage collector copied the parsed events of the batch at every
  // young-generation collection; 250 cut what it copies by about a third and a rebuild's wall time
  // by 6-12% (BENCHMARKS.md, section 5), and below about 100 the per-batch overhead shows.
  const batchSize = deps.batchSize ?? 250;
  const listeners = new Set<AdvanceListener>();
  const waiters = new Set<{ position: bigint; resolve: () => void }>();
  const touched = new Set<string>();
  /** Ids written per watched collection since the last notice; only watched collections are tracked. */
  const changed = new Map<string, Set<string>>();
  const documentListeners = new Map<string, Set<(ids: ReadonlySet<string>) => void>>();
  const store = trackingStore(readStore, touched, changed, journaled);
  let stopped = false;

  // The projections that read a category's events, in order (see `Projection.categories`).
  const projectionsByCategory = new Map<string, Projection[]>();
  const projectionsFor = (streamId: string): Projection[] => {
    const category = categoryOf(streamId);
    let found = projectionsByCategory.get(category);
    if (!found) {
      found = projections.filter((p) => p.categories === undefined || p.categories.includes(category));
      projectionsByCategory.set(category, found);
    }
    return found;
  };

  // Projections without collections (in-memory ones) keep nothing across a restart: not versioned.
  const versions = new Map(projections.filter((p) => p.collections.length > 0).map((p) => [p.name, p.version ?? 1]));

  /** Drop every read model, and record that what is rebuilt is written by these projections' versions. */
  async function dropReadModels(): Promise<void> {
    await readStore.dropAll();
    work.reset(null);
    if (!readStore.durable) return;
    const stored = readStore.collection<ProjectionVersionDoc>(PROJECTION_VERSIONS);
    for (const [name, version] of versions) await stored.put({ _id: name, version });
  }

  /**
   * What differs between the stored documents' projection versions and these projections', if
   * anything, and whether any version was stored at all (none: a store that holds nothing yet).
   */
  async function versionChanges(): Promise<{ changes: string[]; storedAny: boolean }> {
    const stored = new Map(
      (await readStore.collection<ProjectionVersionDoc>(PROJECTION_VERSIONS).find({})).map((doc) => [
        doc._id,
        doc.version,
      ]),
    );
    const changes: string[] = [];
    for (const [name, version] of versions) {
      const before = stored.get(name);
      if (before !== version)
        changes.push(before === undefined ? `${name} (new)` : `${name} (version ${before} -> ${version})`);
    }
    for (const name of stored.keys()) if (!versions.has(name)) changes.push(`${name} (removed)`);
    return { changes, storedAny: stored.size > 0 };
  }

  async function applyBatch(events: readonly RecordedEvent[]): Promise<void> {
    for (const event of events) {
      for (const projection of projectionsFor(event.streamId)) await projection.apply(event, store);
    }
    if (!journaled) return;
    // The journal entry first, then (logWork's save) the checkpoint: a follower never sees a position without its changes.
    const reached = events[events.length - 1]!.position;
    const entry: ProjectionChangesDoc = {
      _id: positionKey(reached),
      from: positionKey(work.position()),
      changed: Object.fromEntries([...journaled].map(([name, ids]) => [name, [...ids]])),
      at: new Date(clock.now()).toISOString(),
    };
    journaled.clear();
    await commit(() => readStore.collection<ProjectionChangesDoc>(PROJECTION_CHANGES).put(entry));
    written.push({ position: reached, at: clock.now() });
    if (written.length % 200 === 0) await trimJournal();
  }

  /** Drops the journal entries older than PROJECTION_CHANGES_KEPT_MS (other owners' before them too). */
  async function trimJournal(): Promise<void> {
    const cutoff = clock.now() - PROJECTION_CHANGES_KEPT_MS;
    let last = -1;
    while (last + 1 < written.length && written[last + 1]!.at <= cutoff) last++;
    if (last < 0) return;
    const upTo = written[last]!.position;
    written.splice(0, last + 1);
    await trimProjectionChanges(readStore, upTo);
  }

  function notify(): void {
    const current = work.position();
    if (current === null) return;
    const written = new Set(touched);
    touched.clear();
    for (const waiter of waiters)
      if (waiter.position <= current) {
        waiters.delete(waiter);
        waiter.resolve();
      }
    for (const [collection, ids] of changed) {
      if (ids.size === 0) continue;
      const batch: ReadonlySet<string> = new Set(ids);
      ids.clear();
      for (const listener of documentListeners.get(collection) ?? []) listener(batch);
    }
    for (const listener of listeners) listener(current, written);
  }

  // The log after the checkpoint, a batch per pass; the checkpoint is the read store's when durable.
  const work = logWork<RecordedEvent>({
    checkpoint: {
      load: async () => (readStore.durable ? await readStore.getCheckpoint(PROJECTIONS_CHECKPOINT) : null),
      save: async (position) => {
        if (readStore.durable) await commit(() => readStore.setCheckpoint(PROJECTIONS_CHECKPOINT, position));
      },
    },
    // Loaded by `start`, which first compares the projection versions (and may drop everything).
    loadOnOpen: false,
    read: (after, limit) => eventStore.readAll(after, limit),
    positionOf: (event) => event.position,
    batchSize,
    handle: applyBatch,
    afterBatch: () => notify(),
    subscribe: (poke) => eventStore.onAppended(poke),
    // Documents and the position that produced them are committed together, whatever else writes the store.
    atomically: (batch) => readStore.atomically(batch),
    ...(deps.tracer ? { trace: { tracer: deps.tracer, name: 'projections batch' } } : {}),
  });
  const processor = createProcessor({
    name: 'projections',
    clock,
    retry: RETRY,
    work,
    position: work.position,
    log,
    metrics: deps.metrics,
    failureLine: ({ error, attempts, waitMs }) => {
      // The stack once per failing spell: enough to find a projection's bug without a trace per retry.
      const stack = attempts === 1 && error instanceof Error && error.stack ? `\n${error.stack}` : '';
      const message = error instanceof Error ? error.message : String(error);
      return `[projections] catching up from log position ${work.position() ?? 'start'} failed (attempt ${attempts}): ${message}; retrying in ${waitMs / 1000} s${stack}`;
    },
    // Said once a batch goes through, which may be before the log is caught up.
    recoveryLine: ({ attempts, since }) =>
      `[projections] projecting again after ${attempts + 1} attempts (failing since ${new Date(since).toISOString()})`,
  });
  /** Set while catching up fails (the processor retries on its own and on every append). */
  const failure = (): ProjectionFailure | null => {
    const failing = processor.status().failing;
    return failing && { error: failing.error, since: failing.since, attempts: failing.attempts };
  };

  registerLagMetrics(deps.metrics ?? noMetrics, eventStore, clock, work.position);

  return {
    async start() {
      const checkpoint = readStore.durable ? await readStore.getCheckpoint(PROJECTIONS_CHECKPOINT) : null;
      work.reset(checkpoint);
      if (readStore.durable) {
        const { changes, storedAny } = await versionChanges();
        if (changes.length > 0) {
          // Said only of a store that holds read models: a new one is simply built.
          if (checkpoint !== null || storedAny) {
            log(
              `[projections] the stored read models were written by other projection versions: ${changes.join(', ')}; rebuilding every read model from the log`,
            );
          }
          await dropReadModels();
        }
      }
      await processor.start();
      if (processor.status().failing) throw processor.failureCause();
    },
    waitFor(position, timeoutMs = 5000) {
      const checkpoint = work.position();
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
          const failing = failure();
          const why = failing ? `: catching up fails (${failing.error})` : '';
          reject(
            new ReadModelsBehindError(
              `read models did not reach log position ${position} within ${timeoutMs} ms${why}; what was written stays written: send the same request with the same Idempotency-Key again`,
            ),
          );
        }, timeoutMs);
        waiters.add(waiter);
        void processor.poke();
      });
    },
    rebuild(onProgress) {
      // Between passes of the processor (when started): a pass meanwhile would read from a dropped checkpoint.
      return processor.exclusive(async () => {
        const started = performance.now();
        await dropReadModels();
        const head = await eventStore.headPosition();
        let events = 0;
        for (;;) {
          const handled = await work.step();
          if (handled === 0) break;
          events += handled;
          onProgress?.({ events, position: work.position()!, head });
          if (stopped) break;
          await yieldToEventLoop();
        }
        return { events, ms: performance.now() - started };
      });
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
        changed.set(collection, new Set());
      }
      forCollection.add(listener);
      return () => {
        forCollection.delete(listener);
        if (forCollection.size > 0) return;
        documentListeners.delete(collection);
        changed.delete(collection);
      };
    },
    position: () => work.position(),
    health: () => ({ position: work.position()?.toString() ?? null, failing: failure() }),
    async stop() {
      stopped = true;
      await processor.stop();
    },
  };
}

/**
 * How far the read models are behind the log, read when scraped: in log positions (the head's
 * minus the one processed; on KurrentDB positions are not event counts) and in seconds (how long
 * ago the oldest event not yet processed happened; 0 when none waits).
 */
export function registerLagMetrics(
  metrics: Metrics,
  eventStore: EventStore,
  clock: Clock,
  processed: () => bigint | null,
): void {
  const position = (value: bigint | null) => Number(value ?? 0n);
  metrics.gauge({ name: 'weir_log_head_position', help: "The log's last position (0: empty)" }, async () => [
    { labels: {}, value: position(await eventStore.headPosition()) },
  ]);
  metrics.gauge(
    { name: 'weir_projection_position', help: 'The log position the read models have processed (0: none yet)' },
    () => [{ labels: {}, value: position(processed()) }],
  );
  metrics.gauge(
    {
      name: 'weir_projection_lag_positions',
      help: "Log positions between the log's head and what the read models processed",
    },
    async () => {
      const head = position(await eventStore.headPosition());
      return [{ labels: {}, value: Math.max(0, head - position(processed())) }];
    },
  );
  metrics.gauge(
    {
      name: 'weir_projection_lag_seconds',
      help: 'How long ago the oldest event the read models have not processed happened (0: none waits)',
    },
    async () => {
      const [waiting] = await eventStore.readAll(processed(), 1);
      const value = waiting ? secondsBetween(Date.parse(waiting.metadata.occurredAt), clock.now()) : 0;
      return [{ labels: {}, value }];
    },
  );
}
