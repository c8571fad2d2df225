/**
 * Calendar days in an IANA time zone (`Europe/Paris`), for reports an analyst closes in the
 * business's own days: a zone's midnight moves with daylight saving, so a day there may last 23 or
 * 25 hours, and only the zone's rules (Intl's, MongoDB's) say where each one starts.
 */

export const UTC = 'UTC';

const DAY_MS = 86_400_000;
/**
 * One formatter per zone, made by `make`, kept under the zone's canonical name only: a zone spelt
 * in another case (`eUROPE/pARIS`, which Intl accepts) is made again, never a new entry, so what a
 * request sends cannot grow the cache.
 */
export function formatPerZone(make: (zone: string) => Intl.DateTimeFormat): (zone: string) => Intl.DateTimeFormat {
  const formats = new Map<string, Intl.DateTimeFormat>();
  return (zone) => {
    const kept = formats.get(zone);
    if (kept) return kept;
    const format = make(zone);
    const canonical = format.resolvedOptions().timeZone;
    if (!formats.has(canonical)) formats.set(canonical, format);
    return format;
  };
}

/** The zone's wall clock as numbers (`hourCycle: h23`, so midnight is 0, not 24). */
const wallClock = formatPerZone(
  (zone) =>
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      era: 'short',
    }),
);

/** Whether `name` is an IANA time zone this runtime knows (`UTC` included); offsets and abbreviations are not. */
export function isTimeZone(name: string): boolean {
  if (name === UTC) return true;
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)+$/.test(name)) return false;
  try {
    wallClock(name);
    return true;
  } catch {
    return false;
  }
}

