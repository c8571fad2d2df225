import Database from 'better-sqlite3';
import { openReadOnlySqlite } from '../shared/read-only-sqlite.ts';
import { Query } from 'mingo';
import { CANNOT_MATCH, isIndexKey, locate, UNINDEXABLE, type Located } from './equality-index.ts';
import { compileMatcher } from './native-match.ts';
import { runPipeline } from './run-pipeline.ts';
import { sortNatively } from './native-sort.ts';
import type { Collection, Filter, FindOptions, ReadDocument, ReadStore } from './read-store.ts';
import {
  assertCollectionName,
  assertWellFormedId,
  copyReadDocument,
  decodeCheckpoint,
  encodeCheckpoint,
  filterText,
  isWellFormedText,
  normalizeFindOptions,
} from './read-store-checks.ts';
import { ReadStoreUsageError } from './read-store-usage-error.ts';
import { deepFreeze } from '../shared/json.ts';
import { yieldToEventLoop } from '../shared/yield-to-event-loop.ts';

/** The file the embedded read store keeps in the data dir. */
export const SQLITE_READ_STORE_FILE = 'read-models.sqlite3';

/** The table layout; a file of another layout (or other indexed fields) is emptied and rebuilt from the log. */
const LAYOUT_VERSION = 4;

export type SqliteReadStoreOptions = {
  /** The database file (`:memory:` for one that lives as long as the store). */
  path: string;
  /**
   * Fields (dotted paths allowed) with an exact-match index in every collection: `find`, `count`
   * and an aggregation's leading `$match` comparing one of them to a string, number or boolean read
   * only that value's rows. Results are the same with or without (the whole filter always decides).
   */
  indexedFields?: readonly string[];
  /**
   * Top-level fields a list is sorted by (`createdAt`, a timer's `fireAt`): each gets a column and
   * an index, so `find` with a `limit` and a sort on one of them (then `_id`, or nothing) reads rows
   * in that order and stops once it has the page, instead of reading every candidate. Sorting by
   * `_id` alone does so too.
   */
  orderedFields?: readonly string[];
  /**
   * Indexed fields nearly every query compares together, in order (a tenant, its environment, a
   * status): one index over their columns and the id answers a count of them, and the ids of their
   * candidates, without reading a row.
   */
  compoundIndex?: readonly string[];
  /** As `EmbeddedReadStoreOptions.writes`: `trusted` keeps the given object (frozen at the top) as the cached copy. */
  writes?: 'checked' | 'trusted';
  /** Parsed documents kept in memory, most recently used first (default 20,000). */
  cachedDocuments?: number;
  /** Writes stay in one open transaction until this many were made... (default 20,000) */
  commitEveryWrites?: number;
  /** ...or this long has passed since it was opened (default 1,000 ms). */
  commitEveryMs?: number;
  /** Read an existing file without writing it (`weir audit verify`): its layout is not remade, a write fails. */
  readonly?: boolean;
};

/** A file opened read-only whose read models are not in this version's layout: only a rebuild would make them so. */
export class ReadModelsUnreadableError extends Error {
  override readonly name = 'ReadModelsUnreadableError';
}

/** A key column's value for a blob marker: a field holding an array or object there (always a candidate). */
const UNINDEXABLE_KEY = Buffer.from([0]);
const TRUE_KEY = Buffer.from([1]);
const FALSE_KEY = Buffer.from([2]);

/**
 * An index key as its column stores it: booleans as blobs, so they never equal a number or a
 * string. A string with a lone surrogate gets the marker (always a candidate): SQLite would keep
 * U+FFFD in its place, the key of other strings, and its column would not be what its body gives.
 */
const columnKey = (located: Located): string | number | Buffer | null => {
  if (located === CANNOT_MATCH) return null;
  if (located === UNINDEXABLE) return UNINDEXABLE_KEY;
  if (typeof located === 'boolean') return located ? TRUE_KEY : FALSE_KEY;
  if (typeof located === 'string' && !isWellFormedText(located)) return UNINDEXABLE_KEY;
  return located;
};

