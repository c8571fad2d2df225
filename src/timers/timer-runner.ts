import type { CommandContext } from '../actors/command-handler.ts';
import type { Environment } from '../event-store/event-store.ts';
import { COLLECTIONS, type TimerDoc } from '../projections/collections.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import { createProcessor, dueWork } from '../processing/processor.ts';
import { doublingDelay } from '../shared/backoff.ts';
import type { Log } from '../shared/logger.ts';
import { noMetrics, secondsBetween, type Metrics } from '../shared/metrics.ts';

const RESCAN_DEBOUNCE_MS = 200;
const BATCH = 500;
const FIRST_RETRY_MS = 60_000;
const MAX_RETRY_MS = 60 * 60_000;
/**
 * How soon a timer whose handler answered `notYet` is tried again on the clock, at the latest:
 * what it waits for calls `retryWaiting()` when it changes.
 */
export const NOT_YET_RETRY_MS = 60_000;
/**
 * How often a timer's command may record events while leaving the timer due at the same scheduling:
 * past that it is a handler bug that would fire on every change, so it backs off as a failure.
 */
export const MAX_RECORDED_AT_ONE_SCHEDULING = 5;

/**
 * What a timer of one kind does when it falls due: send its command and answer the log position
 * of the events it appended (null when the command changed nothing), or `notYet` when it cannot
 * act yet (e.g. a chain follower has not read up to the timer's time): no error, so nothing is
 * logged; the timer is tried again on `retryWaiting()`, or after `NOT_YET_RETRY_MS`.
 */
export type TimerHandler = (
  timer: TimerDoc,
  ctx: CommandContext,
) => Promise<{ position: bigint | null } | { notYet: true }>;

/** A timer whose command keeps failing: `failures` in a row since `since` (ms, on the runner's clock). */
export type FailingTimer = { id: string; kind: string; failures: number; since: number };

export type TimerRunner = {
  start(): void;
  /** The timers whose command failed at their last attempt (not those waiting on `notYet`), oldest failure first. */
  status(): { failing: FailingTimer[] };
  /** What timers answered `notYet` to may have changed (a follower read further): try them again now. */
  retryWaiting(): void;
  stop(): Promise<void>;
};

/** How late a timer acted after its time: seconds (a session's expiry waits for the chain followers, see chain-read-gate). */
const LATENESS_BUCKETS = [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 6 * 3600, 24 * 3600] as const;

/** Identity of one scheduling of a timer: a timer rescheduled (new fire time or version) is looked at again. */
const scheduling = (timer: TimerDoc): string => `${timer.fireAt}:${timer.version ?? 0}`;

/**
 * Durable timers. Pending timers are a read model of the log (a session's expiry is known from
 * its creation event, a subscription's renewal from its period end), so they survive a restart;
 * when one falls due on the clock the handler of its kind sends its command, and the command's
 * events remove or move the timer. A timer of a kind nobody handles is logged once and left.
 */
