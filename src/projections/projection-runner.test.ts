import test from 'ava';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import type { ReadDocument, ReadStore } from '../read-store/read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { ReadModelsBehindError } from '../shared/errors.ts';
import { faultyReadStore } from '../../test/support/faulty-read-store.ts';
import { createProjectionRunner, PROJECTION_VERSIONS } from './projection-runner.ts';
import type { Projection } from './projection.ts';

/**
 * The embedded store with `durable: true`: its documents and checkpoint stay in memory between
 * two runners, which is what a MongoDB read store gives across a restart of Weir (the MongoDB
 * adapter itself runs the read store contract when MONGODB_URL is set).
 */
const storeThatOutlivesRunners = (): ReadStore => ({ ...createEmbeddedReadStore(), durable: true });

type CountDoc = ReadDocument & { events: number; label: string };

/** Counts the events of each stream; `label` stands for what a new version writes differently. */
function counting(version: number | undefined, label: string, seen: RecordedEvent[]): Projection {
  return {
    name: 'counts',
    collections: ['counts'],
    ...(version === undefined ? {} : { version }),
    async apply(event, store) {
      seen.push(event);
      const counts = store.collection<CountDoc>('counts');
      const current = await counts.get(event.streamId);
      await counts.put({ _id: event.streamId, events: (current?.events ?? 0) + 1, label });
    },
  };
}

async function appendEvents(
  eventStore: ReturnType<typeof createSqliteEventStore>,
  stream: string,
  count: number,
): Promise<void> {
  for (let i = 0; i < count; i++) {
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
  }
}

async function startRunner(
  eventStore: ReturnType<typeof createSqliteEventStore>,
  readStore: ReadStore,
  projections: Projection[],
  lines: string[],
) {
  const runner = createProjectionRunner({ eventStore, readStore, projections, log: (line) => lines.push(line) });
  await runner.start();
  await runner.stop();
}

test('a durable store is resumed while the projection versions match, and rebuilt from the log when one changes', async (t) => {
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  t.teardown(() => eventStore.close());
  const readStore = storeThatOutlivesRunners();
  const lines: string[] = [];
  await appendEvents(eventStore, 'thing-a', 3);

  // First start: a store with nothing in it is built, and the versions are recorded, with no warning.
  const first: RecordedEvent[] = [];
  await startRunner(eventStore, readStore, [counting(undefined, 'v1', first)], lines);
  t.is(first.length, 3);
  t.deepEqual(await readStore.collection(PROJECTION_VERSIONS).find({}), [{ _id: 'counts', version: 1 }]);
  t.deepEqual(lines, []);

  // Same versions (1 is the default): resumed from the checkpoint, only the new events applied.
  await appendEvents(eventStore, 'thing-a', 2);
  const second: RecordedEvent[] = [];
  await startRunner(eventStore, readStore, [counting(1, 'v1', second)], lines);
  t.is(second.length, 2);
  t.like(await readStore.collection<CountDoc>('counts').get('thing-a'), { events: 5, label: 'v1' });
  t.deepEqual(lines, []);

  // A new version: every read model dropped and rebuilt from the whole log, with a warning.
  const third: RecordedEvent[] = [];
  await startRunner(eventStore, readStore, [counting(2, 'v2', third)], lines);
  t.is(third.length, 5);
  t.like(await readStore.collection<CountDoc>('counts').get('thing-a'), { events: 5, label: 'v2' });
  t.deepEqual(await readStore.collection(PROJECTION_VERSIONS).find({}), [{ _id: 'counts', version: 2 }]);
  t.is(lines.length, 1);
  t.regex(lines[0]!, /counts \(version 1 -> 2\); rebuilding every read model from the log/);
});

