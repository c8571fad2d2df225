import type { Filter, ReadDocument } from './read-store.ts';

/** A value an equality index can key on; MongoDB equality on these is JS `===` (0 and -0 aside). */
type IndexKey = string | number | boolean;

const isIndexKey = (value: unknown): value is IndexKey =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';

const CANNOT_MATCH = Symbol('cannot match');
const UNINDEXABLE = Symbol('unindexable');
type Located = IndexKey | typeof CANNOT_MATCH | typeof UNINDEXABLE;

/**
 * Where a document sits for an equality on `path`. A primitive is a key. A missing field or
 * null cannot equal a primitive. An array on the way (which MongoDB matches element-wise) or
 * an object at the end is "unindexable": always a candidate, the full filter decides.
 */
const locate = (doc: ReadDocument, path: readonly string[]): Located => {
  let value: unknown = doc;
  for (const segment of path) {
    if (Array.isArray(value)) return UNINDEXABLE;
    if (typeof value !== 'object' || value === null) return CANNOT_MATCH;
    value = (value as Record<string, unknown>)[segment];
  }
  if (isIndexKey(value)) return value;
  if (typeof value === 'object' && value !== null) return UNINDEXABLE;
  return CANNOT_MATCH;
};

export type EqualityIndex = {
  readonly field: string;
  add(doc: ReadDocument): void;
  remove(doc: ReadDocument): void;
  /** Whether `previous` and `next` sit under the same key, so replacing one by the other leaves the index as it is. */
  sameKey(previous: ReadDocument, next: ReadDocument): boolean;
  clear(): void;
  /**
   * Ids of the documents that may match `filter`'s plain equality on this field, or null if
   * the filter has none (the field absent, or compared with an operator, array or object).
   */
  candidates(filter: Filter): { size: number; ids: Iterable<string> } | null;
};

/**
 * An exact-match index on one (possibly dotted) field, kept in step with a collection.
 *
 * The index is built on first use: until a query needs it (after creation and after `clear`),
 * `add` and `remove` do nothing, and the first `candidates` call that can use it indexes every
 * document of `documents()`; from then on it is kept up to date. A rebuild from the log writes
 * hundreds of thousands of documents that no query looks at before it ends, so it skips all
 * that work, and each index is built once, by whichever query needs it first.
 */
export const createEqualityIndex = (field: string, documents: () => Iterable<ReadDocument>): EqualityIndex => {
  const path = field.split('.');
  const idsByKey = new Map<IndexKey, Set<string>>();
  const unindexable = new Set<string>();
  let built = false;

  const insert = (doc: ReadDocument): void => {
    const located = locate(doc, path);
    if (located === UNINDEXABLE) {
      unindexable.add(doc._id);
    } else if (located !== CANNOT_MATCH) {
      const ids = idsByKey.get(located);
      if (ids === undefined) idsByKey.set(located, new Set([doc._id]));
      else ids.add(doc._id);
    }
  };

  return {
    field,
    add(doc) {
      if (built) insert(doc);
    },
    remove(doc) {
      if (!built) return;
      const located = locate(doc, path);
      if (located === UNINDEXABLE) {
        unindexable.delete(doc._id);
      } else if (located !== CANNOT_MATCH) {
        const ids = idsByKey.get(located);
        if (ids === undefined) return;
        ids.delete(doc._id);
        if (ids.size === 0) idsByKey.delete(located);
      }
    },
    sameKey(previous, next) {
      // Same key, or both unindexable or both unmatchable: either way the same entry (by _id).
      return !built || locate(previous, path) === locate(next, path);
    },
    clear() {
      idsByKey.clear();
      unindexable.clear();
      built = false;
    },
    candidates(filter) {
      if (!Object.hasOwn(filter, field)) return null;
      const wanted = filter[field];
      if (!isIndexKey(wanted)) return null;
      if (!built) {
        for (const doc of documents()) insert(doc);
        built = true;
      }
      const ids = idsByKey.get(wanted);
      if (unindexable.size === 0) return { size: ids?.size ?? 0, ids: ids ?? [] };
      const union = new Set(ids);
      for (const id of unindexable) union.add(id);
      return { size: union.size, ids: union };
    },
  };
};
