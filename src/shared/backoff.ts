/**
 * The wait after the `failures`-th failure in a row (1-based): `firstMs`, doubled for each further
 * failure, never more than `maxMs`. The one retry formula of Weir: timers, mail, work queues, the
 * processors (src/processing), the sweeper, bus redelivery and chain followers all wait this way.
 */
export function doublingDelay(failures: number, firstMs: number, maxMs: number): number {
  const exponent = Math.min(Math.max(failures - 1, 0), 30);
  return Math.max(0, Math.min(firstMs * 2 ** exponent, maxMs));
}
