import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { makeDirectory } from '../shared/make-directory.ts';
import type { EventStore } from './event-store.ts';
import { createSqliteEventStore } from './sqlite-event-store.ts';

export type OpenEventStoreOptions = {
  /** KurrentDB connection string (e.g. from KURRENTDB_URL); when set, the log lives there. */
  kurrentDbUrl?: string;
  /** Where the embedded SQLite log lives when no KurrentDB url is given: `<dataDir>/events.sqlite3`. */
  dataDir: string;
  /** The SQLite file instead of `<dataDir>/events.sqlite3` (WEIR_EVENT_STORE_FILE): several instances may share it. */
  file?: string | undefined;
};

/** The file name of the embedded log inside the data directory. */
export const SQLITE_EVENT_STORE_FILE = 'events.sqlite3';

/**
 * KurrentDB when a url is given, otherwise the embedded SQLite file, made for its owner alone
 * (the data directory 0700, the file 0600: SQLite gives its -wal and -shm files the file's mode).
 */
export async function openEventStore({ kurrentDbUrl, dataDir, file }: OpenEventStoreOptions): Promise<EventStore> {
  if (kurrentDbUrl) {
    // Its client takes a third of a second to load: only a server that uses it pays for that.
    const { createKurrentDbEventStore } = await import('./kurrentdb-event-store.ts');
    return createKurrentDbEventStore({ connectionString: kurrentDbUrl });
  }
  await makeDirectory(file ? dirname(file) : dataDir, 0o700);
  const path = file ?? join(dataDir, SQLITE_EVENT_STORE_FILE);
  await (await open(path, 'a', 0o600)).close();
  return createSqliteEventStore({ path });
}
