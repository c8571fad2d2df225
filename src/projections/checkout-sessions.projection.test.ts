import test, { type ExecutionContext } from 'ava';
import {
  canceled,
  confirmed,
  confirmedLate,
  created,
  detected,
  markedRefunded,
  paymentFixture,
  sessionFixture,
} from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import { created as subscriptionCreated, subscriptionFixture } from '../../machines/subscription.fixture.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { publicCheckoutSession } from './public-views.ts';
import { checkoutSessionsProjection, settledBlockKey } from './checkout-sessions.projection.ts';
import { COLLECTIONS, type ChainPaymentDoc, type CheckoutSessionDoc, type SettledBlockDoc } from './collections.ts';
import { createTestLog } from './test-log.ts';

test('a batch applied again after a crash leaves the session as it was: its payment listed once, confirmed', async (t) => {
  const session = sessionFixture();
  const { events, append } = createTestLog('2026-01-01T00:00:00.000Z');
  const stream = `checkout_session-${session.id}`;
  append(stream, created(session));
  append(stream, detected('t-1', '100000000'));
  append(stream, confirmed('t-1'));
  const store = createEmbeddedReadStore();
  for (const event of events) await checkoutSessionsProjection.apply(event, store);
  // The runner repeats from a checkpoint older than the documents: every event once more, in order.
  for (const event of events) await checkoutSessionsProjection.apply(event, store);

  const doc = await store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(session.id);
  t.is(doc?._revision, 2);
  t.deepEqual(
    doc?.payments.map((p) => [p.transferId, p.status]),
    [['t-1', 'confirmed']],
  );
  t.is((await store.collection<ChainPaymentDoc>(COLLECTIONS.chainPayments).get('t-1'))?.status, 'confirmed');
  t.false('_revision' in publicCheckoutSession(doc!), 'the bookkeeping field is not shown');
});

test('a transfer seen again after a reorg (A, then B) reads with its first detection time, and its chain payment lists the block it was seen in before (projection v4 rebuilds older documents)', async (t) => {
  const session = sessionFixture();
  const { events, append } = createTestLog('2026-01-01T00:00:00.000Z');
  const stream = `checkout_session-${session.id}`;
  const inB = { ...paymentFixture('t-1', '300000000'), blockNumber: 11, blockHash: '0xb10d' };
  append(stream, created(session));
  append(stream, detected('t-1', '300000000', '2026-01-01T00:30:00.000Z'));
  append(stream, {
    type: 'PaymentWithdrawn',
    data: { transferId: 't-1', reason: 'reorg', at: '2026-01-01T01:00:00.000Z', mayReturn: true },
  });
  append(stream, {
    type: 'PaymentDetected',
    data: {
      payment: { ...inB, status: 'pending', detectedAt: '2026-01-01T01:00:00.000Z', confirmedAt: null, late: false },
    },
  });
  const store = createEmbeddedReadStore();
  for (const event of events) await checkoutSessionsProjection.apply(event, store);

  const doc = await store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(session.id);
  t.like(doc, {
    updatedAt: '2026-01-01T01:00:00.000Z',
    payments: [{ blockHash: '0xb10d', detectedAt: '2026-01-01T00:30:00.000Z' }],
  });
  t.like(publicCheckoutSession(doc!).paymentIntent.transactions[0], { createdAt: '2026-01-01T00:30:00.000Z' });
  t.like(await store.collection<ChainPaymentDoc>(COLLECTIONS.chainPayments).get('t-1'), {
    status: 'pending',
    blockHash: '0xb10d',
    seenIn: [{ number: 10, hash: '0xb10c' }],
  });
});

