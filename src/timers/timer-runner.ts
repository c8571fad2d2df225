import type { CommandContext } from '../actors/command-handler.ts';
import type { Environment } from '../event-store/event-store.ts';
import { COLLECTIONS, type TimerDoc } from '../projections/collections.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import { createDueWorkLoop } from '../shared/due-work-loop.ts';
import { doublingDelay } from '../shared/backoff.ts';

const RESCAN_DEBOUNCE_MS = 200;
const BATCH = 500;
const FIRST_RETRY_MS = 60_000;
const MAX_RETRY_MS = 60 * 60_000;

/**
 * What a timer of one kind does when it falls due: send its command and answer the log position
 * of the events it appended (null when the command changed nothing).
 */
export type TimerHandler = (timer: TimerDoc, ctx: CommandContext) => Promise<{ position: bigint | null }>;

export type TimerRunner = { start(): void; stop(): Promise<void> };

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
  projections: Pick<ProjectionRunner, 'waitFor' | 'onAdvanced'>;
  handlers: Record<string, TimerHandler>;
  log?: (line: string) => void;
}): TimerRunner {
  const { clock, readStore, projections, handlers } = deps;
  const log = deps.log ?? ((line: string) => console.error(line));
  const timers = readStore.collection<TimerDoc>(COLLECTIONS.timers);
  /** Timers whose command changed nothing at this scheduling; looked at again only if rescheduled. */
  const spent = new Map<string, string>();
  /** Timers whose handler failed: tried again at `retryAt` on the clock, backing off, while the others run. */
  const failing = new Map<string, { scheduling: string; failures: number; retryAt: number }>();
  let unsubscribe: (() => void) | null = null;

  async function fire(timer: TimerDoc): Promise<void> {
    const handler = handlers[timer.kind];
    if (!handler) {
      log(`[timers] no handler for timer kind ${timer.kind} (${timer._id}); left pending`);
      spent.set(timer._id, scheduling(timer));
      return;
    }
    const ctx = { organizationId: timer.organizationId, environment: timer.environment as Environment, actor: 'system:timer', causationId: timer._id };
    const result = await handler(timer, ctx);
    if (result.position !== null) await projections.waitFor(result.position);
    else spent.set(timer._id, scheduling(timer));
  }

  const loop = createDueWorkLoop({
    name: 'timers',
    clock,
    log,
    async runDue(now) {
      const due = await timers.find({ fireAt: { $lte: now } }, { sort: { fireAt: 1 }, limit: BATCH + spent.size + failing.size });
      for (const timer of due) {
        if (spent.get(timer._id) === scheduling(timer)) continue;
        const failed = failing.get(timer._id);
        if (failed && failed.scheduling === scheduling(timer) && failed.retryAt > now) continue;
        try {
          await fire(timer);
          failing.delete(timer._id);
        } catch (error) {
          // One timer whose command fails (a bug, a store outage) must not hold up the others.
          const failures = failed && failed.scheduling === scheduling(timer) ? failed.failures + 1 : 1;
          const retryAt = clock.now() + doublingDelay(failures, FIRST_RETRY_MS, MAX_RETRY_MS);
          failing.set(timer._id, { scheduling: scheduling(timer), failures, retryAt });
          log(`[timers] ${timer.kind} ${timer._id} failed (attempt ${failures}); retrying at ${new Date(retryAt).toISOString()}: ${(error as Error).message}`);
        }
      }
    },
    async nextDue() {
      const upcoming = await timers.find({ fireAt: { $gt: clock.now() } }, { sort: { fireAt: 1 }, limit: 1 });
      const retries = [...failing.values()].map((f) => f.retryAt);
      const next = Math.min(upcoming[0]?.fireAt ?? Infinity, ...retries);
      return Number.isFinite(next) ? next : null;
    },
  });

  return {
    start() {
      // Timers are mostly set far ahead (an hour for a session, a month for a renewal), so a
      // burst of new ones is looked at in one pass instead of one scan per write.
      let pending: NodeJS.Timeout | null = null;
      const off = projections.onAdvanced((_position, touched) => {
        if (!touched.has(COLLECTIONS.timers) || pending) return;
        pending = setTimeout(() => { pending = null; loop.poke(); }, RESCAN_DEBOUNCE_MS);
        pending.unref();
      });
      unsubscribe = () => { off(); if (pending) clearTimeout(pending); };
      loop.poke();
    },
    async stop() {
      unsubscribe?.();
      await loop.stop();
    },
  };
}