test('a projection added or removed rebuilds; one without collections is not versioned; a rebuild records the versions', async (t) => {
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  t.teardown(() => eventStore.close());
  const readStore = storeThatOutlivesRunners();
  const lines: string[] = [];
  await appendEvents(eventStore, 'thing-b', 2);
  const inMemory: Projection = { name: 'in_memory', collections: [], apply: async () => {} };
  await startRunner(eventStore, readStore, [counting(1, 'v1', []), inMemory], lines);

  // Without the in-memory projection: nothing changed.
  const same: RecordedEvent[] = [];
  await startRunner(eventStore, readStore, [counting(1, 'v1', same)], lines);
  t.is(same.length, 0);
  t.deepEqual(lines, []);

  // A projection with collections added: rebuilt.
  const other: Projection = { ...counting(1, 'v1', []), name: 'others', collections: ['others'] };
  const added: RecordedEvent[] = [];
  await startRunner(eventStore, readStore, [counting(1, 'v1', added), other], lines);
  t.is(added.length, 2);
  t.regex(lines.at(-1)!, /others \(new\)/);

  // Removed again: rebuilt, and its versions document is gone.
  await startRunner(eventStore, readStore, [counting(1, 'v1', [])], lines);
  t.regex(lines.at(-1)!, /others \(removed\)/);
  t.deepEqual(await readStore.collection(PROJECTION_VERSIONS).find({}), [{ _id: 'counts', version: 1 }]);

  // `weir replay` (rebuild) drops everything, versions included, and records them again:
  // the next start resumes instead of rebuilding a second time.
  const runner = createProjectionRunner({
    eventStore,
    readStore,
    projections: [counting(1, 'v1', [])],
    log: (line) => lines.push(line),
  });
  await runner.rebuild();
  t.deepEqual(await readStore.collection(PROJECTION_VERSIONS).find({}), [{ _id: 'counts', version: 1 }]);
  const afterReplay: RecordedEvent[] = [];
  const warnings = lines.length;
  await startRunner(eventStore, readStore, [counting(1, 'v1', afterReplay)], lines);
  t.is(afterReplay.length, 0);
  t.is(lines.length, warnings);
});

test('the embedded store, rebuilt at every start, keeps no versions', async (t) => {
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  t.teardown(() => eventStore.close());
  const readStore = createEmbeddedReadStore();
  await appendEvents(eventStore, 'thing-c', 1);
  await startRunner(eventStore, readStore, [counting(3, 'v3', [])], []);
  t.deepEqual(await readStore.collection(PROJECTION_VERSIONS).find({}), []);
});

/** A read store whose writes fail while `failing.on` is set, as a MongoDB read store does during an outage. */
const storeWithOutage = (failing: { on: boolean }): ReadStore =>
  faultyReadStore(createEmbeddedReadStore(), { put: () => (failing.on ? new Error('read store unreachable') : null) });

test('a catch-up that fails is retried on the clock, with a doubling wait, until it succeeds; health() tells the failure meanwhile', async (t) => {
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  t.teardown(() => eventStore.close());
  const clock = createManualClock();
  const failing = { on: false };
  const lines: string[] = [];
  const runner = createProjectionRunner({
    eventStore,
    readStore: storeWithOutage(failing),
    projections: [counting(1, 'v1', [])],
    clock,
    log: (line) => lines.push(line),
  });
  t.teardown(() => runner.stop());
  await runner.start();
  t.deepEqual(runner.health(), { position: null, failing: null });

  failing.on = true;
  const started = clock.now();
  await appendEvents(eventStore, 'thing-d', 1);
  const position = await eventStore.headPosition();
  await eventually(() => runner.health().failing !== null);
  t.like(runner.health().failing, { error: 'read store unreachable', since: started, attempts: 1 });
  t.regex(
    lines.at(-1)!,
    /read store unreachable; retrying in 1 s\nError: read store unreachable\n\s+at /,
    'the first failure of a spell carries its stack',
  );

  // No append comes: the clock alone retries, 1 s, then 2 s after each failure.
  clock.advanceBy(999);
  await settle();
  t.is(runner.health().failing?.attempts, 1);
  clock.advanceBy(1);
  await eventually(() => runner.health().failing?.attempts === 2);
  t.regex(lines.at(-1)!, /retrying in 2 s$/, 'later ones only the message');

  // A request that waits for its write meanwhile is not failed at once: the next retry catches up.
  const waiting = runner.waitFor(position!, 60_000);
  failing.on = false;
  clock.advanceBy(2000);
  await waiting;
  await eventually(() => runner.health().failing === null);
  t.deepEqual(runner.health(), { position: position!.toString(), failing: null });
  t.regex(lines.at(-1)!, /projecting again after 3 attempts/);
});

test('a wait that times out while the read models fail says why', async (t) => {
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  t.teardown(() => eventStore.close());
  const failing = { on: false };
  const runner = createProjectionRunner({
    eventStore,
    readStore: storeWithOutage(failing),
    projections: [counting(1, 'v1', [])],
    clock: createManualClock(),
    log: () => {},
  });
  t.teardown(() => runner.stop());
  await runner.start();
  failing.on = true;
  await appendEvents(eventStore, 'thing-e', 1);
  const position = await eventStore.headPosition();
  const error = await t.throwsAsync(runner.waitFor(position!, 50), { instanceOf: ReadModelsBehindError });
  t.regex(
    error!.message,
    /did not reach log position \d+ within 50 ms: catching up fails \(read store unreachable\); what was written stays written/,
  );
  t.like(error, { statusCode: 503, code: 'read_models_behind' });
});

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

async function eventually(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('condition not reached');
}
