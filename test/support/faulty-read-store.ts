import type { ReadDocument, ReadStore } from '../../src/read-store/read-store.ts';

/** Decides, per call, whether a read-store operation on `collection` fails: the error to throw, or null. `id` is the document's. */
export type Fault = (collection: string, id: string) => Error | null;

/**
 * `store` with its `get` or `put` failing whenever the given fault says so: a MongoDB read store
 * whose server is down, or one document whose handling always throws.
 */
export function faultyReadStore(store: ReadStore, faults: { get?: Fault; put?: Fault }): ReadStore {
  return {
    ...store,
    collection<T extends ReadDocument>(name: string) {
      const collection = store.collection<T>(name);
      return {
        ...collection,
        get: async (id: string) => {
          const error = faults.get?.(name, id);
          if (error) throw error;
          return collection.get(id);
        },
        put: async (doc: T) => {
          const error = faults.put?.(name, doc._id);
          if (error) throw error;
          return collection.put(doc);
        },
      };
    },
  };
}
