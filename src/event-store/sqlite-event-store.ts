import Database from 'better-sqlite3';
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
 * The embedded event store: one SQLite file (WAL mode), one `events` table, readable by any SQLite
 * tool:
 *
 * ```sql
 * SELECT position, stream_id, revision, type, json_extract(data, '$.amount') FROM events;
 * ```
 *
 * - `position` (INTEGER PRIMARY KEY AUTOINCREMENT) is the global position: strictly increasing,
 *   never reused, starting at 1. Writers are serialized by SQLite's write lock, so a reader never
 *   sees a gap that a slower writer fills in later.
 * - Several stores (threads or processes) may open the same file. Appends take the write lock
 *   before they read the stream's revision (`BEGIN IMMEDIATE`), and `busy_timeout` makes a writer
 *   wait for another one instead of failing with SQLITE_BUSY.
 * - `onAppended` fires after this store's own appends (in a microtask after the commit) and, while
 *   at least one listener is registered, polls `PRAGMA data_version` to notice commits made through
 *   any other connection, including other processes.
 *
 * - Group commit: appends requested in one turn of the event loop are written in one transaction
 *   (one fsync), each in a savepoint of its own, so one append's conflict fails only that append.
 *   Under concurrent writers this turns an fsync per append into an fsync per turn.
 *
 * Retries: event ids are unique in the whole log. An append whose events are all already in the log,
 * in the same stream, at consecutive revisions, where the expected revision is the one the original
 * append had (or `any`), is an exact retry: it writes nothing and resolves with the original
 * append's result (the same idempotence KurrentDB gives). An append that reuses an event id in any
 * other way writes nothing and rejects with WrongExpectedRevisionError when its expected revision no
 * longer matches the stream, otherwise with DuplicateEventIdError.
 */
export type SqliteEventStoreOptions = {
  /** File path, or ':memory:' (private to this store; nothing to share across processes). */
  path: string;
  /** How often to look for appends made by other connections while listeners exist. Default 100 ms. */
  pollIntervalMs?: number;
  /** How long a writer waits for another connection's write lock before failing. Default 5000 ms. */
  busyTimeoutMs?: number;
};

