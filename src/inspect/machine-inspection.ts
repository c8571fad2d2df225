import type { StatelyInspectionEvent } from '@statelyai/inspect';
import type { ActorRefLike, AnyEventObject, AnyStateMachine } from 'xstate';
import { type Aggregate, type DomainEvent, streamIdOf } from '../actors/aggregate.ts';
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

/**
 * A record seen through its machine: the inspector reads `logic.config` for the chart it draws, and
 * `_parent` for the actor it nests under; `name` says which record it is (see `namingActors`).
 */
type InspectedActor = ActorRefLike & {
  id: string;
  name: string;
  logic: AnyStateMachine;
  _parent?: { sessionId: string };
};

/** Whose record it is, as the inspector names it. */
export type RecordOwner = { organizationId: string; environment: string };

/** The invoice or subscription a record was made for (a session for an invoice, an invoice of a subscription). */
export function madeFor(state: unknown): { kind: 'invoice' | 'subscription'; id: string } | null {
  const context = (state as { context?: Record<string, unknown> } | null)?.context ?? {};
  for (const record of Object.values(context)) {
    const links = record as { invoiceId?: unknown; subscriptionId?: unknown } | null;
    if (typeof links?.invoiceId === 'string') return { kind: 'invoice', id: links.invoiceId };
    if (typeof links?.subscriptionId === 'string') return { kind: 'subscription', id: links.subscriptionId };
  }
  return null;
}

/** An actor's name: the record's id, whose it is, and what it was made for (`cs_1 (org_1/test) for invoice inv_1`). */
export function actorName(id: string, owner: RecordOwner, parent: { kind: string; id: string } | null): string {
  return `${id} (${owner.organizationId}/${owner.environment})${parent ? ` for ${parent.kind} ${parent.id}` : ''}`;
}

function actorFor(
  record: { streamId: string; name: string; parentStreamId: string | null },
  machine: AnyStateMachine,
  current: () => unknown,
): InspectedActor {
  return {
    id: record.streamId,
    sessionId: record.streamId,
    name: record.name,
    logic: machine,
    // The inspector nests an actor under its `_parent` (sent as `parentId`, and `rootId` the top one's):
    // `actor()`'s own `info.parentId` is lost in @statelyai/inspect 0.7.2 (`a ?? b ? c : d` reads `(a ?? b) ? c : d`).
    ...(record.parentStreamId ? { _parent: { sessionId: record.parentStreamId } } : {}),
    send: () => {},
    getSnapshot: current,
  };
}

/**
 * `@statelyai/inspect`'s `actor()` names an actor by its machine's id alone, so 200 sessions would all
 * read "checkoutSession": `serialize` (given to the inspector) puts the name Weir's actor carries on its
 * actor message, and `sink` wraps the inspector so `actor()` hands that name over (it serializes synchronously).
 */
export function namingActors() {
  let naming: string | undefined;
  return {
    serialize: (event: StatelyInspectionEvent): StatelyInspectionEvent =>
      event.type === '@xstate.actor' && naming !== undefined ? { ...event, name: naming } : event,
    sink: (inspector: InspectorSink): InspectorSink => ({
      actor(actor, snapshot) {
        naming = typeof actor === 'string' ? undefined : (actor as { name?: string }).name;
        try {
          inspector.actor(actor, snapshot);
        } finally {
          naming = undefined;
        }
      },
      event: (actor, event, info) => inspector.event(actor, event, info),
      snapshot: (actor, snapshot, info) => inspector.snapshot(actor, snapshot, info),
    }),
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
    // What it was made for is in its first event: the state after the command says it from the start.
    const parent = madeFor(handled.steps.at(-1)?.state ?? handled.before);
    const parentStreamId = parent ? streamIdOf(parent.kind, parent.id) : null;
    const actor = actorFor(
      {
        streamId: handled.streamId,
        name: actorName(handled.id, handled.ctx, parent),
        // Nested only under an actor the inspector was shown: one it never saw would hide this one.
        parentStreamId: parentStreamId && registered.has(parentStreamId) ? parentStreamId : null,
      },
      machine,
      () => current,
    );
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
    id: string;
    streamId: string;
    owner: RecordOwner;
    events: { type: string; data: object; actor: string }[];
  },
  pause: () => Promise<void>,
): Promise<number> {
  let state = record.aggregate.initialState();
  const evolve = (from: unknown, event: { type: string; data: object }) => record.aggregate.evolve(from, event);
  // Named as the live inspection names it; alone on the page, it nests under nothing.
  const parent = madeFor(record.events.reduce(evolve, state));
  const name = actorName(record.id, record.owner, parent);
  const actor = actorFor(
    { streamId: record.streamId, name, parentStreamId: null },
    record.aggregate.machine,
    () => state,
  );
  sink.actor(actor, inspected(state));
  for (const { type, data, actor: source } of record.events) {
    await pause();
    const event = { type, data };
    sink.event(actor, event, { source });
    state = evolve(state, event);
    sink.snapshot(actor, inspected(state), { event });
  }
  return record.events.length;
}
