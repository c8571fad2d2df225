import type { Tracer } from '@opentelemetry/api';
import type { Fence, Ownership } from '../ownership/ownership.ts';
import { doublingDelay } from '../shared/backoff.ts';
import { type Clock, createSystemClock } from '../shared/clock.ts';
import { noMetrics, type Metrics } from '../shared/metrics.ts';
import { inSpan, noTracer } from '../shared/tracing.ts';
import { yieldToEventLoop } from '../shared/yield-to-event-loop.ts';

/**
 * How a processor waits after a failed pass: `firstMs`, doubling per failure in a row up to `maxMs`
 * (see `doublingDelay`), each wait drawn within ±`jitter` of that (0.2: 80–120 %) so instances and
 * networks that fail together do not retry in step. A successful pass resets it, even one that
 * leaves more to do (a batch of a catch-up).
 */
export type RetryPolicy = { firstMs: number; maxMs: number; jitter?: number };

/** The wait after the `failures`-th failure in a row; `random` is injected (tests pin it). */
export function retryDelay(policy: RetryPolicy, failures: number, random: () => number = Math.random): number {
  const plain = doublingDelay(failures, policy.firstMs, policy.maxMs);
  const jitter = policy.jitter ?? 0;
  return jitter === 0 ? plain : Math.round(plain * (1 - jitter + 2 * jitter * random()));
}

/** What one pass found: more ready at once (passed again after a turn of the event loop), and when to look again. */
export type PassResult = {
  more?: boolean;
  /** When to pass again on the clock unless poked sooner; null or absent: only when poked. */
  nextAt?: number | null;
};

/**
 * The consumer's part: its source of work and its handler, as one `pass` over what is ready now
 * (a batch of the log after its checkpoint, or the items due at `now`). Passes never overlap.
 */
export type ProcessorWork = {
  /** `run.stopped` turns true when the processor stops (or its lease is lost): a long pass checks it between items. */
  pass(now: number, run: { readonly stopped: boolean }): Promise<PassResult>;
  /** Before the first pass of a run (of each ownership spell): load a checkpoint. */
  open?(): Promise<void>;
  /** Calls `poke` whenever new work may be there (an append, a read model written); answers its unsubscribe. */
  subscribe?(poke: () => void): () => void;
};

/** A spell of failed passes: `attempts` in a row since `since`, the next at `retryAt` (ms, on the processor's clock). */
export type ProcessorFailure = { error: string; since: number; attempts: number; retryAt: number };

export type ProcessorStatus = {
  name: string;
  /** Runs here now: started, and (when owned) holding its lease. */
  running: boolean;
  /** Where it keeps its position, when it follows the log (as a string); null otherwise or before the first. */
  position: string | null;
  failing: ProcessorFailure | null;
};

/** always: runs in every instance (its own read store); owned: only where the lease of `kind` is held. */
export type ProcessorOwnership = { mode: 'always' } | { mode: 'owned'; ownership: Ownership; kind: string };

export type Processor = {
  readonly name: string;
  /** Starts (when owned: takes part in its lease; runs once acquired) and resolves after the first pass. */
  start(): Promise<void>;
  /** New work may be there: pass (again, once the current pass is done). Resolves when that is done. */
  poke(): Promise<void>;
  /** Runs `task` between passes, none starting meanwhile (a rebuild); a poke meanwhile passes after it. */
  exclusive<T>(task: () => Promise<T>): Promise<T>;
  /** The error of the spell of failures going on, as thrown; undefined when none. */
  failureCause(): unknown;
  status(): ProcessorStatus;
  /** Stops and waits for the pass under way; no pass or retry after. */
  stop(): Promise<void>;
};

/** The failure being logged: the error, its place in the spell, and the wait before the next pass. */
export type FailureNotice = { error: unknown; attempts: number; waitMs: number; since: number };

const defaultFailureLine = (name: string, { error, attempts, waitMs }: FailureNotice) =>
  `[${name}] failed (${attempts} time(s) in a row); retrying in ${waitMs} ms: ${(error as Error)?.stack ?? String(error)}`;

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

type ProcessorFamilies = { failures: (name: string) => void; live: Set<() => { name: string; value: number }> };

/** One pair of families per metrics registry (or scope), however many processors report into it. */
const familiesByRegistry = new WeakMap<Metrics, ProcessorFamilies>();

