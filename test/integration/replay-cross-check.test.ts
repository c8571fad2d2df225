import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { writeRealisticLog } from '../../bench/support/realistic-log.ts';
import { createSqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { ALL_PROJECTIONS, INDEXED_FIELDS } from '../../src/projections/all-projections.ts';
import { createProjectionRunner } from '../../src/projections/projection-runner.ts';
import type { Projection } from '../../src/projections/projection.ts';
import { createEmbeddedReadStore } from '../../src/read-store/embedded-read-store.ts';
import type { ReadDocument, ReadStore } from '../../src/read-store/read-store.ts';

const COLLECTIONS = [...new Set(ALL_PROJECTIONS.flatMap((projection) => projection.collections))];
const newReadStore = () => createEmbeddedReadStore({ indexedFields: INDEXED_FIELDS, writes: 'trusted' });

async function contents(store: ReadStore): Promise<Record<string, ReadDocument[]>> {
  const all: Record<string, ReadDocument[]> = {};
  for (const name of COLLECTIONS)
    all[name] = (await store.collection(name).find({})).sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));
  return all;
}

test('rebuilding every read model from the log gives what the projections built live', async (t) => {
  const directory = await mkdtemp(join(tmpdir(), 'weir-replay-cross-check-'));
  const eventStore = createSqliteEventStore({ path: join(directory, 'events.sqlite3') });
  t.teardown(async () => {
    await eventStore.close();
    await rm(directory, { recursive: true, force: true });
  });

  // The realistic log of bench:replay, small: merchants, endpoints, sessions with every kind of
  // payment outcome, webhook delivery attempts. The projections follow it live as it is written.
  const live = newReadStore();
  const summary = await writeRealisticLog({
    eventStore,
    targetEvents: 3000,
    organizations: 4,
    sessionsPerRound: 60,
    readStore: live,
  });
  t.true(summary.events >= 3000);
  const expected = await contents(live);
  t.true(
    expected['checkout_sessions']!.length > 100 && expected['webhook_deliveries']!.length > 100,
    'the log exercises the read models',
  );

  // A rebuild, twice on one runner: the second drops what the first built, and nothing a
  // projection remembers between events (the webhooks projection's endpoints) may outlive the drop.
  const rebuilt = newReadStore();
  const runner = createProjectionRunner({ eventStore, readStore: rebuilt, projections: ALL_PROJECTIONS });
  t.is((await runner.rebuild()).events, summary.events);
  t.deepEqual(await contents(rebuilt), expected);
  await runner.rebuild();
  t.deepEqual(await contents(rebuilt), expected);

  // Without the categories hint, every projection sees every event: same read models, so no
  // projection reads events of a category it does not declare.
  const everyEvent: Projection[] = ALL_PROJECTIONS.map(({ categories: _categories, ...projection }) => projection);
  const unfiltered = newReadStore();
  await createProjectionRunner({ eventStore, readStore: unfiltered, projections: everyEvent }).rebuild();
  t.deepEqual(await contents(unfiltered), expected);
});
