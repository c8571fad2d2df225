import { doublingDelay } from './backoff.ts';
import type { Clock } from './clock.ts';
import { yieldToEventLoop } from './yield-to-event-loop.ts';

/** After a failed run the loop looks again in a second, doubling per failure in a row up to five minutes. */
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 5 * 60_000;

export type DueWorkLoop = {
  /** Look again for due work (new work arrived, or some finished). */
  poke(): void;
  stop(): Promise<void>;
};

/**
 * Runs work when it falls due on the injected clock: `runDue(now)` handles what is due, then
 * `nextDue()` says when to look again. Runs never overlap; a poke during a run causes one more,
 * after a turn of the event loop, so a handler that keeps poking cannot starve the process.
 * A run that throws is retried on the clock, the wait doubling per failure in a row (see
 * `doublingDelay`), so a store outage is neither hammered nor logged every second.
 */
export function createDueWorkLoop(deps: {
  name: string;
  clock: Clock;
  runDue(now: number): Promise<void>;
  nextDue(): Promise<number | null>;
  log?: (line: string) => void;
}): DueWorkLoop {
  const { clock } = deps;
  const log = deps.log ?? ((line: string) => console.error(line));
  let failures = 0;
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  let cancelTimer: (() => void) | null = null;

  async function runOnce(): Promise<void> {
    await deps.runDue(clock.now());
    const next = await deps.nextDue();
    cancelTimer?.();
    cancelTimer = null;
    if (next !== null && !stopped) cancelTimer = clock.schedule(next, poke);
  }

  function poke(): void {
    if (stopped) return;
    if (running !== null) {
      again = true;
      return;
    }
    running = (async () => {
      try {
        for (;;) {
          again = false;
          await runOnce();
          if (!again || stopped) break;
          await yieldToEventLoop();
        }
        failures = 0;
      } catch (error) {
        failures += 1;
        const waitMs = doublingDelay(failures, FIRST_RETRY_MS, MAX_RETRY_MS);
        log(
          `[${deps.name}] failed (${failures} time(s) in a row); retrying in ${waitMs} ms: ${(error as Error).stack ?? String(error)}`,
        );
        cancelTimer?.();
        if (!stopped) cancelTimer = clock.schedule(clock.now() + waitMs, poke);
      } finally {
        running = null;
      }
    })();
  }

  return {
    poke,
    async stop() {
      stopped = true;
      cancelTimer?.();
      while (running !== null) await running;
    },
  };
}
