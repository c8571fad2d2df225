import type { ProjectionRunner } from '../projections/projection-runner.ts';
import type { ReadDocument, ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import { InvalidStateError, NotFoundError } from '../shared/errors.ts';
import { doublingDelay } from '../shared/backoff.ts';
import { yieldToEventLoop } from '../shared/yield-to-event-loop.ts';

const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 5 * 60_000;
const BATCH = 200;

export type WorkQueue = {
  start(): void;
  stop(): Promise<void>;
  /** Run one pass now (tests); a pass waiting for its retry after a failure stays put. */
  runOnce(): Promise<void>;
};

/** Something that failed unexpectedly `failures` times in a row: not tried again before `retryAt`. */
type Failure = { failures: number; retryAt: number };

/** One more failure at `now`: the wait doubles from a second, capped at five minutes. */
const failedAgain = (previous: Failure | null | undefined, now: number): Failure => {
  const failures = (previous?.failures ?? 0) + 1;
  return { failures, retryAt: now + doublingDelay(failures, FIRST_RETRY_MS, MAX_RETRY_MS) };
};

/**
 * A process manager whose pending work is a read model: each document of `collection` is one
 * thing to do (a session's end an invoice has not recorded, a renewal whose invoice does not exist
 * yet), and doing it appends events that remove the document. A restart therefore resumes where
 * it was, and a repeat is harmless as long as `work` is idempotent (the deciders answer nothing
 * for a repeat). `work` answers the log position of what it appended, or null when nothing changed
 * (the document is then left alone in this process). A refusal of the domain (InvalidStateError,
 * NotFoundError) is logged and never retried. Any other error of one document's work is tried
 * again on the clock, backing off (1 s doubling to 5 min, reset by a success), while the other
 * documents go on; when the work list itself cannot be read, the whole queue backs off the same way.
 */
export function createWorkQueue<TDoc extends ReadDocument>(deps: {
  name: string;
  collection: string;
  clock: Clock;
  readStore: ReadStore;
  projections: Pick<ProjectionRunner, 'waitFor' | 'onAdvanced'>;
  /** Order of the work (oldest first); `_id` breaks ties. */
  sortBy: keyof TDoc & string;
  work(doc: TDoc): Promise<bigint | null>;
  log?: (line: string) => void;
}): WorkQueue {
  const { projections, clock } = deps;
  const log = deps.log ?? ((line: string) => console.error(line));
  const pending = deps.readStore.collection<TDoc>(deps.collection);
  /** Work whose command changed nothing or was refused; not tried again in this process. */
  const spent = new Set<string>();
  /** Work whose last try failed unexpectedly, by document id. */
  const failing = new Map<string, Failure>();
  /** The work list could not be read: no pass before `retryAt`. */
  let queueFailure: Failure | null = null;
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  let cancelRetry: (() => void) | null = null;
  let unsubscribe: (() => void) | null = null;

  function logFailure(what: string, failure: Failure, error: unknown): void {
    const reason = error instanceof Error ? error.message : String(error);
    const wait = failure.retryAt - clock.now();
    log(
      `[${deps.name}] ${what} failed (attempt ${failure.failures}); retrying in ${wait} ms, at ${new Date(failure.retryAt).toISOString()}: ${reason}`,
    );
  }

  async function settle(doc: TDoc): Promise<void> {
    try {
      const position = await deps.work(doc);
      if (position !== null) await projections.waitFor(position);
      else spent.add(doc._id);
      failing.delete(doc._id);
    } catch (error) {
      if (error instanceof InvalidStateError || error instanceof NotFoundError) {
        log(`[${deps.name}] ${doc._id} cannot be done: ${error.message}`);
        failing.delete(doc._id);
        spent.add(doc._id);
        return;
      }
      // One document whose work fails (a bug, a store outage) must not hold up the others.
      const failure = failedAgain(failing.get(doc._id), clock.now());
      failing.set(doc._id, failure);
      logFailure(doc._id, failure, error);
    }
  }

  async function pass(): Promise<void> {
    const now = clock.now();
    const limit = BATCH + spent.size + failing.size;
    const due = await pending.find({}, { sort: { [deps.sortBy]: 1, _id: 1 }, limit });
    queueFailure = null;
    if (due.length < limit) {
      // The whole list: a failing document no longer on it was done elsewhere.
      const listed = new Set(due.map((doc) => doc._id));
      for (const id of failing.keys()) if (!listed.has(id)) failing.delete(id);
    }
    for (const doc of due) {
      if (stopped) return;
      if (spent.has(doc._id) || (failing.get(doc._id)?.retryAt ?? now) > now) continue;
      await settle(doc);
    }
  }

  /** Wake up on the clock for the earliest retry, if any. */
  function scheduleRetry(): void {
    cancelRetry?.();
    cancelRetry = null;
    if (stopped) return;
    let at = queueFailure?.retryAt ?? Infinity;
    for (const failure of failing.values()) at = Math.min(at, failure.retryAt);
    if (Number.isFinite(at))
      cancelRetry = clock.schedule(at, () => {
        cancelRetry = null;
        void poke();
      });
  }

  function poke(): Promise<void> {
    if (stopped || (queueFailure && queueFailure.retryAt > clock.now())) return Promise.resolve();
    if (running !== null) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        for (;;) {
          again = false;
          await pass();
          if (!again || stopped) break;
          await yieldToEventLoop();
        }
      } catch (error) {
        queueFailure = failedAgain(queueFailure, clock.now());
        logFailure('pass', queueFailure, error);
      } finally {
        running = null;
        scheduleRetry();
      }
    })();
    return running;
  }

  return {
    start() {
      stopped = false;
      unsubscribe = projections.onAdvanced((_position, touched) => {
        if (touched.has(deps.collection)) void poke();
      });
      void poke();
    },
    runOnce: () => poke(),
    async stop() {
      stopped = true;
      unsubscribe?.();
      cancelRetry?.();
      cancelRetry = null;
      while (running !== null) await running;
    },
  };
}

/** Several queues run as one: started, stopped and run together. */
export function combineWorkQueues(...queues: WorkQueue[]): WorkQueue {
  return {
    start() {
      for (const queue of queues) queue.start();
    },
    async runOnce() {
      for (const queue of queues) await queue.runOnce();
    },
    async stop() {
      await Promise.all(queues.map((queue) => queue.stop()));
    },
  };
}
