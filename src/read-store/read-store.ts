/** A read-model document. `_id` is its key; every document also carries its tenant. */
export type ReadDocument = { _id: string; [key: string]: unknown };

/** A MongoDB query filter (the subset both mingo and MongoDB understand). */
export type Filter = Record<string, unknown>;
export type Sort = Record<string, 1 | -1>;

export type FindOptions = { sort?: Sort; skip?: number; limit?: number };

/**
 * Documents are plain JSON (money and log positions as strings, dates as ISO strings); `put`
 * refuses a bigint, Date, NaN or class instance. Treat documents from `get` and `find` as
 * read-only: the embedded store returns its own deep-frozen copy. To change one, `put` a new
 * object.
 */
export type Collection<T extends ReadDocument = ReadDocument> = {
  get(id: string): Promise<T | null>;
  /** Insert or replace the whole document. */
  put(doc: T): Promise<void>;
  delete(id: string): Promise<void>;
  find(filter: Filter, options?: FindOptions): Promise<T[]>;
  count(filter: Filter): Promise<number>;
  /**
   * Run a MongoDB aggregation pipeline, for analysts and reports. `maxTimeMs` stops it past that
   * time, on MongoDB and on the embedded stores alike (`PipelineTimeoutError` there).
   */
  aggregate(pipeline: Record<string, unknown>[], options?: { maxTimeMs?: number }): Promise<Record<string, unknown>[]>;
  /** Remove every document. */
  clear(): Promise<void>;
};

export type ReadStore = {
  collection<T extends ReadDocument = ReadDocument>(name: string): Collection<T>;
  /** The log position every projection has processed, stored with the read models. */
  getCheckpoint(name: string): Promise<bigint | null>;
  setCheckpoint(name: string, position: bigint | null): Promise<void>;
  /**
   * Runs `work` (a batch's writes and the checkpoint after them) so that they are on disk together
   * or not at all: no commit falls inside it, whoever else writes meanwhile. Where the store cannot
   * promise that (MongoDB), it simply runs `work`. Nothing is rolled back when `work` throws (other
   * writers share the transaction): what it wrote stays, so a batch retried must bear repeating,
   * as the projections that fold a record's events do by its revision.
   */
  atomically<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Where the store keeps, beside each document, values derived from it that queries read (the
   * embedded file's key and order columns, its row's id): every stored document of `collection`
   * whose kept values are not the ones its body gives, with the fields they disagree on (`_id` for
   * the row's id). `weir audit verify` compares bodies with a rebuild; this finds an edit to the
   * rest. Absent where nothing is kept beside the document (MongoDB indexes the document itself).
   * `narrow` (an indexed top-level field and a value: a tenant's organizationId) leaves out rows
   * whose kept value and body both give another: a row whose column was edited to another tenant
   * is still among its body's (and among that tenant's, which `includes`-style callers drop).
   */
  misindexed?(
    collection: string,
    narrow?: { field: string; value: string },
  ): Promise<{ doc: ReadDocument; fields: string[] }[]>;
  /** Whether documents survive a restart (MongoDB) or must be rebuilt from the log (embedded). */
  readonly durable: boolean;
  /** Drop every collection and checkpoint. */
  dropAll(): Promise<void>;
  close(): Promise<void>;
};
