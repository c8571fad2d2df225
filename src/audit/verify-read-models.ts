import { isDeepStrictEqual } from 'node:util';
import type { EventStore } from '../event-store/event-store.ts';
import { ALL_PROJECTIONS, INDEXED_FIELDS } from '../projections/all-projections.ts';
import { createProjectionRunner } from '../projections/projection-runner.ts';
import type { Projection } from '../projections/projection.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import type { ReadDocument, ReadStore } from '../read-store/read-store.ts';
import { yieldToEventLoop } from '../shared/yield-to-event-loop.ts';

/**
 * One document where the live read store and the rebuild disagree: `missing` from the live store,
 * `unexpected` in it (the rebuild has no such document), or `different` in the named top-level fields;
 * or `misindexed`: what the live store keeps beside its body for queries (the embedded file's
 * columns of an indexed or sort field, its row's id) is not what the body gives, for the named fields.
 */
export type ReadModelDifference = {
  collection: string;
  id: string;
  kind: 'missing' | 'unexpected' | 'different' | 'misindexed';
  fields: string[];
};

export type ReadModelReport = {
  /** False when there was no live read store to compare with (`reason` says why). */
  compared: boolean;
  reason: string | null;
  holds: boolean;
  /** The log position both sides were compared at. */
  position: string | null;
  collections: number;
  documents: number;
  /** The first `MAX_LISTED` differences; `differenceCount` counts them all. */
  differences: ReadModelDifference[];
  differenceCount: number;
};

export type ReadModelProgress =
  | { phase: 'rebuild'; events: number; position: bigint; head: bigint | null }
  | { phase: 'compare'; collections: number; of: number };

/** The live read models: the store and the log position its projections have processed. */
export type LiveReadModels = { readStore: ReadStore; position: () => Promise<bigint | null> };

/** Why there are no live read models to compare; `fails`: they are there but cannot be compared, which does not hold. */
export type AbsentReadModels = { absent: string; fails?: true };

const MAX_LISTED = 100;
/** Documents compared between two turns of the event loop. */
const YIELD_EVERY = 2000;
/** Rounds of re-checking differing documents after the live side moved on while it was compared. */
const SETTLE_ROUNDS = 5;

export const notCompared = (reason: string): ReadModelReport => ({
  compared: false,
  reason,
  holds: true,
  position: null,
  collections: 0,
  documents: 0,
  differences: [],
  differenceCount: 0,
});

/** An event a projection could not apply while rebuilding: the log holds what Weir never writes (edited, swapped). */
class RebuildStoppedError extends Error {}

/** `projection`, its failure on an event named by position, type, stream and projection (an edited log breaks the rebuild, not the report). */
const naming = (projection: Projection): Projection => ({
  ...projection,
  async apply(event, store) {
    try {
      await projection.apply(event, store);
    } catch (error) {
      throw new RebuildStoppedError(
        `the rebuild stopped at position ${event.position}: the ${projection.name} read model cannot apply the ${event.type} event of ${event.streamId} there (${error instanceof Error ? error.message : String(error)}): the log is not as Weir wrote it, see the hash chain's findings`,
      );
    }
  },
});

const differingFields = (live: ReadDocument, rebuilt: ReadDocument): string[] =>
  [...new Set([...Object.keys(live), ...Object.keys(rebuilt)])].filter(
    (key) => !isDeepStrictEqual(live[key], rebuilt[key]),
  );

const differenceOf = (
  collection: string,
  id: string,
  live: ReadDocument | null,
  rebuilt: ReadDocument | null,
): ReadModelDifference | null => {
  if (live === null && rebuilt === null) return null;
  if (live === null) return { collection, id, kind: 'missing', fields: [] };
  if (rebuilt === null) return { collection, id, kind: 'unexpected', fields: [] };
  const fields = differingFields(live, rebuilt);
  return fields.length === 0 ? null : { collection, id, kind: 'different', fields };
};

/**
 * Rebuilds every read model from the log in a scratch (embedded) store, up to the position the
 * live projections have processed, and compares the two document by document, and each live
 * document with what its store keeps beside it for queries (`ReadStore.misindexed`): queries read
 * those, so a body that matches is not enough. When the live side
 * moves on meanwhile, the documents found different are checked again once the rebuild has caught
 * up with it, so only a real disagreement is reported. `includes` narrows the comparison (one
 * tenant's documents).
 */