function processorFamilies(metrics: Metrics): ProcessorFamilies {
  const known = familiesByRegistry.get(metrics);
  if (known) return known;
  const counter = metrics.counter<'processor'>({
    name: 'weir_processor_failures_total',
    help: 'Failed passes of background processors (each retried after its backoff), by processor',
    labelNames: ['processor'],
  });
  const live = new Set<() => { name: string; value: number }>();
  metrics.gauge<'processor'>(
    {
      name: 'weir_processor_failing',
      help: 'Failed passes in a row of each background processor running here (0: its last pass succeeded)',
      labelNames: ['processor'],
    },
    () => [...live].map((read) => read()).map(({ name, value }) => ({ labels: { processor: name }, value })),
  );
  const families = { failures: (processor: string) => counter.inc({ processor }), live };
  familiesByRegistry.set(metrics, families);
  return families;
}

/** Registers the processor families before any processor runs (Prometheus expects them present). */
export const registerProcessorMetrics = (metrics: Metrics): void => void processorFamilies(metrics);

/**
 * The one way Weir runs a background consumer (projections, timers, the sweeper, the webhook
 * dispatcher's due deliveries, the chain followers): a named loop over `work` with its retry policy and ownership.
 * Passes never overlap; a poke during one causes one more after it; a pass that says there is
 * `more` is followed by another after a turn of the event loop, so no consumer starves the process.
 * A pass that throws is retried on the injected clock after `retryDelay` (also on any poke
 * meanwhile, as new work may mean the trouble is over), and `status().failing` tells the spell.
 * Owned, it runs only while this instance holds the lease of its kind: `work` is built anew (with
 * the lease's fence) at each acquisition and stopped when the lease is lost.
 */
