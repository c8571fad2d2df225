import type { Filter, FindOptions, ReadDocument, Sort } from './read-store.ts';
import { ReadStoreUsageError } from './read-store-usage-error.ts';

/** The collection the MongoDB adapter keeps checkpoints in; no read model may use the name. */
export const CHECKPOINTS_COLLECTION = '_checkpoints';

/** MongoDB's limit on nesting; a deeper document is almost certainly a cycle. */
const MAX_DEPTH = 100;

/** Refuse names MongoDB would reject, and the checkpoint collection's name. */
export const assertCollectionName = (name: string): void => {
  const problem =
    name.length === 0
      ? 'is empty'
      : name.includes('$') || name.includes('\0')
        ? 'contains "$" or a null character'
        : name.startsWith('system.')
          ? 'starts with "system."'
          : name === CHECKPOINTS_COLLECTION
            ? 'is reserved for checkpoints'
            : null;
  if (problem !== null) {
    throw new ReadStoreUsageError('invalid_collection_name', `collection name "${name}" ${problem}`);
  }
};

export type NormalizedFindOptions = { sort: Sort | null; skip: number; limit: number | null };

/**
 * MongoDB semantics: `skip` and `limit` are non-negative integers, `limit: 0` means no limit,
 * an empty sort means natural (unspecified) order.
 */
export const normalizeFindOptions = (options: FindOptions | undefined): NormalizedFindOptions => {
  const { sort, skip = 0, limit = 0 } = options ?? {};
  if (!Number.isSafeInteger(skip) || skip < 0) {
    throw new ReadStoreUsageError('invalid_find_options', `skip must be a non-negative integer, got ${skip}`);
  }
  if (!Number.isSafeInteger(limit) || limit < 0) {
    throw new ReadStoreUsageError('invalid_find_options', `limit must be a non-negative integer, got ${limit}`);
  }
  if (sort !== undefined) {
    for (const [field, direction] of Object.entries(sort)) {
      if (direction !== 1 && direction !== -1) {
        throw new ReadStoreUsageError(
          'invalid_find_options',
          `sort direction for ${field} must be 1 or -1, got ${String(direction)}`,
        );
      }
    }
  }
  return {
    sort: sort !== undefined && Object.keys(sort).length > 0 ? sort : null,
    skip,
    limit: limit === 0 ? null : limit,
  };
};

const invalidDocument = (id: string, path: string, problem: string): ReadStoreUsageError =>
  new ReadStoreUsageError('invalid_document', `read document "${id}": ${path} ${problem}`);

const setOwn = (target: Record<string, unknown>, key: string, value: unknown): void => {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
};

const copyValue = (value: unknown, id: string, path: string, depth: number, freeze: boolean): unknown => {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw invalidDocument(id, path, `is ${value}; only finite numbers are stored`);
      return value;
    case 'bigint':
      throw invalidDocument(id, path, 'is a bigint; store money and positions as integer strings');
    case 'object': {
      if (value === null) return null;
      if (depth >= MAX_DEPTH) throw invalidDocument(id, path, `nests deeper than ${MAX_DEPTH} levels (a cycle?)`);
      if (Array.isArray(value)) {
        const items: unknown[] = new Array<unknown>(value.length);
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          // JSON semantics: an undefined array element becomes null.
          items[i] = item === undefined ? null : copyValue(item, id, `${path}.${i}`, depth + 1, freeze);
        }
        return freeze ? Object.freeze(items) : items;
      }
      const prototype: unknown = Object.getPrototypeOf(value);
      if (prototype !== Object.prototype && prototype !== null) {
        const kind = value.constructor?.name ?? 'non-plain object';
        throw invalidDocument(id, path, `is a ${kind}; store plain JSON (dates as ISO strings)`);
      }
      return copyObject(value as Record<string, unknown>, id, path, depth, freeze);
    }
    default:
      throw invalidDocument(id, path, `is a ${typeof value}; store plain JSON values`);
  }
};