export async function verifyReadModels(deps: {
  eventStore: EventStore;
  live: LiveReadModels;
  projections?: Projection[];
  includes?: (doc: ReadDocument) => boolean;
  /** A top-level field every document `includes` takes has this value in (a tenant's organizationId): the misindexed scan reads only rows that give it. */
  within?: { field: string; value: string };
  onProgress?: (progress: ReadModelProgress) => void;
}): Promise<ReadModelReport> {
  const { eventStore, live } = deps;
  const projections = deps.projections ?? ALL_PROJECTIONS;
  const includes = deps.includes ?? (() => true);
  const collections = [...new Set(projections.flatMap((projection) => projection.collections))];

  let bound = await live.position();
  // The log as the live side has read it: nothing past `bound`.
  const upToBound: EventStore = {
    ...eventStore,
    async readAll(after, limit) {
      const until = bound;
      if (until === null) return [];
      return (await eventStore.readAll(after, limit)).filter((event) => event.position <= until);
    },
    headPosition: async () => bound,
    onAppended: () => () => undefined,
  };
  const scratch = createEmbeddedReadStore({ indexedFields: INDEXED_FIELDS, writes: 'trusted' });
  const runner = createProjectionRunner({
    eventStore: upToBound,
    readStore: scratch,
    projections: projections.map(naming),
    log: () => undefined,
  });
  try {
    try {
      await runner.rebuild((progress) => deps.onProgress?.({ phase: 'rebuild', ...progress }));
    } catch (error) {
      if (!(error instanceof RebuildStoppedError)) throw error;
      return { ...notCompared(error.message), holds: false };
    }

    let differences: ReadModelDifference[] = [];
    // Each row's columns against its own body: no rebuild involved, so not checked again below.
    const misindexed: ReadModelDifference[] = [];
    let documents = 0;
    for (const [index, name] of collections.entries()) {
      const rebuilt = new Map<string, ReadDocument>();
      for (const doc of await scratch.collection(name).find({})) if (includes(doc)) rebuilt.set(doc._id, doc);
      for (const doc of await live.readStore.collection(name).find({})) {
        if (!includes(doc)) continue;
        documents += 1;
        // Inside `weir serve` (GET /audit/verify) requests go on meanwhile.
        if (documents % YIELD_EVERY === 0) await yieldToEventLoop();
        const difference = differenceOf(name, doc._id, doc, rebuilt.get(doc._id) ?? null);
        rebuilt.delete(doc._id);
        if (difference) differences.push(difference);
      }
      for (const id of rebuilt.keys()) {
        documents += 1;
        differences.push({ collection: name, id, kind: 'missing', fields: [] });
      }
      for (const { doc, fields } of (await live.readStore.misindexed?.(name, deps.within)) ?? [])
        if (includes(doc)) misindexed.push({ collection: name, id: doc._id, kind: 'misindexed', fields });
      deps.onProgress?.({ phase: 'compare', collections: index + 1, of: collections.length });
    }

    for (let round = 0; round < SETTLE_ROUNDS && differences.length > 0; round += 1) {
      const now = await live.position();
      if (now === bound || now === null) break;
      bound = now;
      await runner.waitFor(now, 60_000);
      const again: ReadModelDifference[] = [];
      for (const { collection, id } of differences) {
        const liveDoc = await live.readStore.collection(collection).get(id);
        const rebuiltDoc = await scratch.collection(collection).get(id);
        const difference = differenceOf(
          collection,
          id,
          liveDoc && includes(liveDoc) ? liveDoc : null,
          rebuiltDoc && includes(rebuiltDoc) ? rebuiltDoc : null,
        );
        if (difference) again.push(difference);
      }
      differences = again;
    }
    differences.push(...misindexed);

    return {
      compared: true,
      reason: null,
      holds: differences.length === 0,
      position: bound === null ? null : String(bound),
      collections: collections.length,
      documents,
      differences: differences.slice(0, MAX_LISTED),
      differenceCount: differences.length,
    };
  } finally {
    await runner.stop();
    await scratch.close();
  }
}
