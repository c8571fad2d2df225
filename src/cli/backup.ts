import { chmod, copyFile, lstat, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { SQLITE_EVENT_STORE_FILE } from '../event-store/open-event-store.ts';
import { SQLITE_READ_STORE_FILE } from '../read-store/sqlite-read-store.ts';
import { ConfigError } from '../app/config.ts';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, SERVE_LOCK_FILE } from '../app/data-dir.ts';
import { makeDirectory } from '../shared/make-directory.ts';
import { openReadOnlySqlite } from '../shared/read-only-sqlite.ts';
import { BackupCheckError } from './backup-check-error.ts';
import { checkBackup, type BackupCheck } from './check-backup.ts';

/** One file of a backup: copied through SQLite's online backup API, or as it stands. */
export type BackedUpFile = { name: string; how: 'sqlite' | 'copy'; bytes: number };
/** What was copied, what left out, and the check of the copy (which holds, else there is no copy). */
export type BackupReport = { out: string; files: BackedUpFile[]; skipped: string[]; check: BackupCheck };

/**
 * What a copy must leave out: a running server's lock, SQLite's journals (the online backup folds
 * them in), an anvil's pid (another process's), the one-time setup token, drafts being written.
 */
const LEFT_OUT = [
  new RegExp(`^${SERVE_LOCK_FILE.replace('.', '\\.')}`),
  /-(wal|shm|journal)$/,
  /(^|\/)anvil\.pid$/,
  /^dashboard-setup-token$/,
  /\.tmp$/,
];

const isSqlite = (name: string): boolean => name.endsWith('.sqlite3');

/** Every regular file under `dir`, as paths relative to it, sorted. */
async function filesUnder(dir: string, under = ''): Promise<string[]> {
  const found: string[] = [];
  for (const entry of (await readdir(join(dir, under))).sort()) {
    const name = under === '' ? entry : `${under}/${entry}`;
    // Removed meanwhile (a mail sent, a draft renamed): nothing to copy.
    const stats = await lstat(join(dir, name)).catch(() => null);
    if (stats?.isDirectory()) found.push(...(await filesUnder(dir, name)));
    else if (stats?.isFile()) found.push(name);
  }
  return found;
}

/** A consistent copy of a live SQLite file: the backup API reads one snapshot, its WAL included. */
async function backupSqlite(from: string, to: string): Promise<void> {
  const { db, release } = openReadOnlySqlite(from);
  try {
    // Every page in one step: a single read transaction, so a writer beside it cannot make it start over.
    await db.backup(to, { progress: () => 0x7fffffff });
  } finally {
    release();
  }
}

/**
 * Copies a data dir's files into `out` (a folder there already), beside a running `weir serve` too:
 * the SQLite files through the online backup API (a plain copy of `events.sqlite3` misses what is
 * still in its `-wal`), the rest (keys, chain checkpoints, mails, local chain state) as files, each
 * for its owner alone. The read models go after the other files and the log (`log`, copied in as
 * `events.sqlite3`) last, so nothing in the copy is ahead of the copied log: a follower checkpoint
 * past it would skip payments the copy never recorded.
 */
export async function copyDataDir(
  dataDir: string,
  log: string,
  out: string,
): Promise<{ files: BackedUpFile[]; skipped: string[] }> {
  const all = await filesUnder(dataDir);
  const skipped = all.filter((name) => LEFT_OUT.some((pattern) => pattern.test(name)));
  const kept = all.filter((name) => !skipped.includes(name));
  const plain = kept.filter((name) => !isSqlite(name));
  // The read models before the log (their position is then at most the copied log's head), any other SQLite file with them.
  const databases = kept
    .filter((name) => isSqlite(name) && name !== SQLITE_EVENT_STORE_FILE)
    .sort((a, b) => Number(a !== SQLITE_READ_STORE_FILE) - Number(b !== SQLITE_READ_STORE_FILE));
  const files: BackedUpFile[] = [];
  for (const name of plain) {
    await makeDirectory(join(out, name, '..'), PRIVATE_DIR_MODE);
    // Gone since the listing (a mail sent): not part of this copy.
    const copied = await copyFile(join(dataDir, name), join(out, name)).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return false;
        throw error;
      },
    );
    if (!copied) continue;
    // A copy takes its source's mode: a file left readable by others is not, once copied.
    await chmod(join(out, name), PRIVATE_FILE_MODE);
    files.push({ name, how: 'copy', bytes: (await stat(join(out, name))).size });
  }
  for (const [from, name] of [
    ...databases.map((name) => [join(dataDir, name), name] as const),
    [log, SQLITE_EVENT_STORE_FILE] as const,
  ]) {
    await makeDirectory(join(out, name, '..'), PRIVATE_DIR_MODE);
    await backupSqlite(from, join(out, name));
    await chmod(join(out, name), PRIVATE_FILE_MODE);
    files.push({ name, how: 'sqlite', bytes: (await stat(join(out, name))).size });
  }
  return { files, skipped };
}

/**
 * Copies a data dir into `out` (a new folder) as `copyDataDir` does, and checks the copy. `out` is
 * a data dir: `weir serve --data-dir OUT` starts on it.
 */
export async function backupDataDir(options: {
  dataDir: string;
  /** WEIR_EVENT_STORE_FILE: the log outside the data dir, copied in as the backup's own `events.sqlite3`. */
  eventStoreFile?: string | undefined;
  out: string;
}): Promise<BackupReport> {
  const { dataDir, out } = options;
  const log = options.eventStoreFile ?? join(dataDir, SQLITE_EVENT_STORE_FILE);
  const logStats = await stat(log).catch(() => null);
  if (!logStats?.isFile())
    throw new ConfigError(`backup: no event log at ${log}: check --data-dir (or --event-store-file)`);
  if (
    await stat(out).then(
      () => true,
      () => false,
    )
  )
    throw new ConfigError(`backup: ${out} exists already: name a new folder with --out (a backup never overwrites)`);
  await makeDirectory(out, PRIVATE_DIR_MODE);
  try {
    const { files, skipped } = await copyDataDir(dataDir, log, out);
    // What was written, read back as a restore would start on it: a copy that does not hold is no backup.
    const check = checkBackup(out);
    if (check.problems.length > 0)
      throw new BackupCheckError(`backup: the copy does not verify, so none is kept: ${check.problems.join('; ')}`);
    return { out, files, skipped, check };
  } catch (error) {
    // Half a backup would pass for a whole one.
    await rm(out, { recursive: true, force: true });
    throw error;
  }
}

/** The summary `weir backup` prints: what was copied, and how to start on it. */
export function backupSummaryOf(report: BackupReport, dataDir: string): string {
  const width = Math.max(...report.files.map((file) => file.name.length));
  const lines = report.files.map(
    (file) =>
      `  ${file.name.padEnd(width)}  ${file.how === 'sqlite' ? 'SQLite online backup' : 'copied'}, ${file.bytes} bytes`,
  );
  const left =
    report.skipped.length > 0
      ? [
          `left out: ${report.skipped.join(', ')} (made anew at start; what the -wal files held is in the SQLite copies)`,
        ]
      : [];
  return [
    `backup of ${dataDir} into ${report.out}:`,
    ...lines,
    ...left,
    `verified: ${report.check.files.map((file) => `${file.name} ${file.note}`).join('; ')}`,
    `OK: ${report.files.length} files; to start on it: weir serve --data-dir ${report.out}`,
  ].join('\n');
}
