import test from 'ava';
import { createEmbeddedReadStore } from './embedded-read-store.ts';
import { openReadStore } from './open-read-store.ts';
import { ReadStoreUsageError } from './read-store-usage-error.ts';
import type { Filter, ReadDocument } from './read-store.ts';

test('get returns the stored document itself, deep-frozen, and leaves the caller its original', async (t) => {
  const store = createEmbeddedReadStore();
  const invoices = store.collection('invoices');
  const given = { _id: 'inv_1', status: 'open', lines: [{ amount: '100000000' }], metadata: { orderId: 'o1' } };
  await invoices.put(given);

  const first = await invoices.get('inv_1');
  const second = await invoices.get('inv_1');
  t.is(first, second, 'no copy per read');
  t.not(first, given);
  t.true(Object.isFrozen(first));
  t.true(Object.isFrozen(first?.['lines']));
  t.true(Object.isFrozen(first?.['metadata']));
  t.throws(
    () => {
      (first as ReadDocument)['status'] = 'paid';
    },
    { instanceOf: TypeError },
  );

  t.false(Object.isFrozen(given));
  given.status = 'changed after put';
  t.is((await invoices.get('inv_1'))?.['status'], 'open');
  t.is((await invoices.find({ _id: 'inv_1' }))[0], first ?? undefined, 'find returns the same frozen document');
});

test('aggregate returns fresh, mutable objects', async (t) => {
  const store = createEmbeddedReadStore();
  const invoices = store.collection('invoices');
  await invoices.put({ _id: 'inv_1', metadata: { orderId: 'o1' } });
  const [result] = await invoices.aggregate([{ $match: { _id: 'inv_1' } }]);
  t.false(Object.isFrozen(result));
  t.deepEqual(result, { _id: 'inv_1', metadata: { orderId: 'o1' } });
});

test('aggregate refuses $out and $merge instead of silently writing nowhere', async (t) => {
  const invoices = createEmbeddedReadStore().collection('invoices');
  await t.throwsAsync(invoices.aggregate([{ $match: {} }, { $out: 'copy' }]), { instanceOf: ReadStoreUsageError });
  await t.throwsAsync(invoices.aggregate([{ $merge: { into: 'copy' } }]), { instanceOf: ReadStoreUsageError });
});

test('openReadStore without a MongoDB URL opens the embedded store', async (t) => {
  t.false((await openReadStore()).durable);
  t.false((await openReadStore({ mongoDbUrl: '' })).durable);
});

/** A small deterministic generator, so a failure reproduces. */
const createRandom = (seed: number): ((n: number) => number) => {
  let state = seed >>> 0;
  return (n) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state >>> 8) % n;
  };
};

