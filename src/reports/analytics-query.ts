/**
 * An analyst's own aggregation pipeline, made safe to run: only reading stages and expression
 * operators from an allow-list (no `$out`, `$merge`, `$lookup`, `$unionWith`, `$where`, `$function`
 * or `$accumulator`), the tenant's `$match` forced first, and a cap on stages and answered documents.
 */

export const QUERYABLE_COLLECTIONS = [
  'checkout_sessions',
  'transactions',
  'invoices',
  'subscriptions',
  'customers',
  'payment_links',
] as const;
export type QueryableCollection = (typeof QUERYABLE_COLLECTIONS)[number];

export const MAX_STAGES = 20;
export const MAX_RESULTS = 1000;

const STAGES = new Set([
  '$match',
  '$group',
  '$sort',
  '$limit',
  '$skip',
  '$project',
  '$addFields',
  '$set',
  '$unset',
  '$unwind',
  '$count',
  '$bucket',
  '$sortByCount',
  '$replaceRoot',
]);

// Expression, query and accumulator operators that only compute on the documents at hand.
const OPERATORS = new Set(
  (
    '$eq $ne $gt $gte $lt $lte $in $nin $and $or $not $nor $exists $type $regex $options $elemMatch $size $all ' +
    '$sum $avg $min $max $first $last $push $addToSet $count $stdDevPop $stdDevSamp ' +
    '$add $subtract $multiply $divide $mod $abs $ceil $floor $round $trunc $sqrt $pow $exp $ln $log10 ' +
    '$concat $substrCP $strLenCP $toLower $toUpper $trim $split $indexOfCP $toString $toInt $toLong $toDouble ' +
    '$toDate $toBool $convert $ifNull $cond $switch $literal $dateTrunc $dateToString $dateFromString ' +
    '$year $month $dayOfMonth $dayOfWeek $week $hour $dayOfYear $minute $second $millisecond $isoWeek $isoDayOfWeek ' +
    '$isoWeekYear $dateToParts $dateFromParts $arrayElemAt $filter $map $reduce $slice $concatArrays ' +
    '$isArray $objectToArray $arrayToObject $mergeObjects $getField $setUnion $anyElementTrue $allElementsTrue ' +
    '$expr $input $as $cond $in $initialValue $date $unit $timezone $startOfWeek $format $onNull ' +
    '$onError $to $branches $case $then $default $path $preserveNullAndEmptyArrays $includeArrayIndex ' +
    '$groupBy $boundaries $output $newRoot $field $binSize'
  ).split(' '),
);

/**
 * Refused with their reason: MongoDB's `$median` and `$percentile` are approximate by definition
 * (`method: 'approximate'` is the only one), and the embedded store answers them differently.
 */
export const APPROXIMATE_OPERATORS = ['$median', '$percentile'] as const;
const approximate = (operator: string) =>
  `${operator} is approximate (MongoDB knows only method 'approximate') and answers differently on the embedded read store, so it is refused: for exact times to pay (the median, and p95 by nearest rank) use GET /api/v1/reports/time-to-pay (interval=all for one row over the range); for other figures $push the values in a $group and take the median of the answer`;

/** The spellings of UTC a `$dateTrunc` may name, which both stores read (the embedded one knows no `UTC`). */
const UTC_NAMES = new Set(['Etc/UTC', '+00', '+0000', '+00:00']);
const zonedTrunc =
  "$dateTrunc in a time zone is refused: the embedded read store misplaces a zone's midnight (2026-03-02T03:00Z truncated to the day in America/New_York gives 2026-03-02T05:00Z, after it), where MongoDB gives 2026-03-01T05:00Z. Name the zone's day, week or month with $dateToString and its timezone (format '%Y-%m-%d', '%G-W%V' or '%Y-%m'), as GET /api/v1/reports/*?timezone= does, or truncate in UTC (no timezone)";

/** Refused: the embedded read store adds Decimal128s as doubles (0.1 + 0.2 is 0.30000000000000004 there, 0.3 on MongoDB). */
const decimal =
  '$toDecimal is refused: amounts are integer strings in the smallest unit, to be added with $toLong (exact on both stores), where the embedded read store adds decimals as inexact doubles (0.1 + 0.2 gives 0.30000000000000004 there, 0.3 on MongoDB)';