test('a withdrawn transfer a final settled leaves the withdrawn chain payments finals read, for good until mined again (projection v10); one a reorg withdrew stays among them', async (t) => {
  const session = sessionFixture();
  const { events, append } = createTestLog('2026-01-01T00:00:00.000Z');
  const stream = `checkout_session-${session.id}`;
  const at = '2026-01-01T01:00:00.000Z';
  append(stream, created(session));
  append(stream, detected('t-1', '100000000'));
  append(stream, detected('t-2', '100000000'));
  append(stream, { type: 'PaymentWithdrawn', data: { transferId: 't-1', reason: 'reorg', at, mayReturn: true } });
  append(stream, { type: 'PaymentWithdrawn', data: { transferId: 't-2', reason: 'not in the final block', at } });
  const store = createEmbeddedReadStore();
  const payments = store.collection<ChainPaymentDoc>(COLLECTIONS.chainPayments);
  const apply = async () => {
    for (const event of events.splice(0)) await checkoutSessionsProjection.apply(event, store);
  };
  await apply();
  t.deepEqual((await payments.find({ status: 'withdrawn' })).map((p) => p._id).sort(), ['t-1', 't-2']);
  append(stream, {
    type: 'PaymentWithdrawn',
    data: { transferId: 't-1', reason: 'not in the final block', at, settled: true },
  });
  await apply();
  t.like(await payments.get('t-1'), { status: 'settled' });
  t.deepEqual(
    (await payments.find({ status: 'withdrawn' })).map((p) => p._id),
    ['t-2'],
  );
  // The session keeps it withdrawn; the API shows no more than that.
  const doc = await store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(session.id);
  t.like(doc?.payments[0], { status: 'withdrawn', settled: true });
  t.false('settled' in publicCheckoutSession(doc!).payments[0]!);
  // Mined again in another block: pending again.
  append(stream, {
    type: 'PaymentDetected',
    data: {
      payment: {
        ...paymentFixture('t-1', '100000000'),
        blockNumber: 12,
        blockHash: '0xb10e',
        status: 'pending',
        detectedAt: at,
        confirmedAt: null,
        late: false,
      },
    },
  });
  await apply();
  t.like(await payments.get('t-1'), {
    status: 'pending',
    blockHash: '0xb10e',
    seenIn: [{ number: 10, hash: '0xb10c' }],
  });
});

/** The detection of transfer `transferId` of 1 USDC in block `hash` at height `number`, at `at`. */
const seen = (transferId: string, number: number, hash: string, at: string) => ({
  type: 'PaymentDetected',
  data: {
    payment: {
      ...paymentFixture(transferId, '100000000'),
      blockNumber: number,
      blockHash: hash,
      status: 'pending',
      detectedAt: at,
      confirmedAt: null,
      late: false,
    },
  },
});

test('settled blocks list a settled transfer under each block it was seen in, by network and block in any case; a batch applied again leaves them so; detected again, it leaves them (projection v11)', async (t) => {
  const session = sessionFixture();
  const { events, append } = createTestLog('2026-01-01T00:00:00.000Z');
  const stream = `checkout_session-${session.id}`;
  const at = '2026-01-01T01:00:00.000Z';
  const withdrawn = (transferId: string, extra: object) => ({
    type: 'PaymentWithdrawn',
    data: { transferId, at, ...extra },
  });
  const settle = (transferId: string) => withdrawn(transferId, { reason: 'not in the final block', settled: true });
  append(stream, created(session));
  append(stream, seen('t-1', 10, '0xB10C', at));
  append(stream, withdrawn('t-1', { reason: 'reorg', mayReturn: true }));
  append(stream, seen('t-1', 11, '0xb10d', at));
  append(stream, withdrawn('t-1', { reason: 'reorg', mayReturn: true }));
  append(stream, settle('t-1'));
  append(stream, seen('t-2', 11, '0xb10d', at));
  append(stream, withdrawn('t-2', { reason: 'reorg' }));
  append(stream, settle('t-2'));
  const store = createEmbeddedReadStore();
  const blocks = store.collection<SettledBlockDoc>(COLLECTIONS.settledBlocks);
  const listed = async () =>
    Object.fromEntries(
      (await blocks.find({})).map((doc) => [doc._id, [doc.network, doc.blockHash, ...doc.transferIds]]),
    );
  for (const event of events) await checkoutSessionsProjection.apply(event, store);
  const expected = {
    [settledBlockKey('weir-testnet', '0xb10c')]: ['weir-testnet', '0xb10c', 't-1'],
    [settledBlockKey('weir-testnet', '0xB10D')]: ['weir-testnet', '0xb10d', 't-1', 't-2'],
  };
  t.deepEqual(await listed(), expected);
  t.is(settledBlockKey('weir-testnet', '0xB10C'), 'weir-testnet:0xb10c');
  // The runner repeats from a checkpoint older than the documents: every event once more, in order.
  for (const event of events) await checkoutSessionsProjection.apply(event, store);
  t.deepEqual(await listed(), expected);
  // Mined again: settled no more, off every block it was listed under; a block left empty goes.
  await checkoutSessionsProjection.apply(append(stream, seen('t-1', 12, '0xb10e', at)), store);
  t.deepEqual(await listed(), { [settledBlockKey('weir-testnet', '0xb10d')]: ['weir-testnet', '0xb10d', 't-2'] });
});