/**
 * A sort value as its column stores it: a number or a string as itself, null or missing as NULL
 * (both sort first, as in MongoDB), anything else as the marker blob (SQLite sorts blobs after
 * strings; a page that meets one is sorted in JavaScript instead).
 */
const orderKey = (value: unknown): string | number | Buffer | null => {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number' || (typeof value === 'string' && isWellFormedText(value))) return value;
  return UNINDEXABLE_KEY;
};

/** Rows `misindexed` reads between two turns of the event loop. */
const MISINDEXED_PAGE = 500;

/** Range operators on a sort field that SQL can bound the rows with (the whole filter still decides). */
const RANGE_SQL: Record<string, string> = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' };

const isEmpty = (filter: Filter): boolean => {
  for (const _key in filter) return false;
  return true;
};

type TurnScan = { filter: Filter; text: string; writes: number; found: ReadDocument[] };
type CollectionState = {
  readonly name: string;
  readonly handle: Collection;
  /** Puts (the document) and deletes (null) not yet written to SQLite, by `_id`: the last one wins. */
  readonly pending: Map<string, ReadDocument | null>;
  writes: number;
  scan: TurnScan | null;
};
type Row = [id: string, body: string];

/**
 * The embedded read store, kept in a SQLite file so read models outlive a restart: `weir serve`
 * loads nothing at start and follows the log from the position stored with the documents.
 *
 * One row per document (collection, `_id`, the JSON body) with one key column per indexed field.
 * Queries narrow by `_id` or an indexed equality in SQL, then test the whole filter, sort and
 * page in JavaScript with the same code as the in-memory store (native-match, native-sort, mingo).
 * Only a bounded cache of parsed documents lives in memory, so memory does not grow with the
 * read models.
 *
 * Writes are kept per collection and document until a query of that collection or a commit needs
 * them in SQLite (a replay rewrites a session's document at each of its events: only the last one
 * is written), into one open transaction. That transaction is committed together with the
 * checkpoint written after its writes once it holds `commitEveryWrites` writes or is
 * `commitEveryMs` old (and at `close`): documents and the log position that produced them are on
 * disk together or not at all. A crash loses at most
 * the last uncommitted stretch, which the projections redo from the stored position. A batch and
 * its checkpoint run in `atomically`: a commit that falls due meanwhile (the timer, another
 * writer's checkpoint, such as a workflow's) waits for it to end. A writer that never sets a
 * checkpoint is committed by the timer all the same.
 */
