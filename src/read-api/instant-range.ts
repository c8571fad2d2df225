import { ValidationError } from '../shared/errors.ts';
import { UTC, utcOf, zonedMidnight } from '../shared/time-zone.ts';

const DAY_MS = 86_400_000;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const LAST_INSTANT = '9999-12-31T23:59:59.999Z';
const MIN_INSTANT = Date.parse('0000-01-01T00:00:00Z');
const MAX_INSTANT = Date.parse(LAST_INSTANT);

/** An ISO 8601 date (`2026-05-01`) or timestamp (`2026-05-01T08:00:00Z`, offset optional). */
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * The instant an ISO 8601 bound names, or NaN. `Date.parse` alone would also take forms such as
 * `March 3` or `1`, and reads a timestamp without an offset in the server's time zone; here only
 * ISO 8601 is accepted and a timestamp without an offset is UTC, like a bare date.
 */
export function parseIsoInstant(raw: string): number {
  const match = ISO_DATE.exec(raw);
  if (!match) return Number.NaN;
  const [, year, month, day, hour, minute, second, offset] = match;
  // Not Date.UTC, which reads years 0 to 99 as 1900 to 1999 (0000 is a leap year, 1900 is not).
  const daysInMonth = new Date(utcOf(Number(year), Number(month), 0)).getUTCDate();
  // Date.parse would roll 2026-02-31 over to March 3.
  if (Number(month) < 1 || Number(month) > 12 || Number(day) < 1 || Number(day) > daysInMonth) return Number.NaN;
  if (hour !== undefined && (Number(hour) > 23 || Number(minute) > 59 || Number(second ?? 0) > 59)) return Number.NaN;
  const time = Date.parse(hour !== undefined && offset === undefined ? `${raw}Z` : raw);
  // Bounds are compared as ISO strings: an offset carrying one past year 9999 or before 0000 would
  // be `+010000-…` or `-000001-…`, which sort before every stored time.
  return time >= MIN_INSTANT && time <= MAX_INSTANT ? time : Number.NaN;
}

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

/** What a `timezone` that names no zone is told, by the schemas and by the lists that read it. */
export const TIME_ZONE_MESSAGE = 'must be an IANA time zone, such as Europe/Paris or America/New_York, or UTC';

/** The bounds a list takes on a date field (`createdAt[lte]=…`), read as `from` / `to` are. */
export const BOUND_OPS = ['gt', 'gte', 'lt', 'lte'] as const;
export type BoundOp = (typeof BOUND_OPS)[number];

/** The schema's words for each list bound on `field`, a date alone standing for its whole day UTC. */
export const BOUND_DESCRIPTIONS: Record<BoundOp, (field: string) => string> = {
  gt: (field) =>
    `Only records whose ${field} is after this ISO 8601 timestamp, or after the whole of this date (UTC): \`${field}[gt]=2026-11-30\` starts at 1 December`,
  gte: (field) =>
    `Only records whose ${field} is at or after this ISO 8601 timestamp, or on or after this date (from its midnight UTC)`,
  lt: (field) =>
    `Only records whose ${field} is before this ISO 8601 timestamp, or before this date (its midnight UTC)`,
  lte: (field) =>
    `Only records whose ${field} is at or before this ISO 8601 timestamp, or on or before this date (the whole day UTC): \`${field}[lte]=2026-11-30\` takes in all of 30 November`,
};

const given = (raw: string | undefined): raw is string => raw !== undefined && raw !== '';

function instant(name: string, raw: string): number {
  const time = parseIsoInstant(raw);
  if (Number.isNaN(time))
    throw new ValidationError(
      name,
      'must be an ISO 8601 date or timestamp, such as 2026-05-01 or 2026-05-01T08:00:00Z',
    );
  return time;
}

/**
 * One bound as read-store conditions. A timestamp is exact; a date alone is its whole day UTC:
 * `gte` from its midnight, `lt` before it, `lte` up to the next midnight, `gt` from the next
 * midnight. Read as its first instant, `createdAt[lte]=2026-11-30` would leave all of the 30th out.
 */
function boundCondition(op: BoundOp, raw: string, time: number, zone: string): Record<string, string> {
  if (DATE_ONLY.test(raw) && zone !== UTC) return zonedDayCondition(op, raw, zone);
  if (!DATE_ONLY.test(raw) || op === 'gte' || op === 'lt') return { [`$${op}`]: new Date(time).toISOString() };
  // The midnight after 9999-12-31 is no 4-digit year, and `+010000-…` sorts before every stored time:
  // that day ends at its last instant, counted.
  if (time + DAY_MS > MAX_INSTANT) return op === 'lte' ? { $lte: LAST_INSTANT } : { $gt: LAST_INSTANT };
  const next = new Date(time + DAY_MS).toISOString();
  return op === 'lte' ? { $lt: next } : { $gte: next };
}

