import { existsSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { SQLITE_READ_STORE_FILE } from '../read-store/sqlite-read-store.ts';
import type { Logger } from '../shared/logger.ts';
import { hasTable, readModelsBelonging, withDatabase } from './read-models-belonging.ts';

/**
 * Why a start cannot check that the read models belong to the log, or null when it can (an SQLite
 * log and the data dir's own read-models.sqlite3). In MongoDB or a shared store they are no file of
 * this data dir to move aside, and their rebuild is the operator's call (`weir replay`), not a start's.
 */
export function foreignCheckSkipped(setup: { kurrentDb: boolean; mongoDb: boolean; sharedReadStore: boolean }) {
  const why = setup.sharedReadStore
    ? 'the read store is shared with other Weir instances'
    : setup.mongoDb
      ? 'the read models are in MongoDB'
      : setup.kurrentDb
        ? 'the log is in KurrentDB'
        : null;
  return why && `${why}, not SQLite files of the data dir: weir audit verify compares them with a rebuild from the log`;
}

/** SQLite's files beside a database: moved with it, so the moved file opens with what its -wal held. */
const COMPANIONS = ['', '-wal', '-shm'];

/**
 * Before a start opens the embedded read models: when `read-models.sqlite3` does not belong to the
 * log (restored from another backup, ahead of the log, another log's organizations), it is moved
 * aside, with its -wal and -shm, to `read-models.sqlite3.foreign-<time>`; the read store then opens
 * a new file and the projections build it from the log, as for a new data dir. Nothing is deleted.
 * Returns where it went, or null when the read models belong (or there are none).
 */
export async function setAsideForeignReadModels(options: {
  dataDir: string;
  /** The SQLite log: the data dir's events.sqlite3, or WEIR_EVENT_STORE_FILE. */
  log: string;
  now: number;
  logger: Logger;
}): Promise<string | null> {
  const { dataDir, log, logger } = options;
  const readModels = join(dataDir, SQLITE_READ_STORE_FILE);
  if (!existsSync(readModels)) return null;
  // No log (yet) is a log at position 0: read models past it, or holding organizations, are not its.
  const head = existsSync(log)
    ? withDatabase(log, (db) =>
        hasTable(db, 'events')
          ? ((db.prepare('SELECT max(position) FROM events').pluck().safeIntegers().get() as bigint | null) ?? 0n)
          : null,
      )
    : null;
  const { reason } = readModelsBelonging(readModels, head === null ? null : log, head ?? 0n);
  if (reason === null) return null;
  const stamp = new Date(options.now).toISOString().replace(/:/g, '-');
  let aside = `${readModels}.foreign-${stamp}`;
  // Never over an earlier one: a rename would replace it.
  for (let n = 2; COMPANIONS.some((suffix) => existsSync(`${aside}${suffix}`)); n++)
    aside = `${readModels}.foreign-${stamp}-${n}`;
  for (const suffix of COMPANIONS)
    if (existsSync(`${readModels}${suffix}`)) await rename(`${readModels}${suffix}`, `${aside}${suffix}`);
  logger.warn(
    { event: 'read_models.foreign', file: readModels, movedTo: aside, reason },
    `${reason}: moved ${SQLITE_READ_STORE_FILE} aside to ${aside}; rebuilding the read models from the log`,
  );
  return aside;
}