export function createProcessor(deps: {
  name: string;
  clock: Clock;
  retry: RetryPolicy;
  /** Draws the jitter (default Math.random). */
  random?: () => number;
  work: ProcessorWork | ((fence: Fence) => ProcessorWork);
  ownership?: ProcessorOwnership;
  /**
   * After a failed pass: 'run' (default) passes on any poke, as new work may mean the trouble is
   * over; 'wait' ignores pokes until the retry time, so a flood of new work does not hammer a store that is down.
   */
  pokesWhileFailing?: 'run' | 'wait';
  /** Its position, when it keeps one (shown in `status()`). */
  position?: () => bigint | null;
  log?: (line: string) => void;
  /** The line for a failed pass (default: the name, the count in a row, the wait and the stack). */
  failureLine?: (notice: FailureNotice) => string;
  /** The line when a pass succeeds after a spell of failures, caught up or not (default: none). */
  recoveryLine?: (spell: { attempts: number; since: number }) => string | null;
  metrics?: Metrics;
}): Processor {
  const { name, clock, retry } = deps;
  const random = deps.random ?? Math.random;
  const log = deps.log ?? ((line: string) => console.error(line));
  const failureLine = deps.failureLine ?? ((notice: FailureNotice) => defaultFailureLine(name, notice));
  const ownershipMode: ProcessorOwnership = deps.ownership ?? { mode: 'always' };
  const build = (fence: Fence): ProcessorWork => (typeof deps.work === 'function' ? deps.work(fence) : deps.work);
  const families = processorFamilies(deps.metrics ?? noMetrics);

  /** One run of the loop: from a start (or a lease acquired) to its stop. */
  type Run = {
    work: ProcessorWork;
    stopped: boolean;
    running: Promise<void> | null;
    again: boolean;
    exclusive: boolean;
    cancelTimer: (() => void) | null;
    unsubscribe: (() => void) | null;
    failure: (ProcessorFailure & { cause: unknown }) | null;
  };
  let current: Run | null = null;
  let stopped = false;
  let starting: Promise<void> | null = null;

  const schedule = (run: Run, at: number | null | undefined) => {
    run.cancelTimer?.();
    run.cancelTimer = null;
    if (at === null || at === undefined || run.stopped) return;
    run.cancelTimer = clock.schedule(at, () => {
      run.cancelTimer = null;
      void pokeRun(run);
    });
  };

  function failed(run: Run, error: unknown): void {
    const attempts = (run.failure?.attempts ?? 0) + 1;
    const since = run.failure?.since ?? clock.now();
    const waitMs = retryDelay(retry, attempts, random);
    const retryAt = clock.now() + waitMs;
    run.failure = { error: messageOf(error), since, attempts, retryAt, cause: error };
    families.failures(name);
    log(failureLine({ error, attempts, waitMs, since }));
    schedule(run, retryAt);
  }

  function recovered(run: Run): void {
    if (!run.failure) return;
    const line = deps.recoveryLine?.({ attempts: run.failure.attempts, since: run.failure.since });
    if (line) log(line);
    run.failure = null;
  }

  function pokeRun(run: Run): Promise<void> {
    if (run.stopped) return Promise.resolve();
    if (deps.pokesWhileFailing === 'wait' && run.failure && run.failure.retryAt > clock.now()) return Promise.resolve();
    if (run.running !== null) {
      run.again = true;
      return run.running;
    }
    run.running = (async () => {
      try {
        let next: PassResult;
        for (;;) {
          run.again = false;
          next = await run.work.pass(clock.now(), run);
          if (run.stopped) return;
          // Each pass that succeeds ends the spell, caught up or not: a long catch-up whose batches
          // fail now and then must not double its wait across the batches that went through.
          recovered(run);
          if (!next.more && !run.again) break;
          await yieldToEventLoop();
          if (run.stopped) return;
        }
        schedule(run, next.nextAt);
      } catch (error) {
        failed(run, error);
      } finally {
        run.running = null;
      }
    })();
    return run.running;
  }

  async function begin(fence: Fence): Promise<Run> {
    const run: Run = {
      work: build(fence),
      stopped: false,
      running: null,
      again: false,
      exclusive: false,
      cancelTimer: null,
      unsubscribe: null,
      failure: null,
    };
    current = run;
    // Without a checkpoint to load the first pass starts at once, within `start()` (no extra turn).
    if (run.work.open) {
      await run.work.open();
      if (run.stopped) return run;
    }
    run.unsubscribe = run.work.subscribe?.(() => void pokeRun(run)) ?? null;
    await pokeRun(run);
    return run;
  }

  async function end(run: Run): Promise<void> {
    run.stopped = true;
    run.cancelTimer?.();
    run.cancelTimer = null;
    run.unsubscribe?.();
    run.unsubscribe = null;
    while (run.running !== null) await run.running;
    if (current === run) current = null;
  }

  const reading = () => ({ name, value: current?.failure?.attempts ?? 0 });

  return {
    name,
    start() {
      if (stopped) return Promise.resolve();
      families.live.add(reading);
      starting ??= (async () => {
        if (ownershipMode.mode === 'always') {
          await begin((write) => write());
          return;
        }
        await ownershipMode.ownership.own(ownershipMode.kind, async (fence) => {
          const run = await begin(fence);
          return { stop: () => end(run) };
        });
      })();
      return starting;
    },
    poke: () => (current ? pokeRun(current) : Promise.resolve()),
    async exclusive(task) {
      const run = current;
      if (!run) return task();
      while (run.running !== null) await run.running;
      let done!: () => void;
      run.running = new Promise<void>((resolve) => {
        done = resolve;
      });
      try {
        return await task();
      } finally {
        run.running = null;
        done();
        if (run.again) void pokeRun(run);
      }
    },
    failureCause: () => current?.failure?.cause,
    status() {
      const failure = current?.failure;
      const position = deps.position?.() ?? null;
      return {
        name,
        running: current !== null && !current.stopped,
        position: position === null ? null : position.toString(),
        failing: failure
          ? { error: failure.error, since: failure.since, attempts: failure.attempts, retryAt: failure.retryAt }
          : null,
      };
    },
    async stop() {
      stopped = true;
      families.live.delete(reading);
      await starting?.catch(() => {});
      // Owned: the lease is the ownership module's (released when Weir stops); only this run ends here.
      if (current) await end(current);
    },
  };
}

/** Where a log consumer keeps the position it has processed. */
export type Checkpoint = { load(): Promise<bigint | null>; save(position: bigint): Promise<void> };

/** A position kept in memory only: a restart begins from the log's start. */
export const memoryCheckpoint = (): Checkpoint => ({ load: async () => null, save: async () => {} });

export type LogWork = ProcessorWork & {
  /** The last position handled (and saved); null before any. */
  position(): bigint | null;
  /** Start over from `position` (null: the log's start), e.g. after the read models were dropped. */
  reset(position: bigint | null): void;
  /** Reads and handles the next batch: how many items it held (0: caught up). */
  step(): Promise<number>;
};

