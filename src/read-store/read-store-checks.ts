import type { FindOptions, ReadDocument, Sort } from './read-store.ts';
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

/**
 * Every object and array that `copyReadDocument` made and deep-froze, with its height: how many
 * levels of objects nest below it (0 when it holds only primitives). Such a value is valid,
 * normalized and immutable for good, so a later copy may share it instead of copying it again,
 * as long as it does not end up nested deeper than MAX_DEPTH. A read model that builds its next
 * document from the stored one (`{ ...current, status }`) then copies only what changed.
 */
const frozenCopies = new WeakMap<object, number>();

/**
 * One copy in progress. The path of the value being copied is kept as a stack of keys and joined
 * only for an error message; `height` is the height of the object or array `copyValue` last
 * returned (-1 for a primitive).
 */
type CopyRun = { readonly id: string; readonly freeze: boolean; readonly path: (string | number)[]; height: number };

const pathOf = (run: CopyRun): string => run.path.join('.');

const copyValue = (value: unknown, run: CopyRun, depth: number): unknown => {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      run.height = -1;
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw invalidDocument(run.id, pathOf(run), `is ${value}; only finite numbers are stored`);
      run.height = -1;
      return value;
    case 'bigint':
      throw invalidDocument(run.id, pathOf(run), 'is a bigint; store money and positions as integer strings');
    case 'object': {
      if (value === null) {
        run.height = -1;
        return null;
      }
      if (run.freeze) {
        const height = frozenCopies.get(value);
        if (height !== undefined && depth + height < MAX_DEPTH) {
          run.height = height;
          return value;
        }
      }
      if (depth >= MAX_DEPTH) throw invalidDocument(run.id, pathOf(run), `nests deeper than ${MAX_DEPTH} levels (a cycle?)`);
      if (Array.isArray(value)) {
        const items: unknown[] = new Array<unknown>(value.length);
        let height = 0;
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          // JSON semantics: an undefined array element becomes null.
          if (item === undefined) {
            items[i] = null;
            continue;
          }
          run.path.push(i);
          items[i] = copyValue(item, run, depth + 1);
          run.path.pop();
          if (run.height + 1 > height) height = run.height + 1;
        }
        return finish(items, height, run, depth);
      }
      const prototype: unknown = Object.getPrototypeOf(value);
      if (prototype !== Object.prototype && prototype !== null) {
        const kind = value.constructor?.name ?? 'non-plain object';
        throw invalidDocument(run.id, pathOf(run), `is a ${kind}; store plain JSON (dates as ISO strings)`);
      }
      return copyObject(value as Record<string, unknown>, run, depth);
    }
    default:
      throw invalidDocument(run.id, pathOf(run), `is a ${typeof value}; store plain JSON values`);
  }
};

const copyObject = (source: Record<string, unknown>, run: CopyRun, depth: number): Record<string, unknown> => {
  const copy: Record<string, unknown> = {};
  let height = 0;
  for (const key of Object.keys(source)) {
    const field: unknown = source[key];
    // JSON semantics: a property whose value is undefined is dropped.
    if (field === undefined) continue;
    run.path.push(key);
    setOwn(copy, key, copyValue(field, run, depth + 1));
    run.path.pop();
    if (run.height + 1 > height) height = run.height + 1;
  }
  return finish(copy, height, run, depth);
};

/** Freeze and remember a finished copy (when freezing), and report its height to the caller. */
const finish = <T extends object>(copy: T, height: number, run: CopyRun, depth: number): T => {
  run.height = height;
  if (!run.freeze) return copy;
  Object.freeze(copy);
  if (depth >= 1 && depth <= 2) frozenCopies.set(copy, height);
  return copy;
};

/**
 * Check that a document is plain JSON (what MongoDB round-trips unchanged) and copy it,
 * dropping undefined properties. With `freeze`, the copy is deep-frozen so it can be shared
 * with every reader; nested objects and arrays that are themselves such frozen copies (taken
 * from a stored document) are shared rather than copied again. The returned document itself is
 * always a new object. Throws `ReadStoreUsageError` on a bigint, Date, NaN, class instance, ...
 */
export const copyReadDocument = (doc: ReadDocument, { freeze }: { freeze: boolean }): ReadDocument => {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new ReadStoreUsageError('invalid_document', 'a read document must be a plain object');
  }
  if (typeof doc._id !== 'string') {
    throw new ReadStoreUsageError('invalid_document', `a read document's _id must be a string, got ${typeof doc._id}`);
  }
  const id = doc._id;
  const prototype: unknown = Object.getPrototypeOf(doc);
  if (prototype !== Object.prototype && prototype !== null) {
    throw invalidDocument(id, 'the document', 'is not a plain object');
  }
  const copy = copyObject(doc, { id, freeze, path: [], height: 0 }, 0);
  return copy as ReadDocument;
};

/** Checkpoints are stored as decimal strings: a log position may exceed 2^53. */
export const encodeCheckpoint = (position: bigint | null): string | null => {
  if (position === null) return null;
  if (typeof position !== 'bigint') {
    throw new ReadStoreUsageError('invalid_checkpoint', `a checkpoint position must be a bigint or null, got ${typeof position}`);
  }
  return position.toString();
};

export const decodeCheckpoint = (name: string, stored: unknown): bigint | null => {
  if (stored === null || stored === undefined) return null;
  if (typeof stored === 'string' && /^-?\d+$/.test(stored)) return BigInt(stored);
  throw new ReadStoreUsageError('invalid_checkpoint', `checkpoint "${name}" holds ${JSON.stringify(stored)}, not an integer string`);
};
