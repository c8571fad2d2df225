import { ProcessingMode } from 'mingo';
import { Aggregator as BareAggregator } from 'mingo/aggregator';
import { Context } from 'mingo/core';
import * as accumulatorOperators from 'mingo/operators/accumulator';
import * as expressionOperators from 'mingo/operators/expression';
import * as pipelineOperators from 'mingo/operators/pipeline';
import * as projectionOperators from 'mingo/operators/projection';
import * as queryOperators from 'mingo/operators/query';
import * as windowOperators from 'mingo/operators/window';
import type { AccumulatorOperator, ExpressionOperator } from 'mingo/types';
import { resolve } from 'mingo/util';
import { DATE_OPERATORS } from './date-operators.ts';
import { assertReadOnlyPipeline } from './read-store-checks.ts';
import type { Filter, ReadDocument } from './read-store.ts';

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

/** mingo's expression operators, with MongoDB's date operators where mingo's answer otherwise (see date-operators.ts). */
const EXPRESSION_OPERATORS = {
  ...expressionOperators,
  ...DATE_OPERATORS,
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
