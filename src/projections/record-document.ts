import type { RecordedEvent } from '../event-store/event-store.ts';
import type { Collection, ReadDocument } from '../read-store/read-store.ts';

/** A record's read-model document: `_revision` is the record stream's revision it reflects. */
export type RecordDoc<T> = ReadDocument & T & { _revision?: number };

/** The record without the document's bookkeeping fields. */
export function recordOf<T extends object>(doc: RecordDoc<T>): T {
  const { _id: _unusedId, _revision: _unusedRevision, ...record } = doc;
  return record as unknown as T;
}

/**
 * Fold one event of a record's stream into its document with the record's own `evolve` (the same
 * function its statechart uses). An event the document already reflects (the runner repeats a
 * batch after a failure) is skipped, so its effect, such as a redemption count, is never applied
 * twice. `effects` writes what else follows from the new record (timers, lookups) before the
 * document, whose revision marks the event applied: a batch that failed between them does them
 * again. Answers the new record, or null when nothing changed.
 */
export async function foldIntoDocument<T extends object, E>(
  collection: Collection<RecordDoc<T>>,
  id: string,
  event: RecordedEvent,
  evolve: (record: T | null, event: E) => T | null,
  effects?: (next: T) => Promise<void>,
): Promise<T | null> {
  const stored = await collection.get(id);
  if (stored && stored._revision !== undefined && stored._revision >= event.revision) return null;
  const current = event.revision === 0 || !stored ? null : recordOf<T>(stored);
  const next = evolve(current, event as unknown as E);
  if (!next) return null;
  await effects?.(next);
  await collection.put({ ...next, _id: id, _revision: event.revision } as RecordDoc<T>);
  return next;
}
