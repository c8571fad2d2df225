import { createEmbeddedReadStore } from './embedded-read-store.ts';
import { createMongoReadStore } from './mongodb-read-store.ts';
import type { ReadStore } from './read-store.ts';

export type OpenReadStoreOptions = {
  /** MongoDB connection string; when absent or empty the embedded store is used. */
  mongoDbUrl?: string;
  /** MongoDB only: defaults to the database in the URL's path, else `weir`. */
  mongoDbDatabaseName?: string;
  /** Embedded only: fields to keep exact-match indexes on (see `createEmbeddedReadStore`). */
  embeddedIndexedFields?: readonly string[];
  /** Embedded only: see `EmbeddedReadStoreOptions.writes`. */
  embeddedWrites?: 'checked' | 'trusted';
};

/** The MongoDB read store when a URL is given (connected before resolving), else the embedded one. */
export const openReadStore = async (options: OpenReadStoreOptions = {}): Promise<ReadStore> => {
  const { mongoDbUrl, mongoDbDatabaseName, embeddedIndexedFields, embeddedWrites } = options;
  if (mongoDbUrl !== undefined && mongoDbUrl !== '') {
    return createMongoReadStore({ url: mongoDbUrl, databaseName: mongoDbDatabaseName });
  }
  return createEmbeddedReadStore({ indexedFields: embeddedIndexedFields, writes: embeddedWrites });
};
