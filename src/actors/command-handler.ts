import type { Clock } from '../shared/clock.ts';
import { ConflictError, NotFoundError } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import {
  WrongExpectedRevisionError,
  type Environment,
  type EventStore,
  type NewEvent,
  type RecordedEvent,
} from '../event-store/event-store.ts';
import { streamIdOf, toJsonData, type Aggregate, type DomainEvent } from './aggregate.ts';

/** Who is acting, for which tenant, and why (correlation). */
export type CommandContext = {
  organizationId: string;
  environment: Environment;
  actor: string;
  /** The address of the client that asked (API and dashboard requests), kept for the audit trail. */
  clientAddress?: string;
  correlationId?: string;
  causationId?: string;
  /**
   * The caller believes the record has no events yet (a create, a first attempt): its stream is not
   * read first. If it has events after all, the append conflicts and the command is decided again
   * on the stream as read, as after any conflict.
   */
  assumeNew?: boolean;
};

export type CommandResult<TState> = {
  state: TState;
  /** Events appended by this command (none when it changed nothing). */
  events: NewEvent[];
  /** Log position of the last appended event, or null when nothing was appended. */
  position: bigint | null;
  /** Whether the stream existed before the command. */
  existed: boolean;
};

/** A command that appended events, as an observer (the live inspector) sees it once it is in the log. */
export type HandledCommand = {
  aggregate: Aggregate<unknown, DomainEvent, unknown>;
  id: string;
  streamId: string;
  /** The state before the command, and after each of its events in turn. */
  before: unknown;
  steps: { event: DomainEvent; state: unknown }[];
  existed: boolean;
  ctx: CommandContext;
};

export type LoadedRecord<TState> = { state: TState; revision: number | null; events: RecordedEvent[] };

export type CommandHandler = {
  /**
   * Load, decide, append with the expected revision; reload and retry on a conflict. `loaded` is the
   * stream as the caller has just read it (`load`): the first attempt decides on it instead of reading again.
   */
  handle<TState, TEvent extends DomainEvent, TCommand>(
    aggregate: Aggregate<TState, TEvent, TCommand>,
    id: string,
    command: TCommand,
    ctx: CommandContext,
    loaded?: LoadedRecord<TState>,
  ): Promise<CommandResult<TState>>;
  /** Fold a record's stream; a record of another tenant or environment is treated as absent. */
  load<TState, TEvent extends DomainEvent, TCommand>(
    aggregate: Aggregate<TState, TEvent, TCommand>,
    id: string,
    tenant: { organizationId: string; environment: Environment } | null,
  ): Promise<LoadedRecord<TState>>;
};

/** When a client may ask again after a record stayed busy through every retry (`Retry-After`). */
const BUSY_RETRY_AFTER_SECONDS = 1;

export function createCommandHandler(deps: {
  eventStore: EventStore;
  clock: Clock;
  maxAttempts?: number;
  /** Told of each command that appended events; what it throws is its own concern, never the command's. */
  observe?: (handled: HandledCommand) => void;
}): CommandHandler {
  const { eventStore, clock, observe } = deps;
  const maxAttempts = deps.maxAttempts ?? 50;

  const load: CommandHandler['load'] = async (aggregate, id, tenant) => {
    const events = await eventStore.readStream(streamIdOf(aggregate.category, id));
    const first = events[0];
    if (
      first &&
      tenant &&
      (first.metadata.organizationId !== tenant.organizationId || first.metadata.environment !== tenant.environment)
    ) {
      return { state: aggregate.initialState(), revision: null, events: [] };
    }
    let state = aggregate.initialState();
    for (const event of events)
      state = aggregate.evolve(state, event as unknown as Parameters<typeof aggregate.evolve>[1]);
    return { state, revision: events.length ? events[events.length - 1]!.revision : null, events };
  };

  const handle: CommandHandler['handle'] = async (aggregate, id, command, ctx, given) => {
    const streamId = streamIdOf(aggregate.category, id);
    /** The kind of record as a refusal names it (`checkout session`). */
    const what = aggregate.category.replace(/_/g, ' ');
    for (let attempt = 1; ; attempt++) {
      const loaded =
        attempt === 1 && given
          ? given
          : attempt === 1 && ctx.assumeNew
            ? { state: aggregate.initialState(), revision: null, events: [] }
            : await load(aggregate, id, null);
      const first = loaded.events[0];
      if (
        first &&
        (first.metadata.organizationId !== ctx.organizationId || first.metadata.environment !== ctx.environment)
      ) {
        throw new NotFoundError(what, id);
      }
      const now = new Date(clock.now()).toISOString();
      const decided = aggregate.decide(loaded.state, command, { now });
      if (decided.length === 0)
        return { state: loaded.state, events: [], position: null, existed: loaded.revision !== null };
      let state = loaded.state;
      const steps: HandledCommand['steps'] = [];
      for (const event of decided) {
        state = aggregate.evolve(state, event);
        steps.push({ event, state });
      }
      const correlationId = ctx.correlationId ?? newId();
      const events: NewEvent[] = decided.map((event) => ({
        id: newId(),
        type: event.type,
        data: toJsonData(event.data),
        metadata: {
          organizationId: ctx.organizationId,
          environment: ctx.environment,
          actor: ctx.actor,
          correlationId,
          ...(ctx.causationId ? { causationId: ctx.causationId } : {}),
          ...(ctx.clientAddress ? { clientAddress: ctx.clientAddress } : {}),
          occurredAt: now,
        },
      }));
      try {
        const result = await eventStore.append(streamId, events, loaded.revision ?? 'no_stream');
        const existed = loaded.revision !== null;
        if (observe) {
          try {
            observe({
              aggregate: aggregate as unknown as HandledCommand['aggregate'],
              id,
              streamId,
              before: loaded.state,
              steps,
              existed,
              ctx,
            });
          } catch {
            // An observer is a window on the log, never a reason for a command to fail.
          }
        }
        return { state, events, position: result.position, existed };
      } catch (error) {
        if (error instanceof WrongExpectedRevisionError && attempt < maxAttempts) {
          // Under heavy contention (many payers racing for the last promo code) a short random
          // pause spreads the retries out, so every loser gets to re-decide on fresh state.
          if (attempt > 2)
            await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(2 ** attempt, 50)));
          continue;
        }
        // Still losing the race after every retry: a busy record, which passes (a 409 to ask again after, a
        // hosted page's 503), not the unexpected 500 of a bare revision error.
        if (error instanceof WrongExpectedRevisionError)
          throw new ConflictError(
            `${what} ${id} is being changed by other requests at the same moment; try again in a moment`,
            'conflict',
            BUSY_RETRY_AFTER_SECONDS,
          );
        throw error;
      }
    }
  };

  return { handle, load };
}
