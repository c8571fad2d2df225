import type { ExecutionContext, TestFn } from 'ava';
import type { Collection, ReadDocument, ReadStore } from './read-store.ts';
import { ReadStoreUsageError } from './read-store-usage-error.ts';

export type ReadStoreFixture = { store: ReadStore; cleanup(): Promise<void> };

type Payment = ReadDocument & {
  organizationId: string;
  status: string;
  fee: number;
  amount: string;
  createdAt: string;
  metadata: { orderId: string };
};

/** Inserted out of order on purpose, so that natural order is not the sorted order. */
const payments: readonly Payment[] = [
  {
    _id: 'pay_3',
    organizationId: 'org_b',
    status: 'paid',
    fee: 30,
    amount: '300000000',
    createdAt: '2025-01-03T00:00:00.000Z',
    metadata: { orderId: 'order_3' },
  },
  {
    _id: 'pay_1',
    organizationId: 'org_a',
    status: 'paid',
    fee: 10,
    amount: '100000000',
    createdAt: '2025-01-01T00:00:00.000Z',
    metadata: { orderId: 'order_1' },
  },
  {
    _id: 'pay_5',
    organizationId: 'org_a',
    status: 'paid',
    fee: 50,
    amount: '500000000',
    createdAt: '2025-01-05T00:00:00.000Z',
    metadata: { orderId: 'order_2' },
  },
  {
    _id: 'pay_2',
    organizationId: 'org_a',
    status: 'open',
    fee: 20,
    amount: '200000000',
    createdAt: '2025-01-02T00:00:00.000Z',
    metadata: { orderId: 'order_2' },
  },
  {
    _id: 'pay_4',
    organizationId: 'org_a',
    status: 'expired',
    fee: 40,
    amount: '400000000',
    createdAt: '2025-01-04T00:00:00.000Z',
    metadata: { orderId: 'order_4' },
  },
];

const ids = (docs: readonly ReadDocument[]): string[] => docs.map((doc) => doc._id);
const sortedIds = (docs: readonly ReadDocument[]): string[] => ids(docs).sort();

let collectionCounter = 0;
/** Unique per test and per run, so tests may share a database and run concurrently. */
const uniqueCollectionName = (label: string): string =>
  `contract_${label}_${process.pid}_${Date.now().toString(36)}_${++collectionCounter}`;

/** Try to change a returned document in place; the store must not see it either way. */
const tryToMutate = (doc: ReadDocument): void => {
  try {
    doc['status'] = 'tampered';
  } catch {
    // A frozen document refuses, which is allowed.
  }
  try {
    const metadata = doc['metadata'];
    if (typeof metadata === 'object' && metadata !== null)
      (metadata as Record<string, unknown>)['orderId'] = 'tampered';
  } catch {
    // As above.
  }
};

/**
 * Register the read store contract as ava tests. `factory` must return a fresh store that no
 * other test uses (one test drops everything); `cleanup` releases it.
 */
