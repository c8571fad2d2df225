import test from 'ava';
import type { GasFeeQuoter } from '../../src/chain-ingest/gas-fee.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { receiveHooks } from './helpers.ts';

type Session = {
  id: string;
  status: string;
  amountTotal: string;
  amountDetails: { amountDiscount: string };
  discounts: unknown[];
  addresses: { asset: { id: string }; paymentAddress: string }[];
};

test('a payer applies a promotion code on the hosted page; the discount shows in amountDetails and the discounted total completes the session', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  t.is(
    (
      await api.post('/api/v1/coupons', {
        name: 'Launch',
        percentOff: 10,
        maxRedemptions: 10,
        promotionCodeData: { data: [{ code: 'LAUNCH' }] },
      })
    ).status,
    200,
  );
  const session = (
    await api.post<Session>('/api/v1/checkout/sessions', {
      ...sessionRequest('150000000', 2),
      allowPromotionCodes: true,
    })
  ).body;
  const payer = apiClient(weir.url);
  await payer.post(`/checkout/${session.id}/payment-method`, { assetId: session.addresses[0]!.asset.id });
  const applied = await payer.post<{ amountDiscount: string; amountTotal: string }>(
    `/checkout/${session.id}/promotion-code`,
    { code: 'launch' },
  );
  t.is(applied.status, 200, JSON.stringify(applied.body));
  t.is(applied.body.amountDiscount, '30000000');
  t.is(applied.body.amountTotal, '270000000');
  const reloaded = (
    await api.get<Session & { paymentIntent: { paymentMethod: { amountDue: string } } }>(
      `/api/v1/checkout/sessions/${session.id}`,
    )
  ).body;
  t.is(reloaded.amountDetails.amountDiscount, '30000000');
  t.is(reloaded.paymentIntent.paymentMethod.amountDue, '2700000', 'the revealed amount due follows the discount');
  // Applying it again counts once.
  await payer.post(`/checkout/${session.id}/promotion-code`, { code: 'LAUNCH' });
  const coupon = (await api.get<{ data: { timesRedeemed: number }[] }>('/api/v1/coupons')).body.data[0]!;
  t.is(coupon.timesRedeemed, 1);

  const chain = chainPublisher(weir.bus);
  const block = randomHash();
  await chain.transfer({
    to: session.addresses[0]!.paymentAddress,
    amount: '2700000',
    blockNumber: 1,
    blockHash: block,
  });
  await chain.final(1, block);
  const done = await eventually(async () => {
    const s = (await api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body;
    return s.status === 'complete' ? s : undefined;
  }, 'completion');
  t.is(done.amountTotal, '270000000');

  const refused = await payer.post<{ message: string }>(`/checkout/${session.id}/promotion-code`, { code: 'NOPE' });
  t.is(refused.status, 400);
  const plain = (await api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;
  const notAllowed = await payer.post<{ code: string }>(`/checkout/${plain.id}/promotion-code`, { code: 'LAUNCH' });
  t.is(notAllowed.status, 400);
  t.is(notAllowed.body.code, 'promotion_codes_not_allowed');
});

test('50 payers racing for a code with maxRedemptions 10: exactly 10 discounts', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  t.is(
    (
      await api.post('/api/v1/coupons', {
        name: 'Last ten',
        amountOff: '10000000',
        currency: 'usdc',
        maxRedemptions: 10,
        promotionCodeData: { data: [{ code: 'TEN' }] },
      })
    ).status,
    200,
  );
  const sessions: Session[] = [];
  for (let i = 0; i < 50; i++)
    sessions.push(
      (await api.post<Session>('/api/v1/checkout/sessions', { ...sessionRequest(), allowPromotionCodes: true })).body,
    );
  const payer = apiClient(weir.url);
  const results = await Promise.all(
    sessions.map((s) => payer.post<{ code?: string }>(`/checkout/${s.id}/promotion-code`, { code: 'TEN' })),
  );
  t.is(results.filter((r) => r.status === 200).length, 10);
  t.is(
    results.filter((r) => r.status === 400).length,
    40,
    JSON.stringify(results.filter((r) => r.status !== 200 && r.status !== 400).map((r) => r.body)),
  );
  const discounted = [];
  for (const s of sessions) {
    const current = (await api.get<Session>(`/api/v1/checkout/sessions/${s.id}`)).body;
    if (current.amountDetails.amountDiscount !== '0') discounted.push(current);
  }
  t.is(discounted.length, 10);
  const coupon = (await api.get<{ data: { timesRedeemed: number; status: string }[] }>('/api/v1/coupons')).body
    .data[0]!;
  t.is(coupon.timesRedeemed, 10);
  t.is(coupon.status, 'limit_reached');
});