test('indexes never change results: random documents, updates and filters', async (t) => {
  const random = createRandom(20250101);
  const pick = <V>(values: readonly V[]): V => values[random(values.length)]!;
  const organizations = ['org_a', 'org_b', 'org_c'] as const;
  const orgValues: readonly unknown[] = [...organizations, null, ['org_a', 'org_b'], { nested: 'org_a' }, 7, undefined];
  const randomDocument = (id: string): ReadDocument => {
    const doc: ReadDocument = { _id: id, n: random(5) };
    const organizationId = pick(orgValues);
    if (organizationId !== undefined) doc['organizationId'] = organizationId;
    const metadata = pick<unknown>([{ orderId: pick(['o1', 'o2']) }, [{ orderId: 'o1' }], 'flat', undefined]);
    if (metadata !== undefined) doc['metadata'] = metadata;
    return doc;
  };

  const plain = createEmbeddedReadStore().collection('docs');
  const indexedStore = createEmbeddedReadStore({ indexedFields: ['organizationId', 'metadata.orderId', 'n'] });
  const indexed = indexedStore.collection('docs');
  const writeRandomly = async (steps: number) => {
    for (let step = 0; step < steps; step++) {
      const id = `doc_${random(300)}`;
      if (random(10) === 0) {
        await plain.delete(id);
        await indexed.delete(id);
      } else {
        const doc = randomDocument(id);
        await plain.put(doc);
        await indexed.put(doc);
      }
    }
  };

  const filters: Filter[] = [
    ...organizations.map((organizationId) => ({ organizationId })),
    { organizationId: 7 },
    { organizationId: null },
    { organizationId: 'org_a', n: 2 },
    { organizationId: { $in: ['org_a', 'org_c'] } },
    { 'metadata.orderId': 'o1' },
    { 'metadata.orderId': 'o2', organizationId: 'org_b' },
    { n: 0 },
    { n: 0, _id: 'doc_1' },
  ];
  const idsOf = (docs: readonly ReadDocument[]): string[] => docs.map((doc) => doc._id).sort();
  const compare = async (stage: string) => {
    for (const filter of filters) {
      const label = `${stage}: ${JSON.stringify(filter)}`;
      t.deepEqual(idsOf(await indexed.find(filter)), idsOf(await plain.find(filter)), label);
      t.is(await indexed.count(filter), await plain.count(filter), label);
      const pipeline = [{ $match: filter }, { $group: { _id: null, total: { $sum: '$n' }, docs: { $sum: 1 } } }];
      t.deepEqual(await indexed.aggregate(pipeline), await plain.aggregate(pipeline), label);
    }
  };

  // Indexes are built by the first query that needs them, then kept up to date; a drop starts over.
  await writeRandomly(2000);
  await compare('built after the writes');
  await writeRandomly(1000);
  await compare('kept up to date');
  await indexedStore.dropAll();
  await plain.clear();
  await writeRandomly(300);
  await compare('after a drop, built again');
  await writeRandomly(1000);
  await compare('kept up to date again');
  t.true((await plain.find({ organizationId: 'org_a' })).length > 10, 'the data exercises the index');
});

test('trusted writes keep the document as given (top level frozen) and still answer queries and indexes', async (t) => {
  const { createEmbeddedReadStore } = await import('./embedded-read-store.ts');
  const store = createEmbeddedReadStore({ writes: 'trusted', indexedFields: ['organizationId'] });
  const orders = store.collection('orders_trusted');
  const nested = { city: 'Lisbon' };
  const original = { _id: 'o1', organizationId: 'org-1', address: nested, total: '10' };
  await orders.put(original);
  const stored = await orders.get('o1');
  t.deepEqual(stored, original);
  t.true(Object.isFrozen(stored));
  t.is(stored, original, 'the object given is the object kept');
  t.is(stored?.address, nested, 'nested values are shared, not copied');
  await orders.put({ ...original, organizationId: 'org-2' });
  t.is(await orders.count({ organizationId: 'org-1' }), 0);
  t.is(await orders.count({ organizationId: 'org-2' }), 1);
  await t.throwsAsync(orders.put({ _id: '' }), { instanceOf: TypeError });
});