export function createTimerRunner(deps: {
  clock: Clock;
  readStore: ReadStore;
  projections: Pick<ProjectionRunner, 'waitFor' | 'onDocumentsChanged'>;
  handlers: Record<string, TimerHandler>;
  log?: Log;
  metrics?: Metrics;
}): TimerRunner {
  const { clock, readStore, projections, handlers } = deps;
  const log: Log = deps.log ?? ((line: string) => console.error(line));
  const metrics = deps.metrics ?? noMetrics;
  const fired = metrics.counter({
    name: 'weir_timers_fired_total',
    help: 'Timers fired, by kind and outcome: recorded (its command changed the record), no_change, not_yet (put off: what it waits for has not happened), failed',
    labelNames: ['kind', 'outcome'],
  });
  const lateness = metrics.histogram({
    name: 'weir_timer_lateness_seconds',
    help: 'How long after its time a timer acted (recorded or no_change), by kind',
    labelNames: ['kind'],
    buckets: LATENESS_BUCKETS,
  });
  metrics.gauge(
    {
      name: 'weir_timers_due',
      help: 'Timers whose time has come that have not acted yet (being fired, put off, or failing), as of the last look',
    },
    () => [{ labels: {}, value: dueNotActed }],
  );
  const timers = readStore.collection<TimerDoc>(COLLECTIONS.timers);
  /** Timers whose command changed nothing at this scheduling; looked at again only if rescheduled. */
  const spent = new Map<string, string>();
  /** How many times each timer's command recorded events at its current scheduling. */
  const recorded = new Map<string, { scheduling: string; times: number }>();
  /**
   * Timers whose handler failed (`failures` in a row, backing off) or answered `notYet` (no
   * failure): tried again at `retryAt` on the clock, while the others run.
   */
  const failing = new Map<
    string,
    { scheduling: string; kind: string; failures: number; retryAt: number; since: number | null }
  >();
  let unsubscribe: (() => void) | null = null;
  /** Counts `retryWaiting()` calls: one during a pass also covers a timer that pass is putting off. */
  let retryCalls = 0;
  let passRunning = false;
  /** When the loop looks again on its own (the earliest timer or retry it saw); a timer set sooner pokes it. */
  let lookAgainAt = Number.NEGATIVE_INFINITY;
  /** While the next look is being found, its find may have missed a timer set meanwhile: each change pokes. */
  let findingNext = false;
  /**
   * The `now` of the pass under way (till its next look is being found): a timer set meanwhile due by
   * then may come after the pass's read, and the next look is found after it, so such a change pokes.
   */
  let passNow: number | null = null;
  /** Timers the last pass found due (but spent ones) that have not acted since. */
  let dueNotActed = 0;
  /** The last pass's read was full and it fired some: more may be due beyond it. */
  let moreDue = false;

  /** Fires `timer`; false when its handler answered `notYet`. */
  async function fire(timer: TimerDoc): Promise<boolean> {
    const handler = handlers[timer.kind];
    if (!handler) {
      log(`[timers] no handler for timer kind ${timer.kind} (${timer._id}); left pending`);
      spent.set(timer._id, scheduling(timer));
      return true;
    }
    const before = recorded.get(timer._id);
    const times = before?.scheduling === scheduling(timer) ? before.times : 0;
    if (times >= MAX_RECORDED_AT_ONE_SCHEDULING)
      throw new Error(`its command recorded events ${times} times without moving the timer`);
    const ctx = {
      organizationId: timer.organizationId,
      environment: timer.environment as Environment,
      actor: 'system:timer',
      causationId: timer._id,
    };
    const result = await handler(timer, ctx);
    const outcome = 'notYet' in result ? 'not_yet' : result.position === null ? 'no_change' : 'recorded';
    fired.inc({ kind: timer.kind, outcome });
    if (outcome !== 'not_yet') lateness.observe({ kind: timer.kind }, secondsBetween(timer.fireAt, clock.now()));
    // A timer put off (`notYet`) is tried again on every chain read: only at debug.
    log(`[timers] ${timer.kind} ${timer._id} fired: ${outcome}`, {
      level: outcome === 'not_yet' ? 'debug' : 'info',
      event: 'timer.fired',
      kind: timer.kind,
      timerId: timer._id,
      organizationId: timer.organizationId,
      environment: timer.environment,
      fireAt: new Date(timer.fireAt).toISOString(),
      outcome,
    });
    if ('notYet' in result) return false;
    if (result.position !== null) {
      recorded.set(timer._id, { scheduling: scheduling(timer), times: times + 1 });
      await projections.waitFor(result.position);
    } else spent.set(timer._id, scheduling(timer));
    return true;
  }

  // The pass looks a second after a failure of the pass itself (the timers read model), doubling to five minutes.
  const loop = createProcessor({
    name: 'timers',
    clock,
    log,
    metrics,
    retry: { firstMs: 1_000, maxMs: 5 * 60_000 },
    work: dueWork({
      async runDue(now) {
        passRunning = true;
        passNow = now;
        try {
          await runPass(now);
        } finally {
          passRunning = false;
        }
      },
      async nextDue(now) {
        // More due than the pass read: the rest are read at once, not when a later timer falls due.
        if (moreDue) {
          lookAgainAt = now;
          passNow = null;
          return now;
        }
        findingNext = true;
        passNow = null;
        // After the pass's `now`, not the clock's: a timer that fell due while the pass fired others
        // (a long pass, a clock that jumped) is the next look, at once, instead of waiting for a poke.
        const upcoming = await timers.find({ fireAt: { $gt: now } }, { sort: { fireAt: 1 }, limit: 1 });
        const retries = [...failing.values()].map((f) => f.retryAt);
        const next = Math.min(upcoming[0]?.fireAt ?? Infinity, ...retries);
        lookAgainAt = next;
        findingNext = false;
        return Number.isFinite(next) ? next : null;
      },
    }),
  });

  /**
   * Fires the due timers, but not those spent at this scheduling or waiting for their retry; tells
   * `moreDue` when the read was full and some of it was fired, so what lay beyond it is read at once.
   */
  async function runPass(now: number): Promise<void> {
    moreDue = false;
    // The timers skipped below are read on top of a batch, so a full read tries at least a batch.
    const limit = BATCH + spent.size + failing.size;
    const due = await timers.find({ fireAt: { $lte: now } }, { sort: { fireAt: 1 }, limit });
    // A read not full holds every due timer: one remembered that is not among them is gone (its
    // record completed meanwhile) or moved. A retry time left behind in the past would have the loop
    // look again at once, over and over; a spent entry would only grow the map and the read's limit.
    if (due.length < limit) {
      const dueIds = new Set(due.map((timer) => timer._id));
      for (const id of failing.keys()) if (!dueIds.has(id)) failing.delete(id);
      for (const id of spent.keys()) if (!dueIds.has(id)) spent.delete(id);
      for (const id of recorded.keys()) if (!dueIds.has(id)) recorded.delete(id);
    }
    dueNotActed = due.filter((timer) => spent.get(timer._id) !== scheduling(timer)).length;
    let attempted = 0;
    for (const timer of due) {
      if (spent.get(timer._id) === scheduling(timer)) continue;
      const failed = failing.get(timer._id);
      if (failed && failed.scheduling === scheduling(timer) && failed.retryAt > now) continue;
      attempted += 1;
      const retriesBefore = retryCalls;
      try {
        // Retried from this pass's `now`, so the timers put off together are looked at again together;
        // at once (in the pass `retryWaiting` asked for) if what it waits for changed meanwhile.
        if (await fire(timer)) {
          failing.delete(timer._id);
          dueNotActed -= 1;
        } else
          failing.set(timer._id, {
            scheduling: scheduling(timer),
            kind: timer.kind,
            failures: 0,
            retryAt: retryCalls === retriesBefore ? now + NOT_YET_RETRY_MS : now,
            since: null,
          });
      } catch (error) {
        // One timer whose command fails (a bug, a store outage) must not hold up the others.
        fired.inc({ kind: timer.kind, outcome: 'failed' });
        const again = failed && failed.scheduling === scheduling(timer) && failed.failures > 0 ? failed : null;
        const failures = again ? again.failures + 1 : 1;
        const retryAt = clock.now() + doublingDelay(failures, FIRST_RETRY_MS, MAX_RETRY_MS);
        failing.set(timer._id, {
          scheduling: scheduling(timer),
          kind: timer.kind,
          failures,
          retryAt,
          since: again?.since ?? clock.now(),
        });
        log(
          `[timers] ${timer.kind} ${timer._id} failed (attempt ${failures}); retrying at ${new Date(retryAt).toISOString()}: ${(error as Error).message}`,
        );
      }
    }
    // A deleted timer never pokes, so nothing else would read past a full batch. Only after firing
    // some: a full read of skipped timers must not have the loop look again at once, over and over.
    moreDue = due.length === limit && attempted > 0;
  }

  return {
    start() {
      // Timers are mostly set far ahead (an hour for a session, a month for a renewal), so a
      // burst of new ones is looked at in one pass instead of one scan per write.
      // Only a timer set sooner than the loop's next look needs one: every pass scans the timers, and
      // a session's expiry an hour ahead rescanning all of them made each create cost more as
      // sessions piled up. The changed timers are read by id, a cost that does not grow with them.
      let pending: NodeJS.Timeout | null = null;
      const off = projections.onDocumentsChanged(COLLECTIONS.timers, (ids) => {
        if (pending) return;
        const check = async () => {
          for (const id of ids) {
            const timer = await timers.get(id);
            if (timer && (timer.fireAt < lookAgainAt || (passNow !== null && timer.fireAt <= passNow))) return true;
          }
          return findingNext;
        };
        void check().then(
          (sooner) => {
            if (!sooner || pending) return;
            pending = setTimeout(() => {
              pending = null;
              void loop.poke();
            }, RESCAN_DEBOUNCE_MS);
            pending.unref();
          },
          () => void loop.poke(),
        );
      });
      unsubscribe = () => {
        off();
        if (pending) clearTimeout(pending);
      };
      void loop.start();
    },
    status() {
      const list: FailingTimer[] = [];
      // `since` is set exactly for the timers whose command failed (not for those answering notYet).
      for (const [id, entry] of failing)
        if (entry.since !== null) list.push({ id, kind: entry.kind, failures: entry.failures, since: entry.since });
      return { failing: list.sort((a, b) => a.since - b.since) };
    },
    retryWaiting() {
      retryCalls += 1;
      let waiting = passRunning;
      for (const entry of failing.values()) {
        if (entry.failures > 0) continue;
        entry.retryAt = clock.now();
        waiting = true;
      }
      if (waiting) void loop.poke();
    },
    async stop() {
      unsubscribe?.();
      await loop.stop();
    },
  };
}
