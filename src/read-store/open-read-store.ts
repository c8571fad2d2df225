import { join } from 'node:path';
import { createEmbeddedReadStore } from './embedded-read-store.ts';
import { createSqliteReadStore, SQLITE_READ_STORE_FILE } from './sqlite-read-store.ts';
import type { ReadStore } from './read-store.ts';

export type OpenReadStoreOptions = {
  /** MongoDB connection string; when absent or empty the embedded store is used. */
  mongoDbUrl?: string;
  /** MongoDB only: defaults to the database in the URL's path, else `weir`. */
  mongoDbDatabaseName?: string;
  /** Fields to index: exact-match indexes in the embedded store, single-field indexes in MongoDB. */
  indexedFields?: readonly string[];
  /** Embedded in the data dir only: see `SqliteReadStoreOptions.orderedFields`. */
  orderedFields?: readonly string[];
  /** Embedded in the data dir only: see `SqliteReadStoreOptions.compoundIndex`. */
  compoundIndex?: readonly string[];
  /** Embedded only: see `EmbeddedReadStoreOptions.writes`. */
  embeddedWrites?: 'checked' | 'trusted';
  /**
   * Embedded only: the data dir whose SQLite file keeps the read models across restarts
   * (`read-models.sqlite3`). Without one, the read models live in memory only (tests).
   */
  dataDir?: string;
  /** Embedded in the data dir only: read the file without writing it (see `SqliteReadStoreOptions.readonly`). */
  readonly?: boolean;
};

/**
 * The MongoDB read store when a URL is given (connected before resolving), else the embedded one:
 * kept in the data dir when one is given, in memory otherwise.
 */
export const openReadStore = async (options: OpenReadStoreOptions = {}): Promise<ReadStore> => {
  const {
    mongoDbUrl,
    mongoDbDatabaseName,
    indexedFields,
    orderedFields,
    compoundIndex,
    embeddedWrites,
    dataDir,
    readonly,
  } = options;
  if (mongoDbUrl !== undefined && mongoDbUrl !== '') {
    // The driver loads only for a server that uses it.
    const { createMongoReadStore } = await import('./mongodb-read-store.ts');
    return createMongoReadStore({ url: mongoDbUrl, databaseName: mongoDbDatabaseName, indexedFields });
  }
  if (dataDir !== undefined)
    return createSqliteReadStore({
      path: join(dataDir, SQLITE_READ_STORE_FILE),
      indexedFields,
      orderedFields,
      compoundIndex,
      writes: embeddedWrites,
      readonly,
    });
  return createEmbeddedReadStore({ indexedFields: indexedFields, writes: embeddedWrites });
};
