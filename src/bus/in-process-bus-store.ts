import Database from 'better-sqlite3';

/** A message as the in-process bus keeps it: `publishedAt` on the bus's clock, for its duplicate window. */
export type StoredMessage = {
  subject: string;
  data: Uint8Array;
  messageId: string | undefined;
  publishedAt: number;
};

/** Where a durable stands (its first message not yet acknowledged) and its filter, when known. */
export type StoredDurable = { position: number; filter: string | undefined };

/** A message's place in the log, without its data: what pruning and counting look at. */
export type StoredEntry = { position: number; subject: string; publishedAt: number };

/**
 * Where the in-process bus keeps its log (messages at positions 0, 1, …; the bus removes those every
 * durable acknowledged, leaving gaps, see in-process-bus.ts) and each durable's position (its first
 * message not yet acknowledged) and filter. A write has happened when the call returns. Positions
 * never go back: the last message is never removed, so the next position survives a restart.
 */
export type InProcessBusStore = {
  append(message: StoredMessage): void;
  /** The message at `position`; undefined at or past the end, or removed. */
  at(position: number): StoredMessage | undefined;
  /** The position the next message gets. */
  length(): number;
  /** The position of the first message kept; `length()` when none is. */
  firstPosition(): number;
  /** At most `limit` messages kept from `position` on, in order (read by position, not the whole tail). */
  subjectsFrom(position: number, limit: number): StoredEntry[];
  /** Every subject a kept message may have (a superset: subjects whose messages were all removed may stay). */
  subjects(): string[];
  /** How many messages kept at or after `position` have `subject`. */
  countFrom(position: number, subject: string): number;
  /** The first position at or after `position` holding a message with `subject`; undefined when none. */
  nextFrom(position: number, subject: string): number | undefined;
  /** Removes the messages at these positions (never the last one). */
  remove(positions: readonly number[]): void;
  /** When the last message with this id was published; undefined when none was (or it was removed). */
  lastPublishedAt(messageId: string): number | undefined;
  /** Each durable kept, with its position and filter. */
  durables(): Map<string, StoredDurable>;
  setPosition(durableName: string, position: number): void;
  setFilter(durableName: string, filter: string): void;
  deleteDurable(durableName: string): void;
  close(): void;
};

/** The log and positions in memory: gone with the process. */
export function createMemoryBusStore(): InProcessBusStore {
  // log[i] is the message at position base + i; undefined once removed.
  const log: (StoredMessage | undefined)[] = [];
  let base = 0;
  const lastPublished = new Map<string, number>();
  const durables = new Map<string, StoredDurable>();
  const known = new Set<string>();
  const length = () => base + log.length;
  const entries = function* (position: number) {
    for (let index = Math.max(0, position - base); index < log.length; index++) {
      const message = log[index];
      if (message !== undefined) yield { position: base + index, message };
    }
  };
  return {
    append(message) {
      log.push({ ...message, data: message.data.slice() });
      known.add(message.subject);
      if (message.messageId !== undefined) lastPublished.set(message.messageId, message.publishedAt);
    },
    at: (position) => (position < base ? undefined : log[position - base]),
    length,
    firstPosition: () => entries(base).next().value?.position ?? length(),
    subjectsFrom(position, limit) {
      const found: StoredEntry[] = [];
      for (const { position: at, message } of entries(position)) {
        if (found.length >= limit) break;
        found.push({ position: at, subject: message.subject, publishedAt: message.publishedAt });
      }
      return found;
    },
    subjects: () => [...known],
    countFrom(position, subject) {
      let count = 0;
      for (const { message } of entries(position)) if (message.subject === subject) count += 1;
      return count;
    },
    nextFrom(position, subject) {
      for (const { position: at, message } of entries(position)) if (message.subject === subject) return at;
      return undefined;
    },
    remove(positions) {
      for (const position of positions) {
        const index = position - base;
        if (index < 0 || index >= log.length - 1) continue;
        const message = log[index];
        if (message?.messageId !== undefined && lastPublished.get(message.messageId) === message.publishedAt)
          lastPublished.delete(message.messageId);
        log[index] = undefined;
      }
      let gone = 0;
      while (gone < log.length - 1 && log[gone] === undefined) gone += 1;
      log.splice(0, gone);
      base += gone;
    },
    lastPublishedAt: (messageId) => lastPublished.get(messageId),
    durables: () => new Map([...durables].map(([name, durable]) => [name, { ...durable }])),
    setPosition(durableName, position) {
      durables.set(durableName, { filter: durables.get(durableName)?.filter, position });
    },
    setFilter(durableName, filter) {
      durables.set(durableName, { position: durables.get(durableName)?.position ?? 0, filter });
    },
    deleteDurable(durableName) {
      durables.delete(durableName);
    },
    close: () => undefined,
  };
}