export const readStoreContract = (test: TestFn, name: string, factory: () => Promise<ReadStoreFixture>): void => {
  const withStore = async (
    t: ExecutionContext,
    label: string,
    run: (store: ReadStore, collection: Collection<Payment>) => Promise<void>,
  ): Promise<void> => {
    const { store, cleanup } = await factory();
    try {
      await run(store, store.collection<Payment>(uniqueCollectionName(label)));
    } finally {
      await cleanup();
    }
    t.pass();
  };

  const withPayments = (
    t: ExecutionContext,
    label: string,
    run: (collection: Collection<Payment>, store: ReadStore) => Promise<void>,
  ): Promise<void> =>
    withStore(t, label, async (store, collection) => {
      for (const payment of payments) await collection.put(payment);
      await run(collection, store);
    });

  test(`${name}: put, get, replace and delete`, (t) =>
    withStore(t, 'crud', async (_store, payment) => {
      t.is(await payment.get('pay_1'), null);
      const original = payments[1]!;
      await payment.put(original);
      t.deepEqual(await payment.get('pay_1'), original);

      const replacement: Payment = {
        ...original,
        organizationId: 'org_c',
        status: 'refunded',
        metadata: { orderId: 'order_9' },
      };
      await payment.put(replacement);
      t.deepEqual(await payment.get('pay_1'), replacement);
      t.deepEqual(await payment.find({ organizationId: 'org_a' }), [], 'the old field value no longer matches');
      t.deepEqual(ids(await payment.find({ organizationId: 'org_c' })), ['pay_1']);

      const { fee: _fee, ...withoutFee } = replacement;
      await payment.put(withoutFee as Payment);
      t.deepEqual(await payment.get('pay_1'), withoutFee, 'put replaces the whole document');

      await payment.delete('pay_1');
      t.is(await payment.get('pay_1'), null);
      t.is(await payment.count({}), 0);
      await payment.delete('pay_1');
    }));

  test(`${name}: a caller changing a document cannot change the stored one`, (t) =>
    withStore(t, 'immutability', async (_store, payment) => {
      const original = structuredClone(payments[1]!);
      const given = structuredClone(original);
      await payment.put(given);
      tryToMutate(given);

      const got = await payment.get('pay_1');
      t.truthy(got);
      if (got !== null) tryToMutate(got);
      for (const found of await payment.find({})) tryToMutate(found);
      for (const aggregated of await payment.aggregate([{ $match: { _id: 'pay_1' } }])) {
        tryToMutate(aggregated as ReadDocument);
      }
      t.deepEqual(await payment.get('pay_1'), original);
      t.deepEqual(await payment.find({ status: 'tampered' }), []);
    }));

  test(`${name}: put drops undefined properties like JSON`, (t) =>
    withStore(t, 'undefined', async (_store, collection) => {
      await collection.put({
        ...payments[1]!,
        note: undefined,
        metadata: { orderId: 'order_1', extra: undefined },
      } as Payment);
      t.deepEqual(await collection.get('pay_1'), payments[1]);
    }));

  test(`${name}: put refuses values that are not plain JSON and writes nothing`, (t) =>
    withStore(t, 'rejects', async (_store, collection) => {
      const base = payments[1]!;
      const notJson: unknown[] = [
        10n ** 20n,
        new Date('2025-01-01T00:00:00.000Z'),
        Number.NaN,
        Number.POSITIVE_INFINITY,
        () => 1,
      ];
      for (const value of notJson) {
        await t.throwsAsync(collection.put({ ...base, metadata: { orderId: 'order_1', value } } as Payment), {
          instanceOf: ReadStoreUsageError,
        });
      }
      await t.throwsAsync(collection.put({ ...base, amount: 100000000n } as unknown as Payment), {
        instanceOf: ReadStoreUsageError,
      });
      // Kept as U+FFFD in UTF-8 (SQLite's id column, BSON), it would be another document's id.
      await t.throwsAsync(collection.put({ ...base, _id: 'pay_\udc00' }), {
        instanceOf: ReadStoreUsageError,
        message: /lone UTF-16 surrogate/,
      });
      t.is(await collection.count({}), 0);
    }));

  test(`${name}: find by equality, $in and nested fields`, (t) =>
    withPayments(t, 'equality', async (payment) => {
      t.deepEqual(sortedIds(await payment.find({ organizationId: 'org_a', status: 'paid' })), ['pay_1', 'pay_5']);
      t.deepEqual(sortedIds(await payment.find({ _id: 'pay_3' })), ['pay_3']);
      t.deepEqual(sortedIds(await payment.find({ _id: 'pay_3', organizationId: 'org_a' })), []);
      t.deepEqual(sortedIds(await payment.find({ _id: { $in: ['pay_2', 'pay_4', 'pay_9'] } })), ['pay_2', 'pay_4']);
      t.deepEqual(sortedIds(await payment.find({ status: { $in: ['open', 'expired'] } })), ['pay_2', 'pay_4']);
      t.deepEqual(sortedIds(await payment.find({ 'metadata.orderId': 'order_2' })), ['pay_2', 'pay_5']);
      t.deepEqual(sortedIds(await payment.find({ 'metadata.orderId': 'order_2', status: 'open' })), ['pay_2']);
      t.deepEqual(await payment.find({ organizationId: 'org_z' }), []);
      t.deepEqual(await payment.find({ fee: '10' }), [], 'a string never equals a number');
      t.deepEqual(sortedIds(await payment.find({ fee: 10 })), ['pay_1']);
      t.deepEqual(await payment.find({ _id: 'pay_1' }), [payments[1]]);
      t.deepEqual(await payment.find({ organizationId: undefined }), [], 'undefined compares as null, never as "any"');
      t.is(await payment.count({ organizationId: undefined }), 0);
    }));

  test(`${name}: find by range on ISO date strings`, (t) =>
    withPayments(t, 'dates', async (payment) => {
      const day = (n: number): string => `2025-01-0${n}T00:00:00.000Z`;
      t.deepEqual(sortedIds(await payment.find({ createdAt: { $gte: day(2), $lt: day(4) } })), ['pay_2', 'pay_3']);
      t.deepEqual(sortedIds(await payment.find({ createdAt: { $gt: day(2), $lte: day(4) } })), ['pay_3', 'pay_4']);
      t.deepEqual(sortedIds(await payment.find({ createdAt: { $lt: day(1) } })), []);
      t.deepEqual(sortedIds(await payment.find({ organizationId: 'org_a', createdAt: { $gte: '2025-01-04' } })), [
        'pay_4',
        'pay_5',
      ]);
    }));

  test(`${name}: equality matches array elements and null matches missing fields`, (t) =>
    withStore(t, 'arrays', async (_store, collection) => {
      const tagged = collection as unknown as Collection;
      await tagged.put({ _id: 'a', tags: ['x', 'y'] });
      await tagged.put({ _id: 'b', tags: 'x' });
      await tagged.put({ _id: 'c' });
      await tagged.put({ _id: 'd', tags: null });
      await tagged.put({ _id: 'e', tags: { x: 1 } });
      await tagged.put({ _id: 'f', tags: [{ x: 1 }] });
      t.deepEqual(sortedIds(await tagged.find({ tags: 'x' })), ['a', 'b']);
      t.is(await tagged.count({ tags: 'x' }), 2);
      t.deepEqual(sortedIds(await tagged.find({ tags: null })), ['c', 'd']);
      t.deepEqual(sortedIds(await tagged.find({ 'tags.x': 1 })), ['e', 'f']);
    }));

  test(`${name}: sort ascending, descending and on several fields`, (t) =>
    withPayments(t, 'sort', async (payment) => {
      t.deepEqual(ids(await payment.find({}, { sort: { createdAt: 1 } })), [
        'pay_1',
        'pay_2',
        'pay_3',
        'pay_4',
        'pay_5',
      ]);
      t.deepEqual(ids(await payment.find({}, { sort: { createdAt: -1 } })), [
        'pay_5',
        'pay_4',
        'pay_3',
        'pay_2',
        'pay_1',
      ]);
      t.deepEqual(ids(await payment.find({}, { sort: { fee: -1 } })), ['pay_5', 'pay_4', 'pay_3', 'pay_2', 'pay_1']);
      t.deepEqual(ids(await payment.find({}, { sort: { 'metadata.orderId': 1, _id: -1 } })), [
        'pay_1',
        'pay_5',
        'pay_2',
        'pay_3',
        'pay_4',
      ]);
      t.deepEqual(ids(await payment.find({}, { sort: { status: 1, createdAt: -1 } })), [
        'pay_4',
        'pay_2',
        'pay_5',
        'pay_3',
        'pay_1',
      ]);
      t.deepEqual(ids(await payment.find({ status: 'paid' }, { sort: { _id: 1 } })), ['pay_1', 'pay_3', 'pay_5']);
    }));

  test(`${name}: skip and limit page through sorted results`, (t) =>
    withPayments(t, 'paging', async (payment) => {
      const page = (skip: number, limit: number): Promise<Payment[]> =>
        payment.find({ organizationId: 'org_a' }, { sort: { createdAt: -1 }, skip, limit });
      t.deepEqual(ids(await page(0, 2)), ['pay_5', 'pay_4']);
      t.deepEqual(ids(await page(2, 2)), ['pay_2', 'pay_1']);
      t.deepEqual(ids(await page(4, 2)), []);
      t.deepEqual(ids(await page(1, 0)), ['pay_4', 'pay_2', 'pay_1'], 'limit 0 means no limit');
      t.is((await payment.find({}, { limit: 3 })).length, 3);
      t.is((await payment.find({}, { skip: 3 })).length, 2);
      await t.throwsAsync(payment.find({}, { limit: -1 }), { instanceOf: ReadStoreUsageError });
      await t.throwsAsync(payment.find({}, { skip: 1.5 }), { instanceOf: ReadStoreUsageError });
    }));

  test(`${name}: count`, (t) =>
    withPayments(t, 'count', async (payment) => {
      t.is(await payment.count({}), 5);
      t.is(await payment.count({ organizationId: 'org_a' }), 4);
      t.is(await payment.count({ organizationId: 'org_a', status: 'paid' }), 2);
      t.is(await payment.count({ _id: 'pay_1' }), 1);
      t.is(await payment.count({ createdAt: { $gte: '2025-01-03T00:00:00.000Z' } }), 3);
      t.is(await payment.count({ status: 'refunded' }), 0);
    }));

  test(`${name}: aggregate with $match, $group and $lookup`, (t) =>
    withPayments(t, 'aggregate', async (payment, store) => {
      t.deepEqual(
        await payment.aggregate([
          { $match: { status: 'paid' } },
          { $group: { _id: '$organizationId', totalFee: { $sum: '$fee' }, payments: { $sum: 1 } } },
          { $sort: { _id: 1 } },
        ]),
        [
          { _id: 'org_a', totalFee: 60, payments: 2 },
          { _id: 'org_b', totalFee: 30, payments: 1 },
        ],
      );
      t.deepEqual(await payment.aggregate([{ $group: { _id: null, totalFee: { $sum: '$fee' } } }]), [
        { _id: null, totalFee: 150 },
      ]);
      t.deepEqual(
        await payment.aggregate([
          { $match: { organizationId: 'org_a' } },
          { $set: { 'metadata.orderId': 'rewritten' } },
          { $match: { status: 'open' } },
          { $project: { _id: 1, orderId: '$metadata.orderId' } },
        ]),
        [{ _id: 'pay_2', orderId: 'rewritten' }],
      );
      t.deepEqual(await payment.get('pay_2'), payments[3], 'a pipeline does not write into stored documents');

      const ordersName = uniqueCollectionName('orders');
      const orders = store.collection(ordersName);
      await orders.put({ _id: 'order_2', customer: 'Ada', tags: { vip: true } });
      t.deepEqual(
        await payment.aggregate([
          { $match: { 'metadata.orderId': { $in: ['order_1', 'order_2'] } } },
          { $lookup: { from: ordersName, localField: 'metadata.orderId', foreignField: '_id', as: 'orders' } },
          { $unwind: '$orders' },
          { $set: { 'orders.tags.vip': false } },
          { $project: { _id: 1, customer: '$orders.customer', vip: '$orders.tags.vip' } },
          { $sort: { _id: 1 } },
        ]),
        [
          { _id: 'pay_2', customer: 'Ada', vip: false },
          { _id: 'pay_5', customer: 'Ada', vip: false },
        ],
      );
      t.deepEqual(await orders.get('order_2'), { _id: 'order_2', customer: 'Ada', tags: { vip: true } });
    }));

  test(`${name}: clear removes every document of one collection`, (t) =>
    withPayments(t, 'clear', async (payment) => {
      await payment.clear();
      t.is(await payment.count({}), 0);
      t.is(await payment.get('pay_1'), null);
      t.deepEqual(await payment.find({ organizationId: 'org_a' }), []);
      await payment.put(payments[0]!);
      t.deepEqual(ids(await payment.find({ organizationId: 'org_b' })), ['pay_3']);
    }));

  test(`${name}: collections are independent`, (t) =>
    withPayments(t, 'independent', async (payment, store) => {
      const other = store.collection(uniqueCollectionName('other'));
      t.is(await other.get('pay_1'), null);
      await other.put({ _id: 'pay_1', organizationId: 'org_z' });
      t.deepEqual(await other.get('pay_1'), { _id: 'pay_1', organizationId: 'org_z' });
      t.deepEqual(await payment.get('pay_1'), payments[1]);
      await other.clear();
      t.is(await payment.count({}), 5);
      t.is(await other.count({}), 0);
    }));

  test(`${name}: reserved and malformed collection names are refused`, (t) =>
    withStore(t, 'names', async (store) => {
      for (const bad of ['', '_checkpoints', 'a$b', 'system.views']) {
        t.throws(() => store.collection(bad), { instanceOf: ReadStoreUsageError }, JSON.stringify(bad));
      }
    }));

  test(`${name}: checkpoints keep positions beyond 2^53 and null`, (t) =>
    withStore(t, 'checkpoints', async (store) => {
      const projection = uniqueCollectionName('projection');
      const other = uniqueCollectionName('other_projection');
      t.is(await store.getCheckpoint(projection), null);
      await store.setCheckpoint(projection, 0n);
      t.is(await store.getCheckpoint(projection), 0n);
      const large = 2n ** 64n + 1n;
      await store.setCheckpoint(projection, large);
      t.is(await store.getCheckpoint(projection), large);
      await store.setCheckpoint(other, 2n ** 53n + 1n);
      t.is(await store.getCheckpoint(other), 9007199254740993n);
      await store.setCheckpoint(projection, null);
      t.is(await store.getCheckpoint(projection), null);
      t.is(await store.getCheckpoint(other), 9007199254740993n);
    }));

  test(`${name}: atomically answers what its work answers, rethrows its error, and what it wrote reads back`, (t) =>
    withStore(t, 'atomically', async (store) => {
      const checkpoint = uniqueCollectionName('projection');
      const docs = store.collection(uniqueCollectionName('batch'));
      const answer = await store.atomically(async () => {
        await docs.put({ _id: 'a' });
        await store.setCheckpoint(checkpoint, 3n);
        return 'done';
      });
      t.is(answer, 'done');
      t.deepEqual(await docs.get('a'), { _id: 'a' });
      t.is(await store.getCheckpoint(checkpoint), 3n);
      await t.throwsAsync(
        store.atomically(async () => {
          throw new Error('the batch failed');
        }),
        { message: 'the batch failed' },
      );
      // Not stuck after a failed batch: the next runs.
      t.is(await store.atomically(async () => docs.count({})), 1);
    }));

  test(`${name}: dropAll removes documents and checkpoints`, (t) =>
    withPayments(t, 'drop_all', async (payment, store) => {
      const other = store.collection(uniqueCollectionName('other'));
      await other.put({ _id: 'x' });
      const checkpoint = uniqueCollectionName('projection');
      await store.setCheckpoint(checkpoint, 42n);
      await store.dropAll();
      t.is(await payment.count({}), 0);
      t.is(await payment.get('pay_1'), null);
      t.deepEqual(await payment.find({ organizationId: 'org_a' }), []);
      t.is(await other.count({}), 0);
      t.is(await store.getCheckpoint(checkpoint), null);
      await payment.put(payments[0]!);
      t.deepEqual(ids(await payment.find({ organizationId: 'org_b' })), ['pay_3'], 'handles work after dropAll');
      await store.setCheckpoint(checkpoint, 7n);
      t.is(await store.getCheckpoint(checkpoint), 7n);
    }));
};
