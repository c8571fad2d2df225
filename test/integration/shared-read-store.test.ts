import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { READ_MODEL_INDEXES } from '../../src/projections/all-projections.ts';
import type { Collection, ReadDocument, ReadStore } from '../../src/read-store/read-store.ts';
import { createSqliteReadStore } from '../../src/read-store/sqlite-read-store.ts';
import { scrapeMetrics } from '../support/metrics-scrape.ts';
import { sharedInstanceKeys } from '../support/instance-keys.ts';
import { API_KEY_USAGE } from '../../src/read-api/api-key-usage.ts';
import { startNatsServer } from '../support/nats-server.ts';
import { ADMIN_TOKEN, startTestWeir } from '../support/weir-harness.ts';

/**
 * The one read store the instances share, as they would share MongoDB (which cannot run here: its
 * adapter is proven by the read-store contract suite where MONGODB_URL is set). Each instance
 * gets its own view of it that counts the writes it makes to the read models.
 */
function countingView(store: ReadStore) {
  let writes = 0;
  const view: ReadStore = {
    ...store,
    collection<T extends ReadDocument>(name: string): Collection<T> {
      const inner = store.collection<T>(name);
      // Not a read model: any instance a key authenticates on notes its use (api-key-usage.ts).
      if (name === API_KEY_USAGE) return inner;
      return {
        ...inner,
        put: (doc) => {
          writes += 1;
          return inner.put(doc);
        },
        delete: (id) => {
          writes += 1;
          return inner.delete(id);
        },
      };
    },
    setCheckpoint: (name, position) => {
      writes += 1;
      return store.setCheckpoint(name, position);
    },
  };
  return { view, writes: () => writes };
}

const ownsProjections = async (url: string) =>
  (await scrapeMetrics(url)).value('weir_ownership_owned', { kind: 'projections' }) === 1;

/** Asks `check` every 50 ms until it holds, at most 20 s; how long it took. */
async function until(what: string, check: () => Promise<boolean> | boolean): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > 20_000) throw new Error(`not within 20 s: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return Date.now() - started;
}

test('two instances sharing one read store: only the projections lease owner writes it, the other reads from it (and waits on its position), and takes over when the owner stops', async (t) => {
  t.timeout(120_000);
  const nats = await startNatsServer();
  t.teardown(() => nats.stop());
  const root = await mkdtemp(join(tmpdir(), 'weir-shared-read-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const store = createSqliteReadStore({
    path: join(root, 'shared-read-models.sqlite3'),
    ...READ_MODEL_INDEXES,
  });
  t.teardown(() => store.close());
  const keys = sharedInstanceKeys();
  const config = {
    natsUrl: nats.url,
    eventStoreFile: join(root, 'events.sqlite3'),
    leaseTtlSeconds: 1,
    masterKey: keys.WEIR_MASTER_KEY,
    auditKey: keys.WEIR_AUDIT_KEY,
  };
  const a = countingView(store);
  const first = await startTestWeir(t, { ...config, dataDir: join(root, 'a') }, { sharedReadStore: a.view });
  const b = countingView(store);
  const second = await startTestWeir(t, { ...config, dataDir: join(root, 'b') }, { sharedReadStore: b.view });
  t.true(await ownsProjections(first.url), 'the first up projects');
  t.false(await ownsProjections(second.url), 'the second stands by');
  const writtenByA = a.writes();
  t.true(writtenByA > 0);
  t.is(b.writes(), 0);

  // The second instance learns which documents changed from the owner's journal (its dispatchers follow them).
  const announced = new Set<string>();
  second.projections.onDocumentsChanged('organizations', (ids) => {
    for (const id of ids) announced.add(id);
  });

  // A command through the non-owner: its answer waits for the shared store to show it, written by the owner.
  const created = await fetch(`${second.url}/admin/organizations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Shared Read Store Shop' }),
  });
  t.is(created.status, 200);
  const { organizationId, testSecretKey } = (await created.json()) as {
    organizationId: string;
    testSecretKey: string;
  };
  const read = await fetch(`${second.url}/api/v1/organization`, {
    headers: { authorization: `Bearer ${testSecretKey}` },
  });
  t.is(read.status, 200, 'read through the non-owner at once: its command waited for the shared store');
  t.is(b.writes(), 0, 'the non-owner wrote nothing to the shared store');
  t.true(a.writes() > writtenByA, 'the owner projected the new events');
  t.true(announced.has(`${organizationId}_test`), `${organizationId} in ${[...announced]}`);
  t.is(second.projections.position(), await second.eventStore.headPosition());

  // The owner stops: the other takes the projections over and writes from where the shared checkpoint was.
  const beforeTakeover = b.writes();
  await first.stop();
  const tookOver = await until('projections taken over', () => ownsProjections(second.url));
  t.log(`projections taken over ${tookOver} ms after the owner stopped (lease TTL 1 s)`);
  const again = await fetch(`${second.url}/admin/organizations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'After Takeover Shop' }),
  });
  t.is(again.status, 200);
  const { testSecretKey: laterKey } = (await again.json()) as { testSecretKey: string };
  const readAgain = await fetch(`${second.url}/api/v1/organization`, {
    headers: { authorization: `Bearer ${laterKey}` },
  });
  t.is(readAgain.status, 200);
  t.true(b.writes() > beforeTakeover, 'the new owner writes');
  t.is(second.projections.health().failing, null);
});