test('a promotion code that takes 100% off completes the session at once: nothing to pay, checkout_session.completed, and a subscription session starts its subscription', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const hooks = await receiveHooks(t, api, ['checkout_session.completed', 'payment_intent.succeeded']);
  t.is(
    (
      await api.post('/api/v1/coupons', {
        name: 'On the house',
        percentOff: 100,
        promotionCodeData: { data: [{ code: 'FREE' }] },
      })
    ).status,
    200,
  );
  const session = (
    await api.post<Session>('/api/v1/checkout/sessions', {
      ...sessionRequest('150000000', 2),
      allowPromotionCodes: true,
    })
  ).body;
  const payer = apiClient(weir.url);
  // The payer had picked an asset first: no amount is due on it any more.
  await payer.post(`/checkout/${session.id}/payment-method`, { assetId: session.addresses[0]!.asset.id });
  const applied = await payer.post<{ status: string; amountTotal: string; amountDiscount: string }>(
    `/checkout/${session.id}/promotion-code`,
    { code: 'FREE' },
  );
  t.is(applied.status, 200, JSON.stringify(applied.body));
  t.like(applied.body, { status: 'complete', amountDiscount: '300000000', amountTotal: '0' });
  const done = (
    await api.get<Session & { paymentStatus: string; amountReceived: string; paymentIntent: { status: string } }>(
      `/api/v1/checkout/sessions/${session.id}`,
    )
  ).body;
  t.like(done, {
    status: 'complete',
    paymentStatus: 'paid',
    amountTotal: '0',
    amountReceived: '0',
    paymentIntent: { status: 'succeeded' },
  });
  await hooks.waitFor(session.id, ['checkout_session.completed', 'payment_intent.succeeded']);
  const status = await payer.get<{ status: string; redirectUrl: string | null }>(`/checkout/${session.id}/status`);
  t.is(status.body.status, 'complete');

  // A subscription session: its first period is free, the subscription starts.
  const plan = (
    await api.post<{ defaultPrice: { id: string } }>('/api/v1/products', {
      name: 'Pro',
      defaultPriceData: { currency: 'usdc', unitAmount: '1000000000', interval: 'month', intervalCount: 1 },
    })
  ).body;
  const subscribing = (
    await api.post<Session & { subscriptionId: string }>('/api/v1/checkout/sessions', {
      mode: 'subscription',
      successUrl: 'https://shop.example/welcome',
      lineItems: { data: [{ priceId: plan.defaultPrice.id, quantity: 1 }] },
      customerData: { email: 'subscriber@example.com' },
      allowPromotionCodes: true,
    })
  ).body;
  t.is(
    (await payer.post<{ status: string }>(`/checkout/${subscribing.id}/promotion-code`, { code: 'FREE' })).body.status,
    'complete',
  );
  await eventually(async () => {
    const s = await api.get<{ status: string }>(`/api/v1/subscriptions/${subscribing.subscriptionId}`);
    return s.status === 200 && s.body.status === 'active' ? true : undefined;
  }, 'the subscription to start');
});