/** A date alone as the whole of that day in `zone`: from its midnight there to the next (23 or 25 hours across a change). */
function zonedDayCondition(op: BoundOp, raw: string, zone: string): Record<string, string> {
  const [year, month, day] = raw.split('-').map(Number) as [number, number, number];
  // Kept within the 4-digit years, which alone sort right as ISO strings.
  const at = (shift: number) =>
    new Date(Math.min(MAX_INSTANT, Math.max(MIN_INSTANT, zonedMidnight(year, month, day + shift, zone)))).toISOString();
  if (op === 'gte' || op === 'lt') return { [`$${op}`]: at(0) };
  return op === 'lte' ? { $lt: at(1) } : { $gte: at(1) };
}

const LOWER = ['$gt', '$gte'] as const;
const UPPER = ['$lt', '$lte'] as const;

/** One bound as sent: its operator, its text, and the parameter that sent it (named by a 400). */
export type Bound = { op: BoundOp; raw: string; name: string };

/**
 * A 400 when the condition's lower bound is past its upper one: such a list or report would
 * answer an empty page as if there were nothing, where the range itself is wrong. Equal inclusive
 * bounds are one instant, and stay. `source` tells which bound made each operator, and its instant.
 */
function refuseEmpty(
  condition: Record<string, string>,
  source: Record<string, Bound & { time: number }>,
  zone: string,
): void {
  for (const lowerKey of LOWER)
    for (const upperKey of UPPER) {
      const lower = condition[lowerKey];
      const upper = condition[upperKey];
      if (lower === undefined || upper === undefined) continue;
      if (lower < upper || (lower === upper && lowerKey === '$gte' && upperKey === '$lte')) continue;
      const low = source[lowerKey]!;
      const high = source[upperKey]!;
      const relation = low.op === 'gte' && high.op === 'lte' ? 'must not be before' : 'must be after';
      // `gt=2026-11-30&lt=2026-12-01` reads as ordered; only the whole day of the 30th empties it.
      const day = zone === UTC ? 'whole day UTC' : `whole day in ${zone}`;
      const widened = low.time < high.time ? ` (a date alone stands for its ${day})` : '';
      throw new ValidationError(high.name, `${relation} ${low.name}${widened}`);
    }
}

/**
 * The read-store condition the bounds given make on one time field (`{}` when none is), each
 * checked as ISO 8601 (a 400 naming it). Bounds landing on one operator keep the tighter, however
 * they were sent (`createdAt[gte]` and an export's `from` alike); a lower bound past the upper one
 * is a 400 naming both, for lists, exports and reports alike.
 */
export function boundsCondition(bounds: readonly Bound[], zone = UTC): Record<string, string> {
  const condition: Record<string, string> = {};
  const source: Record<string, Bound & { time: number }> = {};
  for (const bound of bounds) {
    const time = instant(bound.name, bound.raw);
    for (const [key, value] of Object.entries(boundCondition(bound.op, bound.raw, time, zone))) {
      const held = condition[key];
      const lower = key === '$gt' || key === '$gte';
      if (held === undefined || (lower ? value > held : value < held)) {
        condition[key] = value;
        source[key] = { ...bound, time };
      }
    }
  }
  refuseEmpty(condition, source, zone);
  return condition;
}

/** The bounds `from` / `to` name: `from` as `[gte]`, `to` as `[lte]` (empty ones are none). */
export const fromToBounds = (raw: { from?: string | undefined; to?: string | undefined }): Bound[] => [
  ...(given(raw.from) ? [{ op: 'gte' as const, raw: raw.from, name: 'from' }] : []),
  ...(given(raw.to) ? [{ op: 'lte' as const, raw: raw.to, name: 'to' }] : []),
];

/**
 * The range `from` / `to` name (see {@link fromToBounds}). An analyst's `to=2026-11-30` means
 * through the 30th: read as that day's first instant it would leave the whole day out.
 */
export function instantRange(raw: { from?: string | undefined; to?: string | undefined }, zone = UTC): InstantRange {
  const condition = boundsCondition(fromToBounds(raw), zone);
  const range: InstantRange = {};
  if (condition.$gte) range.from = condition.$gte;
  if (condition.$lte) range.to = condition.$lte;
  if (condition.$lt) range.before = condition.$lt;
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
