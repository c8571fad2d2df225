import type { ProjectionRunner } from '../projections/projection-runner.ts';
import type { ReadDocument, ReadStore } from '../read-store/read-store.ts';
import { InvalidStateError, NotFoundError } from '../shared/errors.ts';

const RETRY_AFTER_FAILURE_MS = 1000;
const BATCH = 200;

export type WorkQueue = { start(): void; stop(): Promise<void>; /** Run one pass now (tests). */ runOnce(): Promise<void> };

/**
 * A process manager whose pending work is a read model: each document of `collection` is one
 * thing to do (a session's end an invoice has not recorded, a renewal whose invoice does not exist
 * yet), and doing it appends events that remove the document. A restart therefore resumes where
 * it was, and a repeat is harmless as long as `work` is idempotent (the deciders answer nothing
 * for a repeat). `work` answers the log position of what it appended, or null when nothing changed
 * (the document is then left alone in this process). A refusal of the domain (InvalidStateError,
 * NotFoundError) is logged and never retried; any other error retries the pass after a second.
 */
export function createWorkQueue<TDoc extends ReadDocument>(deps: {
  name: string;
  collection: string;
  readStore: ReadStore;
  projections: ProjectionRunner;
  /** Order of the work (oldest first); `_id` breaks ties. */
  sortBy: keyof TDoc & string;
  work(doc: TDoc): Promise<bigint | null>;
  log?: (line: string) => void;
}): WorkQueue {
  const { projections } = deps;
  const log = deps.log ?? ((line: string) => console.error(line));
  const pending = deps.readStore.collection<TDoc>(deps.collection);
  /** Work whose command changed nothing or was refused; not tried again in this process. */
  const spent = new Set<string>();
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  let retry: NodeJS.Timeout | null = null;
  let unsubscribe: (() => void) | null = null;

  async function settle(doc: TDoc): Promise<void> {
    try {
      const position = await deps.work(doc);
      if (position !== null) await projections.waitFor(position);
      else spent.add(doc._id);
    } catch (error) {
      if (error instanceof InvalidStateError || error instanceof NotFoundError) {
        log(`[${deps.name}] ${doc._id} cannot be done: ${error.message}`);
        spent.add(doc._id);
        return;
      }
      throw error;
    }
  }

  async function pass(): Promise<void> {
    const due = await pending.find({}, { sort: { [deps.sortBy]: 1, _id: 1 }, limit: BATCH + spent.size });
    for (const doc of due) if (!spent.has(doc._id) && !stopped) await settle(doc);
  }

  function poke(): Promise<void> {
    if (stopped) return Promise.resolve();
    if (running) { again = true; return running; }
    running = (async () => {
      try {
        do { again = false; await pass(); } while (again && !stopped);
      } catch (error) {
        log(`[${deps.name}] failed; retrying in ${RETRY_AFTER_FAILURE_MS} ms: ${(error as Error).message}`);
        if (!stopped && !retry) { retry = setTimeout(() => { retry = null; void poke(); }, RETRY_AFTER_FAILURE_MS); retry.unref(); }
      } finally {
        running = null;
      }
    })();
    return running;
  }

  return {
    start() {
      stopped = false;
      unsubscribe = projections.onAdvanced((_position, touched) => { if (touched.has(deps.collection)) void poke(); });
      void poke();
    },
    runOnce: () => poke(),
    async stop() {
      stopped = true;
      unsubscribe?.();
      if (retry) clearTimeout(retry);
      while (running) await running;
    },
  };
}
