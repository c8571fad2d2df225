import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CommandHandler } from '../actors/command-handler.ts';
import type { Environment } from '../event-store/event-store.ts';
import { EXPIRY_TIMER } from '../projections/checkout-sessions.projection.ts';
import { COLLECTIONS, type TimerDoc } from '../projections/collections.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import { createDueWorkLoop } from '../shared/due-work-loop.ts';

const RESCAN_DEBOUNCE_MS = 200;

export type TimerRunner = { start(): void; stop(): Promise<void> };

/**
 * Durable timers. Pending timers are a read model of the log (a session's expiry is known from
 * its creation event), so they survive a restart; when one falls due on the clock its command is
 * sent, and the command's events remove the timer.
 */
export function createTimerRunner(deps: { clock: Clock; readStore: ReadStore; projections: ProjectionRunner; commands: CommandHandler }): TimerRunner {
  const { clock, readStore, projections, commands } = deps;
  const timers = readStore.collection<TimerDoc>(COLLECTIONS.timers);
  /** Timers whose command changed nothing at this fire time; looked at again only if rescheduled. */
  const spent = new Map<string, number>();
  let unsubscribe: (() => void) | null = null;

  async function fire(timer: TimerDoc): Promise<void> {
    const ctx = { organizationId: timer.organizationId, environment: timer.environment as Environment, actor: 'system:timer' };
    if (timer.kind === EXPIRY_TIMER) {
      const result = await commands.handle(checkoutSessionAggregate, timer.recordId, { type: 'ExpireCheckoutSession' }, ctx);
      if (result.position !== null) await projections.waitFor(result.position);
      else spent.set(timer._id, timer.fireAt);
    }
  }

  const loop = createDueWorkLoop({
    name: 'timers',
    clock,
    async runDue(now) {
      const due = await timers.find({ fireAt: { $lte: now } }, { sort: { fireAt: 1 }, limit: 500 });
      for (const timer of due) if (spent.get(timer._id) !== timer.fireAt) await fire(timer);
    },
    async nextDue() {
      const upcoming = await timers.find({ fireAt: { $gt: clock.now() } }, { sort: { fireAt: 1 }, limit: 1 });
      return upcoming[0]?.fireAt ?? null;
    },
  });

  return {
    start() {
      // Timers are set far ahead (an hour for a session), so a burst of new ones is looked at in
      // one pass instead of one scan per write.
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
