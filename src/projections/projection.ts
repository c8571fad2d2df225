import type { RecordedEvent } from '../event-store/event-store.ts';
import type { ReadStore } from '../read-store/read-store.ts';

/**
 * A read model: a pure function of the log. `apply` is called once per event in log order and
 * must be idempotent (re-applying an event leaves the same documents), so the runner may repeat
 * a batch after a crash and a read model can be dropped and rebuilt from zero.
 */
export type Projection = {
  name: string;
  /** Collections this projection owns. */
  collections: string[];
  apply(event: RecordedEvent, store: ReadStore): Promise<void>;
};
