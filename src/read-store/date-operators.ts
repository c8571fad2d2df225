import { evalExpr } from 'mingo/core';
import * as expressionOperators from 'mingo/operators/expression';
import { pipelineZone } from '../shared/time-zone.ts';

/**
 * MongoDB's date operators for the embedded read store, computed in the `timezone` named (the tz
 * database's names through Intl, or an offset) as MongoDB computes them, whatever zone the server
 * runs in. mingo's read a named zone off the server's own clock (an hour wrong around its changes),
 * refuse `UTC`, `GMT` and names past `Area/City`, count `$week` from the ISO week, write `%%` as
 * nothing and `%z` an hour off for negative half-hour offsets, and throw on a null date.
 */

/** An expression operator as mingo calls one. */
type Expression = (...args: Parameters<typeof expressionOperators.$year>) => unknown;
type Options = Parameters<Expression>[2];
type Zone = NonNullable<ReturnType<typeof pipelineZone>>;

const DAY_MS = 86_400_000;
const nullish = (value: unknown) => value === null || value === undefined;
const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date);
const typeName = (value: unknown) =>
  value instanceof Date ? 'date' : Array.isArray(value) ? 'array' : typeof value === 'number' ? 'double' : typeof value;

/** The zone a `timezone` evaluated to; null for null or missing (the operator answers null). */
function zoneOf(operator: string, value: unknown): Zone | null {
  if (nullish(value)) return null;
  if (typeof value !== 'string')
    throw new Error(`${operator}: timezone must evaluate to a string, found ${typeName(value)}`);
  const zone = pipelineZone(value);
  if (!zone) throw new Error(`${operator}: unrecognized time zone identifier: "${value}"`);
  return zone;
}

const UTC_ZONE = pipelineZone('UTC')!;

/** The zone named by `expr` (UTC when there is none), or null when it evaluates to null. */
const zoneIn = (operator: string, obj: object, expr: unknown, options: Options): Zone | null =>
  expr === undefined ? UTC_ZONE : zoneOf(operator, evalExpr(obj, expr, options));

function dateOf(operator: string, value: unknown): Date {
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value;
  throw new Error(`${operator}: can't convert from BSON type ${typeName(value)} to Date`);
}

/** A date's calendar in a zone, as MongoDB reads it (proleptic Gregorian, ISO weeks from Monday). */
type Parts = {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
  dayOfYear: number;
  /** 1 for Sunday to 7 for Saturday. */
  dayOfWeek: number;
  isoDayOfWeek: number;
  /** From Sunday: the days before the year's first Sunday are week 0. */
  week: number;
  isoWeek: number;
  isoWeekYear: number;
  offsetSeconds: number;
};

function partsOf(date: Date, zone: Zone): Parts {
  const instant = date.getTime();
  const offsetSeconds = zone.offsetSeconds(instant);
  const local = new Date(instant + offsetSeconds * 1000);
  const year = local.getUTCFullYear();
  const startOfYear = new Date(0);
  startOfYear.setUTCFullYear(year, 0, 1);
  const midnight = new Date(local);
  midnight.setUTCHours(0, 0, 0, 0);
  const dayOfYear = Math.round((midnight.getTime() - startOfYear.getTime()) / DAY_MS) + 1;
  const dayOfWeek = local.getUTCDay() + 1;
  const isoDayOfWeek = local.getUTCDay() || 7;
  // ISO week: the one holding the week's Thursday, counted in that Thursday's year.
  const thursday = new Date(midnight.getTime() + (4 - isoDayOfWeek) * DAY_MS);
  const isoWeekYear = thursday.getUTCFullYear();
  const firstOfIsoYear = new Date(0);
  firstOfIsoYear.setUTCFullYear(isoWeekYear, 0, 1);
  const isoWeek = Math.floor(Math.round((thursday.getTime() - firstOfIsoYear.getTime()) / DAY_MS) / 7) + 1;
  return {
    year,
    month: local.getUTCMonth() + 1,
    day: local.getUTCDate(),
    hour: local.getUTCHours(),
    minute: local.getUTCMinutes(),
    second: local.getUTCSeconds(),
    millisecond: local.getUTCMilliseconds(),
    dayOfYear,
    dayOfWeek,
    isoDayOfWeek,
    week: Math.floor((dayOfYear - dayOfWeek + 7) / 7),
    isoWeek,
    isoWeekYear,
    offsetSeconds,
  };
}