/** Why `operator` with `operand` answers differently on the two read stores, or null. */
function storesDiffer(operator: string, operand: unknown): string | null {
  if ((APPROXIMATE_OPERATORS as readonly string[]).includes(operator)) return approximate(operator);
  if (
    operator === '$toDecimal' ||
    (operator === '$convert' && isRecord(operand) && (operand.to === 'decimal' || operand.to === 19))
  )
    return decimal;
  if (operator === '$dateTrunc' && isRecord(operand) && 'timezone' in operand) {
    const zone = operand.timezone;
    if (!(typeof zone === 'string' && UTC_NAMES.has(zone))) return zonedTrunc;
  }
  return null;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

export class AnalyticsQueryError extends Error {
  override readonly name = 'AnalyticsQueryError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Why a `$regex` pattern could backtrack for minutes on a short string, or null. The embedded read
 * store runs it on the server's one thread (no time limit), so `^(a|a)*$`, `(a|a)(a|a)…$` or
 * `a?a?…aa…` on 30 letters would hold every tenant's requests. Only a grammar that cannot blow up is
 * taken: no backreference, no repeated group, at most one repetition (`*`, `+`, `?`, `{n,m}`) and at
 * most one alternation (`|`, in one group or at the top).
 */
export function backtracksWithoutBound(pattern: string): string | null {
  let repeats = 0;
  // Per open group (the pattern itself first): whether its `|` was counted.
  const alternates: boolean[] = [false];
  let alternations = 0;
  let previousWasQuantifier = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    let quantifier = false;
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      if (/[1-9k]/.test(next)) return 'a backreference is refused (it can backtrack without bound)';
      i++;
    } else if (c === '[') {
      // A class is one character: skip to its closing bracket.
      for (i++; i < pattern.length && pattern[i] !== ']'; i++) if (pattern[i] === '\\') i++;
    } else if (c === '(') {
      alternates.push(false);
      // `(?:`, `(?=`, `(?<name>`: the `?` names the group's kind, it repeats nothing.
      if (pattern[i + 1] === '?') i++;
    } else if (c === ')') {
      if (alternates.length > 1) alternates.pop();
    } else if (c === '|') {
      if (!alternates[alternates.length - 1]) {
        alternates[alternates.length - 1] = true;
        if (++alternations > 1)
          return 'has more than one alternation (|), which can backtrack without bound: match each with its own $regex under $or';
      }
    } else if (c === '?' && previousWasQuantifier) {
      // `*?`, `+?`: the lazy form of the repetition just counted.
    } else {
      const bounds = c === '{' ? /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i)) : null;
      // `{n}` repeats exactly n times: nothing to backtrack over.
      const exact = bounds !== null && (bounds[2] === undefined || bounds[3] === bounds[1]);
      if (c === '*' || c === '+' || c === '?' || (bounds !== null && !exact)) {
        if (pattern[i - 1] === ')' && c !== '?')
          return 'a repeated group such as (a|b)* is refused (it can backtrack without bound): repeat a character class instead';
        if (++repeats > 1)
          return 'has more than one repetition (*, +, ? or {n,m}), which can backtrack without bound: match each part with its own $regex under $and';
        quantifier = true;
      }
      if (bounds !== null) i += bounds[0].length - 1;
    }
    previousWasQuantifier = quantifier;
  }
  return null;
}

/** How deep a stage may nest (no real query comes near; a deeper one is an attack on the stack). */
export const MAX_DEPTH = 32;

