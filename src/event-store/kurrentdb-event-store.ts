import {
  ANY,
  BACKWARDS,
  END,
  FORWARDS,
  KurrentDBClient,
  NO_STREAM,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
  type AllStreamSubscription,
  type AppendResult as KurrentAppendResult,
  type AppendStreamState,
  type CurrentStreamState,
  type JSONEventType,
  type ReadPosition,
  type RecordedEvent as KurrentRecordedEvent,
} from '@kurrent/kurrentdb-client';
import type { JsonObject } from '../shared/json.ts';
import {
  WrongExpectedRevisionError,
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type RecordedEvent,
} from './event-store.ts';

/**
 * The production event store: KurrentDB (formerly EventStoreDB) through `@kurrent/kurrentdb-client`.
 *
 * Mapping:
 * - one Weir stream is one KurrentDB stream; our event id is the KurrentDB event id (a uuid), our
 *   `data` is the JSON event data and our metadata is the JSON event metadata;
 * - `revision` is the KurrentDB stream revision; `ExpectedRevision` maps to `streamState`
 *   (`no_stream` -> NO_STREAM, `any` -> ANY, n -> BigInt(n));
 * - `position` is the event's commit position in `$all`.
 *
 * Assumptions about positions (hold for every event written through the gRPC API, which writes
 * implicitly committed transactions; legacy TCP explicit transactions are not supported):
 * - every event's commit position equals its prepare position and is unique and strictly
 *   increasing in `$all`, so the commit position alone identifies an event;
 * - reading `$all` forwards from `{ commit: p, prepare: p }` starts at the event at `p` (inclusive),
 *   so `readAll(after)` reads from `after` and drops the events at or before it;
 * - the commit position an append returns is the position of the last event it wrote;
 * - events read from a stream carry their position (KurrentDB / EventStoreDB 22.6 and later).
 *
 * System events (types starting with `$`: stream metadata, links, projections' bookkeeping) are
 * never returned by `readAll` or `headPosition`, and do not wake `onAppended` listeners.
 *
 * Retries: KurrentDB is idempotent for an exact retry (same event ids, same expected revision):
 * the retry resolves without writing the events a second time.
 */
export type KurrentDbEventStoreOptions = {
  /** e.g. `kurrentdb://localhost:2113?tls=false` */
  connectionString: string;
  /** Delay before re-subscribing after the `$all` subscription that drives `onAppended` fails. Default 1000 ms. */
  resubscribeDelayMs?: number;
};

/** Thrown when the log holds an event that is not a Weir event (no JSON object data or metadata). */
export class UnreadableEventError extends Error {
  override readonly name = 'UnreadableEventError';
  constructor(
    readonly streamId: string,
    readonly eventId: string,
    readonly reason: string,
  ) {
    super(`event ${eventId} in stream ${streamId} cannot be read as a Weir event: ${reason}`);
  }
}

/** Thrown when the server does not report event positions (EventStoreDB older than 22.6). */
export class MissingEventPositionError extends Error {
  override readonly name = 'MissingEventPositionError';
  constructor(
    readonly streamId: string,
    readonly eventId: string,
  ) {
    super(
      `event ${eventId} in stream ${streamId} was read without its log position; use KurrentDB or EventStoreDB 22.6 or later`,
    );
  }
}

type WeirEventType = JSONEventType<string, JsonObject, EventMetadata>;

/** The server reports "no position" as the largest unsigned 64-bit value. */
const NO_POSITION = 2n ** 64n - 1n;

const toStreamState = (expected: ExpectedRevision): AppendStreamState => {
  if (expected === 'no_stream') return NO_STREAM;
  if (expected === 'any') return ANY;
  return BigInt(expected);
};

const toActualRevision = (actual: CurrentStreamState): number | 'no_stream' =>
  actual === NO_STREAM || actual < 0n ? 'no_stream' : Number(actual);

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);

const toJsonObject = (value: unknown, event: KurrentRecordedEvent, what: string): JsonObject => {
  let parsed = value;
  if (value instanceof Uint8Array) {
    try {
      parsed = JSON.parse(Buffer.from(value).toString('utf8'));
    } catch {
      throw new UnreadableEventError(event.streamId, event.id, `${what} is not JSON`);
    }
  }
  if (!isPlainObject(parsed)) throw new UnreadableEventError(event.streamId, event.id, `${what} is not a JSON object`);
  return parsed as JsonObject;
};

const toRecordedEvent = (event: KurrentRecordedEvent, position: bigint): RecordedEvent => ({
  id: event.id,
  type: event.type,
  data: toJsonObject(event.data, event, 'data'),
  metadata: toJsonObject(event.metadata, event, 'metadata') as EventMetadata,
  streamId: event.streamId,
  revision: Number(event.revision),
  position,
});

const positionOf = (event: KurrentRecordedEvent): bigint => {
  const commit = event.position?.commit;
  if (commit === undefined || commit === NO_POSITION) throw new MissingEventPositionError(event.streamId, event.id);
  return commit;
};

const isSystemEventType = (type: string): boolean => type.startsWith('$');

