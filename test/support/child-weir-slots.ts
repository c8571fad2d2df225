/** A slot held: give it back once (later calls do nothing). */
export type Release = () => void;

export type Slots = {
  /** Resolves with a slot once one is free; those asked for earlier are served first. */
  acquire(): Promise<Release>;
  /** `work` run while holding a slot, given back however `work` ends. */
  run<T>(work: () => Promise<T>): Promise<T>;
  held(): number;
  waiting(): number;
};

/** A counting semaphore: at most `size` holders at once, the others waiting in the order they asked. */
export function createSlots(size: number): Slots {
  if (!Number.isInteger(size) || size < 1) throw new Error(`slots: size must be a positive integer, not ${size}`);
  let held = 0;
  const waiting: Array<() => void> = [];
  const releaser = (): Release => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = waiting.shift();
      // Handed straight to the next in line, so no later caller can take it in between.
      if (next) next();
      else held--;
    };
  };
  const acquire = (): Promise<Release> => {
    if (held < size) {
      held++;
      return Promise.resolve(releaser());
    }
    return new Promise((resolve) => waiting.push(() => resolve(releaser())));
  };
  return {
    acquire,
    async run(work) {
      const release = await acquire();
      try {
        return await work();
      } finally {
        release();
      }
    },
    held: () => held,
    waiting: () => waiting.length,
  };
}

/** Slots for a test worker's child Weirs from WEIR_TEST_CHILD_SLOTS, 2 when unset or not a positive integer. */
export function slotsFromEnv(value: string | undefined): number {
  const parsed = Number(value);
  return value !== undefined && Number.isInteger(parsed) && parsed >= 1 ? parsed : 2;
}

/**
 * How many child Weirs of this test worker may load their modules at once (each takes seconds of
 * CPU through tsx): all of a file's tests start together, and unbounded they starve one another past
 * ava's timeout on a small machine.
 */
export const childWeirSlots = createSlots(slotsFromEnv(process.env['WEIR_TEST_CHILD_SLOTS']));
