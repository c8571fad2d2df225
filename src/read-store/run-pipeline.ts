import { Aggregator, ProcessingMode } from 'mingo';
import { Aggregator as BareAggregator } from 'mingo/aggregator';
import { Context } from 'mingo/core';
import * as accumulatorOperators from 'mingo/operators/accumulator';
import * as expressionOperators from 'mingo/operators/expression';
import * as pipelineOperators from 'mingo/operators/pipeline';
import * as projectionOperators from 'mingo/operators/projection';
import * as queryOperators from 'mingo/operators/query';
import * as windowOperators from 'mingo/operators/window';
import type { AccumulatorOperator, ExpressionOperator } from 'mingo/types';
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
  /** Another collection, for `$lookup` and the like: clones, as stages may write into them. */
  resolveCollection(name: string): Record<string, unknown>[];
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
  const { maxTimeMs } = limits;
  if (maxTimeMs === undefined) return new Aggregator(stages, options).run(documents);

  const now = limits.now ?? Date.now;
  const deadline = now() + maxTimeMs;
  const check = () => {
    if (now() > deadline) throw new PipelineTimeoutError(maxTimeMs);
  };
  // mingo's own Aggregator merges its operators over any given (theirs win): the bare one takes ours alone.
  const context = Context.init({
    expression: timed(expressionOperators as unknown as Operators<ExpressionOperator>, check),
    accumulator: timed(accumulatorOperators as unknown as Operators<AccumulatorOperator>, check),
    pipeline: pipelineOperators,
    projection: projectionOperators,
    query: queryOperators,
    window: windowOperators,
  });
  const results: Record<string, unknown>[] = [];
  for (const result of new BareAggregator(stages, { ...options, context }).stream(documents)) {
    check();
    results.push(result as Record<string, unknown>);
  }
  return results;
}
