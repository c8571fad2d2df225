import type { Aggregate, DomainEvent } from '../actors/aggregate.ts';
import type { Environment, RecordedEvent } from '../event-store/event-store.ts';
import { categoryOf } from '../projections/projection.ts';
import type { JsonObject } from '../shared/json.ts';

/*
 * A workflow (process manager) as a pure decider over the events it reacts to: its state per
 * instance is folded from those events (`evolve`), and each event may decide commands for other
 * records (`decide`, on the state before the event). It reads no read model and sends nothing
 * itself: the runner (workflow-runner.ts) feeds it from the log and sends what it decides through
 * the command handler. Nothing here does I/O, so its tests are given / when / then on events.
 */

/** Who a workflow's command acts for (the tenant of the record it goes to) and why. */
export type WorkflowContext = {
  organizationId: string;
  environment: Environment;
  actor: string;
  causationId: string;
};

/** A context acting for the tenant of `event` (the tenant of the record it came from), as `actor`, because of `causationId`. */
export const actingFor = (event: RecordedEvent, actor: string, causationId: string): WorkflowContext => ({
  organizationId: event.metadata.organizationId,
  environment: event.metadata.environment,
  actor,
  causationId,
});

/**
 * A command of a workflow for one record: the aggregate's category, the record's id (derived, so a
 * repeat names the same record) and the command, as plain JSON so it can wait in the state store.
 */
export type WorkflowCommand = {
  aggregate: string;
  id: string;
  command: JsonObject;
  context: WorkflowContext;
};

/**
 * A step a workflow decides that needs more than the log tells it (a catalog lookup, an invoice
 * number claimed): the runner hands `input` to the handler registered under `effect`, which looks
 * up what it needs and sends its commands itself. Like a command it is stored before it runs, runs
 * in order with the instance's commands, and may run twice: a handler checks the records it would
 * create or change first and does nothing for a repeat.
 */
export type WorkflowEffect = {
  effect: string;
  input: JsonObject;
  context: WorkflowContext;
};

/** What a workflow decides: commands for records, and effects for what needs a lookup first. */
export type WorkflowStep = WorkflowCommand | WorkflowEffect;

export const isEffect = (step: WorkflowStep): step is WorkflowEffect => 'effect' in step;

/** Runs an effect: throws InvalidStateError or NotFoundError when the domain refuses it (dropped), anything else to retry. */
export type EffectHandler = (input: JsonObject, context: WorkflowContext) => Promise<void>;

/** The workflow command `command` for record `id` of `aggregate`, type-checked against that aggregate's commands. */
export function commandFor<TState, TEvent extends DomainEvent, TCommand extends object>(
  aggregate: Aggregate<TState, TEvent, TCommand>,
  id: string,
  command: TCommand,
  context: WorkflowContext,
): WorkflowCommand {
  return { aggregate: aggregate.category, id, command: command as unknown as JsonObject, context };
}

/**
 * How a workflow is correlated with an event: the id of its instance the event belongs to, or
 * `{ sameAs: streamId }` (the instance of another stream the workflow has already seen, e.g. the
 * subscription a renewal invoice bills), or `{ only: id }` (that instance, for this event alone: a
 * stream shared by many instances, such as a coupon's redemptions of many sessions), or null: the
 * event's stream decides (the instance its first correlated event named; an event of a stream
 * never correlated is not the workflow's), or false: not an event the workflow reacts to. A stream
 * stays with the instance its first correlated event named: a later event naming another is
 * folded into that first one.
 */
export type Correlation = string | { sameAs: string } | { only: string } | null | false;

/** `TStep`: what its decide answers (commands only, unless it decides effects too). */
export type Workflow<TState, TStep extends WorkflowStep = WorkflowStep> = {
  /** Names its checkpoint, its state store and its lease. */
  name: string;
  /** Bumped when `evolve` changes: stored states of another version are dropped and rebuilt from the log. */
  version: number;
  /** The stream categories whose events it reads (`invoice`, `checkout_session`, ...). */
  categories: readonly string[];
  /** The aggregates its commands go to. */
  aggregates: readonly Aggregate<unknown, DomainEvent, never>[];
  /** The effects it decides, each run by the handler of that name the runner is given. */
  effects?: readonly string[];
  correlate(event: RecordedEvent): Correlation;
  initialState(): TState;
  evolve(state: TState, event: RecordedEvent): TState;
  /** The commands and effects `event` calls for, given the instance's state before it; [] for a repeat. */
  decide(event: RecordedEvent, state: TState): TStep[];
};

/**
 * Workflow tests in given / when / then form: fold the given events into the state, then decide
 * the `when` event on it. Events are built by the test (see `recorded` in workflow-test-events.ts).
 */
export function givenWhenThenWorkflow<TState, TStep extends WorkflowStep>(workflow: Workflow<TState, TStep>) {
  return (given: RecordedEvent[]) => {
    const state = given.reduce((s, event) => workflow.evolve(s, event), workflow.initialState());
    return {
      state: () => state,
      when: (event: RecordedEvent): TStep[] => workflow.decide(event, state),
      /** The `when` event decided, then decided again once folded in (a redelivery): both lists. */
      whenTwice(event: RecordedEvent): [TStep[], TStep[]] {
        return [workflow.decide(event, state), workflow.decide(event, workflow.evolve(state, event))];
      },
    };
  };
}

/**
 * The events of `events` (a log, in order) that the runner would fold into `instance`, following
 * the workflow's correlation as the runner does (a stream stays with the instance its first
 * correlated event named; `sameAs` follows a stream already seen): the `given` of a workflow test.
 */
export function eventsOfInstance<TState>(
  workflow: Workflow<TState>,
  events: readonly RecordedEvent[],
  instance: string,
): RecordedEvent[] {
  const links = new Map<string, string>();
  return events.filter((event) => {
    if (!workflow.categories.includes(categoryOf(event.streamId))) return false;
    const correlation = workflow.correlate(event);
    if (correlation === false) return false;
    if (correlation !== null && typeof correlation === 'object' && 'only' in correlation)
      return correlation.only === instance;
    let found = links.get(event.streamId) ?? null;
    if (found === null && correlation !== null)
      found = typeof correlation === 'string' ? correlation : (links.get(correlation.sameAs) ?? null);
    if (found !== null) links.set(event.streamId, found);
    return found === instance;
  });
}
