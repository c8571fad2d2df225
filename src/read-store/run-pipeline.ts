import { ProcessingMode } from 'mingo';
import { Aggregator as BareAggregator } from 'mingo/aggregator';
import { Context, evalExpr } from 'mingo/core';
import * as accumulatorOperators from 'mingo/operators/accumulator';
import * as expressionOperators from 'mingo/operators/expression';
import * as pipelineOperators from 'mingo/operators/pipeline';
import * as projectionOperators from 'mingo/operators/projection';
import * as queryOperators from 'mingo/operators/query';
import * as windowOperators from 'mingo/operators/window';
import type { AccumulatorOperator, ExpressionOperator } from 'mingo/types';
import { resolve } from 'mingo/util';
import { assertReadOnlyPipeline } from './read-store-checks.ts';
import type { Filter, ReadDocument } from './read-store.ts';
import { isTimeZone, zoneOffsetMinutes } from '../shared/time-zone.ts';

/** An embedded store's pipeline that ran past its `maxTimeMs`: stopped, as MongoDB stops one (`MaxTimeMSExpired`). */
export class PipelineTimeoutError extends Error {
  override readonly name = 'PipelineTimeoutError';
  constructor(readonly maxTimeMs: number) {
    super(`the pipeline ran past ${maxTimeMs} ms and was stopped`);
  }
}

/** Where a store's pipeline reads from: the documents a filter selects (with the store's indexes), or all of them. */
export type PipelineSource = {
  matching(filter: Filter): Iterable<ReadDocument>;
  all(): Iterable<ReadDocument>;
  /** Another collection, for `$graphLookup`, `$unionWith` and a `$lookup` with a pipeline: clones, as stages may write into them. */
  resolveCollection(name: string): Record<string, unknown>[];
  /** The stored documents of another collection that match `filter` (with its indexes): not to be changed. */
  matchingIn(name: string, filter: Filter): readonly ReadDocument[];
};

const isPrimitive = (value: unknown): value is string | number | boolean | null =>
  value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';

/**
 * `$lookup` on `localField` / `foreignField`, reading only the foreign documents each local value
 * matches (by the store's indexes, `_id` directly), so a tenant's report costs what it joins, not
 * every tenant's collection: mingo's copies and hashes the whole foreign collection per run. Equality
 * is MongoDB's, a query's (an array on either side matches by element, missing as null). Each joined
 * document is cloned once per stage, as stages after it may write into it. Other forms go to mingo.
 */
const indexedLookup =
  (source: PipelineSource): typeof pipelineOperators.$lookup =>
  (collection, expr, options) => {
    const { from, localField, foreignField, as, ...rest } = expr as unknown as Record<string, unknown>;
    const plain = typeof from === 'string' && typeof localField === 'string' && typeof foreignField === 'string';
    if (!plain || typeof as !== 'string' || Object.keys(rest).length > 0)
      return pipelineOperators.$lookup(collection, expr, options);
    const clones = new Map<string, Record<string, unknown>>();
    const byValue = new Map<unknown, Record<string, unknown>[]>();
    const joinedTo = (value: unknown): Record<string, unknown>[] => {
      const known = isPrimitive(value) ? byValue.get(value) : undefined;
      if (known !== undefined) return known;
      // Every stored `_id` is a non-empty string: nothing else equals one. `$eq`: a value is never an operator.
      const found =
        foreignField === '_id' && typeof value !== 'string'
          ? []
          : source.matchingIn(from, { [foreignField]: isPrimitive(value) ? value : { $eq: value } });
      const joined = found.map((doc) => {
        let clone = clones.get(doc._id);
        if (clone === undefined) {
          clone = structuredClone(doc);
          clones.set(doc._id, clone);
        }
        return clone;
      });
      if (isPrimitive(value)) byValue.set(value, joined);
      return joined;
    };
    return collection.map((doc) => {
      const local = resolve(doc as Record<string, unknown>, localField) ?? null;
      const joined = Array.isArray(local) ? [...new Set(local.flatMap(joinedTo))] : joinedTo(local);
      return { ...(doc as Record<string, unknown>), [as]: joined };
    });
  };

/**
 * `$dateToString` with a named zone given to mingo as the zone's offset at that instant (from Intl):
 * mingo reads it off the server's own clock, an hour wrong around each of the server zone's changes
 * unless it runs in UTC, and refuses names past `Area/City` (`America/Argentina/Buenos_Aires`, `Etc/GMT+5`).
 */
const zonedDateToString: typeof expressionOperators.$dateToString = (obj, expr, options) => {
  const args = evalExpr(obj, expr, options) as Record<string, unknown>;
  const { date, timezone } = args;
  if (!(date instanceof Date) || typeof timezone !== 'string' || !isTimeZone(timezone))
    return expressionOperators.$dateToString(obj, expr, options);
  const minutes = zoneOffsetMinutes(date.getTime(), timezone);
  const hhmm = (n: number) => String(n).padStart(2, '0');
  const offset = `${minutes < 0 ? '-' : '+'}${hhmm(Math.floor(Math.abs(minutes) / 60))}:${hhmm(Math.abs(minutes) % 60)}`;
  // Each argument as the value it came to, which mingo must not read again (a string starting `$`).
  const literal = Object.fromEntries(
    Object.entries({ ...args, timezone: offset }).map(([k, v]) => [k, { $literal: v }]),
  );
  return expressionOperators.$dateToString(obj, literal, options);
};

type Operators<T> = Record<string, T>;