/**
 * `{ $year: <date> }`, `{ $year: [<date>] }` or `{ $year: { date, timezone } }`, as MongoDB parses
 * them: an object whose first key is an operator is the date's expression.
 */
function datePart(operator: string, part: keyof Parts): Expression {
  return (obj, expr, options) => {
    let operand: unknown = expr;
    if (Array.isArray(operand)) {
      if (operand.length !== 1)
        throw new Error(`${operator} accepts exactly one argument if given an array, but was given ${operand.length}`);
      operand = operand[0];
    }
    let dateExpr = operand;
    let zoneExpr: unknown;
    if (isRecord(operand) && !Object.keys(operand)[0]?.startsWith('$')) {
      for (const key of Object.keys(operand))
        if (key !== 'date' && key !== 'timezone') throw new Error(`unrecognized option to ${operator}: "${key}"`);
      if (!('date' in operand)) throw new Error(`missing 'date' argument to ${operator}`);
      dateExpr = operand.date;
      zoneExpr = operand.timezone;
    }
    const value = evalExpr(obj, dateExpr, options);
    if (nullish(value)) return null;
    const date = dateOf(operator, value);
    const zone = zoneIn(operator, obj, zoneExpr, options);
    return zone === null ? null : partsOf(date, zone)[part];
  };
}

/** The fields an operator's object may have, the others refused as MongoDB refuses them. */
function fieldsOf(operator: string, expr: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (!isRecord(expr)) throw new Error(`${operator} only supports an object as its argument`);
  for (const key of Object.keys(expr))
    if (!allowed.includes(key)) throw new Error(`Unrecognized argument to ${operator}: ${key}`);
  return expr;
}

const dateToParts: Expression = (obj, expr, options) => {
  const args = fieldsOf('$dateToParts', expr, ['date', 'timezone', 'iso8601']);
  if (!('date' in args)) throw new Error("Missing 'date' parameter to $dateToParts");
  const value = evalExpr(obj, args.date, options);
  const zone = zoneIn('$dateToParts', obj, args.timezone, options);
  if (zone === null) return null;
  const iso = args.iso8601 === undefined ? false : evalExpr(obj, args.iso8601, options);
  if (nullish(iso)) return null;
  if (typeof iso !== 'boolean')
    throw new Error(`$dateToParts: iso8601 must evaluate to a bool, found ${typeName(iso)}`);
  if (nullish(value)) return null;
  const p = partsOf(dateOf('$dateToParts', value), zone);
  const time = { hour: p.hour, minute: p.minute, second: p.second, millisecond: p.millisecond };
  return iso
    ? { isoWeekYear: p.isoWeekYear, isoWeek: p.isoWeek, isoDayOfWeek: p.isoDayOfWeek, ...time }
    : { year: p.year, month: p.month, day: p.day, ...time };
};

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** MongoDB's padding: a component outside 0 to 9999 cannot be written. */
function padded(value: number, width: number): string {
  if (value < 0 || value > 9999)
    throw new Error(
      `$dateToString: could not convert date to string: date component was outside the supported range of 0-9999: ${value}`,
    );
  return String(value).padStart(width, '0');
}

/** Checked before the date is read, as MongoDB checks it. */
function checkFormat(format: string): void {
  for (let i = 0; i < format.length; i++) {
    if (format[i] !== '%') continue;
    const spec = format[++i];
    if (spec === undefined) throw new Error("$dateToString: Unmatched '%' at end of format string");
    if (!'%bBdGHjLmMSwuUVYzZ'.includes(spec))
      throw new Error(`$dateToString: Invalid format character '%${spec}' in format string`);
  }
}

function written(format: string, date: Date, zone: Zone): string {
  const p = partsOf(date, zone);
  const offsetMinutes = Math.trunc(p.offsetSeconds / 60);
  const spec: Record<string, () => string> = {
    '%': () => '%',
    b: () => MONTHS[p.month - 1]!.slice(0, 3),
    B: () => MONTHS[p.month - 1]!,
    d: () => padded(p.day, 2),
    G: () => padded(p.isoWeekYear, 4),
    H: () => padded(p.hour, 2),
    j: () => padded(p.dayOfYear, 3),
    L: () => padded(p.millisecond, 3),
    m: () => padded(p.month, 2),
    M: () => padded(p.minute, 2),
    S: () => padded(p.second, 2),
    w: () => padded(p.dayOfWeek, 1),
    u: () => padded(p.isoDayOfWeek, 1),
    U: () => padded(p.week, 2),
    V: () => padded(p.isoWeek, 2),
    Y: () => padded(p.year, 4),
    // ±hhmm: the hours and minutes of the offset each taken whole toward zero (-03:30 is -0330).
    z: () =>
      `${p.offsetSeconds < 0 ? '-' : '+'}${padded(Math.abs(Math.trunc(p.offsetSeconds / 3600)), 2)}${padded(Math.abs(offsetMinutes) % 60, 2)}`,
    Z: () => String(offsetMinutes + 0),
  };
  return format.replace(/%(.)/g, (_, c: string) => spec[c]!());
}