test('filters and sorts done in plain JavaScript answer exactly as mingo does: random documents, filters and sorts', async (t) => {
  const { Query } = await import('mingo');
  const random = createRandom(20261126);
  const pick = <V>(values: readonly V[]): V => values[random(values.length)]!;
  // Values that take every branch: arrays (matched element-wise), nested objects, null, missing,
  // mixed types, 0 and -0, strings ordered by code unit (case, accents, astral characters).
  const values: readonly unknown[] = [
    'a',
    'B',
    'b',
    'é',
    '😀',
    '',
    0,
    -0,
    1,
    2.5,
    -3,
    true,
    false,
    null,
    ['a', 1],
    { x: 'a' },
  ];
  const strings = ['2026-01-01', '2026-01-02', '2026-01-03', 'Z', 'a', 'ä'];
  const field = (): unknown => (random(3) === 0 ? pick(values) : undefined);
  const docs: ReadDocument[] = [];
  for (let i = 0; i < 400; i++) {
    const doc: ReadDocument = { _id: `doc_${String(random(1000)).padStart(3, '0')}_${i}`, n: random(4) };
    doc['s'] = pick(strings);
    doc['k'] = pick(['x', 'y']);
    // Strings or missing: missing sorts first (as null), never as a string.
    if (random(4) > 0) doc['m'] = pick(strings);
    for (const name of ['a', 'b']) {
      const value = field();
      if (value !== undefined) doc[name] = value;
    }
    const nested = pick<unknown>([{ c: pick(values) }, { c: pick(strings) }, [{ c: 'a' }], 'flat', null, undefined]);
    if (nested !== undefined) doc['o'] = nested;
    docs.push(doc);
  }
  const filters: Filter[] = [
    {},
    { k: 'x' },
    { k: 'x', n: 1 },
    { a: 'a' },
    { a: 1 },
    { a: 0 },
    { a: true },
    { a: null },
    { 'o.c': 'a' },
    { 'o.c': 'x', k: 'y' },
    { k: 'y', a: { $in: ['a', 1] } },
    { k: 'x', $or: [{ a: 'a' }, { b: { $regex: '^b$', $options: 'i' } }] },
    { n: 2, s: { $gte: '2026-01-02', $lt: '2026-01-03' } },
    { 'o.c.d': 'a' },
    { constructor: 'x' },
    { a: 'a', b: 'B' },
    { a: { $gte: 'a' } },
    { a: { $gt: 0, $lte: 2.5 } },
    { 'o.c': { $lt: 'b' }, k: 'x' },
    { b: { $regex: '^[a-z]$' } },
    { b: { $regex: 'B', $options: 'i' } },
    { 'o.c': { $regex: '^a', $options: 'g' } },
    { $or: [{ a: 'a' }, { 'o.c': { $gte: '2026-01-02' } }, { $or: [{ b: true }, { n: { $lt: 1 } }] }] },
    { $or: [{ a: { $in: [1, 'B'] } }, { b: { $exists: false } }], k: 'y' },
    {
      s: { $gte: '2026-01-02', $lt: '2026-01-03' },
      $or: [{ _id: 'doc_001_1' }, { m: 'Z' }, { a: { $regex: '^A$', $options: 'i' } }],
    },
  ];
  const sorts = [
    { s: -1, _id: 1 },
    { s: 1 },
    { n: -1 },
    { k: 1, n: -1, _id: -1 },
    { a: 1 },
    { 'o.c': -1 },
    { m: 1, _id: 1 },
  ] as const;
  const store = createEmbeddedReadStore({ indexedFields: ['k', 'a'] });
  const collection = store.collection('docs');
  for (const doc of docs) await collection.put(doc);
  const stored = [...(await collection.find({}))];
  const ids = (found: readonly ReadDocument[]) => found.map((doc) => doc._id);
  let natively = 0;
  for (const filter of filters) {
    const matching = new Query(filter).find<ReadDocument>(stored).all();
    t.is(await collection.count(filter), matching.length, JSON.stringify(filter));
    // Unsorted, the matches come in the candidates' order (an index's, here): ties keep that order.
    const unsorted = await collection.find(filter);
    t.deepEqual(ids(unsorted).sort(), ids(matching).sort(), JSON.stringify(filter));
    for (const sort of sorts)
      for (const [skip, limit] of [
        [0, 0],
        [0, 7],
        [0, 1],
        [3, 40],
        [5, 10],
        [390, 25],
      ] as const) {
        const expected = new Query({}).find<ReadDocument>(unsorted).sort(sort);
        if (skip > 0) expected.skip(skip);
        if (limit > 0) expected.limit(limit);
        const label = `${JSON.stringify(filter)} ${JSON.stringify(sort)} ${skip}/${limit}`;
        const found = await collection.find(filter, { sort, skip, limit });
        t.deepEqual(ids(found), ids(expected.all()), label);
        if (sort === sorts[0] && found.length > 1) natively++;
      }
  }
  t.true(natively > 10, 'the data exercises the plain sort');
});