export const createSqliteReadStore = (options: SqliteReadStoreOptions): ReadStore => {
  const indexedFields = [...new Set(options.indexedFields ?? [])].filter((field) => field !== '_id');
  const paths = indexedFields.map((field) => field.split('.'));
  const trusted = options.writes === 'trusted';
  const cacheLimit = options.cachedDocuments ?? 20_000;
  const commitEveryWrites = options.commitEveryWrites ?? 20_000;
  const commitEveryMs = options.commitEveryMs ?? 1000;

  const opened = options.readonly ? openReadOnlySqlite(options.path) : null;
  const db = opened?.db ?? new Database(options.path);
  if (!opened) {
    db.pragma('journal_mode = WAL');
    // A commit lost to a power cut is redone from the log: the read models need no fsync per commit.
    db.pragma('synchronous = NORMAL');
  }
  db.pragma('cache_size = -32768');
  db.pragma('busy_timeout = 5000');

  const keyColumns = indexedFields.map((_, i) => `k${i}`);
  const orderedFields = [...new Set(options.orderedFields ?? [])].filter(
    (field) => !field.includes('.') && field !== '_id',
  );
  const orderColumns = orderedFields.map((_, i) => `o${i}`);
  const columns = [...keyColumns, ...orderColumns];
  const compound = (options.compoundIndex ?? []).map((field) => {
    const at = indexedFields.indexOf(field);
    if (at < 0)
      throw new ReadStoreUsageError('invalid_options', `${field} is in compoundIndex but not in indexedFields`);
    return keyColumns[at]!;
  });
  const layout = JSON.stringify({ version: LAYOUT_VERSION, indexedFields, orderedFields, compound });
  if (opened) {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
    const stored = tables.includes('layout')
      ? (db.prepare('SELECT description FROM layout WHERE id = 1').pluck().get() as string | undefined)
      : undefined;
    if (stored !== layout) {
      opened.release();
      throw new ReadModelsUnreadableError(
        `${options.path} holds read models in another layout than this version's (weir serve or weir replay rebuilds them)`,
      );
    }
  } else
    db.exec('CREATE TABLE IF NOT EXISTS layout (id INTEGER PRIMARY KEY CHECK (id = 1), description TEXT NOT NULL)');
  const storedLayout = db.prepare('SELECT description FROM layout WHERE id = 1').pluck().get() as string | undefined;
  if (storedLayout !== layout) {
    // Another layout (or none yet): start empty; the projection runner rebuilds from the log.
    db.exec('DROP TABLE IF EXISTS documents; DROP TABLE IF EXISTS checkpoints;');
    db.exec(
      // The key and order columns before the body: a filter tests them without reading a large body's overflow pages.
      `CREATE TABLE documents (collection TEXT NOT NULL, id TEXT NOT NULL${columns.map((c) => `, ${c}`).join('')}, body TEXT NOT NULL)`,
    );
    db.exec('CREATE UNIQUE INDEX documents_by_id ON documents (collection, id)');
    // Partial: a row without the field (most rows, for most fields) costs its index nothing.
    for (const column of keyColumns)
      db.exec(`CREATE INDEX documents_${column} ON documents (collection, ${column}) WHERE ${column} IS NOT NULL`);
    for (const column of orderColumns)
      db.exec(`CREATE INDEX documents_${column} ON documents (collection, ${column}, id)`);
    if (compound.length > 0)
      db.exec(`CREATE INDEX documents_compound ON documents (collection, ${compound.join(', ')}, id)`);
    db.exec('CREATE TABLE checkpoints (name TEXT PRIMARY KEY, position TEXT) WITHOUT ROWID');
    db.prepare('INSERT OR REPLACE INTO layout (id, description) VALUES (1, ?)').run(layout);
  }

  const upsert = db.prepare(
    `INSERT INTO documents (collection, id, body${columns.map((c) => `, ${c}`).join('')}) VALUES (?, ?, ?${columns.map(() => ', ?').join('')})
     ON CONFLICT (collection, id) DO UPDATE SET body = excluded.body${columns.map((c) => `, ${c} = excluded.${c}`).join('')}`,
  );
  const removeOne = db.prepare('DELETE FROM documents WHERE collection = ? AND id = ?');
  const removeCollection = db.prepare('DELETE FROM documents WHERE collection = ?');
  const selectBody = db.prepare('SELECT body FROM documents WHERE collection = ? AND id = ?').pluck();
  const countAll = db.prepare('SELECT count(*) FROM documents WHERE collection = ?').pluck();
  const selectAll = db.prepare('SELECT id, body FROM documents WHERE collection = ?').raw();
  const selectCheckpoint = db.prepare('SELECT position FROM checkpoints WHERE name = ?').pluck();
  const upsertCheckpoint = db.prepare(
    'INSERT INTO checkpoints (name, position) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position',
  );
  /** Statements built for a set of key columns, by their SQL. */
  const statements = new Map<string, Database.Statement>();
  const statement = (sql: string): Database.Statement => {
    let found = statements.get(sql);
    if (found === undefined) {
      found = db.prepare(sql);
      statements.set(sql, found);
    }
    return found;
  };

  // --- the open transaction ---
  let open = false;
  let openedAt = 0;
  let writesInTransaction = 0;
  /** Written since the last checkpoint: a batch may be under way. */
  let dirty = false;
  let dirtyTicks = 0;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  /** Batches under way (see `atomically`): a commit wanted meanwhile waits for the last to end. */
  let holds = 0;
  let commitWanted = false;

  const collections = new Map<string, CollectionState>();
  const commit = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    commitWanted = false;
    if (!open) return;
    for (const state of collections.values()) flush(state);
    db.exec('COMMIT');
    open = false;
    writesInTransaction = 0;
    dirtyTicks = 0;
  };
  /** Commits now, or once no batch is under way: one writer's checkpoint never commits half of another's batch. */
  const commitWhenFree = (): void => {
    if (holds === 0) commit();
    else commitWanted = true;
  };
  const onTimer = (): void => {
    timer = null;
    // Three ticks with writes and no checkpoint: a writer that sets none; commit what it wrote.
    if (dirty && ++dirtyTicks < 3) {
      timer = setTimeout(onTimer, commitEveryMs);
      timer.unref();
      return;
    }
    commitWhenFree();
  };
  const begin = (): void => {
    if (closed) throw new ReadStoreUsageError('closed', 'the read store is closed');
    if (open) return;
    db.exec('BEGIN');
    open = true;
    openedAt = performance.now();
    timer = setTimeout(onTimer, commitEveryMs);
    timer.unref();
  };
  const wrote = (): void => {
    writesInTransaction++;
    dirty = true;
  };
  /** Write a collection's pending puts and deletes into the open transaction. */
  const flush = (state: CollectionState): void => {
    if (state.pending.size === 0) return;
    begin();
    for (const [id, doc] of state.pending) {
      if (doc === null) removeOne.run(state.name, id);
      else
        upsert.run(
          state.name,
          id,
          JSON.stringify(doc),
          ...paths.map((path) => columnKey(locate(doc, path))),
          ...orderedFields.map((field) => orderKey(doc[field])),
        );
    }
    state.pending.clear();
  };

  // --- parsed documents, most recently used last ---
  const cache = new Map<string, ReadDocument>();
  const cacheKey = (collection: string, id: string) => `${collection}\u0000${id}`;
  const remember = (key: string, doc: ReadDocument): void => {
    cache.delete(key);
    cache.set(key, doc);
    if (cache.size <= cacheLimit) return;
    // An eighth at a time: evicting one by one from the front made each eviction skip the ones
    // deleted before it (a start paging through 130,000 deposit addresses spent a second on that).
    let evict = Math.max(1, cacheLimit >> 3);
    for (const oldest of cache.keys()) {
      cache.delete(oldest);
      if (--evict === 0) break;
    }
  };
  const parse = (body: string): ReadDocument =>
    trusted ? Object.freeze(JSON.parse(body) as ReadDocument) : deepFreeze(JSON.parse(body) as ReadDocument);
  /** A row's document, parsed once while it stays among the most recently used. */
  const docOf = (collection: string, [id, body]: Row): ReadDocument => {
    const key = cacheKey(collection, id);
    const cached = cache.get(key);
    if (cached !== undefined) return cached;
    const doc = parse(body);
    remember(key, doc);
    return doc;
  };
  /** A document by id for a row read without its body (a sorted page's ids). */
  const docById = (collection: string, id: string): ReadDocument | null => {
    // No stored id has a lone surrogate (see `stored`); SQL would look up its U+FFFD form.
    if (!isWellFormedText(id)) return null;
    const cached = cache.get(cacheKey(collection, id));
    if (cached !== undefined) return cached;
    const body = selectBody.get(collection, id) as string | undefined;
    return body === undefined ? null : docOf(collection, [id, body]);
  };

  // --- queries ---
  const queries = new Map<string, Query>();
  const queryFor = (filter: Filter): Query => {
    let key: string;
    try {
      key = JSON.stringify(filter);
    } catch {
      return new Query(filter);
    }
    if (filterText(filter) !== key) return new Query(filter);
    let query = queries.get(key);
    if (query === undefined) {
      if (queries.size >= 1000) queries.clear();
      query = new Query(filter);
      queries.set(key, query);
    }
    return query;
  };

  /** The indexed fields the filter compares to a string, number or boolean, with their column keys. */
  const keyConditions = (filter: Filter): { column: string; key: string | number | Buffer }[] => {
    const conditions: { column: string; key: string | number | Buffer }[] = [];
    for (let i = 0; i < indexedFields.length; i++) {
      const field = indexedFields[i]!;
      if (!Object.hasOwn(filter, field)) continue;
      const wanted = filter[field];
      // A lone surrogate keys no row (see `columnKey`): such a filter reads rows unnarrowed.
      if (isIndexKey(wanted) && (typeof wanted !== 'string' || isWellFormedText(wanted)))
        conditions.push({ column: keyColumns[i]!, key: columnKey(wanted)! });
    }
    return conditions;
  };

  /**
   * The documents that can match `filter`: one by `_id`, those an indexed equality selects, or all.
   * Rows are read by id and a body only when its document is not cached: a list filtered over a
   * tenant's sessions tests thousands of documents, and reading their JSON again cost the most.
   * `inAnyOrder`: the caller takes the first few that match, whatever their order (no sort of all).
   */
  function* candidates(name: string, filter: Filter, inAnyOrder = false): Generator<ReadDocument> {
    const id = filter['_id'];
    if (typeof id === 'string') {
      const doc = docById(name, id);
      if (doc !== null) yield doc;
      return;
    }
    const conditions = keyConditions(filter);
    if (conditions.length === 0) {
      for (const row of selectAll.iterate(name) as Iterable<Row>) yield docOf(name, row);
      return;
    }
    const where = conditions.map(({ column }) => `${column} IN (?, x'00')`).join(' AND ');
    // In the order they were first written, as the partial indexes gave them before the compound
    // one: a sort's ties (two users made in the same millisecond) keep that order.
    const ids = statement(
      `SELECT id FROM documents WHERE collection = ? AND ${where}${inAnyOrder ? '' : ' ORDER BY rowid'}`,
    )
      .pluck()
      .iterate(name, ...conditions.map(({ key }) => key)) as Iterable<string>;
    for (const candidate of ids) {
      const doc = docById(name, candidate);
      if (doc !== null) yield doc;
    }
  }

  /** What a scan of this very filter object found earlier in this turn of the event loop, if nothing was written since. */
  const scanned = (state: CollectionState, filter: Filter): ReadDocument[] | null => {
    const { scan } = state;
    return scan !== null && scan.filter === filter && scan.writes === state.writes && scan.text === filterText(filter)
      ? scan.found
      : null;
  };
  /** Keeps a scan's matches for the rest of the turn (a list's count, then its page). */
  const keepScan = (state: CollectionState, filter: Filter, found: ReadDocument[]): void => {
    const text = filterText(filter);
    if (text === null) return;
    if (state.scan === null) setImmediate(() => (state.scan = null));
    state.scan = { filter, text, writes: state.writes, found };
  };

  const matching = (state: CollectionState, filter: Filter): ReadDocument[] => {
    const kept = scanned(state, filter);
    if (kept !== null) return kept;
    // Compiled before reading a row: a bad operator throws whether or not anything is stored.
    const matches = compileMatcher(filter, queryFor);
    flush(state);
    const found: ReadDocument[] = [];
    for (const doc of candidates(state.name, filter)) if (matches(doc)) found.push(doc);
    keepScan(state, filter, found);
    return found;
  };

  /** Candidates an indexed equality selects: above this many, a sorted page reads rows in order instead. */
  const SMALL_CANDIDATES = 2000;
  /** Matches a count keeps for the turn (see `count`). */
  const KEPT_MATCHES = 1000;

  /**
   * A page of a sort on `_id` or on one ordered field (then `_id`): rows read in that order, the
   * whole filter tested on each, until the page is full. Null when the sort is not of that kind,
   * when an indexed equality selects few enough rows to sort them all, or when a row's sort value
   * is not a number or string (SQLite would not order it as MongoDB does).
   */
  const orderedPage = (
    state: CollectionState,
    filter: Filter,
    sort: Record<string, 1 | -1>,
    end: number,
  ): ReadDocument[] | null => {
    const keys = Object.keys(sort);
    const first = keys[0]!;
    const byId = first === '_id' && keys.length === 1;
    const index = orderedFields.indexOf(first);
    if (!byId && (index < 0 || keys.length > 2 || (keys.length === 2 && keys[1] !== '_id'))) return null;
    if (typeof filter['_id'] === 'string') return null;
    const conditions = keyConditions(filter);
    if (conditions.length > 0) {
      const where = conditions.map(({ column }) => `${column} IN (?, x'00')`).join(' AND ');
      const few = statement(`SELECT count(*) FROM (SELECT 1 FROM documents WHERE collection = ? AND ${where} LIMIT ?)`)
        .pluck()
        .get(state.name, ...conditions.map(({ key }) => key), SMALL_CANDIDATES + 1) as number;
      if (few <= SMALL_CANDIDATES) return null;
    }
    const column = byId ? 'id' : orderColumns[index]!;
    const bounds: string[] = [];
    const values: (string | number)[] = [];
    const range = filter[first];
    if (typeof range === 'object' && range !== null && !Array.isArray(range)) {
      for (const [operator, value] of Object.entries(range)) {
        const sql = RANGE_SQL[operator];
        if (sql !== undefined && (typeof value === 'number' || typeof value === 'string')) {
          bounds.push(`${column} ${sql} ?`);
          values.push(value);
        }
      }
    }
    const direction = (value: 1 | -1) => (value === 1 ? 'ASC' : 'DESC');
    const order = byId
      ? `id ${direction(sort['_id']!)}`
      : `${column} ${direction(sort[first]!)}, id ${direction(sort['_id'] ?? 1)}`;
    const where = `collection = ?${bounds.map((b) => ` AND ${b}`).join('')}`;
    const matches = compileMatcher(filter, queryFor);
    flush(state);
    const found: ReadDocument[] = [];
    if (byId) {
      // The id index gives the order (no sort): bodies come with their ids, not by a lookup each
      // (a start pages through every deposit address this way).
      for (const row of statement(`SELECT id, body FROM documents WHERE ${where} ORDER BY ${order}`)
        .raw()
        .iterate(state.name, ...values) as Iterable<Row>) {
        const doc = docOf(state.name, row);
        if (matches(doc) && found.push(doc) >= end) break;
      }
      return found;
    }
    // Ids and sort values only: SQLite sorts small rows when no index has the sort's directions.
    for (const row of statement(`SELECT id, ${column} FROM documents WHERE ${where} ORDER BY ${order}`)
      .raw()
      .iterate(state.name, ...values) as Iterable<[string, unknown]>) {
      if (Buffer.isBuffer(row[1])) return null;
      const doc = docById(state.name, row[0]);
      if (doc !== null && matches(doc) && found.push(doc) >= end) break;
    }
    return found;
  };

  const find = (state: CollectionState, filter: Filter, options: FindOptions | undefined): ReadDocument[] => {
    const { sort, skip, limit } = normalizeFindOptions(options);
    // Read in order unless a count just found the few matches.
    if (sort !== null && limit !== null && scanned(state, filter) === null) {
      const page = orderedPage(state, filter, sort, skip + limit);
      if (page !== null) return page.slice(skip);
    }
    if (sort === null && limit !== null) {
      // Any order will do: stop reading once the page is full.
      const matches = compileMatcher(filter, queryFor);
      flush(state);
      const found: ReadDocument[] = [];
      if (skip + limit === 0) return found;
      for (const doc of candidates(state.name, filter, true))
        if (matches(doc) && found.push(doc) >= skip + limit) break;
      return found.slice(skip);
    }
    const found = matching(state, filter);
    const end = limit === null ? undefined : skip + limit;
    const sorted = sort === null ? found : sortNatively(found, sort, end ?? null);
    if (sorted !== null) return sorted.slice(skip, end);
    const cursor = queryFor({}).find<ReadDocument>(found).sort(sort!);
    if (skip > 0) cursor.skip(skip);
    if (limit !== null) cursor.limit(limit);
    return cursor.all();
  };

  const count = (state: CollectionState, filter: Filter): number => {
    flush(state);
    if (isEmpty(filter)) return countAll.get(state.name) as number;
    // A filter of nothing but indexed equalities, on fields no row holds an array or object in: counted in SQL.
    const conditions = keyConditions(filter);
    if (conditions.length === Object.keys(filter).length) {
      // One EXISTS per column, each answered by its index (an OR of them scanned the collection).
      const unindexable = statement(
        `SELECT ${conditions.map(({ column }) => `EXISTS (SELECT 1 FROM documents WHERE collection = ? AND ${column} = x'00')`).join(' OR ')}`,
      )
        .pluck()
        .get(...conditions.map(() => state.name));
      if (unindexable === 0) {
        const where = conditions.map(({ column }) => `${column} = ?`).join(' AND ');
        return statement(`SELECT count(*) FROM documents WHERE collection = ? AND ${where}`)
          .pluck()
          .get(state.name, ...conditions.map(({ key }) => key)) as number;
      }
    }
    const kept = scanned(state, filter);
    if (kept !== null) return kept.length;
    // Counted row by row, keeping at most a few matches: a tenant's million sessions are never all
    // in memory at once. A few are kept for the turn, so a search's page is sorted from them
    // instead of reading every row in order for its one match.
    const matches = compileMatcher(filter, queryFor);
    const few: ReadDocument[] = [];
    let counted = 0;
    for (const doc of candidates(state.name, filter)) if (matches(doc) && ++counted <= KEPT_MATCHES) few.push(doc);
    if (counted <= KEPT_MATCHES) keepScan(state, filter, few);
    return counted;
  };

  const allDocuments = (name: string): ReadDocument[] => {
    const state = collections.get(name);
    if (state !== undefined) flush(state);
    return Array.from(selectAll.iterate(name) as Iterable<Row>, (row) => docOf(name, row));
  };

  const aggregate = (state: CollectionState, pipeline: Record<string, unknown>[], maxTimeMs?: number) =>
    runPipeline(
      {
        matching: (filter) => matching(state, filter),
        all: () => allDocuments(state.name),
        resolveCollection: (name) => allDocuments(name).map((doc) => structuredClone(doc)),
        matchingIn: (name, filter) => matching(stateOf(name), filter),
      },
      pipeline,
      maxTimeMs === undefined ? {} : { maxTimeMs },
    );

  /** What a row keeps beside its body, as its body gives it: `_id`, then one value per key and order column. */
  const keptOf = (doc: ReadDocument): unknown[] => [
    doc._id,
    ...paths.map((path) => columnKey(locate(doc, path))),
    ...orderedFields.map((field) => orderKey(doc[field])),
  ];
  const keptNames = ['_id', ...indexedFields, ...orderedFields];
  const sameKept = (stored: unknown, derived: unknown): boolean =>
    Buffer.isBuffer(derived) ? Buffer.isBuffer(stored) && derived.equals(stored) : stored === derived;

  /**
   * The rows whose id, key or order columns are not what their body gives (see
   * `ReadStore.misindexed`), read a page at a time in id order, the event loop let run between
   * pages: inside `weir serve` every tenant's requests go on meanwhile. Narrowed, only the bodies
   * whose column or own top-level field has the value are parsed; SQL tests every row (an edited
   * column cannot say whose a row is: the body does).
   */
  const misindexed = async (
    name: string,
    narrow?: { field: string; value: string },
  ): Promise<{ doc: ReadDocument; fields: string[] }[]> => {
    let bodyColumn = 'body';
    const narrowing: string[] = [];
    if (narrow !== undefined && isWellFormedText(narrow.value)) {
      const at = indexedFields.indexOf(narrow.field);
      if (at < 0 || narrow.field.includes('.'))
        throw new ReadStoreUsageError(
          'invalid_options',
          `misindexed narrows by an indexed top-level field, not ${narrow.field}`,
        );
      bodyColumn = `CASE WHEN ${keyColumns[at]} = ? OR json_extract(body, ?) = ? THEN body END`;
      narrowing.push(narrow.value, `$."${narrow.field}"`, narrow.value);
    }
    const select = `SELECT id, ${bodyColumn}${columns.map((c) => `, ${c}`).join('')} FROM documents WHERE collection = ?`;
    const found: { doc: ReadDocument; fields: string[] }[] = [];
    let after: string | null = null;
    for (;;) {
      if (closed) throw new ReadStoreUsageError('closed', 'the read store is closed');
      const state = collections.get(name);
      if (state !== undefined) flush(state);
      const rows = statement(`${select}${after === null ? '' : ' AND id > ?'} ORDER BY id LIMIT ${MISINDEXED_PAGE}`)
        .raw()
        .all(...narrowing, name, ...(after === null ? [] : [after])) as [string, string | null, ...unknown[]][];
      // The bodies as stored, not the cached copies: the columns beside them are what is checked.
      for (const [id, body, ...kept] of rows) {
        if (body === null) continue;
        const doc = JSON.parse(body) as ReadDocument;
        const derived = keptOf(doc);
        const fields = keptNames.filter((_, i) => !sameKept(i === 0 ? id : kept[i - 1], derived[i]));
        if (fields.length > 0) found.push({ doc, fields: [...new Set(fields)] });
      }
      if (rows.length < MISINDEXED_PAGE) return found;
      after = rows.at(-1)![0];
      await yieldToEventLoop();
    }
  };

  const stored = (doc: ReadDocument): ReadDocument => {
    if (!trusted) return copyReadDocument(doc, { freeze: true });
    if (typeof doc._id !== 'string' || doc._id.length === 0)
      throw new TypeError('a read document needs a non-empty string _id');
    assertWellFormedId(doc._id);
    return Object.freeze(doc);
  };

  const createCollectionState = (name: string): CollectionState => {
    const state: CollectionState = {
      name,
      pending: new Map(),
      writes: 0,
      scan: null,
      handle: {
        async get(id) {
          const waiting = state.pending.get(id);
          if (waiting !== undefined) return waiting;
          const key = cacheKey(name, id);
          const cached = cache.get(key);
          if (cached !== undefined) {
            remember(key, cached);
            return cached;
          }
          if (!isWellFormedText(id)) return null;
          const body = selectBody.get(name, id) as string | undefined;
          if (body === undefined) return null;
          const doc = parse(body);
          remember(key, doc);
          return doc;
        },
        async put(doc) {
          const kept = stored(doc);
          begin();
          state.pending.set(kept._id, kept);
          wrote();
          remember(cacheKey(name, kept._id), kept);
          state.writes++;
        },
        async delete(id) {
          // Nothing has such an id; SQL would delete the document of its U+FFFD form.
          if (!isWellFormedText(id)) return;
          begin();
          state.pending.set(id, null);
          wrote();
          cache.delete(cacheKey(name, id));
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
          begin();
          state.pending.clear();
          removeCollection.run(name);
          wrote();
          const prefix = cacheKey(name, '');
          for (const key of cache.keys()) if (key.startsWith(prefix)) cache.delete(key);
          state.writes++;
        },
      },
    };
    return state;
  };

  /** A collection's state, made on first use (its rows may be in the file from an earlier run). */
  const stateOf = (name: string): CollectionState => {
    let state = collections.get(name);
    if (state === undefined) {
      assertCollectionName(name);
      state = createCollectionState(name);
      collections.set(name, state);
    }
    return state;
  };

  return {
    durable: true,
    collection<T extends ReadDocument = ReadDocument>(name: string): Collection<T> {
      return stateOf(name).handle as Collection<T>;
    },
    misindexed,
    async getCheckpoint(name) {
      return decodeCheckpoint(name, selectCheckpoint.get(name) ?? null);
    },
    async setCheckpoint(name, position) {
      const encoded = encodeCheckpoint(position);
      begin();
      upsertCheckpoint.run(name, encoded);
      dirty = false;
      if (writesInTransaction >= commitEveryWrites || performance.now() - openedAt >= commitEveryMs) commitWhenFree();
    },
    async atomically(work) {
      holds++;
      try {
        return await work();
      } finally {
        holds--;
        if (holds === 0 && commitWanted && !closed) commit();
      }
    },
    async dropAll() {
      begin();
      db.exec('DELETE FROM documents; DELETE FROM checkpoints;');
      wrote();
      cache.clear();
      for (const state of collections.values()) {
        state.pending.clear();
        state.writes++;
      }
    },
    async close() {
      if (closed) return;
      // A batch still under way (its owner should have stopped first) is let finish, a while at most.
      for (let waited = 0; holds > 0 && waited < 5000; waited += 10) await new Promise((r) => setTimeout(r, 10));
      commit();
      closed = true;
      if (opened) opened.release();
      else db.close();
    },
  };
};
