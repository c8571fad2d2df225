import { chmod, link, lstat, readdir, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { Log } from '../shared/logger.ts';
import { makeDirectory } from '../shared/make-directory.ts';

/** Everything in the data dir is for its owner alone: the log, the master key, mails, checkpoints. */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
/** The umask of the commands that write there, so files libraries create (SQLite's) are private too. */
export const PRIVATE_UMASK = 0o077;

/** The file `weir serve` holds while it uses a data dir: its pid. */
export const SERVE_LOCK_FILE = 'serve.lock';

/** Written by `weir restore` before it copies, removed once the copy verifies: a data dir holding it is not whole. */
export const RESTORE_UNFINISHED_FILE = 'restore-unfinished';

/** A data dir a `weir restore` left unfinished (a copy cut short, a result that did not verify). */
export class UnfinishedRestoreError extends Error {
  constructor(readonly dataDir: string) {
    super(
      `a weir restore into the data dir ${dataDir} did not finish (${join(dataDir, RESTORE_UNFINISHED_FILE)}): it may hold part of a backup; run weir restore again with --force, which moves it aside`,
    );
    this.name = 'UnfinishedRestoreError';
  }
}

/** How many tightened entries the start-up log names before it counts the rest. */
const NAMED_IN_LOG = 8;

/** The calls `prepareDataDir` walks the data dir with (a test puts a file's removal between them). */
export type DataDirWalk = { lstat: typeof lstat; readdir: (path: string) => Promise<string[]>; chmod: typeof chmod };

/** An entry removed while the walk reached it (beside a running serve: SQLite's journal, an outbox draft). */
const gone = (error: unknown): boolean => (error as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * Creates the data dir (0700) and takes group and other access away from what it already holds
 * (left by an older Weir or another umask), logging each change. Symbolic links are left alone, and
 * entries removed meanwhile skipped: `weir inspect` walks it beside a running serve.
 */
export async function prepareDataDir(
  dataDir: string,
  log: Log,
  fs: DataDirWalk = { lstat, readdir, chmod },
): Promise<void> {
  await makeDirectory(dataDir, PRIVATE_DIR_MODE);
  const tightened: string[] = [];
  const failed: string[] = [];
  const visit = async (path: string): Promise<void> => {
    const stats = await fs.lstat(path).catch((error: unknown) => {
      if (gone(error)) return null;
      throw error;
    });
    if (!stats || stats.isSymbolicLink()) return;
    const mode = stats.mode & 0o777;
    if ((mode & 0o077) !== 0) {
      const name = relative(dataDir, path) || '.';
      const next = mode & ~0o077;
      try {
        await fs.chmod(path, next);
        tightened.push(`${name} ${octal(mode)} → ${octal(next)}`);
      } catch (error) {
        if (!gone(error)) failed.push(`${name} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
      }
    }
    if (!stats.isDirectory()) return;
    const entries = await fs.readdir(path).catch((error: unknown) => {
      if (gone(error)) return [];
      throw error;
    });
    for (const entry of entries.sort()) await visit(join(path, entry));
  };
  await visit(dataDir);
  if (tightened.length > 0) {
    const more = tightened.length > NAMED_IN_LOG ? `, and ${tightened.length - NAMED_IN_LOG} more` : '';
    log(
      `[weir] data dir ${dataDir}: took group and other access away from ${tightened.length} ${tightened.length === 1 ? 'entry' : 'entries'}: ${tightened.slice(0, NAMED_IN_LOG).join(', ')}${more}`,
      { event: 'data_dir.access_tightened', dataDir, entries: tightened.length },
    );
  }
  if (failed.length > 0)
    log(`[weir] data dir ${dataDir}: could not take group and other access away from ${failed.join(', ')}`, {
      event: 'data_dir.access_not_tightened',
      dataDir,
      entries: failed.length,
    });
}

const octal = (mode: number): string => `0${mode.toString(8).padStart(3, '0')}`;

/** Who takes the data dir's lock: a server, a replay rebuilding the read models it keeps, or a restore replacing it. */
export type LockHolder = 'serve' | 'replay' | 'restore';

/** Thrown when another `weir serve` holds the data dir. */
export class DataDirInUseError extends Error {
  override readonly name = 'DataDirInUseError';
  constructor(
    readonly dataDir: string,
    readonly pid: number,
    by: LockHolder = 'serve',
  ) {
    // Another data dir is another log: a replay must run on this one, so only stopping the server helps.
    const remedy = {
      serve: 'stop it first, or give this one its own --data-dir',
      replay: 'stop it first: weir replay rebuilds the read models it serves',
      restore: 'stop it first: weir restore replaces what it serves',
    }[by];
    super(
      `another weir serve (pid ${pid}) is using the data dir ${dataDir}; ${remedy} (lock file ${join(dataDir, SERVE_LOCK_FILE)})`,
    );
  }
}

/** Data dirs this process holds: a lock with this process's pid is stale unless it is one of these. */
const heldHere = new Set<string>();

/**
 * One `weir serve` per data dir: `serve.lock`, created exclusively, holds the server's pid. A lock
 * whose process is gone (killed with -9, a crash) is taken over, logged. Resolves with the release,
 * which removes the lock if it is still this process's.
 */
export async function lockDataDir(dataDir: string, log: Log, by: LockHolder = 'serve'): Promise<() => Promise<void>> {
  const lockFile = join(dataDir, SERVE_LOCK_FILE);
  const mine = `${process.pid}\n`;
  // Written whole under a private name, then linked into place: the lock never exists half written.
  const draft = join(dataDir, `${SERVE_LOCK_FILE}.${process.pid}.${Date.now()}.tmp`);
  await writeFile(draft, mine, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
  try {
    for (let tries = 0; ; tries++) {
      try {
        await link(draft, lockFile);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || tries >= 5) throw error;
      }
      const holder = await readPid(lockFile);
      if (holder === undefined) continue; // removed meanwhile: try again
      if (holder !== null && isAlive(holder, dataDir)) throw new DataDirInUseError(dataDir, holder, by);
      await takeOver(lockFile, holder, log);
    }
  } finally {
    await rm(draft, { force: true });
  }
  heldHere.add(dataDir);
  if (by !== 'restore' && existsSync(join(dataDir, RESTORE_UNFINISHED_FILE))) {
    heldHere.delete(dataDir);
    await unlink(lockFile).catch(() => undefined);
    throw new UnfinishedRestoreError(dataDir);
  }
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    heldHere.delete(dataDir);
    if ((await readPid(lockFile)) === process.pid) await unlink(lockFile).catch(() => undefined);
  };
}

/** The pid in the lock file: undefined when there is no file, null when it holds no pid. */
async function readPid(lockFile: string): Promise<number | null | undefined> {
  let text: string;
  try {
    text = await readFile(lockFile, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return /^\d+\n?$/.test(text) ? Number(text.trim()) : null;
}

function isAlive(pid: number, dataDir: string): boolean {
  // The same pid as this process: left by an earlier run (a restarted container is pid 1 again),
  // unless this process holds the data dir already.
  if (pid === process.pid) return heldHere.has(dataDir);
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Moves a stale lock aside under a name of this process's own, so of two servers taking it over at
 * once only one gets it; a lock found fresh there (taken over by another meanwhile) is put back.
 */
async function takeOver(lockFile: string, stalePid: number | null, log: Log): Promise<void> {
  const aside = `${lockFile}.${process.pid}.stale`;
  try {
    await rename(lockFile, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = await readPid(aside);
  if (moved !== stalePid) {
    await link(aside, lockFile).catch(() => undefined);
    await rm(aside, { force: true });
    return;
  }
  await rm(aside, { force: true });
  log(
    `[weir] data dir ${dirname(lockFile)}: taking over the lock of weir serve pid ${stalePid ?? '(unknown)'}, which is no longer running`,
    { event: 'data_dir.lock_taken_over', dataDir: dirname(lockFile), lockFile, stalePid },
  );
}