/** The file of the data dir that holds the embedded bus (when no NATS URL is configured). */
export const SQLITE_BUS_FILE = 'bus.sqlite3';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS messages (
  position INTEGER PRIMARY KEY,
  subject TEXT NOT NULL,
  data BLOB NOT NULL,
  message_id TEXT,
  published_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_id ON messages (message_id) WHERE message_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS messages_by_subject ON messages (subject, position);
CREATE TABLE IF NOT EXISTS durables (
  name TEXT PRIMARY KEY,
  position INTEGER NOT NULL
);
`;

type MessageRow = { subject: string; data: Buffer; message_id: string | null; published_at: number };

/**
 * The log and positions in a SQLite file, so that what a follower published and checkpointed past
 * is still delivered after a crash or a stop: a publish returns once its message is on disk, and a
 * durable's position moves on once its handler returned (the command it ran is in the log by then).
 */
export function openSqliteBusStore(path: string): InProcessBusStore {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  // FULL, as the event log: a follower saves its checkpoint past a message once its publish returned.
  db.pragma('synchronous = FULL');
  db.exec(SCHEMA);
  // Files from before durables kept their filter: such a durable counts as wanting every subject.
  const columns = db.prepare<[], { name: string }>('PRAGMA table_info(durables)').all();
  if (!columns.some((column) => column.name === 'filter')) db.exec('ALTER TABLE durables ADD COLUMN filter TEXT');
  const insert = db.prepare(
    'INSERT INTO messages (position, subject, data, message_id, published_at) VALUES (?, ?, ?, ?, ?)',
  );
  const select = db.prepare<[number], MessageRow>(
    'SELECT subject, data, message_id, published_at FROM messages WHERE position = ?',
  );
  const entries = db.prepare<[number, number], { position: number; subject: string; published_at: number }>(
    'SELECT position, subject, published_at FROM messages WHERE position >= ? ORDER BY position LIMIT ?',
  );
  const first = db.prepare<[], number | null>('SELECT min(position) FROM messages').pluck();
  const count = db
    .prepare<[string, number], number>('SELECT count(*) FROM messages WHERE subject = ? AND position >= ?')
    .pluck();
  const next = db
    .prepare<[string, number], number | null>('SELECT min(position) FROM messages WHERE subject = ? AND position >= ?')
    .pluck();
  const deleteMessage = db.prepare<[number]>('DELETE FROM messages WHERE position = ?');
  const lastPublished = db
    .prepare<[string], number>('SELECT published_at FROM messages WHERE message_id = ? ORDER BY position DESC LIMIT 1')
    .pluck();
  const upsertPosition = db.prepare(
    'INSERT INTO durables (name, position) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position',
  );
  const upsertFilter = db.prepare(
    'INSERT INTO durables (name, position, filter) VALUES (?, 0, ?) ON CONFLICT (name) DO UPDATE SET filter = excluded.filter',
  );
  const deletePosition = db.prepare('DELETE FROM durables WHERE name = ?');
  const durables = db.prepare<[], { name: string; position: number; filter: string | null }>(
    'SELECT name, position, filter FROM durables',
  );
  const known = new Set(db.prepare<[], string>('SELECT DISTINCT subject FROM messages').pluck().all());
  // The last message is never removed; a durable's position may be past it (it counts as the length too).
  let length = Math.max(
    db.prepare<[], number>('SELECT coalesce(max(position) + 1, 0) FROM messages').pluck().get() ?? 0,
    ...durables.all().map((row) => row.position),
  );
  const removeAll = db.transaction((positions: readonly number[]) => {
    for (const position of positions) if (position < length - 1) deleteMessage.run(position);
  });
  return {
    append(message) {
      insert.run(length, message.subject, Buffer.from(message.data), message.messageId ?? null, message.publishedAt);
      known.add(message.subject);
      length += 1;
    },
    at(position) {
      const row = select.get(position);
      if (row === undefined) return undefined;
      return {
        subject: row.subject,
        data: new Uint8Array(row.data),
        messageId: row.message_id ?? undefined,
        publishedAt: row.published_at,
      };
    },
    length: () => length,
    firstPosition: () => first.get() ?? length,
    subjectsFrom: (position, limit) =>
      entries
        .all(position, limit)
        .map((row) => ({ position: row.position, subject: row.subject, publishedAt: row.published_at })),
    subjects: () => [...known],
    countFrom: (position, subject) => count.get(subject, position) ?? 0,
    nextFrom: (position, subject) => next.get(subject, position) ?? undefined,
    remove: (positions) => removeAll(positions),
    lastPublishedAt: (messageId) => lastPublished.get(messageId),
    durables: () =>
      new Map(durables.all().map((row) => [row.name, { position: row.position, filter: row.filter ?? undefined }])),
    setPosition(durableName, position) {
      upsertPosition.run(durableName, position);
    },
    setFilter(durableName, filter) {
      upsertFilter.run(durableName, filter);
    },
    deleteDurable(durableName) {
      deletePosition.run(durableName);
    },
    close: () => db.close(),
  };
}