/**
 * A log consumer's work: reads batches after its checkpoint, hands each to `handle`, then saves
 * the batch's last position; a pass handles one batch and says `more` while batches come, so the
 * processor yields to the event loop between them. `afterBatch` runs once the position is saved.
 */
export function logWork<T>(deps: {
  checkpoint: Checkpoint;
  read(after: bigint | null, limit: number): Promise<readonly T[]>;
  positionOf(item: T): bigint;
  batchSize: number;
  handle(batch: readonly T[]): Promise<void>;
  afterBatch?(position: bigint, batch: readonly T[]): void;
  subscribe?(poke: () => void): () => void;
  /** Load the checkpoint at `open` (default true; false when the owner loads it itself and calls `reset`). */
  loadOnOpen?: boolean;
  /** Runs a batch's handling and its checkpoint save as one unit (a read store's `atomically`). */
  atomically?: <R>(work: () => Promise<R>) => Promise<R>;
  /** Each batch handled is a span of this name (with its size and log positions). */
  trace?: { tracer: Tracer; name: string };
}): LogWork {
  let position: bigint | null = null;
  const atomically = deps.atomically ?? ((work) => work());
  const { tracer, name } = deps.trace ?? { tracer: noTracer, name: 'log batch' };
  const step = async (): Promise<number> => {
    const batch = await deps.read(position, deps.batchSize);
    if (batch.length === 0) return 0;
    const last = deps.positionOf(batch[batch.length - 1]!);
    const attributes = {
      'weir.events': batch.length,
      'weir.log_position.first': deps.positionOf(batch[0]!).toString(),
      'weir.log_position.last': last.toString(),
    };
    await inSpan(tracer, name, attributes, () =>
      atomically(async () => {
        await deps.handle(batch);
        await deps.checkpoint.save(last);
      }),
    );
    // Only once saved (and the unit committed): a failed save leaves the position at the stored
    // checkpoint, so the retry handles this batch again instead of skipping what the failure undid.
    position = last;
    deps.afterBatch?.(last, batch);
    return batch.length;
  };
  return {
    async open() {
      if (deps.loadOnOpen !== false) position = await deps.checkpoint.load();
    },
    ...(deps.subscribe ? { subscribe: deps.subscribe } : {}),
    pass: async () => ({ more: (await step()) > 0 }),
    position: () => position,
    reset(at) {
      position = at;
    },
    step,
  };
}

/**
 * Due work: `runDue(now)` handles what is due, then `nextDue(now)` says when to look again (null: only
 * when poked). Both get the pass's `now`: what fell due while the pass ran is after it, so is looked at next.
 */
export const dueWork = (deps: {
  runDue(now: number): Promise<void>;
  nextDue(now: number): Promise<number | null>;
  subscribe?(poke: () => void): () => void;
}): ProcessorWork => ({
  async pass(now) {
    await deps.runDue(now);
    return { nextAt: await deps.nextDue(now) };
  },
  ...(deps.subscribe ? { subscribe: deps.subscribe } : {}),
});

/**
 * A processor that polls on real time, as a chain follower does (a node's blocks come on the wall
 * clock): `step` each pass, the next `intervalMs()` after it ended or at once when poked; a failing
 * step is retried after `backoff` (jittered). While `idle()` (it is stopping) it waits for a poke instead.
 */
export function createPollingProcessor(deps: {
  name: string;
  step: () => Promise<void>;
  idle?: () => boolean;
  intervalMs: () => number;
  backoff: { firstMs: number; maxMs: number };
  clock?: Clock;
  random?: () => number;
  log?: (line: string) => void;
  failureLine?: (notice: FailureNotice) => string;
  metrics?: Metrics;
}): Processor {
  const clock = deps.clock ?? createSystemClock();
  return createProcessor({
    name: deps.name,
    clock,
    retry: { ...deps.backoff, jitter: 0.2 },
    ...(deps.random ? { random: deps.random } : {}),
    ...(deps.log ? { log: deps.log } : {}),
    ...(deps.failureLine ? { failureLine: deps.failureLine } : {}),
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
    work: {
      pass: async () => {
        await deps.step();
        return deps.idle?.() ? {} : { nextAt: clock.now() + deps.intervalMs() };
      },
    },
  });
}
