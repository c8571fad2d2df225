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
import { deepFreeze, type JsonObject } from '../shared/json.ts';
import {
  GENESIS_HASH,
  contentOf,
  foldChain,
  isChainHash,
  linkAfter,
  newContentOf,
  tenantOf,
  type ChainLink,
} from './event-chain.ts';
import {
  WrongExpectedRevisionError,
  type AppendResult,
  type ChainStart,
  type ChainedEvent,
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
 *
 * Hash chain (event-chain.ts): each event's link is in its metadata under `chain` (taken out again
 * when events are read, so callers see the metadata they wrote). KurrentDB orders `$all` at commit,
 * so an append reads the log's last link and then writes after it: appends through one connection
 * string are serialized within this process for that. Writers in other processes are not: two
 * appends that race from two processes fork the chain, and `weir audit verify` reports the fork.
 * The chain's start (for a log written before it) is kept as custom metadata of the stream
 * `weir_audit_chain` (`unchainedThrough`, `seal`).
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

type StoredMetadata = EventMetadata & { chain?: ChainLink };
type WeirEventType = JSONEventType<string, JsonObject, StoredMetadata>;

/** The stream whose metadata records where the chain starts. */
const CHAIN_START_STREAM = 'weir_audit_chain';
type ChainStartMetadata = { unchainedThrough?: string | null; seal?: string };

/**
 * Appends through one connection string, one after another within this process: each reads the
 * last link before it writes. Shared by every store on that string (tests open several at once).
 */
const appendQueues = new Map<string, Promise<unknown>>();
const serialized = <T>(key: string, task: () => Promise<T>): Promise<T> => {
  const previous = appendQueues.get(key) ?? Promise.resolve();
  const run = previous.then(task, task);
  const settled = run.then(
    () => undefined,
    () => undefined,
  );
  appendQueues.set(key, settled);
  void settled.then(() => {
    if (appendQueues.get(key) === settled) appendQueues.delete(key);
  });
  return run;
};

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

const linkOf = (value: unknown): ChainLink | null => {
  if (!isPlainObject(value) || !isChainHash(value.previous) || !isChainHash(value.hash)) return null;
  return { previous: value.previous, hash: value.hash };
};

/** The event as written: its link taken out of the metadata again. */
const toRecordedEvent = (event: KurrentRecordedEvent, position: bigint): RecordedEvent => {
  const { chain: _chain, ...metadata } = toJsonObject(event.metadata, event, 'metadata');
  return {
    id: event.id,
    type: event.type,
    data: toJsonObject(event.data, event, 'data'),
    metadata: metadata as EventMetadata,
    streamId: event.streamId,
    revision: Number(event.revision),
    position,
  };
};

/** What readStream and readAll hand out: frozen once here, as every store's events are (see EventStore). */
const toFrozenEvent = (event: KurrentRecordedEvent, position: bigint): RecordedEvent =>
  deepFreeze(toRecordedEvent(event, position));

