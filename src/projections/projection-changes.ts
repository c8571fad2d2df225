import type { ReadDocument, ReadStore } from '../read-store/read-store.ts';

/**
 * What the projections' owner wrote, batch by batch, in a read store several instances share
 * (MongoDB): the others learn from it which documents changed (their timers, webhook dispatcher
 * and dashboard streams follow documents, see `ProjectionRunner.onDocumentsChanged`) without
 * projecting themselves. Written before the batch's checkpoint, so a checkpoint seen means its
 * entries are there.
 */
export const PROJECTION_CHANGES = 'projection_changes';

/** One batch: log positions `(from, _id]`, both zero-padded so that string order is log order. */
export type ProjectionChangesDoc = ReadDocument & {
  /** The checkpoint before the batch ('' for the log's start). */
  from: string;
  /** Collections written, with the ids put or deleted in each. */
  changed: Record<string, string[]>;
  at: string;
};

/** A log position as a key ordered like the position (20 digits hold any unsigned 64-bit one). */
export const positionKey = (position: bigint | null): string =>
  position === null ? '' : position.toString().padStart(20, '0');

export const positionOfKey = (key: string): bigint | null => (key === '' ? null : BigInt(key));

/** How long entries are kept: an instance further behind than this no longer learns which documents changed. */
export const PROJECTION_CHANGES_KEPT_MS = 10 * 60_000;

/**
 * Deletes the entries up to `upTo` (inclusive), a page at a time (the read store deletes by id).
 * Bounded: at most `maxPages` pages per call; what is left goes at the next call.
 */
export async function trimProjectionChanges(store: ReadStore, upTo: bigint, maxPages = 20): Promise<void> {
  const changes = store.collection<ProjectionChangesDoc>(PROJECTION_CHANGES);
  for (let page = 0; page < maxPages; page++) {
    const old = await changes.find({ _id: { $lte: positionKey(upTo) } }, { sort: { _id: 1 }, limit: 500 });
    for (const doc of old) await changes.delete(doc._id);
    if (old.length < 500) return;
  }
}
