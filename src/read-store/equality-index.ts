import type { Filter, ReadDocument } from './read-store.ts';

/** A value an equality index can key on; MongoDB equality on these is JS `===` (0 and -0 aside). */
type IndexKey = string | number | boolean;

const isIndexKey = (value: unknown): value is IndexKey =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';

type Located = { kind: 'key'; key: IndexKey } | { kind: 'cannot-match' } | { kind: 'unindexable' };

/**
 * Where a document sits for an equality on `path`. A primitive is a key. A missing field or
 * null cannot equal a primitive. An array on the way (which MongoDB matches element-wise) or
 * an object at the end is "unindexable": always a candidate, the full filter decides.
 */
const locate = (doc: ReadDocument, path: readonly string[]): Located => {
  let value: unknown = doc;
  for (const segment of path) {
    if (Array.isArray(value)) return { kind: 'unindexable' };
    if (typeof value !== 'object' || value === null) return { kind: 'cannot-match' };
    value = (value as Record<string, unknown>)[segment];
  }
  if (isIndexKey(value)) return { kind: 'key', key: value };
  if (typeof value === 'object' && value !== null) return { kind: 'unindexable' };
  return { kind: 'cannot-match' };
};

export type EqualityIndex = {
  readonly field: string;
  add(doc: ReadDocument): void;
  remove(doc: ReadDocument): void;
  clear(): void;
  /**
   * Ids of the documents that may match `filter`'s plain equality on this field, or null if
   * the filter has none (the field absent, or compared with an operator, array or object).
   */
  candidates(filter: Filter): { size: number; ids: Iterable<string> } | null;
};

/** An exact-match index on one (possibly dotted) field, kept in step with a collection. */
export const createEqualityIndex = (field: string): EqualityIndex => {
  const path = field.split('.');
  const idsByKey = new Map<IndexKey, Set<string>>();
  const unindexable = new Set<string>();

  return {
    field,
    add(doc) {
      const located = locate(doc, path);
      if (located.kind === 'unindexable') {
        unindexable.add(doc._id);
      } else if (located.kind === 'key') {
        const ids = idsByKey.get(located.key);
        if (ids === undefined) idsByKey.set(located.key, new Set([doc._id]));
        else ids.add(doc._id);
      }
    },
    remove(doc) {
      const located = locate(doc, path);
      if (located.kind === 'unindexable') {
        unindexable.delete(doc._id);
      } else if (located.kind === 'key') {
        const ids = idsByKey.get(located.key);
        if (ids === undefined) return;
        ids.delete(doc._id);
        if (ids.size === 0) idsByKey.delete(located.key);
      }
    },
    clear() {
      idsByKey.clear();
      unindexable.clear();
    },
    candidates(filter) {
      if (!Object.hasOwn(filter, field)) return null;
      const wanted = filter[field];
      if (!isIndexKey(wanted)) return null;
      const ids = idsByKey.get(wanted);
      if (unindexable.size === 0) return { size: ids?.size ?? 0, ids: ids ?? [] };
      const union = new Set(ids);
      for (const id of unindexable) union.add(id);
      return { size: union.size, ids: union };
    },
  };
};
