import type { Aggregate, DomainEvent } from './aggregate.ts';

/**
 * Decider tests in given / when / then form: fold the given events (through the machine, so an
 * event the state refuses fails the test), then decide the command.
 */
export function givenWhenThen<TState, TEvent extends DomainEvent, TCommand>(
  aggregate: Aggregate<TState, TEvent, TCommand>,
) {
  return (given: TEvent[]) => ({
    state(): TState {
      return given.reduce((state, event) => aggregate.evolve(state, event), aggregate.initialState());
    },
    when(command: TCommand, now = '2026-01-01T00:30:00.000Z'): TEvent[] {
      return aggregate.decide(this.state(), command, { now });
    },
  });
}