test('a promotion code is refused with 409 payment_pending while a payment is pending or, reorged away, awaited back, and nothing is redeemed; once the payment is gone for good it applies', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  await api.post('/api/v1/coupons', {
    name: 'Launch',
    percentOff: 10,
    promotionCodeData: { data: [{ code: 'LAUNCH' }] },
  });
  const session = (
    await api.post<Session>('/api/v1/checkout/sessions', {
      ...sessionRequest('150000000', 2),
      allowPromotionCodes: true,
    })
  ).body;
  const payer = apiClient(weir.url);
  const chain = chainPublisher(weir.bus);
  const payments = async () =>
    (
      await api.get<Session & { payments: { status: string }[] }>(`/api/v1/checkout/sessions/${session.id}`)
    ).body.payments.map((p) => p.status);
  const until = (statuses: string[], what: string) =>
    eventually(async () => ((await payments()).join() === statuses.join() ? true : undefined), what);
  const apply = () =>
    payer.post<{ code: string; message: string }>(`/checkout/${session.id}/promotion-code`, { code: 'LAUNCH' });

  const block = randomHash();
  await chain.transfer({
    to: session.addresses[0]!.paymentAddress,
    amount: '3000000',
    blockNumber: 5,
    blockHash: block,
  });
  await until(['pending'], 'the detection');
  const whilePending = await apply();
  t.is(whilePending.status, 409);
  t.is(whilePending.body.code, 'payment_pending');
  t.is(
    whilePending.body.message,
    'A payment to this checkout is on its way: a promotion code can only be applied before paying.',
  );

  // Reorged away, it may be mined again: the payer is told to wait, and the code is refused alike.
  await chain.reorg([{ number: 5, hash: block }]);
  await until(['withdrawn'], 'the withdrawal');
  const whileAwaited = await apply();
  t.is(whileAwaited.status, 409);
  t.is(whileAwaited.body.code, 'payment_pending');
  const coupon = async () => (await api.get<{ data: { timesRedeemed: number }[] }>('/api/v1/coupons')).body.data[0]!;
  t.is((await coupon()).timesRedeemed, 0, 'a refused request redeems nothing');

  // Its height final in another block: gone for good, the session needs a payment, and takes the code.
  await chain.final(5, randomHash());
  await eventually(async () => {
    const s = (await api.get<{ paymentIntent: { status: string } }>(`/api/v1/checkout/sessions/${session.id}`)).body;
    return s.paymentIntent.status === 'requires_payment_method' ? true : undefined;
  }, 'the payment given up');
  const applied = await apply();
  t.is(applied.status, 200, JSON.stringify(applied.body));
  t.is((await coupon()).timesRedeemed, 1);
});

test('with the network fee passed to payers, a 100% code applied after the payer picked an asset completes the session as it does before: the fee falls away, nothing to send', async (t) => {
  const gasFees: GasFeeQuoter = { quote: async () => ({ gas: 160_000n, amount: 1_440_000_000n }) };
  const weir = await startTestWeir(t, {}, { gasFees });
  const { api } = await createMerchant(weir.url);
  t.is((await api.put('/api/v1/organization/payment-setting', { applyGasFee: true })).status, 200);
  t.is(
    (
      await api.post('/api/v1/coupons', {
        name: 'On the house',
        percentOff: 100,
        promotionCodeData: { data: [{ code: 'FREE' }] },
      })
    ).status,
    200,
  );
  const payer = apiClient(weir.url);
  const session = (
    await api.post<Session>('/api/v1/checkout/sessions', {
      ...sessionRequest('150000000', 2),
      allowPromotionCodes: true,
    })
  ).body;
  await payer.post(`/checkout/${session.id}/payment-method`, { assetId: session.addresses[0]!.asset.id });
  t.is((await api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body.amountTotal, '1740000000');
  const applied = await payer.post<{ status: string; amountTotal: string }>(`/checkout/${session.id}/promotion-code`, {
    code: 'FREE',
  });
  t.is(applied.status, 200, JSON.stringify(applied.body));
  t.like(applied.body, { status: 'complete', amountTotal: '0' });
  const done = (
    await api.get<Session & { amountGasFee: string; amountDetails: { amountGasFee: string; applyGasFee: boolean } }>(
      `/api/v1/checkout/sessions/${session.id}`,
    )
  ).body;
  t.like(done, {
    status: 'complete',
    amountTotal: '0',
    amountGasFee: '0',
    amountDetails: { amountGasFee: '0', applyGasFee: false },
  });
  const status = await payer.get<{ status: string; amountToSend: string }>(`/checkout/${session.id}/status`);
  t.like(status.body, { status: 'complete', amountToSend: '0' });
});
