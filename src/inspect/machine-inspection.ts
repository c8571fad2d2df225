import type { ActorRefLike, AnyEventObject, AnyStateMachine } from 'xstate';
import type { Aggregate, DomainEvent } from '../actors/aggregate.ts';
import type { HandledCommand } from '../actors/command-handler.ts';

/** What Weir sends to an inspector: the three calls of `@statelyai/inspect`'s `Inspector`. */
export type InspectorSink = {
  actor(actor: ActorRefLike | string, snapshot?: InspectedSnapshot): void;
  event(actor: ActorRefLike | string, event: AnyEventObject, info?: { source?: string }): void;
  snapshot(actor: ActorRefLike | string, snapshot: InspectedSnapshot, info?: { event?: AnyEventObject }): void;
};

export type InspectedSnapshot = {
  status?: 'active' | 'done' | 'error' | 'stopped';
  value?: unknown;
  context?: unknown;
};

/** A record seen through its machine: the inspector reads `logic.config` for the chart it draws. */
type InspectedActor = ActorRefLike & { id: string; logic: AnyStateMachine };

function actorFor(streamId: string, machine: AnyStateMachine, current: () => unknown): InspectedActor {
  return {
    id: streamId,
    sessionId: streamId,
    logic: machine,
    send: () => {},
    getSnapshot: current,
  };
}

/** The parts of a machine snapshot the inspector shows (a snapshot also holds the machine and its children). */
export function inspected(state: unknown): InspectedSnapshot {
  const s = state as { status?: InspectedSnapshot['status']; value?: unknown; context?: unknown };
  return { status: s.status ?? 'active', value: s.value, context: s.context };
}

/**
 * Watches commands as the command handler appends them and shows each record modelled by a
 * statechart as a live actor: registered when first seen (with its state before the command), then
 * one event and one snapshot per appended event, in log order. Records of other kinds are skipped.
 */
export function createMachineInspection(sink: InspectorSink, options: { maxActors?: number } = {}) {
  const maxActors = options.maxActors ?? 10_000;
  const registered = new Set<string>();
  return (handled: HandledCommand): void => {
    const machine = handled.aggregate.machine;
    if (!machine) return;
    let current: unknown = handled.before;
    const actor = actorFor(handled.streamId, machine, () => current);
    if (!registered.has(handled.streamId)) {
      // A long-running process forgets the oldest records it announced; one seen again is announced again.
      if (registered.size >= maxActors) registered.clear();
      registered.add(handled.streamId);
      sink.actor(actor, inspected(handled.before));
    }
    for (const step of handled.steps) {
      const event = step.event as AnyEventObject;
      sink.event(actor, event, { source: handled.ctx.actor });
      current = step.state;
      sink.snapshot(actor, inspected(step.state), { event });
    }
  };
}

/**
 * Replays one record's stream through its machine for `weir inspect`: the same calls as the live
 * inspection, from its first event, `pause` awaited between events so a person can follow.
 */
export async function replayRecord(
  sink: InspectorSink,
  record: {
    aggregate: Aggregate<unknown, DomainEvent, unknown> & { machine: AnyStateMachine };
    streamId: string;
    events: { type: string; data: object; actor: string }[];
  },
  pause: () => Promise<void>,
): Promise<number> {
  let state = record.aggregate.initialState();
  const actor = actorFor(record.streamId, record.aggregate.machine, () => state);
  sink.actor(actor, inspected(state));
  for (const { type, data, actor: source } of record.events) {
    await pause();
    const event = { type, data };
    sink.event(actor, event, { source });
    state = record.aggregate.evolve(state, event);
    sink.snapshot(actor, inspected(state), { event });
  }
  return record.events.length;
}