/** The zone's date and time at `instant`, read as if it were UTC (its offset added). */
function wallTime(instant: number, zone: string): number {
  const parts = Object.fromEntries(
    wallClock(zone)
      .formatToParts(new Date(instant))
      .map((p) => [p.type, p.type === 'era' ? Number(p.value === 'BC') : Number(p.value)]),
  ) as Record<string, number>;
  // Intl counts years by era: ISO year 0 is its 1 BC.
  const year = parts.era ? 1 - parts.year! : parts.year!;
  return utcOf(year, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
}

/**
 * The zone's offset from UTC at `instant`, in seconds (east positive): whole seconds, as a zone
 * kept its local mean time before standard time (New York's -4:56:02 until 1883).
 */
export function zoneOffsetSeconds(instant: number, zone: string): number {
  const second = Math.floor(instant / 1000) * 1000;
  return (wallTime(second, zone) - second) / 1000;
}

/** Every zone name Intl lists, by its lowercase spelling: a name spelt in another case is refused. */
let listedZones: Map<string, string> | undefined;

/**
 * A time zone as MongoDB names one in a pipeline (`timezone`), with its offset at an instant; null
 * when MongoDB would not know it (`unrecognized time zone identifier`). Names are the tz database's,
 * spelt in its case (`UTC`, `GMT`, `Europe/Paris`, `America/Argentina/Buenos_Aires`, `Etc/GMT+5`),
 * read through Intl, so the answer is the zone's whatever zone the server runs in; an offset is
 * `+hh`, `+hhmm` or `+hh:mm`. `utc` is MongoDB's own UTC (`UTC` or a zero offset), whose ISO
 * strings end in `Z`.
 */
export function pipelineZone(name: string): { utc: boolean; offsetSeconds(instant: number): number } | null {
  const offset = /^([+-])(\d{2})(?::?(\d{2}))?$/.exec(name);
  if (offset) {
    const seconds = (offset[1] === '-' ? -1 : 1) * (Number(offset[2]) * 3600 + Number(offset[3] ?? 0) * 60);
    return { utc: seconds === 0, offsetSeconds: () => seconds };
  }
  if (name === UTC) return { utc: true, offsetSeconds: () => 0 };
  // The tz database's names start each part with a capital (`America/Port-au-Prince`, `EST5EDT`).
  if (!/^[A-Z][A-Za-z0-9_+-]*(?:\/[A-Z][A-Za-z0-9_+-]*)*$/.test(name)) return null;
  let canonical: string;
  try {
    canonical = wallClock(name).resolvedOptions().timeZone;
  } catch {
    return null;
  }
  listedZones ??= new Map(Intl.supportedValuesOf('timeZone').map((zone) => [zone.toLowerCase(), zone]));
  const lower = name.toLowerCase();
  const listed = listedZones.get(lower);
  if ((listed !== undefined && listed !== name) || (canonical.toLowerCase() === lower && canonical !== name))
    return null;
  return { utc: false, offsetSeconds: (instant) => zoneOffsetSeconds(instant, name) };
}

/** `Date.UTC`, but years 0 to 99 stay themselves (`Date.UTC` reads them as 1900 to 1999). */
export function utcOf(year: number, monthIndex: number, day: number, hour = 0, minute = 0, second = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(year, monthIndex, day);
  return date.setUTCHours(hour, minute, second, 0);
}

/**
 * The first instant the zone's wall clock shows `wall` (UTC-read) or later. A wall time skipped by
 * a change (Santiago's midnight on 6 September 2026, its clocks going from 00:00 to 01:00) is the
 * moment of the change: read with the offset after it, it would fall in the day before.
 */
function instantOfWall(wall: number, zone: string): number {
  const first = wall - (wallTime(wall, zone) - wall);
  const second = wall - (wallTime(first, zone) - first);
  if (wallTime(second, zone) === wall) return second;
  // Skipped: the change lies between the two readings (one with each offset); found to the second.
  let before = Math.min(first, second);
  let after = Math.max(first, second);
  while (after - before > 1000) {
    const middle = before + Math.floor((after - before) / 2000) * 1000;
    if (wallTime(middle, zone) >= wall) after = middle;
    else before = middle;
  }
  return after;
}

/** The zone's calendar date at `instant`, as YYYY-MM-DD. */
export const zonedDate = (instant: number, zone: string): string =>
  new Date(wallTime(instant, zone)).toISOString().slice(0, 10);

/** The first instant of the day `year-month-day` (month from 1) in `zone`. */
export function zonedMidnight(year: number, month: number, day: number, zone: string): number {
  return instantOfWall(utcOf(year, month - 1, day), zone);
}

/** The first instant of the zone's day, week (from Monday) or month that holds `instant`. */
export function zonedPeriodStart(instant: number, unit: 'day' | 'week' | 'month', zone: string): number {
  const local = new Date(wallTime(instant, zone));
  const year = local.getUTCFullYear();
  const month = local.getUTCMonth() + 1;
  if (unit === 'month') return zonedMidnight(year, month, 1, zone);
  const back = unit === 'week' ? (local.getUTCDay() + 6) % 7 : 0;
  const day = new Date(utcOf(year, month - 1, local.getUTCDate()) - back * DAY_MS);
  return zonedMidnight(day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate(), zone);
}

/**
 * How a pipeline names the period of `zone` holding `date`: its day (`2026-03-08`), ISO week (from
 * Monday, `2026-W53`) or month (`2026-03`), by `$dateToString` in the zone, which MongoDB and the
 * embedded store agree on (the embedded store's `$dateTrunc` misplaces a zone's midnight). A week is
 * its Thursday's `%Y-W%V`, that day's calendar year being the ISO year: the embedded store's `%G`
 * and `$isoWeekYear` give the calendar year (1 January 2027 as 2027-W53, not 2026-W53).
 * `periodKeyStart` turns the name back into the period's first instant.
 */
export function periodKey(date: unknown, unit: 'day' | 'week' | 'month', zone: string): Record<string, unknown> {
  if (unit === 'month') return { $dateToString: { date, timezone: zone, format: '%Y-%m' } };
  const day = { $dateToString: { date, timezone: zone, format: '%Y-%m-%d' } };
  if (unit === 'day') return day;
  // The zone's date at UTC midnight, moved to its week's Thursday in whole days (UTC has no daylight saving).
  const thursday = {
    $add: ['$$day', { $multiply: [{ $subtract: [4, { $isoDayOfWeek: '$$day' }] }, DAY_MS] }],
  };
  return { $let: { vars: { day: { $toDate: day } }, in: { $dateToString: { date: thursday, format: '%Y-W%V' } } } };
}

/** The first instant in `zone` of a period named as `periodKey` names them, or NaN. */
export function periodKeyStart(key: string, zone: string): number {
  const week = /^(\d{4})-W(\d{2})$/.exec(key);
  if (week) {
    // ISO week 1 is the one holding 4 January.
    const fourth = Date.UTC(Number(week[1]), 0, 4);
    const monday = new Date(
      fourth - ((new Date(fourth).getUTCDay() + 6) % 7) * DAY_MS + (Number(week[2]) - 1) * 7 * DAY_MS,
    );
    return zonedMidnight(monday.getUTCFullYear(), monday.getUTCMonth() + 1, monday.getUTCDate(), zone);
  }
  const date = /^(\d{4})-(\d{2})(?:-(\d{2}))?$/.exec(key);
  return date ? zonedMidnight(Number(date[1]), Number(date[2]), Number(date[3] ?? 1), zone) : Number.NaN;
}