const copyObject = (
  source: Record<string, unknown>,
  id: string,
  path: string,
  depth: number,
  freeze: boolean,
): Record<string, unknown> => {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    const field: unknown = source[key];
    // JSON semantics: a property whose value is undefined is dropped.
    if (field === undefined) continue;
    setOwn(copy, key, copyValue(field, id, path === '' ? key : `${path}.${key}`, depth + 1, freeze));
  }
  return freeze ? Object.freeze(copy) : copy;
};

/** A UTF-16 surrogate not in a pair (in `u` mode a pair is one code point, outside the range). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const LONE_SURROGATES = /[\uD800-\uDFFF]/gu;

/** Whether a string survives UTF-8 (SQLite's text, MongoDB's BSON) unchanged: no lone surrogate, which becomes U+FFFD. */
export const isWellFormedText = (text: string): boolean => !LONE_SURROGATE.test(text);

/**
 * An id with a lone surrogate is stored as U+FFFD in its place (SQLite's id column, MongoDB's
 * `_id`), where it would be the id of another document and replace it: refused.
 */
export const assertWellFormedId = (id: string): void => {
  if (!isWellFormedText(id))
    throw new ReadStoreUsageError(
      'invalid_document',
      `read document "${id.replace(LONE_SURROGATES, '\uFFFD')}": _id holds a lone UTF-16 surrogate, which the store would keep as U+FFFD (the id of another document)`,
    );
};

/**
 * Check that a document is plain JSON (what MongoDB round-trips unchanged) and copy it,
 * dropping undefined properties. With `freeze`, the copy is deep-frozen so it can be shared
 * with every reader. Throws `ReadStoreUsageError` on a bigint, Date, NaN, class instance, ...
 */
export const copyReadDocument = (doc: ReadDocument, { freeze }: { freeze: boolean }): ReadDocument => {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new ReadStoreUsageError('invalid_document', 'a read document must be a plain object');
  }
  if (typeof doc._id !== 'string') {
    throw new ReadStoreUsageError('invalid_document', `a read document's _id must be a string, got ${typeof doc._id}`);
  }
  const id = doc._id;
  assertWellFormedId(id);
  const prototype: unknown = Object.getPrototypeOf(doc);
  if (prototype !== Object.prototype && prototype !== null) {
    throw invalidDocument(id, 'the document', 'is not a plain object');
  }
  const copy = copyObject(doc, id, '', 0, freeze);
  return copy as ReadDocument;
};

/** Checkpoints are stored as decimal strings: a log position may exceed 2^53. */
export const encodeCheckpoint = (position: bigint | null): string | null => {
  if (position === null) return null;
  if (typeof position !== 'bigint') {
    throw new ReadStoreUsageError(
      'invalid_checkpoint',
      `a checkpoint position must be a bigint or null, got ${typeof position}`,
    );
  }
  return position.toString();
};

export const decodeCheckpoint = (name: string, stored: unknown): bigint | null => {
  if (stored === null || stored === undefined) return null;
  if (typeof stored === 'string' && /^-?\d+$/.test(stored)) return BigInt(stored);
  throw new ReadStoreUsageError(
    'invalid_checkpoint',
    `checkpoint "${name}" holds ${JSON.stringify(stored)}, not an integer string`,
  );
};

/** The filter as text, to see that the object was not changed in place since its scan; null: not comparable. */
export const filterText = (filter: Filter): string | null => {
  try {
    return JSON.stringify(filter, (_key, value: unknown) =>
      value instanceof RegExp ? `RegExp(${value.source}/${value.flags})` : value,
    );
  } catch {
    return null;
  }
};

/** The embedded stores run no stage that writes: only projections write read models. */
export const assertReadOnlyPipeline = (pipeline: Record<string, unknown>[]): void => {
  for (const stage of pipeline) {
    if (Object.hasOwn(stage, '$out') || Object.hasOwn(stage, '$merge')) {
      throw new ReadStoreUsageError(
        'invalid_pipeline',
        'the embedded read store does not write through $out or $merge; only projections write read models',
      );
    }
  }
};
