import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { EventStore } from './event-store.ts';
import { createKurrentDbEventStore } from './kurrentdb-event-store.ts';
import { createSqliteEventStore } from './sqlite-event-store.ts';

export type OpenEventStoreOptions = {
  /** KurrentDB connection string (e.g. from KURRENTDB_URL); when set, the log lives there. */
  kurrentDbUrl?: string;
  /** Where the embedded SQLite log lives when no KurrentDB url is given: `<dataDir>/events.sqlite3`. */
  dataDir: string;
};

/** The file name of the embedded log inside the data directory. */
export const SQLITE_EVENT_STORE_FILE = 'events.sqlite3';

/** KurrentDB when a url is given, otherwise the embedded SQLite file (creating the data directory). */
export async function openEventStore({ kurrentDbUrl, dataDir }: OpenEventStoreOptions): Promise<EventStore> {
  if (kurrentDbUrl) return createKurrentDbEventStore({ connectionString: kurrentDbUrl });
  await mkdir(dataDir, { recursive: true });
  return createSqliteEventStore({ path: join(dataDir, SQLITE_EVENT_STORE_FILE) });
}
