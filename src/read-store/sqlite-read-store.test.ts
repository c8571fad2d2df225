import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import test from 'ava';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { createProjectionRunner, PROJECTIONS_CHECKPOINT } from '../projections/projection-runner.ts';
import type { Projection } from '../projections/projection.ts';
import type { ReadDocument } from './read-store.ts';
import { createSqliteReadStore } from './sqlite-read-store.ts';

const scratch = mkdtempSync(join(tmpdir(), 'weir-sqlite-read-store-'));
test.after.always(() => rmSync(scratch, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => {
  const dir = join(scratch, String(++dirs));
  mkdirSync(dir);
  return { dir, events: join(dir, 'events.sqlite3'), readModels: join(dir, 'read-models.sqlite3') };
};

type CountDoc = ReadDocument & { organizationId: string; events: number; label: string };

/** Counts each stream's events; `label` stands for what another version writes differently. */
function counting(version: number, label: string, seen: RecordedEvent[]): Projection {
  return {
    name: 'counts',
    collections: ['counts'],
    version,
    async apply(event, store) {
      seen.push(event);
      const counts = store.collection<CountDoc>('counts');
      const current = await counts.get(event.streamId);
      await counts.put({ _id: event.streamId, organizationId: 'org', events: (current?.events ?? 0) + 1, label });
    },
  };
}

async function append(eventStore: ReturnType<typeof createSqliteEventStore>, stream: string, count: number) {
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

test('a restart keeps the documents and the log position, and follows the log from there', async (t) => {
  const paths = freshDir();
  const eventStore = createSqliteEventStore({ path: paths.events });
  t.teardown(() => eventStore.close());
  await append(eventStore, 'a-1', 3);
  await append(eventStore, 'b-1', 2);

  const firstSeen: RecordedEvent[] = [];
  const first = createSqliteReadStore({ path: paths.readModels, indexedFields: ['organizationId'] });
  const firstRunner = createProjectionRunner({
    eventStore,
    readStore: first,
    projections: [counting(1, 'v1', firstSeen)],
    log: () => {},
  });
  await firstRunner.start();
  t.is(firstSeen.length, 5);
  await firstRunner.stop();
  await first.close();

  await append(eventStore, 'a-1', 1);
  const secondSeen: RecordedEvent[] = [];
  const second = createSqliteReadStore({ path: paths.readModels, indexedFields: ['organizationId'] });
  t.teardown(() => second.close());
  t.is(await second.getCheckpoint(PROJECTIONS_CHECKPOINT), 5n, 'the position stored with the documents');
  const secondRunner = createProjectionRunner({
    eventStore,
    readStore: second,
    projections: [counting(1, 'v1', secondSeen)],
    log: () => {},
  });
  await secondRunner.start();
  t.deepEqual(
    secondSeen.map((event) => event.position),
    [6n],
    'only the event appended since is applied',
  );
  t.deepEqual(await second.collection<CountDoc>('counts').get('a-1'), {
    _id: 'a-1',
    organizationId: 'org',
    events: 4,
    label: 'v1',
  });
  t.is(await second.collection('counts').count({ organizationId: 'org' }), 2);
  await secondRunner.stop();
});

test('read models written by an older projection version are discarded and rebuilt from the log', async (t) => {
  const paths = freshDir();
  const eventStore = createSqliteEventStore({ path: paths.events });
  t.teardown(() => eventStore.close());
  await append(eventStore, 'a-1', 2);
  await append(eventStore, 'gone-1', 1);

  const old = createSqliteReadStore({ path: paths.readModels });
  const oldRunner = createProjectionRunner({
    eventStore,
    readStore: old,
    projections: [counting(1, 'v1', [])],
    log: () => {},
  });
  await oldRunner.start();
  await oldRunner.stop();
  // A document the new version would never write: it must not survive the rebuild.
  await old.collection('counts').put({ _id: 'stale', organizationId: 'org', events: 99, label: 'v1' });
  await old.close();

  const seen: RecordedEvent[] = [];
  const lines: string[] = [];
  const store = createSqliteReadStore({ path: paths.readModels });
  t.teardown(() => store.close());
  const runner = createProjectionRunner({
    eventStore,
    readStore: store,
    projections: [counting(2, 'v2', seen)],
    log: (line) => lines.push(line),
  });
  await runner.start();
  t.is(seen.length, 3, 'every event applied again');
  t.regex(lines.join('\n'), /counts \(version 1 -> 2\); rebuilding every read model from the log/);
  t.is(await store.collection('counts').get('stale'), null);
  t.deepEqual(
    (await store.collection<CountDoc>('counts').find({}, { sort: { _id: 1 } })).map((doc) => [doc._id, doc.label]),
    [
      ['a-1', 'v2'],
      ['gone-1', 'v2'],
    ],
  );
  await runner.stop();
});

test('a crash in the middle of a batch leaves the position and the documents of the last commit, together', async (t) => {
  const path = join(scratch, `crash-${++dirs}.sqlite3`);
  // Every checkpoint commits at once here, so the test sees exactly what a crash would leave.
  const live = createSqliteReadStore({ path, commitEveryWrites: 1 });
  const counts = live.collection<CountDoc>('counts');
  await counts.put({ _id: 'a', organizationId: 'org', events: 1, label: 'batch 1' });
  await live.setCheckpoint(PROJECTIONS_CHECKPOINT, 1n);
  // Batch 2 is under way: documents written, its checkpoint not yet.
  await counts.put({ _id: 'a', organizationId: 'org', events: 2, label: 'batch 2' });
  await counts.put({ _id: 'b', organizationId: 'org', events: 1, label: 'batch 2' });
  await counts.delete('a');

  // What another process (a restart after kill -9) reads from the file now.
  const afterCrash = createSqliteReadStore({ path });
  t.is(await afterCrash.getCheckpoint(PROJECTIONS_CHECKPOINT), 1n);
  t.deepEqual(
    (await afterCrash.collection<CountDoc>('counts').find({})).map((doc) => [doc._id, doc.label]),
    [['a', 'batch 1']],
  );
  await afterCrash.close();

  // Batch 2's checkpoint commits its documents with it.
  await live.setCheckpoint(PROJECTIONS_CHECKPOINT, 2n);
  const afterCommit = createSqliteReadStore({ path });
  t.is(await afterCommit.getCheckpoint(PROJECTIONS_CHECKPOINT), 2n);
  t.deepEqual(
    (await afterCommit.collection<CountDoc>('counts').find({})).map((doc) => [doc._id, doc.label]),
    [['b', 'batch 2']],
  );
  await afterCommit.close();
  await live.close();
});

test("another writer's checkpoint during a batch run atomically does not commit half of it: the batch and its position commit together", async (t) => {
  const path = join(scratch, `atomic-${++dirs}.sqlite3`);
  // Every checkpoint would commit at once here.
  const live = createSqliteReadStore({ path, commitEveryWrites: 1 });
  const counts = live.collection<CountDoc>('counts');
  const committed = async () => {
    const reader = createSqliteReadStore({ path });
    try {
      const ids = (await reader.collection<CountDoc>('counts').find({})).map((doc) => doc._id);
      return {
        projections: await reader.getCheckpoint(PROJECTIONS_CHECKPOINT),
        workflow: await reader.getCheckpoint('w'),
        ids,
      };
    } finally {
      await reader.close();
    }
  };
  let midBatch: Awaited<ReturnType<typeof committed>> | undefined;
  await live.atomically(async () => {
    await counts.put({ _id: 'a', organizationId: 'org', events: 1, label: 'batch' });
    // A workflow's pass, interleaved with the batch, saves its own position.
    await live.setCheckpoint('w', 7n);
    await counts.put({ _id: 'b', organizationId: 'org', events: 1, label: 'batch' });
    midBatch = await committed();
    await live.setCheckpoint(PROJECTIONS_CHECKPOINT, 2n);
  });
  t.deepEqual(midBatch, { projections: null, workflow: null, ids: [] }, 'a kill -9 here leaves nothing of the batch');
  t.deepEqual(await committed(), { projections: 2n, workflow: 7n, ids: ['a', 'b'] });
  await live.close();
});

test('writes stay in one transaction until a checkpoint finds it big or old enough; close commits the rest', async (t) => {
  const path = join(scratch, `batching-${++dirs}.sqlite3`);
  const live = createSqliteReadStore({ path, commitEveryWrites: 3, commitEveryMs: 60_000 });
  const counts = live.collection<CountDoc>('counts');
  const committed = async () => {
    const reader = createSqliteReadStore({ path });
    try {
      return { position: await reader.getCheckpoint('p'), documents: await reader.collection('counts').count({}) };
    } finally {
      await reader.close();
    }
  };
  await counts.put({ _id: 'a', organizationId: 'org', events: 1, label: '' });
  await live.setCheckpoint('p', 1n);
  t.deepEqual(await committed(), { position: null, documents: 0 }, 'one write: still open');
  await counts.put({ _id: 'b', organizationId: 'org', events: 1, label: '' });
  await counts.put({ _id: 'c', organizationId: 'org', events: 1, label: '' });
  await live.setCheckpoint('p', 3n);
  t.deepEqual(await committed(), { position: 3n, documents: 3 }, 'three writes: committed with their checkpoint');
  await counts.put({ _id: 'd', organizationId: 'org', events: 1, label: '' });
  await live.setCheckpoint('p', 4n);
  await live.close();
  t.deepEqual(await committed(), { position: 4n, documents: 4 });
});

test('a file written with other indexed fields is emptied (the runner then rebuilds it from the log)', async (t) => {
  const path = join(scratch, `layout-${++dirs}.sqlite3`);
  const before = createSqliteReadStore({ path, indexedFields: ['organizationId'] });
  await before.collection('counts').put({ _id: 'a', organizationId: 'org' });
  await before.setCheckpoint('p', 7n);
  await before.close();
  const same = createSqliteReadStore({ path, indexedFields: ['organizationId'] });
  t.is(await same.getCheckpoint('p'), 7n);
  await same.close();
  const other = createSqliteReadStore({ path, indexedFields: ['organizationId', 'status'] });
  t.is(await other.getCheckpoint('p'), null);
  t.is(await other.collection('counts').count({}), 0);
  await other.close();
});

test('misindexed names each row whose key, order or id column an edit to the file made disagree with its body; none as written', async (t) => {
  const path = join(scratch, `misindexed-${++dirs}.sqlite3`);
  const options = {
    path,
    indexedFields: ['organizationId', 'status', 'paymentIntent.id'],
    orderedFields: ['createdAt'],
  };
  const store = createSqliteReadStore(options);
  const sessions = store.collection('sessions');
  for (const [id, status] of [
    ['a', 'complete'],
    ['b', 'open'],
    ['c', 'open'],
    ['d', 'open'],
  ] as const)
    await sessions.put({ _id: id, organizationId: 'org', status, paymentIntent: { id: `pi_${id}` }, createdAt: id });
  await store.collection('other').put({ _id: 'x', organizationId: 'org', status: ['an', 'array'] });
  t.deepEqual(await store.misindexed!('sessions'), [], 'as written, pending writes included');
  await store.close();

  const db = new Database(path);
  db.prepare("UPDATE documents SET k1 = 'expired' WHERE id = 'a'").run();
  db.prepare("UPDATE documents SET k2 = NULL, o0 = 'zzz' WHERE id = 'b'").run();
  db.prepare("UPDATE documents SET id = 'c2' WHERE id = 'c'").run();
  // An array's key is a marker blob: a string in its place is found too.
  db.prepare("UPDATE documents SET k1 = 'x' WHERE id = 'x'").run();
  db.close();

  const reopened = createSqliteReadStore({ ...options, readonly: true });
  t.teardown(() => reopened.close());
  const named = async (collection: string) =>
    (await reopened.misindexed!(collection)).map(({ doc, fields }) => `${doc._id}:${fields.join(',')}`).sort();
  t.deepEqual(await named('sessions'), ['a:status', 'b:paymentIntent.id,createdAt', 'c:_id']);
  t.deepEqual(await named('other'), ['x:status']);
  // What the reviewer saw: the body still says complete, the indexed column hides it from a status query.
  t.is(await reopened.collection('sessions').count({ status: 'complete' }), 0);
});

test('a lone surrogate in an indexed or sort field is kept beside the body as it is (misindexed finds nothing) and keys no other string; in an _id it is refused', async (t) => {
  const options = {
    path: join(scratch, `surrogates-${++dirs}.sqlite3`),
    indexedFields: ['organizationId', 'status', 'paymentIntent.id'],
    orderedFields: ['createdAt'],
  };
  const store = createSqliteReadStore(options);
  t.teardown(() => store.close());
  const things = store.collection('things');
  await things.put({
    _id: 'a',
    organizationId: 'o1',
    status: 'open\ud800',
    createdAt: 'x\udc00',
    paymentIntent: { id: 'pi\ud800x' },
  });
  // What SQLite would have kept in the column of the first: no longer the same key.
  await things.put({
    _id: 'b',
    organizationId: 'o1',
    status: 'open\ufffd',
    createdAt: 'x\ufffd',
    paymentIntent: { id: 'pi\ufffdx' },
  });
  await things.put({
    _id: 'c',
    organizationId: 'o1',
    status: 'ünïcödé 🎉',
    createdAt: 1.5,
    paymentIntent: [{ id: 'p' }],
  });
  t.deepEqual(await store.misindexed!('things'), []);
  const ids = async (filter: Record<string, unknown>) => (await things.find(filter)).map((doc) => doc._id);
  t.deepEqual(await ids({ 'paymentIntent.id': 'pi\ud800x' }), ['a']);
  t.deepEqual(await ids({ 'paymentIntent.id': 'pi\ufffdx' }), ['b']);
  t.is(await things.count({ organizationId: 'o1', status: 'open\ud800' }), 1);
  t.is(await things.count({ organizationId: 'o1', status: 'open\ufffd' }), 1);
  t.is(await things.count({ status: 'ünïcödé 🎉' }), 1);
  t.deepEqual(
    (await things.find({}, { sort: { createdAt: 1 }, limit: 3 })).map((doc) => doc._id),
    ['c', 'a', 'b'],
    'sorted as the stores without columns sort them (numbers first, then by UTF-16 code unit)',
  );

  // An id SQLite would keep as 'b\ufffd', another document's id: refused, checked or trusted.
  await things.put({ _id: 'd\ufffd', organizationId: 'o1' });
  const trusted = createSqliteReadStore({
    ...options,
    path: join(scratch, `surrogates-${++dirs}.sqlite3`),
    writes: 'trusted',
  });
  t.teardown(() => trusted.close());
  for (const collection of [things, trusted.collection('things')])
    await t.throwsAsync(collection.put({ _id: 'd\udc00', organizationId: 'o2' }), {
      message: /_id holds a lone UTF-16 surrogate/,
    });
  t.is(await things.get('d\udc00'), null, "not the other document's");
  t.deepEqual(await ids({ _id: 'd\udc00' }), []);
  await things.delete('d\udc00');
  t.is((await things.get('d\ufffd'))?.organizationId, 'o1', 'nor deleting it');
});

test('misindexed reads a page at a time, letting the event loop run between pages; narrowed to a tenant, it reads its rows and a row whose column an edit moved away from it', async (t) => {
  const path = join(scratch, `misindexed-pages-${++dirs}.sqlite3`);
  const options = { path, indexedFields: ['organizationId', 'status'] };
  const store = createSqliteReadStore(options);
  const docs = store.collection('docs');
  for (let i = 0; i < 1500; i++)
    await docs.put({ _id: `d${String(i).padStart(4, '0')}`, organizationId: i % 2 === 0 ? 'A' : 'B', status: 'open' });
  let ranBefore = false;
  setImmediate(() => (ranBefore = true));
  t.deepEqual(await store.misindexed!('docs'), []);
  t.true(ranBefore, 'a turn of the event loop came during the scan');
  await store.close();

  const db = new Database(path);
  // Tenant B's document, its column edited to A; one of A's with its status edited.
  db.prepare("UPDATE documents SET k0 = 'A' WHERE id = 'd0001'").run();
  db.prepare("UPDATE documents SET k1 = 'paid' WHERE id = 'd1000'").run();
  db.close();
  const reopened = createSqliteReadStore({ ...options, readonly: true });
  t.teardown(() => reopened.close());
  const named = async (narrow?: { field: string; value: string }) =>
    (await reopened.misindexed!('docs', narrow)).map(({ doc, fields }) => `${doc._id}:${fields.join(',')}`);
  t.deepEqual(await named(), ['d0001:organizationId', 'd1000:status']);
  t.deepEqual(await named({ field: 'organizationId', value: 'B' }), ['d0001:organizationId'], "its body's tenant");
  t.deepEqual(await named({ field: 'organizationId', value: 'A' }), ['d0001:organizationId', 'd1000:status']);
  t.deepEqual(await named({ field: 'organizationId', value: 'C' }), []);
  await t.throwsAsync(reopened.misindexed!('docs', { field: 'label', value: 'A' }), {
    message: /indexed top-level field/,
  });
});

test("a compound index answers a tenant's counts and lists in SQL (no row read), with the same results; a field not indexed is refused", async (t) => {
  const path = join(scratch, `compound-${++dirs}.sqlite3`);
  const options = {
    path,
    indexedFields: ['organizationId', 'environment', 'status', 'pending'],
    compoundIndex: ['organizationId', 'environment', 'status'],
  };
  const store = createSqliteReadStore(options);
  const docs = store.collection('sessions');
  for (let i = 0; i < 30; i++)
    await docs.put({
      _id: `s-${i}`,
      organizationId: i % 3 === 0 ? 'org-b' : 'org-a',
      environment: i % 2 === 0 ? 'test' : 'live',
      status: i % 5 === 0 ? 'expired' : 'open',
    });
  // One document holds an array where the others hold a string: it stays a candidate of every filter.
  await docs.put({ _id: 'odd', organizationId: 'org-a', environment: ['test'], status: 'open' });
  await store.setCheckpoint('p', 1n);
  await store.close();

  const reader = new Database(path, { readonly: true });
  const plan = (sql: string) =>
    (reader.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((row) => row.detail).join('; ');
  t.regex(
    plan(`SELECT count(*) FROM documents WHERE collection = 'sessions' AND k0 = 'org-a' AND k1 = 'test'`),
    /COVERING INDEX documents_compound/,
  );
  t.regex(
    plan(
      `SELECT id FROM documents WHERE collection = 'sessions' AND k0 IN ('org-a', x'00') AND k1 IN ('test', x'00') AND k2 IN ('open', x'00')`,
    ),
    /COVERING INDEX documents_compound/,
  );
  reader.close();

  const reopened = createSqliteReadStore(options);
  t.is(await reopened.getCheckpoint('p'), 1n, 'the same layout: kept');
  const sessions = reopened.collection('sessions');
  const expected = (org: string, env: string, status?: string) =>
    Array.from({ length: 30 }, (_, i) => i).filter(
      (i) =>
        (i % 3 === 0 ? 'org-b' : 'org-a') === org &&
        (i % 2 === 0 ? 'test' : 'live') === env &&
        (status === undefined || (i % 5 === 0 ? 'expired' : 'open') === status),
    ).length;
  t.is(await sessions.count({ organizationId: 'org-a', environment: 'live' }), expected('org-a', 'live'));
  t.is(
    await sessions.count({ organizationId: 'org-a', environment: 'test', status: 'open' }),
    expected('org-a', 'test', 'open') + 1,
    'the document with an array matches as MongoDB would',
  );
  t.is((await sessions.find({ organizationId: 'org-b', environment: 'test' })).length, expected('org-b', 'test'));
  await reopened.close();

  t.throws(
    () => createSqliteReadStore({ path: ':memory:', indexedFields: ['status'], compoundIndex: ['organizationId'] }),
    {
      message: 'organizationId is in compoundIndex but not in indexedFields',
    },
  );
});

test('a search counted then listed in one turn gives the page a read in order gives, also after a write between them', async (t) => {
  const store = createSqliteReadStore({
    path: ':memory:',
    indexedFields: ['organizationId'],
    orderedFields: ['createdAt'],
  });
  const docs = store.collection('sessions');
  // More candidates than a page reads in order, few of them matching the search.
  for (let i = 0; i < 2500; i++)
    await docs.put({
      _id: `s-${String(i).padStart(4, '0')}`,
      organizationId: 'org',
      createdAt: i % 7,
      email: i % 500 === 3 ? 'pat@example.com' : `b${i}@example.com`,
    });
  const sort = { createdAt: -1, _id: 1 } as const;
  const search = () => ({ organizationId: 'org', email: { $regex: '^PAT@example\\.com$', $options: 'i' } });
  const alone = (await docs.find(search(), { sort, skip: 1, limit: 3 })).map((doc) => doc._id);
  t.is(alone.length, 3);
  const filter = search();
  const [count, page] = await Promise.all([docs.count(filter), docs.find(filter, { sort, skip: 1, limit: 3 })]);
  t.is(count, 5);
  t.deepEqual(
    page.map((doc) => doc._id),
    alone,
  );
  const again = search();
  const counted = docs.count(again);
  const written = docs.put({ _id: 's-9999', organizationId: 'org', createdAt: 99, email: 'Pat@example.com' });
  const listed = docs.find(again, { sort, limit: 1 });
  t.is(await counted, 5);
  await written;
  t.deepEqual(
    (await listed).map((doc) => doc._id),
    ['s-9999'],
    "the count's matches are not reused across a write",
  );
  await store.close();
});

test('a sorted page reads rows in the sort order and stops when full; values SQL cannot order fall back to the same answer', async (t) => {
  const store = createSqliteReadStore({
    path: join(scratch, `ordered-${++dirs}.sqlite3`),
    indexedFields: ['organizationId'],
    orderedFields: ['fireAt'],
  });
  t.teardown(() => store.close());
  const timers = store.collection('timers');
  for (let i = 0; i < 50; i++)
    await timers.put({
      _id: `t${String(i).padStart(2, '0')}`,
      organizationId: i % 2 ? 'odd' : 'even',
      fireAt: 1000 - i,
    });
  await timers.put({ _id: 'none', organizationId: 'odd' });
  const ids = (docs: ReadDocument[]) => docs.map((doc) => doc._id);
  t.deepEqual(ids(await timers.find({ fireAt: { $gt: 960 } }, { sort: { fireAt: 1 }, limit: 3 })), [
    't39',
    't38',
    't37',
  ]);
  t.deepEqual(ids(await timers.find({ fireAt: { $lte: 955 } }, { sort: { fireAt: -1 }, skip: 1, limit: 2 })), [
    't46',
    't47',
  ]);
  t.deepEqual(ids(await timers.find({ organizationId: 'odd' }, { sort: { fireAt: 1, _id: 1 }, limit: 2 })), [
    'none',
    't49',
  ]);
  t.deepEqual(ids(await timers.find({}, { sort: { _id: -1 }, limit: 2 })), ['t49', 't48']);
  // A boolean: MongoDB sorts it after strings and numbers; the page is then sorted in JavaScript.
  await timers.put({ _id: 'odd-one', organizationId: 'odd', fireAt: true });
  t.deepEqual(ids(await timers.find({}, { sort: { fireAt: -1, _id: 1 }, limit: 2 })), ['odd-one', 't00']);
});

test('killed with SIGKILL in the middle of a batch, a process leaves the last committed position and its documents', async (t) => {
  const path = join(scratch, `killed-${++dirs}.sqlite3`);
  const store = new URL('./sqlite-read-store.ts', import.meta.url).href;
  // Batch 1 committed with its checkpoint; batch 2 half written when the process is killed.
  const script = `
    const { createSqliteReadStore } = await import(${JSON.stringify(store)});
    const live = createSqliteReadStore({ path: ${JSON.stringify(path)}, commitEveryWrites: 1 });
    const counts = live.collection('counts');
    for (let i = 0; i < 100; i++) await counts.put({ _id: 'doc-' + i, batch: 1 });
    await live.setCheckpoint('projections', 100n);
    for (let i = 0; i < 150; i++) await counts.put({ _id: 'doc-' + i, batch: 2 });
    await counts.delete('doc-0');
    process.kill(process.pid, 'SIGKILL');
  `;
  const { spawnSync } = await import('node:child_process');
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  t.is(child.signal, 'SIGKILL', child.stderr);
  const after = createSqliteReadStore({ path });
  t.teardown(() => after.close());
  t.is(await after.getCheckpoint('projections'), 100n);
  const docs = await after.collection('counts').find({});
  t.is(docs.length, 100);
  t.true(docs.every((doc) => doc['batch'] === 1));
});
