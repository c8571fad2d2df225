/** How a promise settled within a wait: its value, its rejection, or not yet. */
export type Settlement<T> = { value: T } | { rejected: unknown } | { timedOut: true };

/**
 * How `promise` settled within `ms` of real time (for waits on something outside Weir, a node or a
 * store, not on Weir's clock). A promise still pending then is left to settle on its own.
 */
export async function settleWithin<T>(promise: Promise<T>, ms: number): Promise<Settlement<T>> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<Settlement<T>>((resolve) => {
    timer = setTimeout(() => resolve({ timedOut: true }), ms);
  });
  try {
    return await Promise.race([
      promise.then(
        (value): Settlement<T> => ({ value }),
        (rejected: unknown): Settlement<T> => ({ rejected }),
      ),
      expired,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