/**
 * Every operator wrapped to look at the clock on each call: mingo runs a pipeline synchronously on
 * the server's one thread, and nested `$map`s over a `$split` can take hours on one document.
 */
function timed<T extends ExpressionOperator | AccumulatorOperator>(
  operators: Operators<T>,
  check: () => void,
): Operators<T> {
  const wrapped: Operators<T> = {};
  for (const [name, operator] of Object.entries(operators)) {
    if (typeof operator !== 'function') continue;
    const call = operator as (...args: unknown[]) => unknown;
    wrapped[name] = ((...args: unknown[]) => {
      check();
      return call(...args);
    }) as unknown as T;
  }
  return wrapped;
}

/** An expression operator as mingo calls one (its own type is the union of all of them). */
type Expression = (...args: Parameters<typeof expressionOperators.$year>) => unknown;
const { $dayOfWeek, $dayOfYear, $isoWeek, $month, $year } = expressionOperators as unknown as Record<
  '$dayOfWeek' | '$dayOfYear' | '$isoWeek' | '$month' | '$year',
  Expression
>;

/**
 * MongoDB's `$week` (`%U`): weeks start on Sunday and the days before a year's first Sunday are its
 * week 0. mingo's counts from the ISO week: 53 for Sunday 1 January 2023, where MongoDB says 1.
 */
const week: Expression = (obj, expr, options) =>
  Math.floor((Number($dayOfYear(obj, expr, options)) + 7 - Number($dayOfWeek(obj, expr, options))) / 7);

/**
 * MongoDB's `$isoWeekYear` (`%G`): the year the ISO week belongs to. mingo's is the calendar year
 * (2027 for Friday 1 January 2027, which is in 2026's week 53).
 */
const isoWeekYear: Expression = (obj, expr, options) => {
  const [year, month, isoWeek] = [$year, $month, $isoWeek].map((get) => Number(get(obj, expr, options)));
  if (month === 1 && isoWeek! >= 52) return year! - 1;
  return month === 12 && isoWeek === 1 ? year! + 1 : year!;
};

/** `$dateToString` with `%U` and `%G` as MongoDB writes them (see above), a named zone read from Intl; the rest is mingo's. */
const dateToString = ((obj, expr, options) => {
  const args = expr as Record<string, unknown>;
  const { format, date, timezone } = args;
  if (typeof format !== 'string' || !/%[UG]/.test(format) || evalExpr(obj, date, options) == null)
    return zonedDateToString(obj, expr, options);
  const at = timezone === undefined ? { date } : { date, timezone };
  // Spec by spec, so that `%%U` (a percent sign, then U) is no week.
  const written = format.replace(/%./g, (spec) => {
    if (spec === '%U') return String(week(obj, at, options)).padStart(2, '0');
    return spec === '%G' ? String(isoWeekYear(obj, at, options)).padStart(4, '0') : spec;
  });
  return zonedDateToString(obj, { ...args, format: written }, options);
}) as Expression;

/** mingo's expression operators, with MongoDB's weeks where mingo counts them otherwise. */
const EXPRESSION_OPERATORS = {
  ...expressionOperators,
  $week: week,
  $isoWeekYear: isoWeekYear,
  $dateToString: dateToString,
} as unknown as Operators<ExpressionOperator>;

/**
 * Runs `pipeline` as the embedded stores do: a leading `$match` on the stored documents (using the
 * indexes), clones for the rest. With `maxTimeMs` it is stopped past that time, between documents
 * and inside any expression (a `PipelineTimeoutError`), as MongoDB stops one given `maxTimeMS`.
 */
export function runPipeline(
  source: PipelineSource,
  pipeline: Record<string, unknown>[],
  limits: { maxTimeMs?: number; now?: () => number } = {},
): Record<string, unknown>[] {
  assertReadOnlyPipeline(pipeline);
  const [first, ...rest] = pipeline;
  const leadingMatch = first !== undefined && Object.keys(first).length === 1 ? first['$match'] : undefined;
  const matched = typeof leadingMatch === 'object' && leadingMatch !== null && !Array.isArray(leadingMatch);
  const stages = matched ? rest : pipeline;
  const documents = matched ? source.matching(leadingMatch as Filter) : source.all();
  const options = { processingMode: ProcessingMode.CLONE_INPUT, collectionResolver: source.resolveCollection };
  // mingo's own Aggregator merges its operators over any given (theirs win): the bare one takes ours alone.
  const aggregator = (expression: Operators<ExpressionOperator>, accumulator: Operators<AccumulatorOperator>) => {
    const context = Context.init({
      expression,
      accumulator,
      pipeline: { ...pipelineOperators, $lookup: indexedLookup(source) },
      projection: projectionOperators,
      query: queryOperators,
      window: windowOperators,
    });
    return new BareAggregator(stages, { ...options, context });
  };
  const { maxTimeMs } = limits;
  const expression = EXPRESSION_OPERATORS;
  const accumulator = accumulatorOperators as unknown as Operators<AccumulatorOperator>;
  if (maxTimeMs === undefined) return aggregator(expression, accumulator).run(documents);

  const now = limits.now ?? Date.now;
  const deadline = now() + maxTimeMs;
  const check = () => {
    if (now() > deadline) throw new PipelineTimeoutError(maxTimeMs);
  };
  const timedAggregator = aggregator(timed(expression, check), timed(accumulator, check));
  const results: Record<string, unknown>[] = [];
  for (const result of timedAggregator.stream(documents)) {
    check();
    results.push(result as Record<string, unknown>);
  }
  return results;
}