test('a count and a find of one filter in one turn share a scan, never across a write or a change to the filter', async (t) => {
  const store = createEmbeddedReadStore({ indexedFields: ['organizationId'] });
  const orders = store.collection('orders');
  for (let i = 0; i < 5; i++)
    await orders.put({ _id: `o${i}`, organizationId: 'org', status: i % 2 ? 'paid' : 'open', n: i % 3 ? i : 'x' });
  const filter: Filter = { organizationId: 'org', status: 'open' };
  t.is(await orders.count(filter), 3);
  await orders.put({ _id: 'o9', organizationId: 'org', status: 'open', n: 9 });
  t.is(await orders.count(filter), 4, 'a write in between: scanned again');
  // Mixed types in `n`: mingo sorts the shared scan, which must come back unchanged for the count.
  t.deepEqual(
    (await orders.find(filter, { sort: { n: -1 } })).map((o) => o._id),
    ['o0', 'o9', 'o4', 'o2'],
  );
  t.is(await orders.count(filter), 4);
  filter['status'] = 'paid';
  t.deepEqual(
    (await orders.find(filter)).map((o) => o._id),
    ['o1', 'o3'],
    'the same object changed in place: scanned again',
  );
  await new Promise((resolve) => setImmediate(resolve));
  await orders.delete('o1');
  t.is(await orders.count(filter), 1);
});

test("a $lookup reads and clones only the documents it joins, not the rest of the foreign collection (other tenants')", async (t) => {
  const store = createEmbeddedReadStore({ indexedFields: ['organizationId', 'tag'] });
  const sessions = store.collection('sessions');
  const invoices = store.collection('invoices');
  for (let i = 0; i < 200; i++) await invoices.put({ _id: `other_${i}`, organizationId: 'org_other', tag: 't' });
  await invoices.put({ _id: 'inv_1', organizationId: 'org', tag: 't', total: 5 });
  await invoices.put({ _id: 'inv_2', organizationId: 'org', tag: ['t', 'u'], total: 7 });
  await sessions.put({ _id: 's1', organizationId: 'org', invoiceId: 'inv_1', tags: ['u'] });
  await sessions.put({ _id: 's2', organizationId: 'org', invoiceIds: ['inv_2', 'inv_1', 'inv_2'] });
  await sessions.put({ _id: 's3', organizationId: 'org' });

  const cloned: unknown[] = [];
  const clone = globalThis.structuredClone;
  globalThis.structuredClone = (value, options) => {
    cloned.push((value as ReadDocument)._id);
    return clone(value, options);
  };
  let results: Record<string, unknown>[];
  try {
    results = await sessions.aggregate([
      { $match: { organizationId: 'org' } },
      { $lookup: { from: 'invoices', localField: 'invoiceId', foreignField: '_id', as: 'one' } },
      { $lookup: { from: 'invoices', localField: 'invoiceIds', foreignField: '_id', as: 'many' } },
      { $lookup: { from: 'invoices', localField: 'tags', foreignField: 'tag', as: 'tagged' } },
      { $project: { one: '$one.total', many: '$many._id', tagged: '$tagged._id' } },
    ]);
  } finally {
    globalThis.structuredClone = clone;
  }
  t.deepEqual(results, [
    { _id: 's1', one: [5], many: [], tagged: ['inv_2'] },
    // No invoice has a missing or null tag: a session without tags joins none (the scan reads, never clones).
    { _id: 's2', one: [], many: ['inv_2', 'inv_1'], tagged: [] },
    { _id: 's3', one: [], many: [], tagged: [] },
  ]);
  t.deepEqual(cloned.sort(), ['inv_1', 'inv_1', 'inv_2', 'inv_2'], 'one clone a joined invoice a stage');
});
