import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import Database from 'better-sqlite3';
import { GENESIS_HASH, chainHash, contentOf, foldChain } from './event-chain.ts';
import { WrongExpectedRevisionError, type EventMetadata, type EventStore, type NewEvent } from './event-store.ts';
import { DuplicateEventIdError, createSqliteEventStore } from './sqlite-event-store.ts';

const metadata: EventMetadata = {
  organizationId: 'org_sqlite',
  environment: 'live',
  actor: 'api_key:key_1',
  correlationId: 'corr_1',
  occurredAt: '2025-01-02T03:04:05.678Z',
};
const newEvent = (type: string, data: NewEvent['data'] = {}): NewEvent => ({ id: randomUUID(), type, data, metadata });

const openTemporaryStore = async (t: ExecutionContext): Promise<{ store: EventStore; path: string }> => {
  const directory = await mkdtemp(join(tmpdir(), 'weir-sqlite-event-store-'));
  const path = join(directory, 'events.sqlite3');
  const store = createSqliteEventStore({ path });
  t.teardown(async () => {
    await store.close();
    await rm(directory, { recursive: true, force: true });
  });
  return { store, path };
};

test('a new log is empty', async (t) => {
  const { store } = await openTemporaryStore(t);
  t.is(await store.headPosition(), null);
  t.deepEqual(await store.readAll(null, 100), []);
});

test('the file is a plain SQLite database in WAL mode with one events table', async (t) => {
  const { store, path } = await openTemporaryStore(t);
  const streamId = `invoice-${randomUUID()}`;
  const created = newEvent('InvoiceCreated', { amount: '250000000' });
  await store.append(streamId, [created], 'no_stream');

  const sqlite = new Database(path, { readonly: true });
  t.teardown(() => sqlite.close());
  t.is(sqlite.pragma('journal_mode', { simple: true }), 'wal');
  const row = sqlite
    .prepare<
      [],
      { position: number; id: string; stream_id: string; revision: number; type: string; amount: string; actor: string }
    >(
      "SELECT position, id, stream_id, revision, type, json_extract(data, '$.amount') AS amount, json_extract(metadata, '$.actor') AS actor FROM events",
    )
    .get();
  t.deepEqual(row, {
    position: 1,
    id: created.id,
    stream_id: streamId,
    revision: 0,
    type: 'InvoiceCreated',
    amount: '250000000',
    actor: 'api_key:key_1',
  });
});

test('an exact retry resolves with the original result and writes nothing', async (t) => {
  const { store } = await openTemporaryStore(t);
  const streamId = `checkout_session-${randomUUID()}`;
  const first = [newEvent('CheckoutSessionCreated')];
  const second = [newEvent('PaymentDetected'), newEvent('CheckoutSessionCompleted')];
  const created = await store.append(streamId, first, 'no_stream');
  const completed = await store.append(streamId, second, 0);
  let notices = 0;
  const unsubscribe = store.onAppended(() => {
    notices += 1;
  });
  t.teardown(unsubscribe);

  t.deepEqual(await store.append(streamId, first, 'no_stream'), created);
  t.deepEqual(await store.append(streamId, second, 0), completed);
  t.deepEqual(await store.append(streamId, second, 'any'), completed);
  await Promise.resolve();

  t.is((await store.readStream(streamId)).length, 3);
  t.is(await store.headPosition(), completed.position);
  t.is(notices, 0);
});

test('a retry with a different expected revision than the original rejects with WrongExpectedRevisionError', async (t) => {
  const { store } = await openTemporaryStore(t);
  const streamId = `invoice-${randomUUID()}`;
  await store.append(streamId, [newEvent('InvoiceCreated')], 'no_stream');
  const sent = [newEvent('InvoiceSent')];
  await store.append(streamId, sent, 0);

  const error = await t.throwsAsync(store.append(streamId, sent, 'no_stream'), {
    instanceOf: WrongExpectedRevisionError,
  });
  t.is(error?.actual, 1);
  t.is((await store.readStream(streamId)).length, 2);
});

test('reusing an event id outside an exact retry rejects with DuplicateEventIdError and writes nothing', async (t) => {
  const { store } = await openTemporaryStore(t);
  const taken = newEvent('InvoiceCreated');
  await store.append(`invoice-${randomUUID()}`, [taken], 'no_stream');
  const headBefore = await store.headPosition();

  const otherStream = `invoice-${randomUUID()}`;
  const fresh = newEvent('InvoiceCreated');
  const error = await t.throwsAsync(store.append(otherStream, [fresh, taken], 'no_stream'), {
    instanceOf: DuplicateEventIdError,
  });
  t.is(error?.eventId, taken.id);
  await t.throwsAsync(store.append(otherStream, [fresh, taken], 'any'), { instanceOf: DuplicateEventIdError });
  const twice = newEvent('InvoiceSent');
  await t.throwsAsync(store.append(otherStream, [twice, twice], 'no_stream'), { instanceOf: DuplicateEventIdError });

  t.deepEqual(await store.readStream(otherStream), []);
  t.is(await store.headPosition(), headBefore);
  // The failed appends left no trace: the stream can still be created with the fresh event.
  t.is((await store.append(otherStream, [fresh], 'no_stream')).nextExpectedRevision, 0);
});