/** Every `$`-named key in `value`, with where it is, for the allow-list. */
function* operatorsIn(value: unknown, path: string, depth = 0): Generator<[string, string, unknown]> {
  if (value === null || typeof value !== 'object') return;
  if (depth > MAX_DEPTH) throw new AnalyticsQueryError(path, `nests deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) yield* operatorsIn(item, `${path}[${i}]`, depth + 1);
    return;
  }
  for (const [key, inner] of Object.entries(value)) {
    if (key.startsWith('$')) yield [key, `${path}.${key}`, inner];
    yield* operatorsIn(inner, `${path}.${key}`, depth + 1);
  }
}

/** The pipeline to run: the tenant first, then the analyst's stages as checked, then the cap. */
export function safePipeline(
  pipeline: readonly Record<string, unknown>[],
  tenant: { organizationId: string; environment: string },
): Record<string, unknown>[] {
  if (pipeline.length > MAX_STAGES) throw new AnalyticsQueryError('pipeline', `must have at most ${MAX_STAGES} stages`);
  for (const [i, stage] of pipeline.entries()) {
    const keys = Object.keys(stage);
    const name = keys[0];
    if (keys.length !== 1 || name === undefined)
      throw new AnalyticsQueryError(`pipeline[${i}]`, 'must be one stage: an object with a single $-named key');
    if (!STAGES.has(name))
      throw new AnalyticsQueryError(
        `pipeline[${i}].${name}`,
        `is not a stage an analytics query may use (allowed: ${[...STAGES].join(', ')})`,
      );
    for (const [operator, where, operand] of operatorsIn(stage[name], `pipeline[${i}].${name}`)) {
      const differs = storesDiffer(operator, operand);
      if (operator === '$regex') {
        const problem = typeof operand === 'string' ? backtracksWithoutBound(operand) : 'must be a string pattern';
        if (problem) throw new AnalyticsQueryError(where, problem);
      } else if (differs) throw new AnalyticsQueryError(where, differs);
      else if (!OPERATORS.has(operator))
        throw new AnalyticsQueryError(where, `${operator} is not an operator an analytics query may use`);
    }
  }
  return [
    { $match: { organizationId: tenant.organizationId, environment: tenant.environment } },
    ...pipeline,
    { $limit: MAX_RESULTS },
  ];
}

/** How deep an answer may nest, arrays and objects (MongoDB's own limit on a document is of this order). */
export const MAX_ANSWER_DEPTH = 100;

/**
 * Whether `value` nests arrays and objects more than {@link MAX_ANSWER_DEPTH} deep. Walked with a
 * stack of its own: the checks and the JSON after it recurse, and an answer built thousands of
 * levels deep (a `$reduce` wrapping its value) would overflow the server's.
 */
export function nestsTooDeep(value: unknown): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (item === null || typeof item !== 'object') continue;
    if (depth > MAX_ANSWER_DEPTH) return true;
    for (const inner of Object.values(item)) pending.push([inner, depth + 1]);
  }
  return false;
}

/**
 * A number as MongoDB's driver answers it when it will not make it a JS number: an Int64 past
 * 2^53 (`Long`), any `Decimal128`, and `Int32`/`Double` when values are not promoted. Told apart
 * by their `_bsontype`, so that no copy of the bson package needs to be the one that made them.
 */
type BsonNumber = { _bsontype: 'Long' | 'Int32' | 'Double' | 'Decimal128'; toString(): string };

const BSON_NUMBERS = new Set(['Long', 'Int32', 'Double', 'Decimal128']);

function isBsonNumber(value: unknown): value is BsonNumber {
  return (
    value !== null &&
    typeof value === 'object' &&
    BSON_NUMBERS.has(String((value as { _bsontype?: unknown })._bsontype))
  );
}

/** Its exact decimal digits (a Long's, or a Decimal128's), and the JS number the embedded read store would answer. */
function bsonNumberOf(value: BsonNumber): { digits: string; number: number } {
  const digits = value.toString();
  return { digits, number: Number(digits) };
}

/** Whether `digits` (a BSON number's) is an integer a JS number cannot hold exactly. */
function isUnsafeInteger(digits: string, number: number): boolean {
  if (!Number.isInteger(number)) return false;
  if (/^-?\d+$/.test(digits)) {
    const exact = BigInt(digits);
    return exact > BigInt(Number.MAX_SAFE_INTEGER) || exact < -BigInt(Number.MAX_SAFE_INTEGER);
  }
  return !Number.isSafeInteger(number);
}

/**
 * The first number in `rows` that JSON cannot carry exactly (an integer past 2^53 − 1: a sum of
 * 10^8-scaled amounts past about 90 million), with where it is; null when every number is exact.
 * Such a total is wrong in its last digits, so it is refused rather than answered. MongoDB's
 * numbers (see {@link BsonNumber}) are checked as the JS numbers the embedded read store answers,
 * so both stores refuse the same answers (a Long past 2^53, exact in MongoDB, is refused too).
 */
export function inexactNumberIn(value: unknown, path = 'data'): { path: string; value: number | string } | null {
  if (typeof value === 'number')
    return Number.isInteger(value) && !Number.isSafeInteger(value) ? { path, value } : null;
  if (isBsonNumber(value)) {
    const { digits, number } = bsonNumberOf(value);
    return isUnsafeInteger(digits, number) ? { path, value: digits } : null;
  }
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = inexactNumberIn(item, `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === 'object')
    for (const [key, inner] of Object.entries(value)) {
      const found = inexactNumberIn(inner, `${path}.${key}`);
      if (found) return found;
    }
  return null;
}

/**
 * `value` with MongoDB's numbers (see {@link BsonNumber}) made the JS numbers the embedded read
 * store answers, so the answer's JSON is the same from both (not `{"low":…}` or
 * `{"$numberDecimal":…}`). Run after {@link inexactNumberIn}: every integer left is exact.
 */
export function plainNumbers<T>(value: T): T {
  if (isBsonNumber(value)) return bsonNumberOf(value).number as T;
  if (Array.isArray(value)) return value.map((item: unknown) => plainNumbers(item)) as T;
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype)
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, plainNumbers(inner)])) as T;
  return value;
}

export const inexactMessage = (found: { path: string; value: number | string }) =>
  `the answer's ${found.path} is ${found.value}, past 2^53 - 1, where a number can no longer be answered exact to the unit: sum amounts split in high and low digits (as GET /api/v1/reports/volume does, exactly) or group them finer`;
