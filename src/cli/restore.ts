import { chmod, mkdir, readdir, realpath, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { ConfigError } from '../app/config.ts';
import {
  lockDataDir,
  PRIVATE_DIR_MODE,
  PRIVATE_FILE_MODE,
  RESTORE_UNFINISHED_FILE,
  SERVE_LOCK_FILE,
} from '../app/data-dir.ts';
import { SQLITE_EVENT_STORE_FILE } from '../event-store/open-event-store.ts';
import type { Log } from '../shared/logger.ts';
import { makeDirectory } from '../shared/make-directory.ts';
import { BackupCheckError } from './backup-check-error.ts';
import { copyDataDir, type BackedUpFile } from './backup.ts';
import { checkBackup, type BackupCheck } from './check-backup.ts';

/** What was restored where, where the data dir's earlier entries went (with --force), and the check of the result. */
export type RestoreReport = {
  from: string;
  dataDir: string;
  files: BackedUpFile[];
  movedAside: string | null;
  check: BackupCheck;
};

/**
 * Restores a backup into a data dir: the backup checked first (as `weir backup --verify`, else
 * refused naming the problem), the data dir locked as a `weir serve` locks it (refused while one
 * runs there, and none can start on it meanwhile), refused when it holds anything unless `force`
 * moves what it holds aside to `<dataDir>.before-restore-<time>` (never deleted), then the backup
 * copied in (0700 folders, 0600 files) and the result checked before it is reported.
 */
export async function restoreDataDir(options: {
  from: string;
  dataDir: string;
  force: boolean;
  now: number;
  log: Log;
  /** How an entry of the data dir moves aside: `fs.rename`, or a test's that fails as a mount point makes it. */
  rename?: (from: string, to: string) => Promise<void>;
}): Promise<RestoreReport> {
  const move = options.rename ?? rename;
  const from = resolve(options.from);
  const dataDir = resolve(options.dataDir);
  // Through symbolic links: one inside the other would move the backup aside, or copy the old data in.
  const [realFrom, realDataDir] = [await realPathOf(from), await realPathOf(dataDir)];
  if (within(realFrom, realDataDir) || within(realDataDir, realFrom))
    throw new ConfigError(
      `restore: --from ${from} and --data-dir ${dataDir} are the same folder or one holds the other: restore into a folder beside the backup`,
    );
  const backup = checkBackup(from);
  if (backup.problems.length > 0)
    throw new ConfigError(
      `restore: the backup ${from} does not verify, so nothing was restored: ${backup.problems.join('; ')}`,
    );
  await makeDirectory(dataDir, PRIVATE_DIR_MODE);
  const release = await lockDataDir(dataDir, options.log, 'restore');
  try {
    const held = (await readdir(dataDir)).filter((name) => name !== SERVE_LOCK_FILE).sort();
    let movedAside: string | null = null;
    if (held.length > 0) {
      if (!options.force)
        throw new ConfigError(
          `restore: the data dir ${dataDir} is not empty (${namesOf(held)}): give --force to move what it holds aside to ${dataDir}.before-restore-<time> first (nothing is deleted), or name an empty or new folder`,
        );
      const aside = `${dataDir}.before-restore-${new Date(options.now).toISOString().replace(/:/g, '-')}`;
      movedAside = aside;
      // Entry by entry, the data dir itself staying (and locked): a mount point cannot be renamed.
      await mkdir(aside, { mode: PRIVATE_DIR_MODE });
      const moved: string[] = [];
      for (const name of held) {
        await move(join(dataDir, name), join(aside, name)).catch(async (error: unknown) => {
          if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
          if (moved.length === 0) {
            // Nothing moved: the empty folder goes, and the data dir holds what it held.
            await rmdir(aside).catch(() => undefined);
            throw new ConfigError(
              `restore: the data dir ${dataDir} (or its first entry, ${name}) is a mount point of its own, so --force cannot move what it holds beside it: nothing was moved or restored, and the data dir holds what it held; empty it yourself (keep a copy), or restore into another folder`,
            );
          }
          // An entry that is a mount point of its own, after others moved: what is where must be said.
          throw new ConfigError(
            `restore: ${join(dataDir, name)} is a mount point of its own, so --force cannot move it beside the data dir: nothing was restored; ${namesOf(moved)} moved to ${aside} before it, the rest (${namesOf(held.slice(moved.length))}) is still in the data dir; put them back or empty the data dir yourself (keep a copy), or restore into another folder`,
          );
        });
        moved.push(name);
      }
    }
    await chmod(dataDir, PRIVATE_DIR_MODE);
    // Until the copy verifies, nothing starts on it (lockDataDir refuses): a copy cut short is no data dir.
    const unfinished = join(dataDir, RESTORE_UNFINISHED_FILE);
    await writeFile(unfinished, `${new Date(options.now).toISOString()}\n`, { mode: PRIVATE_FILE_MODE });
    const aside = movedAside ? ` (what it held is in ${movedAside})` : '';
    const { files } = await copyDataDir(from, join(from, SQLITE_EVENT_STORE_FILE), dataDir).catch((error: unknown) => {
      throw new BackupCheckError(
        `restore: copying ${from} into ${dataDir} failed: ${(error as Error).message}; nothing will start on it until weir restore --force is run again${aside}`,
      );
    });
    // Read back as a start would read it: a copy that does not hold is said, not reported restored.
    const check = checkBackup(dataDir);
    if (check.problems.length > 0)
      throw new BackupCheckError(
        `restore: the restored data dir ${dataDir} does not verify: ${check.problems.join('; ')}; nothing will start on it until weir restore --force is run again${aside}`,
      );
    await rm(unfinished);
    return { from, dataDir, files, movedAside, check };
  } finally {
    await release();
  }
}

/** The first five names, and how many more: a message names a folder's entries without listing thousands. */
const namesOf = (names: readonly string[]): string =>
  `${names.slice(0, 5).join(', ')}${names.length > 5 ? `, and ${names.length - 5} more` : ''}`;

/** `path` with its symbolic links resolved, as far as it exists (a new data dir does not yet). */
async function realPathOf(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(path) === path) throw error;
    return join(await realPathOf(dirname(path)), basename(path));
  }
}

/** Whether `inner` is `outer` or a folder inside it. */
const within = (inner: string, outer: string): boolean => {
  const path = relative(outer, inner);
  return path === '' || (!path.startsWith('..') && !isAbsolute(path));
};

/** The summary `weir restore` prints: what was copied, where the old data dir went, and how to start. */
export function restoreSummaryOf(report: RestoreReport): string {
  return [
    `restore of ${report.from} into ${report.dataDir}:`,
    ...(report.movedAside ? [`what the data dir held moved aside to ${report.movedAside}`] : []),
    `copied ${report.files.length} files`,
    `verified: ${report.check.files.map((file) => `${file.name} ${file.note}`).join('; ')}`,
    `OK: to start on it: weir serve --data-dir ${report.dataDir}`,
  ].join('\n');
}