test('an empty append and a negative limit are rejected', async (t) => {
  const { store } = await openTemporaryStore(t);
  await t.throwsAsync(store.append(`invoice-${randomUUID()}`, [], 'any'), { instanceOf: RangeError });
  await t.throwsAsync(store.readAll(null, -1), { instanceOf: RangeError });
});

test('readAll pages through a large log in order without gaps or repeats', async (t) => {
  const { store } = await openTemporaryStore(t);
  const total = 20_000;
  for (let batch = 0; batch < total / 500; batch += 1) {
    const events = Array.from({ length: 500 }, (_, index) =>
      newEvent('PaymentDetected', { amount: '100000000', index, txHash: `0x${'ab'.repeat(32)}`, network: 'ethereum' }),
    );
    await store.append(`checkout_session-${batch}`, events, 'no_stream');
  }
  // Speed is measured by bench/replay.ts, not asserted here.
  let read = 0;
  let previous: bigint | null = null;
  for (let after: bigint | null = null; ; ) {
    const page = await store.readAll(after, 1000);
    if (page.length === 0) break;
    for (const event of page) {
      if (previous !== null) t.true(event.position > previous);
      previous = event.position;
    }
    read += page.length;
    after = page.at(-1)!.position;
  }
  t.is(read, total);
});

test('the followers reading the same new events share them parsed once, frozen so none can change them for the others', async (t) => {
  const { store } = await openTemporaryStore(t);
  const streamId = `checkout_session-${randomUUID()}`;
  await store.append(streamId, [newEvent('CheckoutSessionCreated', { lineItems: [{ quantity: 2 }] })], 'no_stream');
  const [first] = await store.readAll(null, 10);
  const [again] = await store.readAll(null, 10);
  t.is(again, first);
  t.true(Object.isFrozen(first) && Object.isFrozen(first!.data) && Object.isFrozen(first!.metadata));
  const lineItems = first!.data['lineItems'] as { quantity: number }[];
  t.throws(() => {
    lineItems[0]!.quantity = 3;
  });
  t.deepEqual((await store.readAll(null, 10))[0]!.data, { lineItems: [{ quantity: 2 }] });
  // A stream read is frozen too, as every store's events are: the shared one when it is recent.
  t.is((await store.readStream(streamId))[0], first);
});

test('close stops polling and is idempotent', async (t) => {
  const directory = await mkdtemp(join(tmpdir(), 'weir-sqlite-event-store-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  const store = createSqliteEventStore({ path: join(directory, 'events.sqlite3') });
  store.onAppended(() => undefined);
  await store.close();
  await store.close();
  t.pass();
});

test(':memory: works for a single store', async (t) => {
  const store = createSqliteEventStore({ path: ':memory:' });
  t.teardown(() => store.close());
  const result = await store.append('invoice-1', [newEvent('InvoiceCreated')], 'no_stream');
  t.is(result.position, 1n);
  t.is((await store.readAll(null, 10)).length, 1);
});

test('appends asked for in one turn are written together, and one that conflicts fails alone', async (t) => {
  const { store } = await openTemporaryStore(t);
  const taken = `checkout_session-${randomUUID()}`;
  await store.append(taken, [newEvent('CheckoutSessionCreated')], 'no_stream');
  const streams = Array.from({ length: 50 }, () => `checkout_session-${randomUUID()}`);
  const same = `invoice-${randomUUID()}`;
  const outcomes = await Promise.allSettled([
    ...streams.map((streamId) => store.append(streamId, [newEvent('CheckoutSessionCreated')], 'no_stream')),
    store.append(taken, [newEvent('CheckoutSessionCreated')], 'no_stream'),
    // Later in the same group, an append sees the earlier ones: the second expects the first's revision.
    store.append(same, [newEvent('InvoiceCreated')], 'no_stream'),
    store.append(same, [newEvent('InvoiceFinalized')], 0),
  ]);
  t.is(outcomes.filter((o) => o.status === 'fulfilled').length, 52);
  const refused = outcomes[50]!;
  t.true(refused.status === 'rejected' && refused.reason instanceof WrongExpectedRevisionError);
  t.is((await store.readStream(taken)).length, 1);
  t.deepEqual(
    (await store.readStream(same)).map((e) => e.type),
    ['InvoiceCreated', 'InvoiceFinalized'],
  );
  const positions = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.position] : []));
  t.deepEqual(
    positions,
    [...positions].sort((a, b) => (a < b ? -1 : 1)),
    'positions follow the order the appends were asked for',
  );
});

