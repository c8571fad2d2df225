import {
  MongoClient,
  MongoServerError,
  type Filter as MongoFilter,
  type FindOptions as MongoFindOptions,
} from 'mongodb';
import type { Collection, ReadDocument, ReadStore } from './read-store.ts';
import {
  assertCollectionName,
  CHECKPOINTS_COLLECTION,
  copyReadDocument,
  decodeCheckpoint,
  encodeCheckpoint,
  normalizeFindOptions,
} from './read-store-checks.ts';

export type MongoReadStoreOptions = {
  /** A MongoDB connection string, `mongodb://...` or `mongodb+srv://...`. */
  url: string;
  /** Defaults to the database named in the URL's path, else `weir`. */
  databaseName?: string;
  /**
   * Fields to keep a single-field index on in every collection (e.g. `organizationId`, so lists and
   * work queues do not scan). Created before a collection's first use and again after `dropAll`;
   * an index MongoDB refuses is logged and left out, as queries answer the same without it.
   */
  indexedFields?: readonly string[];
  log?: (line: string) => void;
};

type CheckpointDocument = { _id: string; position: string | null };

const DEFAULT_DATABASE_NAME = 'weir';
const NAMESPACE_NOT_FOUND = 26;

/** The database in a connection string's path (`mongodb://host/db?options`), if any. */
const databaseNameInUrl = (url: string): string | null => {
  const match = /^mongodb(?:\+srv)?:\/\/[^/?]*\/([^?]*)/.exec(url);
  const name = match?.[1] ? decodeURIComponent(match[1]) : '';
  return name === '' ? null : name;
};

/**
 * Read store in MongoDB: each read-model collection is a MongoDB collection, checkpoints live
 * in `_checkpoints` as decimal strings. Connects before resolving, so a wrong URL fails at
 * start. Documents are checked to be plain JSON before writing (a bigint would otherwise be
 * written as an Int64 and read back as a lossy number); `get` and `find` return fresh objects.
 */
export const createMongoReadStore = async ({
  url,
  databaseName,
  indexedFields = [],
  log = (line) => console.warn(line),
}: MongoReadStoreOptions): Promise<ReadStore> => {
  const client = new MongoClient(url, {
    // Read 64-bit integers as numbers, never as bigint; documents hold money as strings anyway.
    useBigInt64: false,
    // Keep the default: an undefined filter value is sent as null (as mingo reads it), so
    // `{ organizationId: undefined }` matches nothing instead of everything.
    ignoreUndefined: false,
  });
  await client.connect();
  const db = client.db(databaseName ?? databaseNameInUrl(url) ?? DEFAULT_DATABASE_NAME);
  const checkpoints = db.collection<CheckpointDocument>(CHECKPOINTS_COLLECTION);
  const handles = new Map<string, Collection>();
  const indexes = [...new Set(indexedFields)]
    .filter((field) => field !== '_id')
    .map((field) => ({ key: { [field]: 1 as const }, name: `weir_${field}` }));
  /** Per collection, its indexes being (or having been) created; forgotten when `dropAll` drops them. */
  const indexesCreated = new Map<string, Promise<void>>();
  const ensureIndexes = (name: string): Promise<void> => {
    let created = indexesCreated.get(name);
    if (created === undefined) {
      created =
        indexes.length === 0
          ? Promise.resolve()
          : db
              .collection(name)
              .createIndexes(indexes)
              .then(
                () => undefined,
                (error: unknown) =>
                  log(
                    `[read-store] MongoDB refused the indexes of ${name} (queries still answer, scanning): ${(error as Error).message}`,
                  ),
              );
      indexesCreated.set(name, created);
    }
    return created;
  };

  const createHandle = (name: string): Collection => {
    const collection = db.collection<ReadDocument>(name);
    return {
      async get(id) {
        return collection.findOne({ _id: id });
      },
      async put(doc) {
        const stored = copyReadDocument(doc, { freeze: false });
        await ensureIndexes(name);
        await collection.replaceOne({ _id: stored._id }, stored, { upsert: true });
      },
      async delete(id) {
        await collection.deleteOne({ _id: id });
      },
      async find(filter, options) {
        await ensureIndexes(name);
        const { sort, skip, limit } = normalizeFindOptions(options);
        const findOptions: MongoFindOptions = {};
        if (sort !== null) findOptions.sort = sort;
        if (skip > 0) findOptions.skip = skip;
        if (limit !== null) findOptions.limit = limit;
        return collection.find(filter as MongoFilter<ReadDocument>, findOptions).toArray();
      },
      async count(filter) {
        await ensureIndexes(name);
        return collection.countDocuments(filter as MongoFilter<ReadDocument>);
      },
      async aggregate(pipeline, options) {
        return collection
          .aggregate<Record<string, unknown>>(pipeline, options?.maxTimeMs ? { maxTimeMS: options.maxTimeMs } : {})
          .toArray();
      },
      async clear() {
        await collection.deleteMany({});
      },
    };
  };

  return {
    durable: true,
    collection<T extends ReadDocument = ReadDocument>(name: string): Collection<T> {
      let handle = handles.get(name);
      if (handle === undefined) {
        assertCollectionName(name);
        handle = createHandle(name);
        handles.set(name, handle);
      }
      // MongoDB does not check documents against T; neither does this handle.
      return handle as Collection<T>;
    },
    async getCheckpoint(name) {
      const stored = await checkpoints.findOne({ _id: name });
      return decodeCheckpoint(name, stored?.position);
    },
    async setCheckpoint(name, position) {
      await checkpoints.replaceOne({ _id: name }, { position: encodeCheckpoint(position) }, { upsert: true });
    },
    // Each write stands alone here: a batch repeated after a crash must leave what it wrote unchanged.
    atomically: (work) => work(),
    async dropAll() {
      await Promise.all(indexesCreated.values());
      const existing = await db.listCollections({}, { nameOnly: true }).toArray();
      await Promise.all(
        existing
          .filter(({ name }) => !name.startsWith('system.'))
          .map(async ({ name }) => {
            try {
              await db.dropCollection(name);
            } catch (error) {
              // Dropped meanwhile by someone else: the goal is reached.
              if (!(error instanceof MongoServerError && error.code === NAMESPACE_NOT_FOUND)) throw error;
            }
          }),
      );
      // Dropping a collection dropped its indexes: its next use creates them again.
      indexesCreated.clear();
    },
    async close() {
      await client.close();
    },
  };
};
