import Database from 'better-sqlite3';
import { SQLITE_EVENT_STORE_FILE } from '../event-store/open-event-store.ts';
import { COLLECTIONS } from '../projections/collections.ts';
import { PROJECTIONS_CHECKPOINT } from '../projections/projection-runner.ts';
import { SQLITE_READ_STORE_FILE } from '../read-store/sqlite-read-store.ts';
import { aheadOfLog, inLogNote, organizationsNotInLog, positionNote } from './read-models-through-ports.ts';

/** Organizations of the read models looked up in the log: enough to tell another data dir's apart. */
const ORGANIZATIONS_LOOKED_UP = 1000;

const FILES = { readModels: SQLITE_READ_STORE_FILE, log: SQLITE_EVENT_STORE_FILE };

/**
 * Opened for writing, though nothing is written: a read-only connection to a WAL file leaves its
 * `-wal` and `-shm` behind, the last connection that may write removes them at close.
 */
export function withDatabase<T>(path: string, use: (db: Database.Database) => T): T {
  const db = new Database(path, { fileMustExist: true, timeout: 5000 });
  try {
    return use(db);
  } finally {
    db.close();
  }
}

export const hasTable = (db: Database.Database, table: string): boolean =>
  db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?").pluck().get(table) === 1;

/**
 * Whether the read models belong to this log, in bounded lookups (`weir backup --verify`, and every
 * start): their position is not past its head (else they are from a later copy or another data dir,
 * or the log lost its tail), and the organizations they hold are in it (another data dir's are not:
 * their ids are random). `reason` is null when they belong. `log` null: there is none yet (head 0,
 * no organization in it).
 */
export function readModelsBelonging(
  readModels: string,
  log: string | null,
  head: bigint,
): { note: string; reason: string | null } {
  return withDatabase(readModels, (db) => {
    if (!hasTable(db, 'checkpoints') || !hasTable(db, 'documents'))
      return { note: 'no read models in this version’s layout (weir serve rebuilds them)', reason: null };
    const stored = db.prepare('SELECT position FROM checkpoints WHERE name = ?').pluck().get(PROJECTIONS_CHECKPOINT);
    const position = typeof stored === 'string' && /^\d+$/.test(stored) ? BigInt(stored) : null;
    const at = positionNote(position, head);
    if (position !== null && position > head) return { note: at, reason: aheadOfLog(FILES, position, head) };
    const organizations = db
      .prepare('SELECT id, body FROM documents WHERE collection = ? ORDER BY id LIMIT ?')
      .raw()
      .all(COLLECTIONS.organizations, ORGANIZATIONS_LOOKED_UP) as [string, string][];
    if (organizations.length > 0 && log === null)
      return {
        note: at,
        reason: `${SQLITE_READ_STORE_FILE} holds organization ${organizations[0]![0]}${organizations.length > 1 ? ` and ${organizations.length - 1} more` : ''} but there is no log beside it: they are not from the same data dir`,
      };
    const foreign =
      organizations.length === 0 || log === null
        ? []
        : withDatabase(log, (events) => {
            const recorded = events.prepare('SELECT 1 FROM events WHERE stream_id = ? AND (? IS NULL OR revision = ?)');
            return organizations.filter(([id, body]) => {
              const revision = (JSON.parse(body) as { _revision?: unknown })._revision;
              const at = typeof revision === 'number' ? revision : null;
              return recorded.get(`organization-${id}`, at, at) === undefined;
            });
          });
    if (foreign.length > 0)
      return {
        note: at,
        reason: `${organizationsNotInLog(
          FILES,
          foreign.map(([id]) => id),
        )}: they are not from the same data dir`,
      };
    return { note: inLogNote(at, organizations.length), reason: null };
  });
}
