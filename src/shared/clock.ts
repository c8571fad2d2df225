/**
 * The clock port. Everything that depends on time (expiries, webhook retries, renewals) asks the
 * clock, so tests move time forward instead of sleeping.
 */
export type Clock = {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Run `fire` once the clock reaches `at` (ms since epoch). Returns a cancel function. */
  schedule(at: number, fire: () => void): () => void;
};

const MAX_TIMEOUT_MS = 2 ** 31 - 1;

export function createSystemClock(): Clock {
  return {
    now: () => Date.now(),
    schedule(at, fire) {
      let handle: NodeJS.Timeout;
      let cancelled = false;
      const arm = () => {
        const wait = at - Date.now();
        if (wait <= 0) {
          handle = setTimeout(() => {
            if (!cancelled) fire();
          }, 0);
          return;
        }
        handle = setTimeout(arm, Math.min(wait, MAX_TIMEOUT_MS));
      };
      arm();
      handle!.unref?.();
      return () => {
        cancelled = true;
        clearTimeout(handle);
      };
    },
  };
}

export type ManualClock = Clock & {
  /** Move time to `at` and fire every timer due by then, in time order. */
  advanceTo(at: number): void;
  advanceBy(ms: number): void;
  set(at: number): void;
};

/** A clock that only moves when told to; for tests. */
export function createManualClock(start: number = Date.parse('2026-01-01T00:00:00Z')): ManualClock {
  let current = start;
  let nextId = 0;
  const timers = new Map<number, { at: number; fire: () => void }>();
  const clock: ManualClock = {
    now: () => current,
    schedule(at, fire) {
      const id = nextId++;
      timers.set(id, { at, fire });
      if (at <= current) queueMicrotask(() => clock.advanceTo(current));
      return () => {
        timers.delete(id);
      };
    },
    advanceTo(at) {
      if (at > current) current = at;
      for (;;) {
        let dueId: number | undefined;
        let dueAt = Infinity;
        for (const [id, t] of timers)
          if (t.at <= current && t.at < dueAt) {
            dueAt = t.at;
            dueId = id;
          }
        if (dueId === undefined) return;
        const timer = timers.get(dueId)!;
        timers.delete(dueId);
        timer.fire();
      }
    },
    advanceBy(ms) {
      clock.advanceTo(current + ms);
    },
    set(at) {
      current = at;
      clock.advanceTo(at);
    },
  };
  return clock;
}