/** Thrown when an append reuses an event id that is already in the log and is not an exact retry. */
export class DuplicateEventIdError extends Error {
  override readonly name = 'DuplicateEventIdError';
  constructor(
    readonly streamId: string,
    readonly eventId: string,
  ) {
    super(`stream ${streamId}: event id ${eventId} is already in the log (not an exact retry of the same append)`);
  }
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  position INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  stream_id TEXT NOT NULL,
  revision INTEGER NOT NULL,
  type TEXT NOT NULL,
  data TEXT NOT NULL,
  metadata TEXT NOT NULL,
  UNIQUE (stream_id, revision)
)`;

/** Columns in the order every read statement selects them (raw rows, integers as bigint). */
const EVENT_COLUMNS = 'position, id, stream_id, revision, type, data, metadata';
/** What `readAll` runs: the events after a position, in log order, at most a batch. */
export const READ_ALL_SQL = `SELECT ${EVENT_COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ?`;
type EventRow = [
  position: bigint,
  id: string,
  streamId: string,
  revision: bigint,
  type: string,
  data: string,
  metadata: string,
];
type StoredEventPlace = { position: bigint; stream_id: string; revision: bigint };

type AppendOutcome = { result: AppendResult; wrote: boolean };

const toRecordedEvent = (row: EventRow): RecordedEvent => ({
  id: row[1],
  type: row[4],
  data: JSON.parse(row[5]) as JsonObject,
  metadata: JSON.parse(row[6]) as EventMetadata,
  streamId: row[2],
  revision: Number(row[3]),
  position: row[0],
});

const revisionMatches = (expected: ExpectedRevision, currentRevision: number | null): boolean => {
  if (expected === 'any') return true;
  if (expected === 'no_stream') return currentRevision === null;
  return currentRevision === expected;
};

const isUniqueEventIdViolation = (error: unknown): boolean =>
  error instanceof Database.SqliteError &&
  error.code === 'SQLITE_CONSTRAINT_UNIQUE' &&
  /: events\.id$/.test(error.message);

export function createSqliteEventStore({
  path,
  pollIntervalMs = 100,
  busyTimeoutMs = 5000,
}: SqliteEventStoreOptions): EventStore {
  const db = new Database(path, { timeout: busyTimeoutMs });
  db.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
  db.pragma('journal_mode = WAL');
  // FULL: a resolved append survives power loss, not only a crash of the process.
  db.pragma('synchronous = FULL');
  db.exec(SCHEMA);

  const readAllStatement = db.prepare<[bigint, number], EventRow>(READ_ALL_SQL).raw(true).safeIntegers(true);
  const readStreamStatement = db
    .prepare<[string], EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE stream_id = ? ORDER BY revision`)
    .raw(true)
    .safeIntegers(true);
  const headPositionStatement = db
    .prepare<[], bigint | null>('SELECT max(position) FROM events')
    .pluck(true)
    .safeIntegers(true);
  const streamRevisionStatement = db
    .prepare<[string], number | null>('SELECT max(revision) FROM events WHERE stream_id = ?')
    .pluck(true);
  const eventPlaceStatement = db
    .prepare<[string], StoredEventPlace>('SELECT position, stream_id, revision FROM events WHERE id = ?')
    .safeIntegers(true);
  const insertStatement = db
    .prepare<[string, string, number, string, string, string]>(
      'INSERT INTO events (id, stream_id, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)',
    )
    .safeIntegers(true);
  const dataVersionStatement = db.prepare<[], number>('PRAGMA data_version').pluck(true);

  /** The original result when `events` are exactly the events of an earlier append, else null. */
  const findExactRetry = (streamId: string, events: NewEvent[], expected: ExpectedRevision): AppendResult | null => {
    let firstRevision = 0n;
    let last: StoredEventPlace | undefined;
    for (const [index, event] of events.entries()) {
      const place = eventPlaceStatement.get(event.id);
      if (place === undefined || place.stream_id !== streamId) return null;
      if (index === 0) firstRevision = place.revision;
      else if (place.revision !== firstRevision + BigInt(index)) return null;
      last = place;
    }
    if (last === undefined) return null;
    if (expected === 'no_stream' && firstRevision !== 0n) return null;
    if (typeof expected === 'number' && firstRevision !== BigInt(expected) + 1n) return null;
    return { nextExpectedRevision: Number(last.revision), position: last.position };
  };

  const appendInTransaction = db.transaction(
    (streamId: string, events: NewEvent[], expected: ExpectedRevision): AppendOutcome => {
      const currentRevision = streamRevisionStatement.get(streamId) ?? null;
      if (!revisionMatches(expected, currentRevision)) {
        const retried = findExactRetry(streamId, events, expected);
        if (retried) return { result: retried, wrote: false };
        throw new WrongExpectedRevisionError(streamId, expected, currentRevision ?? 'no_stream');
      }
      let revision = currentRevision ?? -1;
      let position = 0n;
      for (const event of events) {
        revision += 1;
        try {
          const info = insertStatement.run(
            event.id,
            streamId,
            revision,
            event.type,
            JSON.stringify(event.data),
            JSON.stringify(event.metadata),
          );
          position = BigInt(info.lastInsertRowid);
        } catch (error) {
          // Thrown out of the transaction function: SQLite rolls the whole append back.
          if (isUniqueEventIdViolation(error)) throw new DuplicateEventIdError(streamId, event.id);
          throw error;
        }
      }
      return { result: { nextExpectedRevision: revision, position }, wrote: true };
    },
  );

  type Subscription = { listener: () => void };
  const subscriptions = new Set<Subscription>();
  let closed = false;
  let pollTimer: NodeJS.Timeout | null = null;
  let lastDataVersion = 0;

  const notifyListeners = () => {
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

  const pollForOtherWriters = () => {
    if (closed) return;
    const dataVersion = dataVersionStatement.get() ?? 0;
    if (dataVersion !== lastDataVersion) {
      lastDataVersion = dataVersion;
      notifyListeners();
    }
  };

  const startPolling = () => {
    if (pollTimer !== null || closed) return;
    lastDataVersion = dataVersionStatement.get() ?? 0;
    pollTimer = setInterval(pollForOtherWriters, pollIntervalMs);
    pollTimer.unref();
  };

  const stopPolling = () => {
    if (pollTimer === null) return;
    clearInterval(pollTimer);
    pollTimer = null;
  };

  /** One append inside the group's transaction (a savepoint): its outcome, or why it failed. */
  const appendOne = (streamId: string, events: NewEvent[], expected: ExpectedRevision): AppendOutcome => {
    try {
      return appendInTransaction(streamId, events, expected);
    } catch (error) {
      // With `any` the revision check cannot spot a retry; the id collision does.
      if (error instanceof DuplicateEventIdError && expected === 'any') {
        const retried = findExactRetry(streamId, events, expected);
        if (retried) return { result: retried, wrote: false };
      }
      throw error;
    }
  };

  type QueuedAppend = {
    streamId: string;
    events: NewEvent[];
    expected: ExpectedRevision;
    resolve: (result: AppendResult) => void;
    reject: (error: unknown) => void;
  };
  let queued: QueuedAppend[] = [];
  const appendGroup = db.transaction((group: QueuedAppend[]) =>
    group.map((append) => {
      try {
        return { outcome: appendOne(append.streamId, append.events, append.expected) };
      } catch (error) {
        return { error };
      }
    }),
  );

  /** Writes every queued append in one transaction, then settles each one's promise. */
  const flush = () => {
    const group = queued;
    queued = [];
    if (group.length === 0) return;
    let settled: ({ outcome: AppendOutcome } | { error: unknown })[];
    try {
      if (closed) throw new Error('the event store is closed');
      settled = appendGroup.immediate(group);
    } catch (error) {
      // The transaction itself failed (busy past the timeout, disk full): nothing of it was written.
      for (const append of group) append.reject(error);
      return;
    }
    // Listeners hear of the writes before any writer's continuation runs, as with a plain append.
    if (settled.some((result) => 'outcome' in result && result.outcome.wrote)) queueMicrotask(notifyListeners);
    for (const [index, append] of group.entries()) {
      const result = settled[index]!;
      if ('error' in result) append.reject(result.error);
      else append.resolve(result.outcome.result);
    }
  };

  return {
    append(streamId, events, expected) {
      if (events.length === 0)
        return Promise.reject(new RangeError(`stream ${streamId}: append needs at least one event`));
      return new Promise<AppendResult>((resolve, reject) => {
        if (queued.length === 0) setImmediate(flush);
        queued.push({ streamId, events, expected, resolve, reject });
      });
    },

    async readStream(streamId) {
      return readStreamStatement.all(streamId).map(toRecordedEvent);
    },

    async readAll(after, limit) {
      if (!Number.isInteger(limit) || limit < 0)
        throw new RangeError(`readAll: limit must be a non-negative integer, got ${limit}`);
      if (limit === 0) return [];
      const rows = readAllStatement.all(after ?? 0n, limit);
      const events = new Array<RecordedEvent>(rows.length);
      for (let index = 0; index < rows.length; index += 1) events[index] = toRecordedEvent(rows[index]!);
      return events;
    },

    async headPosition() {
      return headPositionStatement.get() ?? null;
    },

    onAppended(listener) {
      const subscription: Subscription = { listener };
      subscriptions.add(subscription);
      startPolling();
      return () => {
        subscriptions.delete(subscription);
        if (subscriptions.size === 0) stopPolling();
      };
    },

    async close() {
      if (closed) return;
      // Appends already asked for are written before the file closes.
      flush();
      closed = true;
      stopPolling();
      subscriptions.clear();
      db.close();
    },
  };
}