const dateToString: Expression = (obj, expr, options) => {
  const args = fieldsOf('$dateToString', expr, ['date', 'format', 'timezone', 'onNull']);
  if (!('date' in args)) throw new Error("Missing 'date' parameter to $dateToString");
  const value = evalExpr(obj, args.date, options);
  const format = args.format === undefined ? undefined : evalExpr(obj, args.format, options);
  if (!nullish(format)) {
    if (typeof format !== 'string')
      throw new Error(`$dateToString requires that 'format' be a string, found: ${typeName(format)}`);
    checkFormat(format);
  }
  const zone = zoneIn('$dateToString', obj, args.timezone, options);
  if (nullish(value)) return args.onNull === undefined ? null : evalExpr(obj, args.onNull, options);
  if (zone === null) return null;
  const date = dateOf('$dateToString', value);
  if (args.format === undefined)
    return written(zone.utc ? '%Y-%m-%dT%H:%M:%S.%LZ' : '%Y-%m-%dT%H:%M:%S.%L', date, zone);
  return nullish(format) ? null : written(format as string, date, zone);
};

/**
 * The instant a zone's wall clock shows `wall` (read as UTC). A wall time a change skips or shows
 * twice is refused: MongoDB's timelib picks one by rules of its own, which this store cannot vouch for.
 */
function instantOf(operator: string, wall: number, zone: Zone, zoneName: string): number {
  const ms = ((wall % 1000) + 1000) % 1000;
  const whole = wall - ms;
  const offsets = new Set([whole - DAY_MS, whole, whole + DAY_MS].map((at) => zone.offsetSeconds(at)));
  const found = new Set(
    [...offsets].map((offset) => whole - offset * 1000).filter((at) => at + zone.offsetSeconds(at) * 1000 === whole),
  );
  if (found.size === 1) return [...found][0]! + ms;
  const shown = new Date(wall).toISOString().slice(0, 23);
  throw new Error(
    `${operator}: ${shown} ${found.size === 0 ? 'does not exist' : 'comes twice'} in ${zoneName} (its clocks ${found.size === 0 ? 'skip it' : 'go back over it'}), and the embedded read store cannot vouch for the instant MongoDB picks: give the offset you mean as the timezone (such as '-05:00')`,
  );
}

const INT16 = 32_767;

/** A part of `$dateFromParts`: its default when absent, null when nullish, else a whole number. */
function numberPart(obj: object, args: Record<string, unknown>, name: string, fallback: number, options: Options) {
  if (!(name in args)) return fallback;
  const value = evalExpr(obj, args[name], options);
  if (nullish(value)) return null;
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw new Error(
      `$dateFromParts: '${name}' must evaluate to an integer, found ${typeName(value)} with value ${String(value)}`,
    );
  if (!['year', 'isoWeekYear', 'second', 'millisecond'].includes(name) && (value < -INT16 - 1 || value > INT16))
    throw new Error(
      `$dateFromParts: '${name}' must evaluate to a value in the range [-32768, 32767]; value ${value} is not in range`,
    );
  return value;
}

const CALENDAR = ['year', 'month', 'day'];
const ISO = ['isoWeekYear', 'isoWeek', 'isoDayOfWeek'];
const TIME = ['hour', 'minute', 'second', 'millisecond'];