const toChainedEvent = (event: KurrentRecordedEvent, position: bigint): ChainedEvent => ({
  position,
  content: contentOf(toRecordedEvent(event, position)),
  link: linkOf(toJsonObject(event.metadata, event, 'metadata').chain),
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

  const newestEvent = async (): Promise<KurrentRecordedEvent | null> => {
    const newestFirst = client.readAll({
      direction: BACKWARDS,
      fromPosition: END,
      maxCount: 1,
      filter: excludeSystemEvents(),
    });
    for await (const resolved of newestFirst) {
      if (resolved.event && !isSystemEventType(resolved.event.type)) return resolved.event;
    }
    return null;
  };

  const headPosition = async (): Promise<bigint | null> => {
    const newest = await newestEvent();
    return newest === null ? null : positionOf(newest);
  };

  /** Up to `limit` events after `after` in `$all` (system events left out), each as `as` makes it. */
  const readAfter = async <T>(
    after: bigint | null,
    limit: number,
    as: (event: KurrentRecordedEvent, position: bigint) => T,
  ): Promise<T[]> => {
    if (!Number.isInteger(limit) || limit < 0)
      throw new RangeError(`readAll: limit must be a non-negative integer, got ${limit}`);
    if (limit === 0) return [];
    // Reading from a position includes the event at that position: ask for one more and drop it.
    const fromPosition: ReadPosition = after === null ? START : { commit: after, prepare: after };
    const maxCount = after === null ? limit : limit + 1;
    const recorded: T[] = [];
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
      recorded.push(as(event, position));
      if (recorded.length === limit) break;
    }
    return recorded;
  };
  const readChained = (after: bigint | null, limit: number) => readAfter(after, limit, toChainedEvent);

  const chainStart = async (): Promise<ChainStart | null> => {
    let custom: ChainStartMetadata | undefined;
    try {
      custom = (await client.getStreamMetadata<ChainStartMetadata>(CHAIN_START_STREAM)).metadata;
    } catch (error) {
      if (error instanceof StreamNotFoundError) return null;
      throw error;
    }
    if (!custom || !isChainHash(custom.seal)) return null;
    const through = custom.unchainedThrough;
    return { unchainedThrough: typeof through === 'string' ? BigInt(through) : null, seal: custom.seal };
  };

  /** The chain hash of the log's last event (the seal when it predates the chain), or null on an empty log. */
  const chainHead = async (): Promise<{ position: bigint; hash: string } | null> => {
    const newest = await newestEvent();
    if (newest === null) return null;
    const position = positionOf(newest);
    const link = linkOf(toJsonObject(newest.metadata, newest, 'metadata').chain);
    if (link) return { position, hash: link.hash };
    const start = await chainStart();
    const sealed = start?.unchainedThrough;
    return {
      position,
      hash: sealed !== null && sealed !== undefined && position <= sealed ? start!.seal : GENESIS_HASH,
    };
  };

  /**
   * The hash the next append follows. On a log written before the chain (its last event unlinked
   * and no start recorded), seals what is there first: the fold over every event, recorded once.
   */
  const hashToFollow = async (): Promise<string> => {
    const head = await chainHead();
    if (head === null) {
      if ((await chainStart()) === null) await recordChainStart({ unchainedThrough: null, seal: GENESIS_HASH });
      return GENESIS_HASH;
    }
    if (head.hash !== GENESIS_HASH || (await chainStart()) !== null) return head.hash;
    let seal = GENESIS_HASH;
    for (let after: bigint | null = null; ; ) {
      const page = await readChained(after, 1000);
      if (page.length === 0) break;
      // Up to the head read above: what was appended since is not part of the seal.
      const sealed = page.filter((event) => event.position <= head.position);
      seal = foldChain(
        seal,
        sealed.map((event) => event.content),
      );
      after = page.at(-1)!.position;
      if (after >= head.position) break;
    }
    await recordChainStart({ unchainedThrough: head.position, seal });
    return seal;
  };

  const recordChainStart = async (start: ChainStart): Promise<void> => {
    const custom: ChainStartMetadata = {
      unchainedThrough: start.unchainedThrough === null ? null : String(start.unchainedThrough),
      seal: start.seal,
    };
    await client.setStreamMetadata<ChainStartMetadata>(CHAIN_START_STREAM, custom);
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

  /** The revision of a stream's last event, -1 when it does not exist. */
  const lastRevisionOf = async (streamId: string): Promise<number> => {
    try {
      for await (const resolved of client.readStream(streamId, {
        direction: BACKWARDS,
        fromRevision: END,
        maxCount: 1,
      }))
        if (resolved.event) return Number(resolved.event.revision);
    } catch (error) {
      if (error instanceof StreamNotFoundError) return -1;
      throw error;
    }
    return -1;
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
      let written: KurrentAppendResult;
      try {
        written = await serialized(connectionString, async () => {
          // The revisions the events get when the append succeeds; with `any` the stream is read for it.
          let revision = expected === 'no_stream' ? -1 : expected === 'any' ? await lastRevisionOf(streamId) : expected;
          let previous = await hashToFollow();
          const eventData = events.map((event: NewEvent) => {
            revision += 1;
            const link = linkAfter(previous, newContentOf(streamId, revision, event), tenantOf(event.metadata));
            previous = link.hash;
            const metadata: StoredMetadata = { ...event.metadata, chain: link };
            return jsonEvent<WeirEventType>({ id: event.id, type: event.type, data: event.data, metadata });
          });
          return client.appendToStream(streamId, eventData, { streamState: toStreamState(expected) });
        });
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
          if (resolved.event) recorded.push(toFrozenEvent(resolved.event, positionOf(resolved.event)));
        }
      } catch (error) {
        if (error instanceof StreamNotFoundError) return [];
        throw error;
      }
      return recorded;
    },

    readAll: (after, limit) => readAfter(after, limit, toFrozenEvent),

    headPosition,

    chain: { read: readChained, start: chainStart, head: chainHead },

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
