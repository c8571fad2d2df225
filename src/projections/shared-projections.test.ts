import test from 'ava';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import type { ReadDocument, ReadStore } from '../read-store/read-store.ts';
import {
  PROJECTION_CHANGES,
  positionKey,
  trimProjectionChanges,
  type ProjectionChangesDoc,
} from './projection-changes.ts';
import { createProjectionRunner } from './projection-runner.ts';
import type { Projection } from './projection.ts';
import { createSharedProjections } from './shared-projections.ts';

/** One store the writer and the followers share, as MongoDB is shared (durable: its checkpoint is read back). */
const sharedStore = (): ReadStore => ({ ...createEmbeddedReadStore(), durable: true });

type CountDoc = ReadDocument & { events: number };

const counts: Projection = {
  name: 'counts',
  collections: ['counts'],
  async apply(event, store) {
    const docs = store.collection<CountDoc>('counts');
    const current = await docs.get(event.streamId);
    await docs.put({ _id: event.streamId, events: (current?.events ?? 0) + 1 });
  },
};

/** An in-memory projection (no collection): what each instance keeps itself, like the watched addresses. */
const seenBy = (seen: RecordedEvent[]): Projection => ({
  name: 'seen',
  collections: [],
  async apply(event) {
    seen.push(event);
  },
});

async function append(eventStore: ReturnType<typeof createSqliteEventStore>, stream: string, count: number) {
  for (let i = 0; i < count; i++)
    await eventStore.append(
      stream,
      [
        {
          id: crypto.randomUUID(),
          type: 'Happened',
          data: { i },
          metadata: {
            organizationId: 'org',
            environment: 'test',
            actor: 'test',
            correlationId: 'c',
            occurredAt: '2026-01-01T00:00:00.000Z',
          },
        },
      ],
      'any',
    );
  return (await eventStore.headPosition())!;
}

test('a follower does not project into the shared store: it reaches a position when the writer has, announces the documents the writer changed, and feeds its in-memory projections', async (t) => {
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  t.teardown(() => eventStore.close());
  const readStore = sharedStore();
  const seen: RecordedEvent[] = [];
  const follower = createSharedProjections({ eventStore, readStore, local: [seenBy(seen)], log: () => {} });
  t.teardown(() => follower.stop());
  const changed: string[] = [];
  follower.onDocumentsChanged('counts', (ids) => changed.push(...ids));
  const touched: string[][] = [];
  follower.onAdvanced((_position, written) => touched.push([...written]));

  const head = await append(eventStore, 'thing-a', 3);
  await follower.start();
  t.is(follower.position(), null, 'no writer yet: the shared store is at the start');
  t.deepEqual(await readStore.collection('counts').find({}), [], 'the follower wrote nothing');
  t.deepEqual(seen, [], 'its in-memory projections wait for the shared store');

  const waited = follower.waitFor(head, 10_000);
  const writer = createProjectionRunner({ eventStore, readStore, projections: [counts], journal: true, log: () => {} });
  t.teardown(() => writer.stop());
  await writer.start();
  await waited;
  t.is(follower.position(), head);
  t.deepEqual(changed, ['thing-a']);
  t.deepEqual(touched.at(-1), ['counts']);
  t.is(seen.length, 3);

  // Later appends: the writer follows the log, the follower follows the writer.
  const later = await append(eventStore, 'thing-b', 2);
  await follower.waitFor(later, 10_000);
  t.deepEqual([...new Set(changed)], ['thing-a', 'thing-b']);
  t.is(seen.length, 5);
  t.deepEqual(
    (await readStore.collection<CountDoc>('counts').find({}, { sort: { _id: 1 } })).map((d) => d.events),
    [3, 2],
  );
  t.is(follower.health().failing, null);
});

test('a follower that finds the journal trimmed under it says that changes went unannounced, and still moves on', async (t) => {
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  t.teardown(() => eventStore.close());
  const readStore = sharedStore();
  const lines: string[] = [];
  const follower = createSharedProjections({ eventStore, readStore, local: [], log: (line) => lines.push(line) });
  t.teardown(() => follower.stop());
  await follower.start();
  const writer = createProjectionRunner({ eventStore, readStore, projections: [counts], journal: true, log: () => {} });
  t.teardown(() => writer.stop());
  await writer.start();
  const head = await append(eventStore, 'thing-a', 4);
  await writer.waitFor(head, 10_000);
  // The writer's entries go before the follower reads them (as a trim does to one far behind).
  await trimProjectionChanges(readStore, head);
  t.deepEqual(await readStore.collection(PROJECTION_CHANGES).find({}), []);
  await follower.waitFor(head, 10_000);
  t.is(follower.position(), head);
  t.true(lines.some((line) => line.includes('misses changes')));
});

test('the journal chains batch to batch, keyed so that string order is log order; trimming removes entries up to a position', async (t) => {
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  t.teardown(() => eventStore.close());
  const readStore = sharedStore();
  const writer = createProjectionRunner({
    eventStore,
    readStore,
    projections: [counts],
    journal: true,
    batchSize: 2,
    log: () => {},
  });
  t.teardown(() => writer.stop());
  await append(eventStore, 'thing-a', 5);
  await writer.start();
  const entries = await readStore.collection<ProjectionChangesDoc>(PROJECTION_CHANGES).find({}, { sort: { _id: 1 } });
  t.deepEqual(
    entries.map((e) => [e.from, e._id]),
    [
      ['', positionKey(2n)],
      [positionKey(2n), positionKey(4n)],
      [positionKey(4n), positionKey(5n)],
    ],
  );
  t.true(positionKey(10n) > positionKey(9n));
  await trimProjectionChanges(readStore, 4n);
  t.deepEqual(
    (await readStore.collection(PROJECTION_CHANGES).find({})).map((e) => e._id),
    [positionKey(5n)],
  );
});

test('each batch commits its journal entry and checkpoint through the guard (the lease): a refused one is not recorded', async (t) => {
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  t.teardown(() => eventStore.close());
  const readStore = sharedStore();
  let allowed = true;
  const writer = createProjectionRunner({
    eventStore,
    readStore,
    projections: [counts],
    journal: true,
    log: () => {},
    commit: async (write) => {
      if (!allowed) throw new Error('lease lost');
      return write();
    },
  });
  t.teardown(() => writer.stop());
  const first = await append(eventStore, 'thing-a', 1);
  await writer.start();
  t.is(await readStore.getCheckpoint('projections'), first);
  allowed = false;
  await append(eventStore, 'thing-a', 1);
  await t.throwsAsync(writer.waitFor(first + 1n, 300));
  t.is(await readStore.getCheckpoint('projections'), first, 'the stale writer moved no checkpoint');
  t.is(writer.health().failing?.error, 'lease lost');
});
