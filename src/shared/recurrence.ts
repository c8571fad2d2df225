/**
 * How Weir words a recurring price's period: "every month", "every 3 months"; '' for a one-time
 * price. The hosted pages and the dashboard say it the same way.
 */
export function recurrence(interval: string | null | undefined, intervalCount: number | null | undefined): string {
  if (!interval) return '';
  return `every ${intervalCount && intervalCount > 1 ? `${intervalCount} ${interval}s` : interval}`;
}
