import { ValidationError } from '../shared/errors.ts';
import { parseIsoInstant } from './pagination.ts';

const DAY_MS = 86_400_000;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const LAST_INSTANT = '9999-12-31T23:59:59.999Z';

/**
 * A `from` / `to` range as ISO bounds: `from` counted (`$gte`); `to` as a timestamp counted
 * (`$lte`), as a date alone its whole day, up to the next midnight UTC (`before`, `$lt`).
 */
export type InstantRange = { from?: string; to?: string; before?: string };

/** The schema's words for `from` and `to`, the same on every report and export. */
export const FROM_DESCRIPTION =
  'ISO 8601 date or timestamp, counted (inclusive); a date alone is its midnight UTC, so the whole day is in';
export const TO_DESCRIPTION =
  'ISO 8601 date or timestamp: a timestamp is exact and counted (inclusive); a date alone counts that whole day UTC (up to, not including, the next midnight), so `to=2026-11-30` takes in all of 30 November';

const given = (raw: string | undefined): raw is string => raw !== undefined && raw !== '';

function instant(field: 'from' | 'to', raw: string): number {
  const time = parseIsoInstant(raw);
  if (Number.isNaN(time))
    throw new ValidationError(
      field,
      'must be an ISO 8601 date or timestamp, such as 2026-05-01 or 2026-05-01T08:00:00Z',
    );
  return time;
}

/**
 * The bounds `from` / `to` name. An analyst's `to=2026-11-30` means through the 30th: read as
 * that day's first instant it would leave the whole day out.
 */
export function instantRange(raw: { from?: string | undefined; to?: string | undefined }): InstantRange {
  const range: InstantRange = {};
  if (given(raw.from)) range.from = new Date(instant('from', raw.from)).toISOString();
  if (given(raw.to)) {
    const time = instant('to', raw.to);
    // The midnight after 9999-12-31 is no 4-digit year, and `+010000-…` sorts before every stored time.
    if (!DATE_ONLY.test(raw.to)) range.to = new Date(time).toISOString();
    else if (time + DAY_MS > Date.parse(LAST_INSTANT)) range.to = LAST_INSTANT;
    else range.before = new Date(time + DAY_MS).toISOString();
  }
  if (range.from && ((range.to && range.from > range.to) || (range.before && range.from >= range.before)))
    throw new ValidationError('to', 'must not be before from');
  return range;
}

/** The range as a read-store condition on one time field (`{}` when unbounded). */
export function rangeCondition(range: InstantRange): Record<string, string> {
  return {
    ...(range.from ? { $gte: range.from } : {}),
    ...(range.to ? { $lte: range.to } : {}),
    ...(range.before ? { $lt: range.before } : {}),
  };
}
