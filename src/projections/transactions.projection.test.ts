import test from 'ava';
import {
  confirmed,
  created,
  daiSessionFixture,
  detected,
  detectedDai,
  sessionFixture,
} from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { checkoutSessionsProjection } from './checkout-sessions.projection.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from './collections.ts';
import { createTestLog } from './test-log.ts';
import {
  type SweepTransactionDoc,
  TRANSACTIONS,
  transactionsProjection,
  type TransactionDoc,
} from './transactions.projection.ts';

const SESSION = sessionFixture();
const STREAM = `checkout_session-${SESSION.id}`;
const hash = (n: number) => `0x${String(n).padStart(64, '0')}`;
const broadcast = (n: number, transferIds: string[]): CheckoutSessionEvent => ({
  type: 'SweepBroadcast',
  data: {
    broadcast: {
      network: 'weir-testnet',
      chainId: 7357,
      transactionHash: hash(n),
      transferIds,
      share: { index: 0, count: 1 },
      signedTransaction: '0xsigned',
      at: `2026-01-01T01:0${n}:00.000Z`,
    },
  },
});
const swept = (n: number, transferIds: string[], reverted?: true): CheckoutSessionEvent => ({
  type: 'FundsSwept',
  data: {
    sweep: {
      network: 'weir-testnet',
      chainId: 7357,
      transactionHash: hash(n),
      transferIds,
      gasUsed: '21000',
      gasCost: '42000',
      ...(reverted ? { reverted } : {}),
      at: `2026-01-01T01:0${n}:30.000Z`,
    },
  },
});

/** The log of one session: two payments, a sweep dropped, one reverted, one that went through. */
function sessionLog() {
  const log = createTestLog('2026-01-01T00:00:00.000Z');
  for (const event of [
    created(),
    detected('t1', '100000000'),
    detected('t2', '200000000'),
    confirmed('t1'),
    { type: 'PaymentWithdrawn', data: { transferId: 't2', reason: 'reorg', at: '2026-01-01T00:12:00.000Z' } },
    broadcast(1, ['t1']),
    {
      type: 'SweepDropped',
      data: { network: 'weir-testnet', transactionHash: hash(1), at: '2026-01-01T01:05:00.000Z' },
    },
    broadcast(2, ['t1']),
    swept(2, [], true),
    broadcast(3, ['t1']),
    swept(3, ['t1']),
  ] as CheckoutSessionEvent[])
    log.append(STREAM, event);
  return log.events;
}

async function project(store: ReadStore, events: ReturnType<typeof sessionLog>) {
  for (const event of events) {
    await checkoutSessionsProjection.apply(event, store);
    await transactionsProjection.apply(event, store);
  }
}

const all = async (store: ReadStore) =>
  (await store.collection<TransactionDoc>(TRANSACTIONS).find({})).sort((a, b) => (a._id < b._id ? -1 : 1));

test('payments and sweeps of a session, each with its outcome; applying the log again changes nothing', async (t) => {
  const store = createEmbeddedReadStore({ writes: 'trusted' });
  const events = sessionLog();
  await project(store, events);
  const docs = await all(store);
  const byId = new Map(docs.map((d) => [d._id, d]));

  t.like(byId.get('payment:t1'), { type: 'incoming', status: 'confirmed', amount: '100000000', amountRaw: '1000000' });
  t.like(byId.get('payment:t2'), { type: 'incoming', status: 'withdrawn' });
  const sweep = (n: number) => byId.get(`sweep:${SESSION.id}:${hash(n)}`);
  t.like(sweep(1), { type: 'transfer', status: 'dropped', amount: '100000000', gasUsed: null });
  t.like(sweep(2), { type: 'transfer', status: 'reverted', reverted: true, amount: '100000000', gasCost: '42000' });
  t.like(sweep(3), {
    type: 'transfer',
    status: 'swept',
    reverted: false,
    amount: '100000000',
    amountRaw: '1000000',
    currency: 'usdc',
    gasUsed: '21000',
    fromAddress: '0x00000000000000000000000000000000000d3b05',
    toAddress: '0x5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1f',
    createdAt: '2026-01-01T01:03:00.000Z',
  });
  t.deepEqual(
    (sweep(3) as SweepTransactionDoc).deposits.map((d) => d.transferId),
    ['t1'],
  );
  t.is(docs.length, 5);
  // The signed transaction is the sweeper's: never in this read model.
  t.false(JSON.stringify(docs).includes('0xsigned'));

  // Idempotent: the runner may repeat a batch after a crash.
  await project(store, events);
  t.deepEqual(await all(store), docs);
  // And a rebuild from nothing gives the same documents.
  const rebuilt = createEmbeddedReadStore({ writes: 'trusted' });
  await project(rebuilt, events);
  t.deepEqual(await all(rebuilt), docs);
});

test('a sweep mined in place of the one broadcast (a repriced copy) shows swept, and the one it replaces dropped', async (t) => {
  const store = createEmbeddedReadStore({ writes: 'trusted' });
  const log = createTestLog('2026-01-01T00:00:00.000Z');
  const copy = swept(2, ['t1']);
  if (copy.type === 'FundsSwept') copy.data.sweep.replaces = hash(1);
  for (const event of [created(), detected('t1', '100000000'), confirmed('t1'), broadcast(1, ['t1']), copy])
    log.append(STREAM, event);
  await project(store, log.events);
  const byId = new Map((await all(store)).map((d) => [d._id, d]));
  t.like(byId.get(`sweep:${SESSION.id}:${hash(1)}`), { status: 'dropped', gasUsed: null });
  t.like(byId.get(`sweep:${SESSION.id}:${hash(2)}`), { status: 'swept', amount: '100000000', gasUsed: '21000' });
});

test('a sweep of several deposits of an 18-decimal asset shows their exact sum on the 10^8 scale, as the session counts them', async (t) => {
  // Each deposit cut to 10^8 and then summed: 1.49999999 + 1.50000000 showed 2.99999999 DAI for a sweep of 3 DAI.
  const log = createTestLog('2026-01-01T00:00:00.000Z');
  for (const event of [
    created(daiSessionFixture()),
    detectedDai('d1', '1500000005000000000'),
    detectedDai('d2', '1499999995000000000'),
    confirmed('d1'),
    confirmed('d2'),
    broadcast(1, ['d1', 'd2']),
    swept(1, ['d1', 'd2']),
  ] as CheckoutSessionEvent[])
    log.append(STREAM, event);
  const store = createEmbeddedReadStore({ writes: 'trusted' });
  await project(store, log.events);
  const docs = new Map((await all(store)).map((d) => [d._id, d]));
  const session = await store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(SESSION.id);
  t.is(session?.amountReceived, '300000000');
  t.like(docs.get(`sweep:${SESSION.id}:${hash(1)}`), {
    status: 'swept',
    amountRaw: '3000000000000000000',
    amount: '300000000',
  });
});
