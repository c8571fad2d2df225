/**
 * Billing-calendar arithmetic for recurring prices. All dates are ISO-8601 instants handled in UTC;
 * the time of day is kept, and a day of month the target month lacks is clamped to its last day
 * (Jan 31 + 1 month = Feb 28, or Feb 29 in a leap year).
 */
export type BillingInterval = 'month' | 'year';

/** The schedules the product offers, as (interval, intervalCount). */
export const BILLING_SCHEDULES = {
  monthly: { interval: 'month', intervalCount: 1 },
  quarterly: { interval: 'month', intervalCount: 3 },
  half_yearly: { interval: 'month', intervalCount: 6 },
  annual: { interval: 'year', intervalCount: 1 },
} as const satisfies Record<string, { interval: BillingInterval; intervalCount: number }>;

const BILLING_INTERVALS: readonly string[] = ['month', 'year'] satisfies BillingInterval[];

/** Whether a subscription can bill a recurring price of this interval (a day or a week it cannot). */
export const isBillingInterval = (interval: string | null): interval is BillingInterval =>
  interval !== null && BILLING_INTERVALS.includes(interval);

/**
 * Why a subscription cannot bill a recurring price of `interval`, or null when it can: the one rule
 * for every way a subscription is sold (checkout session, payment link), so they refuse alike.
 */
export const unbillableInterval = (interval: string): string | null =>
  isBillingInterval(interval)
    ? null
    : `a subscription is billed monthly, quarterly, half-yearly or annually (interval month or year), not by the ${interval}`;

const DAY_MS = 24 * 60 * 60 * 1000;

const daysInMonth = (year: number, month: number): number => new Date(Date.UTC(year, month + 1, 0)).getUTCDate();

function parseInstant(isoDate: string): Date {
  const date = new Date(isoDate);
  if (Number.isNaN(date.getTime())) throw new RangeError(`not a date: ${isoDate}`);
  return date;
}

/**
 * `isoDate` moved forward by `count` intervals (a year is 12 months), clamping the day of month.
 * Always counts from the given date: to avoid drift over many periods (Jan 31 → Feb 28 → Mar 28),
 * count from the billing anchor with `periodEndAfter`.
 */
export function addInterval(isoDate: string, interval: BillingInterval, count: number): string {
  if (!Number.isSafeInteger(count) || count < 0)
    throw new RangeError(`interval count must be a non-negative integer, got ${count}`);
  const date = parseInstant(isoDate);
  const months = interval === 'year' ? 12 * count : count;
  const total = date.getUTCMonth() + months;
  const year = date.getUTCFullYear() + Math.floor(total / 12);
  const month = total % 12;
  const day = Math.min(date.getUTCDate(), daysInMonth(year, month));
  return new Date(
    Date.UTC(
      year,
      month,
      day,
      date.getUTCHours(),
      date.getUTCMinutes(),
      date.getUTCSeconds(),
      date.getUTCMilliseconds(),
    ),
  ).toISOString();
}

/** `isoDate` plus whole days of 24 hours. */
export function addDays(isoDate: string, days: number): string {
  return new Date(parseInstant(isoDate).getTime() + days * DAY_MS).toISOString();
}

/**
 * The first period boundary strictly after `after`, on the calendar of `anchor`: anchor plus
 * k × intervalCount intervals for the smallest k ≥ 1. Anchored at Jan 31 monthly, the boundaries
 * are Feb 28, Mar 31, Apr 30, … (no drift to the 28th).
 */
export function periodEndAfter(
  anchor: string,
  interval: BillingInterval,
  intervalCount: number,
  after: string,
): string {
  if (!Number.isSafeInteger(intervalCount) || intervalCount < 1)
    throw new RangeError(`interval count must be a positive integer, got ${intervalCount}`);
  const limit = parseInstant(after).getTime();
  for (let k = 1; ; k += 1) {
    const end = addInterval(anchor, interval, k * intervalCount);
    if (Date.parse(end) > limit) return end;
  }
}
