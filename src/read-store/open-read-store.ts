import { createEmbeddedReadStore } from './embedded-read-store.ts';
import { createMongoReadStore } from './mongodb-read-store.ts';
import type { ReadStore } from './read-store.ts';

export type OpenReadStoreOptions = {
  /** MongoDB connection string; when absent or empty the embedded store is used. */
  mongoDbUrl?: string;
  /** MongoDB only: defaults to the database in the URL's path, else `weir`. */
  mongoDbDatabaseName?: string;
  /** Fields to index: exact-match indexes in the embedded store, single-field indexes in MongoDB. */
  indexedFields?: readonly string[];
  /** Embedded only: see `EmbeddedReadStoreOptions.writes`. */
  embeddedWrites?: 'checked' | 'trusted';
};

/** The MongoDB read store when a URL is given (connected before resolving), else the embedded one. */
export const openReadStore = async (options: OpenReadStoreOptions = {}): Promise<ReadStore> => {
  const { mongoDbUrl, mongoDbDatabaseName, indexedFields, embeddedWrites } = options;
  if (mongoDbUrl !== undefined && mongoDbUrl !== '') {
    return createMongoReadStore({ url: mongoDbUrl, databaseName: mongoDbDatabaseName, indexedFields });
  }
  return createEmbeddedReadStore({ indexedFields: indexedFields, writes: embeddedWrites });
};
