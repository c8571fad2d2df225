import {
  createActor,
  initialTransition,
  type AnyActorScope,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type EventFromLogic,
  type SnapshotFrom,
} from 'xstate';
import type { JsonObject } from '../shared/json.ts';

/** A domain event as deciders produce it and the log stores it. */
export type DomainEvent = { type: string; data: object };

/** Thrown when a stream holds an event its machine does not accept in the current state. */
export class IllegalEventError extends Error {
  override readonly name = 'IllegalEventError';
  constructor(
    readonly machineId: string,
    readonly state: unknown,
    readonly eventType: string,
  ) {
    super(`${machineId}: event ${eventType} is not accepted in state ${JSON.stringify(state)}`);
  }
}

/**
 * An event-sourced record: how its stream is named, how its events fold into state, and how a
 * command turns into new events.
 */
export type Aggregate<TState, TEvent extends DomainEvent, TCommand> = {
  /** Stream category, e.g. `checkout_session`. */
  category: string;
  initialState(): TState;
  evolve(state: TState, event: TEvent): TState;
  decide(state: TState, command: TCommand, ctx: { now: string }): TEvent[];
  /** The statechart whose snapshots are the state, for a record modelled by one (the inspector shows it). */
  machine?: AnyStateMachine;
};

export const streamIdOf = (category: string, id: string): string => `${category}-${id}`;

/** A scope for pure transitions, as xstate's own `transition()` builds one: no side effect goes anywhere. */
function inertScope(machine: AnyStateMachine): AnyActorScope {
  const self = createActor(machine);
  const ignore = () => {};
  return {
    self,
    id: '',
    sessionId: '',
    logger: ignore,
    defer: ignore,
    emit: ignore,
    system: self.system,
    stopChild: ignore,
    actionExecutor: ignore,
  };
}

/**
 * Fold functions for a statechart used as a pure decider: the initial snapshot, and one step that
 * refuses an event the current state cannot take.
 */
export function machineFold<TMachine extends AnyStateMachine>(machine: TMachine) {
  type State = SnapshotFrom<TMachine>;
  // Snapshots are never changed in place (transition() makes new ones), so one initial snapshot serves every fold.
  let initial: { snapshot: State } | null = null;
  const initialState = (): State => {
    initial ??= { snapshot: initialTransition(machine as AnyStateMachine)[0] as State };
    return initial.snapshot;
  };
  // xstate's transition() builds a throwaway actor (computing the initial snapshot again) on every
  // call, just to be its scope's `self`; the scope is built once here instead. These machines run
  // no actions but `assign`, so nothing is ever handed to the scope's executor.
  let scope: AnyActorScope | null = null;
  const evolve = (state: State, event: EventFromLogic<TMachine>): State => {
    const snapshot = state as AnyMachineSnapshot;
    if (!snapshot.can(event)) throw new IllegalEventError(machine.id, snapshot.value, (event as { type: string }).type);
    scope ??= inertScope(machine);
    return machine.transition(snapshot, event, scope) as State;
  };
  return { initialState, evolve, machine };
}

/** Events cross into the log as JSON. */
export const toJsonData = (data: object): JsonObject => data as JsonObject;