test('close writes the appends already asked for before it closes the file', async (t) => {
  const directory = await mkdtemp(join(tmpdir(), 'weir-sqlite-event-store-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  const path = join(directory, 'events.sqlite3');
  const store = createSqliteEventStore({ path });
  const streamId = `invoice-${randomUUID()}`;
  const appended = store.append(streamId, [newEvent('InvoiceCreated')], 'no_stream');
  await store.close();
  t.is((await appended).nextExpectedRevision, 0);
  const reopened = createSqliteEventStore({ path });
  t.teardown(() => reopened.close());
  t.is((await reopened.readStream(streamId)).length, 1);
  await t.throwsAsync(store.append(streamId, [newEvent('InvoiceFinalized')], 0), { message: /closed/ });
});

test('a log written before the chain keeps its rows as they were and is sealed; the chain goes on after the seal', async (t) => {
  const directory = await mkdtemp(join(tmpdir(), 'weir-sqlite-event-store-'));
  const path = join(directory, 'events.sqlite3');
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  // The schema and rows as Weir wrote them before the chain.
  const legacy = new Database(path);
  legacy.exec(`CREATE TABLE events (
    position INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, stream_id TEXT NOT NULL,
    revision INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL,
    UNIQUE (stream_id, revision))`);
  const streamId = `invoice-${randomUUID()}`;
  const old = [newEvent('InvoiceCreated', { amount: '5' }), newEvent('InvoiceSent')];
  for (const [revision, event] of old.entries())
    legacy
      .prepare('INSERT INTO events (id, stream_id, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)')
      .run(event.id, streamId, revision, event.type, JSON.stringify(event.data), JSON.stringify(event.metadata));
  const rowsBefore = legacy.prepare('SELECT * FROM events ORDER BY position').all();
  legacy.close();

  const store = createSqliteEventStore({ path });
  t.teardown(() => store.close());
  const recorded = await store.readAll(null, 10);
  const seal = foldChain(GENESIS_HASH, recorded.map(contentOf));
  t.deepEqual(await store.chain.start(), { unchainedThrough: 2n, seal });
  t.deepEqual(await store.chain.head(), { position: 2n, hash: seal });
  t.deepEqual(
    (await store.chain.read(null, 10)).map((event) => event.link),
    [null, null],
  );

  await store.append(streamId, [newEvent('InvoicePaid')], 1);
  const [paid] = await store.chain.read(2n, 1);
  t.is(paid!.link!.previous, seal);
  t.is(paid!.link!.hash, chainHash(seal, paid!.content));

  // Opening it again seals nothing new, and the old rows are byte for byte what they were.
  await store.close();
  const again = createSqliteEventStore({ path });
  t.teardown(() => again.close());
  t.deepEqual(await again.chain.start(), { unchainedThrough: 2n, seal });
  const sqlite = new Database(path, { readonly: true });
  t.teardown(() => sqlite.close());
  const rowsAfter = sqlite
    .prepare(
      'SELECT position, id, stream_id, revision, type, data, metadata FROM events WHERE position <= 2 ORDER BY position',
    )
    .all();
  t.deepEqual(rowsAfter, rowsBefore);
});

test('a new log starts its chain at genesis', async (t) => {
  const { store } = await openTemporaryStore(t);
  t.deepEqual(await store.chain.start(), { unchainedThrough: null, seal: GENESIS_HASH });
  t.is(await store.chain.head(), null);
  await store.append(`invoice-${randomUUID()}`, [newEvent('InvoiceCreated')], 'no_stream');
  const [first] = await store.chain.read(null, 1);
  t.is(first!.link!.previous, GENESIS_HASH);
  t.deepEqual(await store.chain.head(), { position: 1n, hash: first!.link!.hash });
});

test('read-only, the store reads a chained log as written and appends nothing; a log from before the chain is refused unsealed, a missing file is not made', async (t) => {
  const { store, path } = await openTemporaryStore(t);
  await store.append(`invoice-${randomUUID()}`, [newEvent('InvoiceCreated')], 'no_stream');
  const reader = createSqliteEventStore({ path, readonly: true });
  t.teardown(() => reader.close());
  t.deepEqual(await reader.chain.head(), await store.chain.head());
  await t.throwsAsync(reader.append(`invoice-${randomUUID()}`, [newEvent('InvoiceCreated')], 'no_stream'), {
    any: true,
    code: 'SQLITE_READONLY',
  });
  t.is((await store.readAll(null, 10)).length, 1);

  const legacyPath = join(path, '..', 'legacy.sqlite3');
  const legacy = new Database(legacyPath);
  legacy.exec(`CREATE TABLE events (
    position INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, stream_id TEXT NOT NULL,
    revision INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL,
    UNIQUE (stream_id, revision))`);
  legacy.close();
  t.throws(() => createSqliteEventStore({ path: legacyPath, readonly: true }), {
    name: 'EventLogUnreadableError',
    message: /from before the hash chain/,
  });
  const after = new Database(legacyPath, { readonly: true });
  const columns = after.prepare<[], { name: string }>('PRAGMA table_info(events)').all();
  after.close();
  t.false(
    columns.some((column) => column.name === 'hash'),
    'no column was added: the reading sealed nothing',
  );
  t.throws(() => createSqliteEventStore({ path: join(path, '..', 'none.sqlite3'), readonly: true }), {
    any: true,
    code: 'SQLITE_CANTOPEN',
  });
});