test('settling a transfer shown withdrawn already changes nothing the API shows of its session, updatedAt included (a session closed long ago stays where it was in lists by update time); giving up one awaited back moves it', async (t) => {
  const session = sessionFixture();
  const { events, append } = createTestLog('2026-01-01T00:00:00.000Z');
  const stream = `checkout_session-${session.id}`;
  append(stream, created(session));
  append(stream, seen('t-1', 10, '0xb10c', '2026-01-01T00:30:00.000Z'));
  append(stream, {
    type: 'PaymentWithdrawn',
    data: { transferId: 't-1', reason: 'reorg', at: '2026-01-01T01:00:00.000Z' },
  });
  const store = createEmbeddedReadStore();
  const sessions = store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  const apply = async () => {
    for (const event of events.splice(0)) await checkoutSessionsProjection.apply(event, store);
  };
  await apply();
  const shown = publicCheckoutSession((await sessions.get(session.id))!);
  t.like(shown, { updatedAt: '2026-01-01T01:00:00.000Z', payments: [{ status: 'withdrawn' }] });
  // Its height final in another block a week later: settled.
  append(stream, {
    type: 'PaymentWithdrawn',
    data: { transferId: 't-1', reason: 'not in the final block', at: '2026-01-08T00:00:00.000Z', settled: true },
  });
  await apply();
  t.like((await sessions.get(session.id))?.payments[0], { settled: true });
  t.deepEqual(publicCheckoutSession((await sessions.get(session.id))!), shown);
  // One awaited back (the session waits for its money) given up: the session stops waiting, which
  // moves updatedAt.
  append(stream, seen('t-2', 20, '0xb20c', '2026-01-08T00:10:00.000Z'));
  append(stream, {
    type: 'PaymentWithdrawn',
    data: { transferId: 't-2', reason: 'reorg', at: '2026-01-08T00:20:00.000Z', mayReturn: true },
  });
  append(stream, {
    type: 'PaymentWithdrawn',
    data: { transferId: 't-2', reason: 'not in the final block', at: '2026-01-08T00:30:00.000Z', settled: true },
  });
  await apply();
  t.like(publicCheckoutSession((await sessions.get(session.id))!), {
    updatedAt: '2026-01-08T00:30:00.000Z',
    paymentIntent: { updatedAt: '2026-01-08T00:30:00.000Z' },
  });
});

/** The session's payments after `write` appends to its log, each with whether it reads as seen before the close; the API shows no such field. */
async function seenBeforeCloseAfter(
  t: ExecutionContext,
  write: (append: (event: CheckoutSessionEvent) => void) => void,
): Promise<[string, boolean][] | undefined> {
  const session = sessionFixture();
  const { events, append } = createTestLog('2026-01-01T00:00:00.000Z');
  const stream = `checkout_session-${session.id}`;
  append(stream, created(session));
  write((event) => append(stream, event));
  const store = createEmbeddedReadStore();
  for (const event of events) await checkoutSessionsProjection.apply(event, store);
  const doc = await store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(session.id);
  t.false(JSON.stringify(publicCheckoutSession(doc!)).includes('seenBeforeClose'));
  return doc?.payments.map((p) => [p.transferId, p.seenBeforeClose ?? false]);
}

test('a payment recorded before its session was canceled reads as seen before the cancel, by the order of the log, one recorded after it in the same millisecond not; the API shows no such field (projection v12)', async (t) => {
  const at = '2026-01-01T00:20:00.000Z';
  const marks = await seenBeforeCloseAfter(t, (append) => {
    append(detected('t-1', '300000000', at));
    append(canceled(at));
    append(detected('t-2', '100000000', at));
  });
  t.deepEqual(marks, [
    ['t-1', true],
    ['t-2', false],
  ]);
  t.true((checkoutSessionsProjection.version ?? 0) >= 12, 'documents written before the mark are rebuilt from the log');
});

