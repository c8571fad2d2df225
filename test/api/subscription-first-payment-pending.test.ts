import test, { type ExecutionContext } from 'ava';
import { createManualClock } from '../../src/shared/clock.ts';
import { eventually } from '../support/api-client.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { getSession, receiveHooks, reveal, settled, type Api, type Session } from './helpers.ts';

type Subscription = { id: string; status: string; endedAt: string | null };

const HOOKS = [
  'customer.subscription.created',
  'customer.subscription.started',
  'customer.subscription.incomplete_expired',
  'checkout_session.completed',
  'checkout_session.expired',
];

const subscriptionOf = (api: Api, id: string) =>
  eventually(async () => {
    const response = await api.get<Subscription>(`/api/v1/subscriptions/${id}`);
    return response.status === 200 ? response.body : undefined;
  }, 'the subscription');

const until = (api: Api, id: string, status: string) =>
  eventually(async () => {
    const s = (await api.get<Subscription>(`/api/v1/subscriptions/${id}`)).body;
    return s.status === status ? s : undefined;
  }, `subscription ${id} to be ${status}`);

/**
 * A monthly subscription bought at 12:00 through a `mode: subscription` session (due at its expiry,
 * 13:00), whose first payment in full is detected at 12:10 and still waits for its confirmations
 * when the clock passes the due time (13:01). The timers due by then have all been tried: a plain
 * session expiring at 13:00:30 has expired.
 */
async function firstPaymentPendingPastDue(t: ExecutionContext) {
  const clock = createManualClock(Date.parse('2026-05-10T12:00:00.000Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url);
  const hooks = await receiveHooks(t, api, HOOKS);
  const product = (
    await api.post<{ defaultPrice: { id: string } }>('/api/v1/products', {
      name: 'Pro',
      defaultPriceData: {
        currency: 'usdc',
        unitAmount: '1000000000',
        type: 'recurring',
        interval: 'month',
        intervalCount: 1,
      },
    })
  ).body;
  const session = (
    await api.post<Session & { subscriptionId: string; expiresAt: string }>('/api/v1/checkout/sessions', {
      mode: 'subscription',
      successUrl: 'https://shop.example/welcome',
      lineItems: { data: [{ priceId: product.defaultPrice.id, quantity: 1 }] },
      customerData: { email: 'subscriber@example.com' },
    })
  ).body;
  t.is(session.expiresAt, '2026-05-10T13:00:00.000Z');
  const subscription = await subscriptionOf(api, session.subscriptionId);
  const shown = await reveal(weir, api, session.id);

  clock.set(Date.parse('2026-05-10T12:10:00.000Z'));
  const block = { number: 7_100, hash: randomHash() };
  const chain = chainPublisher(weir.bus);
  await chain.transfer({
    to: shown.address,
    amount: shown.amountDueRaw,
    blockNumber: block.number,
    blockHash: block.hash,
  });
  await eventually(
    async () => ((await getSession(api, session.id)).paymentIntent.status === 'processing' ? true : undefined),
    'the transfer to be detected',
  );
  const marker = (
    await api.post<Session>('/api/v1/checkout/sessions', { ...sessionRequest(), expiresAt: '2026-05-10T13:00:30.000Z' })
  ).body;

  clock.set(Date.parse('2026-05-10T13:01:00.000Z'));
  await eventually(
    async () => ((await getSession(api, marker.id)).status === 'expired' ? true : undefined),
    'the timers due by 13:01 to be tried',
  );
  await weir.projections.waitFor((await weir.eventStore.headPosition())!);
  t.like(
    (await api.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`)).body,
    { status: 'incomplete', endedAt: null },
    'the subscription waits for its first payment',
  );
  t.like(
    await getSession(api, session.id),
    { status: 'open', paymentIntent: { status: 'processing' } },
    'and so does its session',
  );
  await settled(weir);
  return { weir, api, hooks, chain, block, session, subscription };
}

test("a first payment detected before the subscription's due time and confirmed after it: the session completes and the subscription starts, never incomplete_expired", async (t) => {
  const { weir, api, hooks, chain, block, session, subscription } = await firstPaymentPendingPastDue(t);
  await chain.final(block.number, block.hash);
  t.like(await until(api, subscription.id, 'active'), { endedAt: null });
  t.like(await getSession(api, session.id), { status: 'complete', paymentIntent: { status: 'succeeded' } });
  await settled(weir);
  const types = (await weir.eventStore.readStream(`subscription-${subscription.id}`)).map((e) => e.type);
  t.deepEqual(types, ['SubscriptionCreated', 'SubscriptionStarted']);
  await hooks.waitFor(session.id, ['customer.subscription.started', 'checkout_session.completed']);
  t.deepEqual(hooks.about(session.id), [
    'checkout_session.completed',
    'customer.subscription.created',
    'customer.subscription.started',
  ]);
});

test("a first payment detected before the subscription's due time and withdrawn by a reorg after it, gone once its height is final in another block: the session expires, then the subscription, once", async (t) => {
  const { weir, api, hooks, chain, block, session, subscription } = await firstPaymentPendingPastDue(t);
  await chain.reorg([block]);
  // Paid in time, the transaction may be mined again: both wait until its height is final without it.
  const sessionLog = async () =>
    (await weir.eventStore.readStream(`checkout_session-${session.id}`)).map((e) => e.type);
  await eventually(
    async () => ((await sessionLog()).includes('PaymentWithdrawn') ? true : undefined),
    'the withdrawal',
  );
  t.like(await getSession(api, session.id), { status: 'open' });
  await chain.final(block.number, randomHash());
  const expired = await until(api, subscription.id, 'incomplete_expired');
  t.is(expired.endedAt, '2026-05-10T13:01:00.000Z');
  t.like(await getSession(api, session.id), { status: 'expired', paymentIntent: { status: 'canceled' } });
  await settled(weir);
  const ends = (await weir.eventStore.readStream(`checkout_session-${session.id}`)).filter(
    (e) => e.type === 'CheckoutSessionExpired',
  );
  t.is(ends.length, 1);
  await hooks.waitFor(session.id, ['customer.subscription.incomplete_expired', 'checkout_session.expired']);
  t.deepEqual(hooks.about(session.id), [
    'checkout_session.expired',
    'customer.subscription.created',
    'customer.subscription.incomplete_expired',
  ]);
});
