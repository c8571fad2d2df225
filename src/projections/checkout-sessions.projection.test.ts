import test from 'ava';
import { confirmed, created, detected, sessionFixture } from '../../machines/checkout-session.fixture.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { publicCheckoutSession } from './public-views.ts';
import { checkoutSessionsProjection } from './checkout-sessions.projection.ts';
import { COLLECTIONS, type ChainPaymentDoc, type CheckoutSessionDoc } from './collections.ts';
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
