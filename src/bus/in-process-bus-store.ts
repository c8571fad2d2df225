import Database from 'better-sqlite3';

/** A message as the in-process bus keeps it: `publishedAt` on the bus's clock, for its duplicate window. */
export type StoredMessage = {
  subject: string;
  data: Uint8Array;
  messageId: string | undefined;
  publishedAt: number;
};

/**
 * Where the in-process bus keeps its log (messages at positions 0, 1, …, never removed, like a
 * JetStream stream without limits) and each durable's position (its first message not yet
 * acknowledged). A write has happened when the call returns.
 */
export type InProcessBusStore = {
  append(message: StoredMessage): void;
  /** The message at `position`; undefined at or past the end. */
  at(position: number): StoredMessage | undefined;
  length(): number;
  /** The subjects of the messages from `position` to the end, in order. */
  subjectsFrom(position: number): string[];
  /** When the last message with this id was published; undefined when none was. */
  lastPublishedAt(messageId: string): number | undefined;
  /** Each durable kept, with its position. */
  durables(): Map<string, number>;
  setPosition(durableName: string, position: number): void;
  deleteDurable(durableName: string): void;
  close(): void;
};

/** The log and positions in memory: gone with the process. */
export function createMemoryBusStore(): InProcessBusStore {
  const log: StoredMessage[] = [];
  const lastPublished = new Map<string, number>();
  const positions = new Map<string, number>();
  return {
    append(message) {
      log.push({ ...message, data: message.data.slice() });
      if (message.messageId !== undefined) lastPublished.set(message.messageId, message.publishedAt);
    },
    at: (position) => log[position],
    length: () => log.length,
    subjectsFrom: (position) => log.slice(position).map((message) => message.subject),
    lastPublishedAt: (messageId) => lastPublished.get(messageId),
    durables: () => new Map(positions),
    setPosition(durableName, position) {
      positions.set(durableName, position);
    },
    deleteDurable(durableName) {
      positions.delete(durableName);
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
  const insert = db.prepare(
    'INSERT INTO messages (position, subject, data, message_id, published_at) VALUES (?, ?, ?, ?, ?)',
  );
  const select = db.prepare<[number], MessageRow>(
    'SELECT subject, data, message_id, published_at FROM messages WHERE position = ?',
  );
  const subjects = db
    .prepare<[number], string>('SELECT subject FROM messages WHERE position >= ? ORDER BY position')
    .pluck();
  const lastPublished = db
    .prepare<[string], number>('SELECT published_at FROM messages WHERE message_id = ? ORDER BY position DESC LIMIT 1')
    .pluck();
  const upsertPosition = db.prepare(
    'INSERT INTO durables (name, position) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position',
  );
  const deletePosition = db.prepare('DELETE FROM durables WHERE name = ?');
  const positions = db.prepare<[], { name: string; position: number }>('SELECT name, position FROM durables');
  let length = db.prepare<[], number>('SELECT coalesce(max(position) + 1, 0) FROM messages').pluck().get() ?? 0;
  return {
    append(message) {
      insert.run(length, message.subject, Buffer.from(message.data), message.messageId ?? null, message.publishedAt);
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
    subjectsFrom: (position) => subjects.all(position),
    lastPublishedAt: (messageId) => lastPublished.get(messageId),
    durables: () => new Map(positions.all().map((row) => [row.name, row.position])),
    setPosition(durableName, position) {
      upsertPosition.run(durableName, position);
    },
    deleteDurable(durableName) {
      deletePosition.run(durableName);
    },
    close: () => db.close(),
  };
}
