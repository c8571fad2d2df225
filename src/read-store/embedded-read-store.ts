import { Query } from 'mingo';
import { createEqualityIndex, type EqualityIndex } from './equality-index.ts';
import { compileMatcher } from './native-match.ts';
import { runPipeline } from './run-pipeline.ts';
import { sortNatively } from './native-sort.ts';
import type { Collection, Filter, FindOptions, ReadDocument, ReadStore } from './read-store.ts';
import {
  assertCollectionName,
  copyReadDocument,
  encodeCheckpoint,
  filterText,
  normalizeFindOptions,
} from './read-store-checks.ts';

export type EmbeddedReadStoreOptions = {
  /**
   * Fields (dotted paths allowed) to keep an exact-match index on in every collection, e.g.
   * `['organizationId']`. `find`, `count` and an aggregation's leading `$match` whose filter
   * compares one of them to a string, number or boolean scan only that value's documents.
   * Results are the same with or without; `_id` equality is always a direct lookup. Each index
   * is built by the first query that can use it and kept up to date from then on (see
   * `createEqualityIndex`), so writes to a collection nobody has queried yet cost nothing extra.
   */
  indexedFields?: readonly string[];
  /**
   * `checked` (the default) validates, deep-copies and deep-freezes every document on `put`.
   * `trusted` stores the very object given, frozen at the top level: for writers that build a new
   * object per change and never touch it again (the projections). Several times faster,
   * which is what replaying the log at start needs; `checked` stays the contract for other users.
   */
  writes?: 'checked' | 'trusted';
};

/**
 * A filter made only of field equalities with strings, finite numbers, booleans or null: its
 * compiled Query depends on nothing but the filter, so it can be kept and reused.
 */
const plainEqualityKey = (filter: Filter): string | null => {
  for (const field in filter) {
    if (!Object.hasOwn(filter, field) || field.startsWith('$')) return null;
    const value = filter[field];
    if (value === null || typeof value === 'string' || typeof value === 'boolean') continue;
    if (typeof value === 'number' && Number.isFinite(value) && !Object.is(value, -0)) continue;
    return null;
  }
  return JSON.stringify(filter);
};

const MAX_CACHED_QUERIES = 1000;

/**
 * The documents one filter matched, kept for the rest of the current turn of the event loop while
 * the collection does not change: a page's `count` and `find` of one filter object (a list and its
 * total) then share one scan. Never kept longer, so no later request reads an old answer.
 */
type TurnScan = { filter: Filter; text: string; writes: number; found: ReadDocument[] };

type CollectionState = {
  readonly docs: Map<string, ReadDocument>;
  readonly indexes: readonly EqualityIndex[];
  readonly handle: Collection;
  /** Writes so far (put, delete, clear): a scan from before a write is not reused. */
  writes: number;
  scan: TurnScan | null;
};

/** A trusted write: the `_id` is checked and the given object itself is frozen (top level) and kept. */
function trustedDocument<T extends { _id: string }>(doc: T): T {
  if (typeof doc._id !== 'string' || doc._id.length === 0)
    throw new TypeError('a read document needs a non-empty string _id');
  return Object.freeze(doc);
}

/**
 * Read store held in memory: one Map per collection keyed by `_id`, queried with MongoDB
 * filters and pipelines through mingo. Not durable: projections rebuild it from the log.
 *
 * Documents are immutable once stored. `put` validates and deep-copies the given document
 * and deep-freezes the copy (so the caller keeps a mutable original); `get` and `find` return
 * that frozen copy itself, with no cloning, which keeps GET by id a Map lookup. Assigning to
 * a returned document throws a TypeError in strict-mode code; to change a document, build a
 * new one (`{ ...doc, status }`) and `put` it. `aggregate` works on clones and returns fresh,
 * mutable objects.
 */
