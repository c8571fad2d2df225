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

/**
 * A read store whose writes can be held: while `hold()` is in force every `put` and `delete` waits
 * (the projections stop advancing, as on a slow MongoDB) until `release()`. Reads go on.
 */
export function holdableReadStore() {
  let held: Promise<void> | null = null;
  let release = () => {};
  const waitWhileHeld = async () => {
    while (held !== null) await held;
  };
  return {
    wrap(store: ReadStore): ReadStore {
      return {
        ...store,
        collection<T extends ReadDocument>(name: string) {
          const collection = store.collection<T>(name);
          return {
            ...collection,
            put: async (doc: T) => {
              await waitWhileHeld();
              return collection.put(doc);
            },
            delete: async (id: string) => {
              await waitWhileHeld();
              return collection.delete(id);
            },
          };
        },
      };
    },
    hold(): void {
      held ??= new Promise<void>((resolve) => {
        release = () => {
          held = null;
          resolve();
        };
      });
    },
    release: () => release(),
  };
}
