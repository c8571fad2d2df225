import Database from 'better-sqlite3';
import { deepFreeze, type JsonObject } from '../shared/json.ts';
import { openReadOnlySqlite } from '../shared/read-only-sqlite.ts';
import { GENESIS_HASH, foldChain, linkAfter, newContentOf, tenantOf, type ChainContent } from './event-chain.ts';
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
 * - Hash chain (event-chain.ts): each row carries `previous_hash` and `hash`, written in the append's
 *   transaction after the last row's hash, so writers in several processes extend one chain. A
 *   file written before the chain existed gains the columns (its rows keep NULL: history is not
 *   rewritten) and one `event_chain_start` row: the last unchained position and the seal over those
 *   rows, which the first chained row follows.
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
  /**
   * Read an existing file without writing it (an auditor's copy, perhaps in a directory it cannot
   * write): no schema is made or sealed, and an append fails.
   */
  readonly?: boolean;
};

/** The file cannot be read as a chained log without writing it (opened read-only). */
export class EventLogUnreadableError extends Error {
  override readonly name = 'EventLogUnreadableError';
}

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
  previous_hash TEXT,
  hash TEXT,
  UNIQUE (stream_id, revision)
);
CREATE TABLE IF NOT EXISTS event_chain_start (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  unchained_through INTEGER,
  seal TEXT NOT NULL
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
type ChainedEventRow = [...EventRow, previousHash: string | null, hash: string | null];
type ChainStartRow = { unchained_through: bigint | null; seal: string };
type LastRow = { position: bigint; hash: string | null };
type StoredEventPlace = { position: bigint; stream_id: string; revision: bigint };

type AppendOutcome = { result: AppendResult; wrote: boolean };

/**
 * Events `readAll` parsed lately, by position, at most this many. Every follower of the log (the
 * projections, each workflow, the activity log) reads the same new events after each append, and
 * parsing their JSON once per follower was the largest part of reading them.
 */
const SHARED_EVENTS = 4096;

const toRecordedEvent = (row: EventRow): RecordedEvent => ({
  id: row[1],
  type: row[4],
  data: JSON.parse(row[5]) as JsonObject,
  metadata: JSON.parse(row[6]) as EventMetadata,
  streamId: row[2],
  revision: Number(row[3]),
  position: row[0],
});

const rowContent = (row: EventRow): ChainContent => ({
  id: row[1],
  streamId: row[2],
  revision: Number(row[3]),
  type: row[4],
  data: row[5],
  metadata: row[6],
});

const toChainedEvent = (row: ChainedEventRow): ChainedEvent => {
  const [position, , , , , , , previous, hash] = row;
  // The stored text itself: what the writer hashed, byte for byte.
  return {
    position,
    content: rowContent(row as unknown as EventRow),
    link: previous !== null && hash !== null ? { previous, hash } : null,
  };
};

/**
 * Brings a file to the chained schema, once, under the write lock: a file from before the chain
 * gets the two columns and its start row sealing what it holds; a new file, a start at genesis.
 * A chained file whose start row is gone keeps it gone (a new seal would hide what changed).
 */
function prepareChain(db: Database.Database): void {
  db.transaction(() => {
    const columns = db.prepare<[], { name: string }>('PRAGMA table_info(events)').all();
    const legacy = !columns.some((column) => column.name === 'hash');
    if (legacy) {
      db.exec('ALTER TABLE events ADD COLUMN previous_hash TEXT');
      db.exec('ALTER TABLE events ADD COLUMN hash TEXT');
    }
    if (db.prepare('SELECT 1 FROM event_chain_start').get() !== undefined) return;
    const last = db.prepare<[], bigint | null>('SELECT max(position) FROM events').pluck(true).safeIntegers(true).get();
    if (last === null || last === undefined) {
      db.prepare('INSERT INTO event_chain_start (id, unchained_through, seal) VALUES (1, NULL, ?)').run(GENESIS_HASH);
      return;
    }
    if (!legacy) return;
    const rows = db
      .prepare<[], EventRow>(`SELECT ${EVENT_COLUMNS} FROM events ORDER BY position`)
      .raw(true)
      .safeIntegers(true)
      .iterate();
    const seal = foldChain(
      GENESIS_HASH,
      (function* () {
        for (const row of rows) yield rowContent(row);
      })(),
    );
    db.prepare('INSERT INTO event_chain_start (id, unchained_through, seal) VALUES (1, ?, ?)')
      .safeIntegers(true)
      .run(last, seal);
  }).immediate();
}

const revisionMatches = (expected: ExpectedRevision, currentRevision: number | null): boolean => {
  if (expected === 'any') return true;
  if (expected === 'no_stream') return currentRevision === null;
  return currentRevision === expected;
};

const isUniqueEventIdViolation = (error: unknown): boolean =>
  error instanceof Database.SqliteError &&
  error.code === 'SQLITE_CONSTRAINT_UNIQUE' &&
  /: events\.id$/.test(error.message);

/** A file opened read-only must already be a chained log: nothing may be added to make it one. */
function checkChained(db: Database.Database, path: string): void {
  const tables = db.prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'table'").pluck(true).all();
  if (!tables.includes('events')) throw new EventLogUnreadableError(`${path} holds no event log`);
  const columns = db.prepare<[], { name: string }>('PRAGMA table_info(events)').all();
  if (!columns.some((column) => column.name === 'hash') || !tables.includes('event_chain_start'))
    throw new EventLogUnreadableError(
      `${path} is a log from before the hash chain: start weir serve on it once to seal it, then verify`,
    );
}

/** The connection a store reads and writes through, and how it lets the file go. */
function openLog(path: string, busyTimeoutMs: number, readonly: boolean): { db: Database.Database; release(): void } {
  if (readonly) {
    const opened = openReadOnlySqlite(path, busyTimeoutMs);
    try {
      checkChained(opened.db, path);
    } catch (error) {
      opened.release();
      throw error;
    }
    return opened;
  }
  const db = new Database(path, { timeout: busyTimeoutMs });
  db.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
  db.pragma('journal_mode = WAL');
  // FULL: a resolved append survives power loss, not only a crash of the process.
  db.pragma('synchronous = FULL');
  db.exec(SCHEMA);
  prepareChain(db);
  return { db, release: () => db.close() };
}

export function createSqliteEventStore({
  path,
  pollIntervalMs = 100,
  busyTimeoutMs = 5000,
  readonly = false,
}: SqliteEventStoreOptions): EventStore {
  const { db, release } = openLog(path, busyTimeoutMs, readonly);

  const readAllStatement = db.prepare<[bigint, number], EventRow>(READ_ALL_SQL).raw(true).safeIntegers(true);
  const readChainedStatement = db
    .prepare<[bigint, number], ChainedEventRow>(
      `SELECT ${EVENT_COLUMNS}, previous_hash, hash FROM events WHERE position > ? ORDER BY position LIMIT ?`,
    )
    .raw(true)
    .safeIntegers(true);
  const lastRowStatement = db
    .prepare<[], LastRow>('SELECT position, hash FROM events ORDER BY position DESC LIMIT 1')
    .safeIntegers(true);
  const startRow = db
    .prepare<[], ChainStartRow>('SELECT unchained_through, seal FROM event_chain_start')
    .safeIntegers(true)
    .get();
  const chainStart: ChainStart | null = startRow
    ? { unchainedThrough: startRow.unchained_through, seal: startRow.seal }
    : null;
  /** The chain hash of the log's last event: its own, or the seal when it predates the chain. */
  const hashAfter = (last: LastRow | undefined): string => {
    if (last === undefined) return chainStart?.seal ?? GENESIS_HASH;
    if (last.hash !== null) return last.hash;
    const sealed = chainStart?.unchainedThrough;
    // An unchained row past the seal is damage the verifier reports; the chain goes on from genesis.
    return sealed !== null && sealed !== undefined && last.position <= sealed ? chainStart!.seal : GENESIS_HASH;
  };
  /** The hash the next inserted event follows; read from the file at the start of each write transaction. */
  let chainHead = GENESIS_HASH;
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
    .prepare<[string, string, number, string, string, string, string, string]>(
      'INSERT INTO events (id, stream_id, revision, type, data, metadata, previous_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    )
    .safeIntegers(true);
  const dataVersionStatement = db.prepare<[], number>('PRAGMA data_version').pluck(true);

  /**
   * The event of a row, parsed once while it is among the last SHARED_EVENTS read: a position's
   * row never changes once committed. Shared by every reader, so frozen, data and all.
   */
  const recentEvents = new Map<bigint, RecordedEvent>();
  const sharedEvent = (row: EventRow): RecordedEvent => {
    const known = recentEvents.get(row[0]);
    if (known !== undefined && known.id === row[1]) return known;
    const event = deepFreeze(toRecordedEvent(row));
    recentEvents.set(row[0], event);
    if (recentEvents.size <= SHARED_EVENTS) return event;
    // An eighth at a time, as the read store's cache: one by one from the front, each eviction would
    // skip the entries deleted before it (a rebuild reads the whole log through here).
    let evict = SHARED_EVENTS >> 3;
    for (const oldest of recentEvents.keys()) {
      recentEvents.delete(oldest);
      if (--evict === 0) break;
    }
    return event;
  };

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
        const content = newContentOf(streamId, revision, event);
        const link = linkAfter(chainHead, content, tenantOf(event.metadata));
        try {
          const info = insertStatement.run(
            event.id,
            streamId,
            revision,
            event.type,
            content.data,
            content.metadata,
            link.previous,
            link.hash,
          );
          position = BigInt(info.lastInsertRowid);
          chainHead = link.hash;
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
    const headBefore = chainHead;
    try {
      return appendInTransaction(streamId, events, expected);
    } catch (error) {
      // Its savepoint rolled back: the next append follows the same hash this one did.
      chainHead = headBefore;
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
  const appendGroup = db.transaction((group: QueuedAppend[]) => {
    // Under the write lock: another connection may have appended since this one last did.
    chainHead = hashAfter(lastRowStatement.get());
    return group.map((append) => {
      try {
        return { outcome: appendOne(append.streamId, append.events, append.expected) };
      } catch (error) {
        return { error };
      }
    });
  });

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
      // Frozen as readAll's are (every store hands out frozen events); one readAll parsed lately is reused.
      return readStreamStatement.all(streamId).map((row) => {
        const known = recentEvents.get(row[0]);
        return known !== undefined && known.id === row[1] ? known : deepFreeze(toRecordedEvent(row));
      });
    },

    async readAll(after, limit) {
      if (!Number.isInteger(limit) || limit < 0)
        throw new RangeError(`readAll: limit must be a non-negative integer, got ${limit}`);
      if (limit === 0) return [];
      const rows = readAllStatement.all(after ?? 0n, limit);
      const events = new Array<RecordedEvent>(rows.length);
      for (let index = 0; index < rows.length; index += 1) events[index] = sharedEvent(rows[index]!);
      return events;
    },

    async headPosition() {
      return headPositionStatement.get() ?? null;
    },

    chain: {
      async read(after, limit) {
        if (!Number.isInteger(limit) || limit < 0)
          throw new RangeError(`chain.read: limit must be a non-negative integer, got ${limit}`);
        if (limit === 0) return [];
        return readChainedStatement.all(after ?? 0n, limit).map(toChainedEvent);
      },
      async start() {
        return chainStart;
      },
      async head() {
        const last = lastRowStatement.get();
        return last === undefined ? null : { position: last.position, hash: hashAfter(last) };
      },
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
      release();
    },
  };
}
