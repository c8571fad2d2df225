import type { Clock } from './clock.ts';

const RETRY_AFTER_FAILURE_MS = 1000;

export type DueWorkLoop = {
  /** Look again for due work (new work arrived, or some finished). */
  poke(): void;
  stop(): Promise<void>;
};

/**
 * Runs work when it falls due on the injected clock: `runDue(now)` handles what is due, then
 * `nextDue()` says when to look again. Runs never overlap; a poke during a run causes one more.
 */
export function createDueWorkLoop(deps: {
  name: string;
  clock: Clock;
  runDue(now: number): Promise<void>;
  nextDue(): Promise<number | null>;
}): DueWorkLoop {
  const { clock } = deps;
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
    if (running) { again = true; return; }
    running = (async () => {
      try {
        do { again = false; await runOnce(); } while (again && !stopped);
      } catch (error) {
        console.error(`[${deps.name}] failed; retrying in ${RETRY_AFTER_FAILURE_MS} ms:`, error);
        cancelTimer?.();
        if (!stopped) cancelTimer = clock.schedule(clock.now() + RETRY_AFTER_FAILURE_MS, poke);
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
      while (running) await running;
    },
  };
}
