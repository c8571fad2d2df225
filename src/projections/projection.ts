import type { RecordedEvent } from '../event-store/event-store.ts';
import type { ReadStore } from '../read-store/read-store.ts';

/** The category of a stream: its id up to the first '-' (`checkout_session-42` is a `checkout_session`). */
export const categoryOf = (streamId: string): string => {
  const dash = streamId.indexOf('-');
  return dash < 0 ? streamId : streamId.slice(0, dash);
};

/**
 * A read model: a pure function of the log. `apply` is called once per event in log order and
 * must be idempotent (re-applying an event leaves the same documents), so the runner may repeat
 * a batch after a crash and a read model can be dropped and rebuilt from zero. A repeated batch
 * meets whatever its failed attempt wrote, later events' effects included (retried-batches.test.ts
 * holds every projection to this).
 */
export type Projection = {
  name: string;
  /** Collections this projection owns. */
  collections: string[];
  /**
   * The stream categories whose events `apply` reads (a category is the part of a stream id
   * before its first '-': `checkout_session` for `checkout_session-…`). When given, the runner
   * calls `apply` only for events of these streams, which spares a replay most calls; when left
   * out, `apply` sees every event.
   */
  categories?: readonly string[];
  /**
   * The version of the documents this projection writes; 1 when left out. Bump it when a change
   * makes documents it already wrote wrong for the new code (a new field, a new meaning): on a
   * durable read store (the data dir's SQLite file, MongoDB), whose documents outlive a restart, the
   * runner then rebuilds every read model from the log at the next start. The in-memory store
   * (tests) is rebuilt at every start anyway.
   */
  version?: number;
  apply(event: RecordedEvent, store: ReadStore): Promise<void>;
};
