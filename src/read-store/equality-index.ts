import type { Filter, ReadDocument } from './read-store.ts';

/** A value an equality index can key on; MongoDB equality on these is JS `===` (0 and -0 aside). */
export type IndexKey = string | number | boolean;

export const isIndexKey = (value: unknown): value is IndexKey =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';

export const CANNOT_MATCH = Symbol('cannot match');
export const UNINDEXABLE = Symbol('unindexable');
export type Located = IndexKey | typeof CANNOT_MATCH | typeof UNINDEXABLE;

/**
 * Where a document sits for an equality on `path`. A primitive is a key. A missing field or
 * null cannot equal a primitive. An array on the way (which MongoDB matches element-wise) or
 * an object at the end is "unindexable": always a candidate, the full filter decides.
 */
export const locate = (doc: ReadDocument, path: readonly string[]): Located => {
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
  /**
   * `next` replaces `previous` (same `_id`): true when both sit under the same key, the index
   * then holding `next` in `previous`'s place; false leaves the index to `remove` and `add`.
   */
  replaceInPlace(previous: ReadDocument, next: ReadDocument): boolean;
  clear(): void;
  /**
   * The documents that may match `filter`'s plain equality on this field, or null if the
   * filter has none (the field absent, or compared with an operator, array or object). `exact`:
   * every one of them meets that equality (none has an array or object on the field's path).
   */
  candidates(filter: Filter): { size: number; docs: Iterable<ReadDocument>; exact: boolean } | null;
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
  // The documents themselves, by _id, so a query reads its candidates without a lookup each.
  const docsByKey = new Map<IndexKey, Map<string, ReadDocument>>();
  const unindexable = new Map<string, ReadDocument>();
  let built = false;

  const bucketOf = (located: Located): Map<string, ReadDocument> | undefined =>
    located === UNINDEXABLE ? unindexable : located === CANNOT_MATCH ? undefined : docsByKey.get(located);

  const insert = (doc: ReadDocument): void => {
    const located = locate(doc, path);
    if (located === CANNOT_MATCH) return;
    const bucket = bucketOf(located);
    if (bucket !== undefined) bucket.set(doc._id, doc);
    else docsByKey.set(located as IndexKey, new Map([[doc._id, doc]]));
  };

  return {
    field,
    add(doc) {
      if (built) insert(doc);
    },
    remove(doc) {
      if (!built) return;
      const located = locate(doc, path);
      const bucket = bucketOf(located);
      if (bucket === undefined) return;
      bucket.delete(doc._id);
      if (bucket.size === 0 && bucket !== unindexable) docsByKey.delete(located as IndexKey);
    },
    replaceInPlace(previous, next) {
      if (!built) return true;
      const located = locate(previous, path);
      // Same key, or both unindexable or both unmatchable: either way the same entry (by _id).
      if (located !== locate(next, path)) return false;
      // Replacing a Map entry keeps its place: candidates come in the same order as before.
      bucketOf(located)?.set(next._id, next);
      return true;
    },
    clear() {
      docsByKey.clear();
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
      const docs = docsByKey.get(wanted);
      if (unindexable.size === 0) return { size: docs?.size ?? 0, docs: docs?.values() ?? [], exact: true };
      const union = new Map(docs);
      for (const [id, doc] of unindexable) union.set(id, doc);
      return { size: union.size, docs: union.values(), exact: false };
    },
  };
};