const dateFromParts: Expression = (obj, expr, options) => {
  const args = fieldsOf('$dateFromParts', expr, [...CALENDAR, ...ISO, ...TIME, 'timezone']);
  const calendar = CALENDAR.some((k) => k in args);
  const iso = ISO.some((k) => k in args);
  if (calendar && iso)
    throw new Error(
      "$dateFromParts: 'year', 'month' and 'day' cannot be combined with 'isoWeekYear', 'isoWeek' and 'isoDayOfWeek'",
    );
  if (!('year' in args) && !('isoWeekYear' in args))
    throw new Error("$dateFromParts requires either 'year' or 'isoWeekYear' to be present");
  const time = TIME.map((k) => numberPart(obj, args, k, 0, options));
  if (time.some((v) => v === null)) return null;
  const zone = zoneIn('$dateFromParts', obj, args.timezone, options);
  if (zone === null) return null;
  const [first, second, third] = (iso ? ISO : CALENDAR).map((k, i) =>
    numberPart(obj, args, k, i === 0 ? 1970 : 1, options),
  );
  if (first === null || second === null || third === null) return null;
  if (first! < 1 || first! > 9999)
    throw new Error(
      `$dateFromParts: '${iso ? 'isoWeekYear' : 'year'}' must evaluate to an integer in the range 1 to 9999, found ${first}`,
    );
  const wall = new Date(0);
  if (iso) {
    // ISO week 1 is the one holding 4 January; its Monday, then the weeks and days from it.
    wall.setUTCFullYear(first!, 0, 4);
    wall.setUTCDate(4 - ((wall.getUTCDay() + 6) % 7) + (second! - 1) * 7 + (third! - 1));
  } else wall.setUTCFullYear(first!, second! - 1, third!);
  const [hour, minute, sec, ms] = time as number[];
  wall.setUTCHours(hour!, minute!, sec!, ms!);
  const timezone = args.timezone === undefined ? 'UTC' : evalExpr(obj, args.timezone, options);
  return new Date(instantOf('$dateFromParts', wall.getTime(), zone, String(timezone)));
};

/**
 * `$dateFromString` with a `timezone`: mingo reads the string's wall time (as in UTC), which is
 * then placed in the zone. A string naming its own zone or offset with a timezone is MongoDB's
 * conversion failure (`onError` answers it). Without a timezone, it is mingo's.
 */
const mingoDateFromString = expressionOperators.$dateFromString as unknown as Expression;

const dateFromString: Expression = (obj, expr, options) => {
  const args = fieldsOf('$dateFromString', expr, ['dateString', 'format', 'timezone', 'onError', 'onNull']);
  if (args.timezone === undefined) return mingoDateFromString(obj, expr, options);
  const zone = zoneIn('$dateFromString', obj, args.timezone, options);
  const text = evalExpr(obj, args.dateString, options);
  if (nullish(text)) return args.onNull === undefined ? null : evalExpr(obj, args.onNull, options);
  const failed = (why: string) => {
    if (args.onError !== undefined) return evalExpr(obj, args.onError, options);
    throw new Error(`$dateFromString: ${why}`);
  };
  if (typeof text !== 'string') return failed(`requires that 'dateString' be a string, found: ${typeName(text)}`);
  if (zone === null) return null;
  // A zone or offset after the time (`…Z`, `… EST`, `…-05:00`).
  if (/(?:[A-Za-z]|\d:\d\d(?::\d\d(?:\.\d+)?)?\s*[+-]\d\d(?::?\d\d)?)$/.test(text))
    return failed(
      `you cannot pass in a date/time string with time zone information ('${text}') together with a timezone argument`,
    );
  const { dateString: _, timezone: __, onError: ___, onNull: ____, ...rest } = args;
  const literal = { ...rest, dateString: { $literal: text } };
  const wall = mingoDateFromString(obj, literal, options);
  if (!(wall instanceof Date)) return failed(`could not parse '${text}'`);
  return new Date(instantOf('$dateFromString', wall.getTime(), zone, String(evalExpr(obj, args.timezone, options))));
};

/** The date operators mingo's are replaced with. */
export const DATE_OPERATORS: Record<string, Expression> = {
  $year: datePart('$year', 'year'),
  $month: datePart('$month', 'month'),
  $dayOfMonth: datePart('$dayOfMonth', 'day'),
  $dayOfWeek: datePart('$dayOfWeek', 'dayOfWeek'),
  $dayOfYear: datePart('$dayOfYear', 'dayOfYear'),
  $hour: datePart('$hour', 'hour'),
  $minute: datePart('$minute', 'minute'),
  $second: datePart('$second', 'second'),
  $millisecond: datePart('$millisecond', 'millisecond'),
  $week: datePart('$week', 'week'),
  $isoWeek: datePart('$isoWeek', 'isoWeek'),
  $isoDayOfWeek: datePart('$isoDayOfWeek', 'isoDayOfWeek'),
  $isoWeekYear: datePart('$isoWeekYear', 'isoWeekYear'),
  $dateToParts: dateToParts,
  $dateToString: dateToString,
  $dateFromParts: dateFromParts,
  $dateFromString: dateFromString,
};
