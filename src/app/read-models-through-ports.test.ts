import test, { type ExecutionContext } from 'ava';
import { createCommandHandler } from '../actors/command-handler.ts';
import type { EventStore } from '../event-store/event-store.ts';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { ALL_PROJECTIONS } from '../projections/all-projections.ts';
import { COLLECTIONS, type OrganizationDoc } from '../projections/collections.ts';
import { createProjectionRunner, PROJECTIONS_CHECKPOINT } from '../projections/projection-runner.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { createOrganization } from '../tenancy/create-organization.ts';
import { readModelsBelongingThrough } from './read-models-through-ports.ts';

const NAMES = { readModels: 'the MongoDB database', log: 'the KurrentDB log' };

/** A log holding the organizations named, and read models projected from it up to its head. */
async function world(t: ExecutionContext, ...names: string[]) {
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  const readStore = createEmbeddedReadStore();
  t.teardown(() => eventStore.close());
  const commands = createCommandHandler({ eventStore, clock: createManualClock(Date.parse('2026-12-02T03:00:00Z')) });
  const projections = createProjectionRunner({ eventStore, readStore, projections: ALL_PROJECTIONS });
  await projections.start();
  const ids: string[] = [];
  for (const name of names) ids.push((await createOrganization(commands, name)).organizationId);
  const head = (await eventStore.headPosition()) ?? 0n;
  await projections.waitFor(head);
  await projections.stop();
  // The embedded store keeps no checkpoint of its own (it is rebuilt at each start): MongoDB's is set as it would be.
  await readStore.setCheckpoint(PROJECTIONS_CHECKPOINT, head);
  return { eventStore, readStore, head, ids };
}

test('an empty read store over an empty log belongs (a fresh setup)', async (t) => {
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  t.teardown(() => eventStore.close());
  t.deepEqual(await readModelsBelongingThrough({ eventStore, readStore: createEmbeddedReadStore() }, NAMES), {
    note: 'read models at log position none of 0, 0 organizations all in the log',
    reason: null,
  });
});

test('read models of this log at its head belong, and so do read models behind it (the projections catch up)', async (t) => {
  const { eventStore, readStore, head } = await world(t, 'Here');
  t.deepEqual(await readModelsBelongingThrough({ eventStore, readStore }, NAMES), {
    note: `read models at log position ${head} of ${head}, 2 organizations all in the log`,
    reason: null,
  });
  await readStore.setCheckpoint(PROJECTIONS_CHECKPOINT, 1n);
  t.is((await readModelsBelongingThrough({ eventStore, readStore }, NAMES)).reason, null);
});

test('read models past the log’s head are refused: a later backup’s, or the log lost its tail', async (t) => {
  const { eventStore, readStore, head } = await world(t, 'Here');
  await readStore.setCheckpoint(PROJECTIONS_CHECKPOINT, head + 5n);
  t.is(
    (await readModelsBelongingThrough({ eventStore, readStore }, NAMES)).reason,
    `the MongoDB database has read the log up to position ${head + 5n}, but the KurrentDB log ends at position ${head}: they are not from the same backup (or the log lost its last events)`,
  );
  const empty = createSqliteEventStore({ path: ':memory:' });
  t.teardown(() => empty.close());
  t.regex(
    (await readModelsBelongingThrough({ eventStore: empty, readStore }, NAMES)).reason ?? '',
    /up to position \d+, but the KurrentDB log ends at position 0/,
  );
});

test('read models holding organizations the log never recorded (another deployment’s, at or behind its head) are refused', async (t) => {
  const here = await world(t, 'Here', 'Also here');
  const elsewhere = await world(t, 'Elsewhere');
  await elsewhere.readStore.setCheckpoint(PROJECTIONS_CHECKPOINT, 1n);
  const { reason } = await readModelsBelongingThrough(
    { eventStore: here.eventStore, readStore: elsewhere.readStore },
    NAMES,
  );
  t.is(
    reason,
    `the MongoDB database holds organization ${elsewhere.ids[0]}_live and 1 more as the KurrentDB log never recorded it`,
  );
});

test('an organization at a revision its stream has not reached is refused (read models of a later copy of this log)', async (t) => {
  const { eventStore, readStore, ids } = await world(t, 'Here');
  const organizations = readStore.collection<OrganizationDoc>(COLLECTIONS.organizations);
  const live = (await organizations.get(`${ids[0]}_live`))!;
  await organizations.put({ ...live, _revision: (live._revision ?? 0) + 1 });
  t.regex(
    (await readModelsBelongingThrough({ eventStore, readStore }, NAMES)).reason ?? '',
    new RegExp(`holds organization ${ids[0]}_live as the KurrentDB log never recorded it$`),
  );
});

test('at most 100 organizations are looked up in the log, the first by id: each is a round trip on KurrentDB', async (t) => {
  const { eventStore, readStore, ids } = await world(t, 'Here');
  const organizations = readStore.collection<OrganizationDoc>(COLLECTIONS.organizations);
  const live = (await organizations.get(`${ids[0]}_live`))!;
  // Ids after the real ones: not looked up, though the log never recorded them.
  for (let n = 0; n < 150; n++) await organizations.put({ ...live, _id: `zz_${String(n).padStart(3, '0')}` });
  const read: string[] = [];
  const counting: EventStore = {
    ...eventStore,
    readStream: (streamId) => {
      read.push(streamId);
      return eventStore.readStream(streamId);
    },
  };
  const { reason } = await readModelsBelongingThrough({ eventStore: counting, readStore }, NAMES);
  t.is(read.length, 100);
  t.true(read.includes(`organization-${ids[0]}_live`));
  t.regex(reason ?? '', /holds organization zz_000 and 97 more as/);
});
