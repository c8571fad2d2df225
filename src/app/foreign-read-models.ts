import { existsSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { EventStore } from '../event-store/event-store.ts';
import { SQLITE_EVENT_STORE_FILE } from '../event-store/open-event-store.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { SQLITE_READ_STORE_FILE } from '../read-store/sqlite-read-store.ts';
import type { Logger } from '../shared/logger.ts';
import { ConfigError } from './config.ts';
import { hasTable, readModelsBelonging, withDatabase } from './read-models-belonging.ts';
import { type BelongingNames, readModelsBelongingThrough } from './read-models-through-ports.ts';

/**
 * How a start names read models and a log that are not both SQLite files of the data dir (KurrentDB,
 * MongoDB, a shared read store), which it checks through the ports once they are open, and what the
 * operator does when they do not belong; null for an SQLite log with the data dir's own
 * read-models.sqlite3 (checked as files before they open, and set aside). Those are the operator's,
 * or shared: no start moves them aside or rebuilds them, it refuses.
 */
export function portBelongingCheck(setup: {
  kurrentDb: boolean;
  mongoDb: boolean;
  sharedReadStore: boolean;
  dataDir: string;
  /** WEIR_EVENT_STORE_FILE, when the SQLite log is not the data dir's events.sqlite3. */
  eventStoreFile?: string | undefined;
}): (BelongingNames & { remedy: string }) | null {
  const rebuilt = 'so the projections rebuild them from the log';
  const log = setup.kurrentDb ? 'the KurrentDB log' : (setup.eventStoreFile ?? SQLITE_EVENT_STORE_FILE);
  if (setup.sharedReadStore)
    return {
      readModels: 'the shared read store',
      log,
      remedy: `give this Weir its log’s read store, or empty it ${rebuilt}`,
    };
  if (setup.mongoDb)
    return {
      readModels: 'the MongoDB database',
      log,
      remedy: `point MONGODB_URL (--mongodb-url) and its database at this log’s read models, or empty that database ${rebuilt}`,
    };
  if (setup.kurrentDb)
    return {
      readModels: SQLITE_READ_STORE_FILE,
      log,
      remedy: `point KURRENTDB_URL (--kurrentdb-url) at the log they were built from, or move ${join(setup.dataDir, SQLITE_READ_STORE_FILE)} out of the data dir ${rebuilt}`,
    };
  return null;
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

/**
 * After the stores open, in the setups `portBelongingCheck` names: read models that are not this
 * log's (ahead of its head, or holding organizations it never recorded) stop the start with a
 * ConfigError (`weir serve` prints it and exits 2), logged first as the last line a collector gets.
 */
export async function refuseForeignReadModels(
  stores: { eventStore: EventStore; readStore: ReadStore },
  check: BelongingNames & { remedy: string },
  logger: Logger,
): Promise<void> {
  const { note, reason } = await readModelsBelongingThrough(stores, check);
  if (reason === null) {
    logger.info({ event: 'read_models.belonging_checked', note }, `read models checked against the log: ${note}`);
    return;
  }
  const message = `${reason}. These read models are not this log’s, so Weir does not serve them: ${check.remedy}`;
  logger.error({ event: 'read_models.foreign', reason }, message);
  throw new ConfigError(message);
}
