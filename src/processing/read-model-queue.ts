import type { ProjectionRunner } from '../projections/projection-runner.ts';
import type { ReadDocument, ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import { InvalidStateError, NotFoundError } from '../shared/errors.ts';
import { createProcessor, retryDelay, type RetryPolicy } from './processor.ts';

/** One document's work, and the whole pass, back off 1 s doubling to 5 min (a success resets it). */
const RETRY: RetryPolicy = { firstMs: 1000, maxMs: 5 * 60_000 };
const BATCH = 200;

export type ReadModelQueue = {
  start(): void;
  stop(): Promise<void>;
  /** Run one pass now (tests; it starts the queue if need be): joins the pass under way and runs one more after it. */
  runOnce(): Promise<void>;
};

/** Something that failed unexpectedly `failures` times in a row: not tried again before `retryAt`. */
type Failure = { failures: number; retryAt: number };

/**
 * A process manager whose pending work is a read model, run on the processor: each document of
 * `collection` is one thing to do (a mail to send), and doing it appends events that remove the
 * document, so a restart resumes where it was and a repeat is harmless when `work` is idempotent.
 * `work` answers the log position of what it appended, or null when nothing changed (the document
 * is then left alone in this process). A refusal of the domain (InvalidStateError, NotFoundError)
 * is logged and never retried; any other error of one document's work is tried again on the
 * clock, backing off, while the other documents go on; when the list itself cannot be read, the
 * processor retries the pass the same way.
 */
export function createReadModelQueue<TDoc extends ReadDocument>(deps: {
  name: string;
  collection: string;
  clock: Clock;
  readStore: ReadStore;
  projections: Pick<ProjectionRunner, 'waitFor' | 'onAdvanced'>;
  /** Order of the work (oldest first); `_id` breaks ties. */
  sortBy: keyof TDoc & string;
  work(doc: TDoc): Promise<bigint | null>;
  log?: (line: string) => void;
}): ReadModelQueue {
  const { projections, clock } = deps;
  const log = deps.log ?? ((line: string) => console.error(line));
  const pending = deps.readStore.collection<TDoc>(deps.collection);
  /** Work whose command changed nothing or was refused; not tried again in this process. */
  const spent = new Set<string>();
  /** Work whose last try failed unexpectedly, by document id. */
  const failing = new Map<string, Failure>();

  const failureLine = (what: string, failures: number, retryAt: number, error: unknown) => {
    const reason = error instanceof Error ? error.message : String(error);
    return `[${deps.name}] ${what} failed (attempt ${failures}); retrying in ${retryAt - clock.now()} ms, at ${new Date(retryAt).toISOString()}: ${reason}`;
  };

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
      const failures = (failing.get(doc._id)?.failures ?? 0) + 1;
      const retryAt = clock.now() + retryDelay(RETRY, failures);
      failing.set(doc._id, { failures, retryAt });
      log(failureLine(doc._id, failures, retryAt, error));
    }
  }

  const processor = createProcessor({
    name: deps.name,
    clock,
    retry: RETRY,
    pokesWhileFailing: 'wait',
    log,
    failureLine: ({ error, attempts, waitMs }) => failureLine('pass', attempts, clock.now() + waitMs, error),
    work: {
      async pass(now, run) {
        const limit = BATCH + spent.size + failing.size;
        const due = await pending.find({}, { sort: { [deps.sortBy]: 1, _id: 1 }, limit });
        if (due.length < limit) {
          // The whole list: a failing document no longer on it was done elsewhere.
          const listed = new Set(due.map((doc) => doc._id));
          for (const id of failing.keys()) if (!listed.has(id)) failing.delete(id);
        }
        for (const doc of due) {
          if (run.stopped) break;
          if (spent.has(doc._id) || (failing.get(doc._id)?.retryAt ?? now) > now) continue;
          await settle(doc);
        }
        // Wake up on the clock for the earliest retry, if any.
        let at = Number.POSITIVE_INFINITY;
        for (const failure of failing.values()) at = Math.min(at, failure.retryAt);
        return { nextAt: Number.isFinite(at) ? at : null };
      },
      subscribe: (poke) =>
        projections.onAdvanced((_position, touched) => {
          if (touched.has(deps.collection)) poke();
        }),
    },
  });

  let started = false;
  return {
    start() {
      started = true;
      void processor.start();
    },
    runOnce() {
      if (started) return processor.poke();
      started = true;
      return processor.start();
    },
    stop: () => processor.stop(),
  };
}
