import type { EventStore } from '../event-store/event-store.ts';
import { COLLECTIONS, type OrganizationDoc } from '../projections/collections.ts';
import { PROJECTIONS_CHECKPOINT } from '../projections/projection-runner.ts';
import type { ReadStore } from '../read-store/read-store.ts';

/** Organizations of the read models looked up in the log through the port: each is a round trip on KurrentDB. */
const ORGANIZATIONS_LOOKED_UP = 100;

/** How a belonging check names the read models and the log (`read-models.sqlite3`, `the MongoDB database`…). */
export type BelongingNames = { readModels: string; log: string };

/** What read models past the log's head are said to be (the same words whichever stores hold them). */
export const aheadOfLog = (names: BelongingNames, position: bigint, head: bigint): string =>
  `${names.readModels} has read the log up to position ${position}, but ${names.log} ends at position ${head}: they are not from the same backup (or the log lost its last events)`;

/** What read models holding organizations the log never recorded are said to be; `ids` not empty. */
export const organizationsNotInLog = (names: BelongingNames, ids: readonly string[]): string =>
  `${names.readModels} holds organization ${ids[0]}${ids.length > 1 ? ` and ${ids.length - 1} more` : ''} as ${names.log} never recorded it`;

/** Where the read models are in the log, said when they belong and when not. */
export const positionNote = (position: bigint | null, head: bigint): string =>
  `read models at log position ${position ?? 'none'} of ${head}`;

/** What a passed check found. */
export const inLogNote = (at: string, organizations: number): string =>
  `${at}, ${organizations} organization${organizations === 1 ? '' : 's'} all in the log`;

/**
 * Whether the read models belong to this log, asked through the ports, for the stores that are no
 * SQLite files of the data dir (KurrentDB, MongoDB, a shared read store): their position is not
 * past the log's head, and the first organizations they hold (by id) are in the log at the revision
 * they reflect. `reason` is null when they belong. The checkpoint is read before the head, so read
 * models of this log that another instance projects meanwhile are never seen ahead of it.
 */
export async function readModelsBelongingThrough(
  stores: { eventStore: EventStore; readStore: ReadStore },
  names: BelongingNames,
): Promise<{ note: string; reason: string | null }> {
  const { eventStore, readStore } = stores;
  const position = await readStore.getCheckpoint(PROJECTIONS_CHECKPOINT);
  const head = (await eventStore.headPosition()) ?? 0n;
  const at = positionNote(position, head);
  if (position !== null && position > head) return { note: at, reason: aheadOfLog(names, position, head) };
  const organizations = await readStore
    .collection<OrganizationDoc>(COLLECTIONS.organizations)
    .find({}, { sort: { _id: 1 }, limit: ORGANIZATIONS_LOOKED_UP });
  const recorded = await Promise.all(
    organizations.map(async ({ _id, _revision }) => {
      const events = await eventStore.readStream(`organization-${_id}`);
      return _revision === undefined ? events.length > 0 : events[_revision]?.revision === _revision;
    }),
  );
  const foreign = organizations.filter((_, index) => !recorded[index]).map(({ _id }) => _id);
  if (foreign.length > 0) return { note: at, reason: organizationsNotInLog(names, foreign) };
  return { note: inLogNote(at, organizations.length), reason: null };
}
