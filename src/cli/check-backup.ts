import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SQLITE_EVENT_STORE_FILE } from '../event-store/open-event-store.ts';
import { SQLITE_READ_STORE_FILE } from '../read-store/sqlite-read-store.ts';
import { ConfigError } from '../app/config.ts';
import { hasTable, readModelsBelonging, withDatabase } from '../app/read-models-belonging.ts';

/** What the check found: a line per SQLite file, and each problem naming its file. */
export type BackupCheck = { dir: string; files: { name: string; note: string }[]; problems: string[] };

const RESTORE_BOTH =
  'restore both files from the same backup, or start weir serve, which sets read-models.sqlite3 aside and rebuilds it from the log';

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
      const readModels = readModelsBelonging(join(dir, name), log, head.head);
      note += `, ${readModels.note}`;
      if (readModels.reason) problems.push(`${readModels.reason}; ${RESTORE_BOTH}`);
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
