import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SQLITE_EVENT_STORE_FILE } from '../event-store/open-event-store.ts';
import { PROJECTIONS_CHECKPOINT } from '../projections/projection-runner.ts';
import { COLLECTIONS } from '../projections/collections.ts';
import { SQLITE_READ_STORE_FILE } from '../read-store/sqlite-read-store.ts';
import { ConfigError } from '../app/config.ts';

/** What the check found: a line per SQLite file, and each problem naming its file. */
export type BackupCheck = { dir: string; files: { name: string; note: string }[]; problems: string[] };

/** Organizations of the read models looked up in the log: enough to tell another data dir's apart. */
const ORGANIZATIONS_LOOKED_UP = 1000;

const RESTORE_BOTH =
  'restore both files from the same backup, or move read-models.sqlite3 aside and weir serve rebuilds it from the log';

/**
 * Opened for writing, though nothing is written: a read-only connection to a WAL file leaves its
 * `-wal` and `-shm` behind, the last connection that may write removes them at close.
 */
function withDatabase<T>(path: string, use: (db: Database.Database) => T): T {
  const db = new Database(path, { fileMustExist: true, timeout: 5000 });
  try {
    return use(db);
  } finally {
    db.close();
  }
}

const hasTable = (db: Database.Database, table: string): boolean =>
  db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?").pluck().get(table) === 1;

/** SQLite's `PRAGMA integrity_check` of one file: null when it holds, else what is wrong (its first lines). */
function integrityProblem(path: string): string | null {
  try {
    const rows = withDatabase(
      path,
      (db) => db.pragma('integrity_check', { simple: false }) as { integrity_check: string }[],
    );
    const found = rows.map((row) => row.integrity_check);
    if (found.length === 1 && found[0] === 'ok') return null;
    return found.join('; ').split('\n').slice(0, 3).join('; ');
  } catch (error) {
    // A header overwritten or a file cut short: SQLite refuses it before any check runs.
    return (error as Error).message;
  }
}

/** The log's last position and event count, or why it is no log. */
function logHead(path: string): { head: bigint; events: number } | string {
  return withDatabase(path, (db) => {
    if (!hasTable(db, 'events')) return 'holds no event log (no events table)';
    const row = db.prepare('SELECT max(position) AS head, count(*) AS events FROM events').safeIntegers().get() as {
      head: bigint | null;
      events: bigint;
    };
    return { head: row.head ?? 0n, events: Number(row.events) };
  });
}

/**
 * Whether the read models belong to this log: their position is not past its head (else they are
 * from a later copy or another data dir, or the log lost its tail), and the organizations they hold
 * are in it (another data dir's are not: their ids are random).
 */
function readModelsProblem(readModels: string, log: string, head: bigint): { note: string; problem: string | null } {
  return withDatabase(readModels, (db) => {
    if (!hasTable(db, 'checkpoints') || !hasTable(db, 'documents'))
      return { note: 'no read models in this version’s layout (weir serve rebuilds them)', problem: null };
    const stored = db.prepare('SELECT position FROM checkpoints WHERE name = ?').pluck().get(PROJECTIONS_CHECKPOINT);
    const position = typeof stored === 'string' && /^\d+$/.test(stored) ? BigInt(stored) : null;
    const at = `read models at log position ${position ?? 'none'} of ${head}`;
    if (position !== null && position > head)
      return {
        note: at,
        problem: `${SQLITE_READ_STORE_FILE} has read the log up to position ${position}, but ${SQLITE_EVENT_STORE_FILE} ends at position ${head}: they are not from the same backup (or the log lost its last events); ${RESTORE_BOTH}`,
      };
    const organizations = db
      .prepare('SELECT id, body FROM documents WHERE collection = ? ORDER BY id LIMIT ?')
      .raw()
      .all(COLLECTIONS.organizations, ORGANIZATIONS_LOOKED_UP) as [string, string][];
    const foreign = withDatabase(log, (events) => {
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
        problem: `${SQLITE_READ_STORE_FILE} holds organization ${foreign[0]![0]}${foreign.length > 1 ? ` and ${foreign.length - 1} more` : ''} as ${SQLITE_EVENT_STORE_FILE} never recorded it: they are not from the same data dir; ${RESTORE_BOTH}`,
      };
    return {
      note: `${at}, ${organizations.length} organization${organizations.length === 1 ? '' : 's'} all in the log`,
      problem: null,
    };
  });
}

/**
 * Checks a backup, or a data dir restored from one, without changing what it holds: SQLite's
 * `integrity_check` on every `.sqlite3` file (a byte overwritten, a file cut short), the log there,
 * and the read models belonging to it. `weir audit verify` goes further (the hash chain, every
 * read model rebuilt); this is what a restore needs before a start, in the time of a read.
 */
export function checkBackup(dir: string): BackupCheck {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new ConfigError(`backup --verify: no folder at ${dir}`);
  const sqliteFiles = readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.sqlite3'))
    .sort();
  const files: BackupCheck['files'] = [];
  const problems: string[] = [];
  const log = join(dir, SQLITE_EVENT_STORE_FILE);
  if (!sqliteFiles.includes(SQLITE_EVENT_STORE_FILE))
    problems.push(
      `${SQLITE_EVENT_STORE_FILE}: missing: a backup holds its log (with WEIR_EVENT_STORE_FILE, copy it in under this name)`,
    );
  const whole = new Set<string>();
  for (const name of sqliteFiles) {
    const problem = integrityProblem(join(dir, name));
    if (problem) problems.push(`${name}: SQLite's integrity_check fails: ${problem}`);
    else whole.add(name);
  }
  const head = whole.has(SQLITE_EVENT_STORE_FILE) ? logHead(log) : null;
  if (typeof head === 'string') problems.push(`${SQLITE_EVENT_STORE_FILE}: ${head}`);
  for (const name of sqliteFiles) {
    if (!whole.has(name)) {
      files.push({ name, note: 'fails integrity_check' });
      continue;
    }
    let note = 'integrity_check ok';
    if (name === SQLITE_EVENT_STORE_FILE && head && typeof head !== 'string')
      note += `, ${head.events} events up to log position ${head.head}`;
    if (name === SQLITE_READ_STORE_FILE && head && typeof head !== 'string') {
      const readModels = readModelsProblem(join(dir, name), log, head.head);
      note += `, ${readModels.note}`;
      if (readModels.problem) problems.push(readModels.problem);
    }
    files.push({ name, note });
  }
  return { dir, files, problems };
}

/** The lines `weir backup --verify` prints, ending in OK or in each problem. */
export function backupCheckSummaryOf(check: BackupCheck): string {
  const width = Math.max(0, ...check.files.map((file) => file.name.length));
  return [
    `check of ${check.dir}:`,
    ...check.files.map((file) => `  ${file.name.padEnd(width)}  ${file.note}`),
    ...(check.problems.length === 0
      ? [
          'OK: every SQLite file is whole and the read models belong to the log (weir audit verify checks its hash chain too)',
        ]
      : [
          `NOT OK: ${check.problems.length} problem${check.problems.length === 1 ? '' : 's'}:`,
          ...check.problems.map((p) => `  ${p}`),
        ]),
  ].join('\n');
}
