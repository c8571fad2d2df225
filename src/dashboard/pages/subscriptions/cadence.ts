/** How often a subscription bills: "per month", or "every 3 months" when the count is more than one. */
export const everyLabel = (s: { interval: string; intervalCount: number }): string =>
  s.intervalCount === 1 ? `per ${s.interval}` : `every ${s.intervalCount} ${s.interval}s`;