test('a payment confirmed before its session was marked refunded reads as covered by the mark, by the order of the log, one confirmed after it in the same millisecond not; the API shows no such field (projection v13)', async (t) => {
  const session = sessionFixture();
  const { events, append } = createTestLog('2026-01-01T00:00:00.000Z');
  const stream = `checkout_session-${session.id}`;
  const at = '2026-01-02T09:00:00.000Z';
  append(stream, created(session));
  append(stream, canceled());
  append(stream, detected('t-1', '300000000', '2026-01-01T00:25:00.000Z'));
  for (const event of confirmedLate('t-1', '300000000', at)) append(stream, event);
  append(stream, markedRefunded(at));
  append(stream, detected('t-2', '100000000', at));
  for (const event of confirmedLate('t-2', '100000000', at)) append(stream, event);
  const store = createEmbeddedReadStore();
  for (const event of events) await checkoutSessionsProjection.apply(event, store);

  const doc = await store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(session.id);
  t.deepEqual(
    doc?.payments.map((p) => [p.transferId, p.confirmedAt, p.coveredByRefundMark ?? false]),
    [
      ['t-1', at, true],
      ['t-2', at, false],
    ],
  );
  t.false(JSON.stringify(publicCheckoutSession(doc!)).includes('coveredByRefundMark'));
  t.true((checkoutSessionsProjection.version ?? 0) >= 13, 'documents written before the mark are rebuilt from the log');
});

test("a subscription session given only customerData names the customer its subscription was created with; one naming its own, another's or another organization's is left as it was", async (t) => {
  const { events, append } = createTestLog('2026-01-01T00:00:00.000Z');
  const subscriptionOf = (sessionId: string, subscriptionId: string) =>
    subscriptionFixture({
      id: subscriptionId,
      customerId: 'cus-made',
      firstBill: { id: sessionId, kind: 'checkout_session', dueAt: '2026-01-01T01:00:00.000Z' },
    });
  const sessionOf = (id: string, customerId: string | null) =>
    sessionFixture({ id, mode: 'subscription', subscriptionId: `sub-${id}`, customerId });
  append('checkout_session-cs-data', created(sessionOf('cs-data', null)));
  append('checkout_session-cs-own', created(sessionOf('cs-own', 'cus-own')));
  append('checkout_session-cs-other', created(sessionOf('cs-other', null)));
  append('checkout_session-cs-org', created(sessionOf('cs-org', null)));
  append('subscription-sub-cs-data', subscriptionCreated(subscriptionOf('cs-data', 'sub-cs-data')));
  append('subscription-sub-cs-own', subscriptionCreated(subscriptionOf('cs-own', 'sub-cs-own')));
  // Names a session that is not its own, or comes from another organization: changes nothing.
  append('subscription-sub-x', subscriptionCreated(subscriptionOf('cs-other', 'sub-x')));
  append('subscription-sub-cs-org', subscriptionCreated(subscriptionOf('cs-org', 'sub-cs-org')), 'org-2');
  // A later event of the session keeps the customer.
  append('checkout_session-cs-data', detected('t-1', '100000000'));
  const store = createEmbeddedReadStore();
  for (const event of events) await checkoutSessionsProjection.apply(event, store);

  const sessions = store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  t.like(await sessions.get('cs-data'), { customerId: 'cus-made', payments: [{ transferId: 't-1' }] });
  t.is((await sessions.get('cs-own'))?.customerId, 'cus-own');
  t.is((await sessions.get('cs-other'))?.customerId, null);
  t.is((await sessions.get('cs-org'))?.customerId, null);
});

test('a log from before expiry waited for pending payments rebuilds with the payment pending at the expiry seen before the close, as a cancel marks it; one seen after it not (projection v14)', async (t) => {
  const marks = await seenBeforeCloseAfter(t, (append) => {
    append(detected('t-1', '300000000', '2026-01-01T00:50:00.000Z'));
    append({ type: 'CheckoutSessionExpired', data: { at: '2026-01-01T01:00:00.000Z' } });
    append(detected('t-2', '100000000', '2026-01-01T01:00:00.000Z'));
  });
  t.deepEqual(marks, [
    ['t-1', true],
    ['t-2', false],
  ]);
  t.true((checkoutSessionsProjection.version ?? 0) >= 14, 'documents written before the mark are rebuilt from the log');
});