export const createEmbeddedReadStore = (options: EmbeddedReadStoreOptions = {}): ReadStore => {
  const indexedFields = [...new Set(options.indexedFields ?? [])].filter((field) => field !== '_id');
  const trusted = options.writes === 'trusted';
  const collections = new Map<string, CollectionState>();
  const checkpoints = new Map<string, string | null>();

  /**
   * Compiling a mingo Query costs far more than testing a document with it, and projections and
   * API lists repeat the same few equality filters (`{ organizationId, environment, deleted }`),
   * so those are compiled once. Any other filter gets a fresh Query, as before.
   */
  const queries = new Map<string, Query>();
  const queryFor = (filter: Filter): Query => {
    const key = plainEqualityKey(filter);
    if (key === null) return new Query(filter);
    let query = queries.get(key);
    if (query === undefined) {
      if (queries.size >= MAX_CACHED_QUERIES) queries.clear();
      query = new Query(filter);
      queries.set(key, query);
    }
    return query;
  };

  type Candidates = {
    size: number;
    docs: Iterable<ReadDocument>;
    /** A field of the filter whose equality every candidate meets: it needs no test of its own. */
    exact: string | null;
  };

  /**
   * The documents that can match `filter`: one by `_id`, an index's bucket, or all of them.
   * The rest of the filter still runs over the result, so this only narrows.
   */
  const candidatesFor = (state: CollectionState, filter: Filter): Candidates => {
    const id = filter['_id'];
    if (typeof id === 'string') {
      const doc = state.docs.get(id);
      return { size: doc === undefined ? 0 : 1, docs: doc === undefined ? [] : [doc], exact: '_id' };
    }
    let best: Candidates | null = null;
    for (const index of state.indexes) {
      const candidates = index.candidates(filter);
      if (candidates !== null && (best === null || candidates.size < best.size))
        best = { ...candidates, exact: candidates.exact ? index.field : null };
    }
    return best ?? { size: state.docs.size, docs: state.docs.values(), exact: null };
  };

  /** `filter` without `field`. */
  const without = (filter: Filter, field: string | null): Filter => {
    if (field === null) return filter;
    const { [field]: _met, ...rest } = filter;
    return rest;
  };

  const isEmpty = (filter: Filter): boolean => {
    for (const _key in filter) return false;
    return true;
  };

  /** The documents matching `filter`, in the order of `candidatesFor` (callers copy before changing it). */
  const matching = (state: CollectionState, filter: Filter): ReadDocument[] => {
    const text = filterText(filter);
    const { scan } = state;
    if (scan !== null && scan.filter === filter && scan.writes === state.writes && scan.text === text)
      return scan.found;
    const candidates = candidatesFor(state, filter);
    const matches = compileMatcher(without(filter, candidates.exact), queryFor);
    const found: ReadDocument[] = [];
    for (const doc of candidates.docs) if (matches(doc)) found.push(doc);
    if (text !== null) {
      if (state.scan === null) setImmediate(() => (state.scan = null));
      state.scan = { filter, text, writes: state.writes, found };
    }
    return found;
  };

  const find = (state: CollectionState, filter: Filter, options: FindOptions | undefined): ReadDocument[] => {
    const { sort, skip, limit } = normalizeFindOptions(options);
    const found = matching(state, filter);
    const end = limit === null ? undefined : skip + limit;
    const sorted = sort === null ? found : sortNatively(found, sort, end ?? null);
    if (sorted !== null) return sorted.slice(skip, end);
    // Values a plain sort cannot order as MongoDB does (mixed types, missing fields, arrays): mingo's sort.
    const cursor = queryFor({}).find<ReadDocument>(found).sort(sort!);
    if (skip > 0) cursor.skip(skip);
    if (limit !== null) cursor.limit(limit);
    return cursor.all();
  };

  const count = (state: CollectionState, filter: Filter): number => {
    if (isEmpty(filter)) return state.docs.size;
    const candidates = candidatesFor(state, filter);
    // Nothing left to test: an exact bucket's size (a plain equality, which mingo never refuses).
    return isEmpty(without(filter, candidates.exact)) ? candidates.size : matching(state, filter).length;
  };

  /** For $graphLookup, $unionWith and a $lookup with a pipeline: clones, as stages may write into them. */
  const resolveCollection = (name: string): Record<string, unknown>[] =>
    Array.from(collections.get(name)?.docs.values() ?? [], (doc) => structuredClone(doc));

  const aggregate = (state: CollectionState, pipeline: Record<string, unknown>[], maxTimeMs?: number) =>
    runPipeline(
      {
        matching: (filter) => matching(state, filter),
        all: () => state.docs.values(),
        resolveCollection,
        matchingIn: (name, filter) => {
          const other = collections.get(name);
          return other === undefined ? [] : matching(other, filter);
        },
      },
      pipeline,
      maxTimeMs === undefined ? {} : { maxTimeMs },
    );

  const createCollectionState = (): CollectionState => {
    const docs = new Map<string, ReadDocument>();
    const indexes = indexedFields.map((field) => createEqualityIndex(field, () => docs.values()));
    const state: CollectionState = {
      docs,
      indexes,
      writes: 0,
      scan: null,
      handle: {
        async get(id) {
          return docs.get(id) ?? null;
        },
        async put(doc) {
          const stored = trusted ? trustedDocument(doc) : copyReadDocument(doc, { freeze: true });
          if (indexes.length > 0) {
            const previous = docs.get(stored._id);
            for (const index of indexes) {
              if (previous !== undefined) {
                // Most replacements keep the tenant, network, endpoint...: the entry stays where it is.
                if (index.replaceInPlace(previous, stored)) continue;
                index.remove(previous);
              }
              index.add(stored);
            }
          }
          docs.set(stored._id, stored);
          state.writes++;
        },
        async delete(id) {
          const previous = docs.get(id);
          if (previous === undefined) return;
          for (const index of indexes) index.remove(previous);
          docs.delete(id);
          state.writes++;
        },
        async find(filter, options) {
          return find(state, filter, options);
        },
        async count(filter) {
          return count(state, filter);
        },
        async aggregate(pipeline, options) {
          return aggregate(state, pipeline, options?.maxTimeMs);
        },
        async clear() {
          docs.clear();
          state.writes++;
          for (const index of indexes) index.clear();
        },
      },
    };
    return state;
  };

  return {
    durable: false,
    collection<T extends ReadDocument = ReadDocument>(name: string): Collection<T> {
      let state = collections.get(name);
      if (state === undefined) {
        assertCollectionName(name);
        state = createCollectionState();
        collections.set(name, state);
      }
      // Documents are stored as given by `put` on this handle's callers; the store does not
      // check their shape against T, exactly like a MongoDB collection.
      return state.handle as Collection<T>;
    },
    async getCheckpoint(name) {
      const stored = checkpoints.get(name);
      return stored === undefined || stored === null ? null : BigInt(stored);
    },
    async setCheckpoint(name, position) {
      checkpoints.set(name, encodeCheckpoint(position));
    },
    // In memory: nothing is committed, so nothing can be half-committed.
    atomically: (work) => work(),
    async dropAll() {
      // Handles already given out stay valid and see empty collections.
      for (const state of collections.values()) await state.handle.clear();
      checkpoints.clear();
    },
    async close() {},
  };
};