export function createKurrentDbEventStore({
  connectionString,
  resubscribeDelayMs = 1000,
}: KurrentDbEventStoreOptions): EventStore {
  const client = KurrentDBClient.connectionString(connectionString);

  const headPosition = async (): Promise<bigint | null> => {
    const newestFirst = client.readAll({
      direction: BACKWARDS,
      fromPosition: END,
      maxCount: 1,
      filter: excludeSystemEvents(),
    });
    for await (const resolved of newestFirst) {
      if (resolved.event && !isSystemEventType(resolved.event.type)) return positionOf(resolved.event);
    }
    return null;
  };

  /** Position of the newest event of a stream; for appends whose result carries no position. */
  const lastPositionOfStream = async (streamId: string): Promise<bigint | null> => {
    for await (const resolved of client.readStream(streamId, {
      direction: BACKWARDS,
      fromRevision: END,
      maxCount: 1,
    })) {
      if (resolved.event) return positionOf(resolved.event);
    }
    return null;
  };

  type Subscription = { listener: () => void };
  const subscriptions = new Set<Subscription>();
  let closed = false;
  let allSubscription: AllStreamSubscription | null = null;
  let resubscribeTimer: NodeJS.Timeout | null = null;
  let notificationPending = false;

  const notifyListeners = () => {
    notificationPending = false;
    if (closed) return;
    for (const subscription of [...subscriptions]) {
      try {
        subscription.listener();
      } catch (error) {
        // One failing listener must not starve the others; its error still surfaces (uncaught).
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  };

  /** Coalesces a burst of appended events into one call per listener. */
  const scheduleNotification = () => {
    if (notificationPending || closed) return;
    notificationPending = true;
    queueMicrotask(notifyListeners);
  };

  const stopSubscription = () => {
    if (resubscribeTimer !== null) {
      clearTimeout(resubscribeTimer);
      resubscribeTimer = null;
    }
    const stopping = allSubscription;
    allSubscription = null;
    // Nothing to do if unsubscribing fails: the subscription is being dropped either way.
    if (stopping) stopping.unsubscribe().catch(() => undefined);
  };

  const startSubscription = () => {
    if (allSubscription !== null || resubscribeTimer !== null || closed) return;
    const fromPosition: ReadPosition = END;
    const subscription = client.subscribeToAll({ fromPosition, filter: excludeSystemEvents() });
    allSubscription = subscription;
    const isCurrent = () => allSubscription === subscription;
    subscription.on('data', (resolved) => {
      if (isCurrent() && resolved.event && !isSystemEventType(resolved.event.type)) scheduleNotification();
    });
    // Events appended between registering a listener and the subscription going live were not
    // seen by it: tell listeners to look.
    subscription.on('confirmation', () => {
      if (isCurrent()) scheduleNotification();
    });
    const resubscribeLater = () => {
      if (!isCurrent()) return;
      allSubscription = null;
      if (closed || subscriptions.size === 0) return;
      resubscribeTimer = setTimeout(() => {
        resubscribeTimer = null;
        if (!closed && subscriptions.size > 0) startSubscription();
      }, resubscribeDelayMs);
      resubscribeTimer.unref();
    };
    subscription.on('error', resubscribeLater);
    subscription.on('end', resubscribeLater);
    subscription.on('close', resubscribeLater);
  };

  return {
    async append(streamId, events, expected) {
      if (events.length === 0) throw new RangeError(`stream ${streamId}: append needs at least one event`);
      const eventData = events.map((event: NewEvent) =>
        jsonEvent<WeirEventType>({ id: event.id, type: event.type, data: event.data, metadata: event.metadata }),
      );
      let written: KurrentAppendResult;
      try {
        written = await client.appendToStream(streamId, eventData, { streamState: toStreamState(expected) });
      } catch (error) {
        if (error instanceof WrongExpectedVersionError) {
          throw new WrongExpectedRevisionError(streamId, expected, toActualRevision(error.actualState));
        }
        throw error;
      }
      // Clients configured with `throwOnAppendFailure=false` report a conflict in the result.
      if (!written.success) {
        throw new WrongExpectedRevisionError(streamId, expected, toActualRevision(written.nextExpectedRevision));
      }
      let position = written.position?.commit;
      if (position === undefined || position === NO_POSITION) {
        // An idempotent retry may come back without a position: look the last event up.
        position = (await lastPositionOfStream(streamId)) ?? (await headPosition()) ?? 0n;
      }
      scheduleNotification();
      const result: AppendResult = { nextExpectedRevision: Number(written.nextExpectedRevision), position };
      return result;
    },

    async readStream(streamId) {
      const recorded: RecordedEvent[] = [];
      try {
        for await (const resolved of client.readStream(streamId, { direction: FORWARDS, fromRevision: START })) {
          if (resolved.event) recorded.push(toRecordedEvent(resolved.event, positionOf(resolved.event)));
        }
      } catch (error) {
        if (error instanceof StreamNotFoundError) return [];
        throw error;
      }
      return recorded;
    },

    async readAll(after, limit) {
      if (!Number.isInteger(limit) || limit < 0)
        throw new RangeError(`readAll: limit must be a non-negative integer, got ${limit}`);
      if (limit === 0) return [];
      // Reading from a position includes the event at that position: ask for one more and drop it.
      const fromPosition: ReadPosition = after === null ? START : { commit: after, prepare: after };
      const maxCount = after === null ? limit : limit + 1;
      const recorded: RecordedEvent[] = [];
      for await (const resolved of client.readAll({
        direction: FORWARDS,
        fromPosition,
        maxCount,
        filter: excludeSystemEvents(),
      })) {
        const event = resolved.event;
        if (!event || isSystemEventType(event.type)) continue;
        const position = positionOf(event);
        if (after !== null && position <= after) continue;
        recorded.push(toRecordedEvent(event, position));
        if (recorded.length === limit) break;
      }
      return recorded;
    },

    headPosition,

    onAppended(listener) {
      const subscription: Subscription = { listener };
      subscriptions.add(subscription);
      startSubscription();
      return () => {
        subscriptions.delete(subscription);
        if (subscriptions.size === 0) stopSubscription();
      };
    },

    async close() {
      if (closed) return;
      closed = true;
      subscriptions.clear();
      stopSubscription();
      await client.dispose();
    },
  };
}
