import type { Invoice } from './invoice.types.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Due dates are instants. A due date given as a day (`2026-06-01`) is stored as the last instant
 * of that UTC day, so it stays payable all that day; any timestamp, midnight included, is the
 * instant given. (A midnight read as a day made `T00:00:00Z` and renewals at midnight a day late.)
 */
export const dueEndOfDay = (dayMs: number): string =>
  new Date(Math.floor(dayMs / DAY_MS) * DAY_MS + DAY_MS - 1).toISOString();

/**
 * The due date `days` whole days after `fromMs`: that instant, but for 0 days the end of that UTC day,
 * payable all of it (Stripe's `days_until_due: 0` is due on the day). Due at the instant itself, a bill
 * would lapse as it is sent. Renewals, re-dated renewal drafts and the invoice API's `daysUntilDue` share it.
 */
export const dueDaysAfter = (fromMs: number, days: number): string =>
  days === 0 ? dueEndOfDay(fromMs) : new Date(fromMs + days * DAY_MS).toISOString();

/**
 * A due date as an event holds it, read as what it meant when written. Events that carry a due date
 * say `dueIsInstant` since due dates are instants; an older Weir stored a date as its midnight and read
 * every midnight as that whole day, so an unmarked midnight is that day (its last instant, as a date is
 * stored now). The log is never rewritten: its old events keep their old meaning when folded.
 */
export function dueDateAsWritten(dueDate: string, dueIsInstant: boolean | undefined): string {
  const due = Date.parse(dueDate);
  return dueIsInstant === true || due % DAY_MS !== 0 ? dueDate : dueEndOfDay(due);
}

/** Whether the due date is a whole day: the last instant of a UTC day (see `dueEndOfDay`). */
const isWholeDay = (due: number): boolean => due % DAY_MS === DAY_MS - 1;

/**
 * The instant (ms) an invoice due at `dueDate` becomes overdue: that instant, or for a whole due
 * day the midnight that ends it (1 ms later, keeping timers and reminders on the day's bounds).
 */
export function overdueFrom(dueDate: string): number {
  const due = Date.parse(dueDate);
  return isWholeDay(due) ? due + 1 : due;
}

/**
 * The instant days before or after due count from: the due instant, or the midnight that starts a
 * whole due day (so "1 day before" a due day is the day before it, and a day due 7 days after
 * its issue date is net 7).
 */
export function dueCountsFrom(dueDate: string): number {
  const due = Date.parse(dueDate);
  return isWholeDay(due) ? due + 1 - DAY_MS : due;
}

/** Whole days from `fromMs` to the due date (counted as `dueCountsFrom` does), rounded to the nearest day. */
export const daysUntilDue = (dueDate: string, fromMs: number): number =>
  Math.round((dueCountsFrom(dueDate) - fromMs) / DAY_MS);

/** Whether the invoice is overdue at `nowMs`: its due instant (or due day) has passed. */
export const isOverdue = (invoice: Pick<Invoice, 'dueDate'>, nowMs: number): boolean =>
  nowMs >= overdueFrom(invoice.dueDate);
