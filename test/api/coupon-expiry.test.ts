import test from 'ava';
import { COLLECTIONS, type TimerDoc } from '../../src/projections/collections.ts';
import { COUPONS, type CouponDoc } from '../../src/projections/coupons.projection.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { assertError, type Page } from './helpers.ts';

type Coupon = { id: string; status: string; promotionCodes: { code: string; status: string; isActive: boolean }[] };
type Session = { id: string; addresses: { asset: { id: string } }[] };

const at = (iso: string) => Date.parse(iso);

test('a promotion code and its coupon become expired at their clock times by durable timers; checkout refuses them afterwards', async (t) => {
  const clock = createManualClock(at('2026-03-01T00:00:00.000Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url);
  const payer = apiClient(weir.url);
  const created = await api.post<Coupon>('/api/v1/coupons', {
    name: 'Spring',
    percentOff: 10,
    redeemBy: '2026-03-05T00:00:00Z',
    promotionCodeData: { data: [{ code: 'EARLY', expiredAt: '2026-03-02T00:00:00Z' }, { code: 'SPRING' }] },
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  const couponId = created.body.id;
  const stored = () => weir.readStore.collection<CouponDoc>(COUPONS).get(couponId);
  const timers = await weir.readStore
    .collection<TimerDoc>(COLLECTIONS.timers)
    .find({ recordId: couponId }, { sort: { fireAt: 1 } });
  t.deepEqual(
    timers.map((timer) => [timer.kind, new Date(timer.fireAt).toISOString()]),
    [
      ['coupon.promotion_code.expire', '2026-03-02T00:00:00.000Z'],
      ['coupon.expire', '2026-03-05T00:00:00.000Z'],
    ],
  );
  const apply = async (code: string) => {
    const session = (
      await api.post<Session>('/api/v1/checkout/sessions', { ...sessionRequest(), allowPromotionCodes: true })
    ).body;
    await payer.post(`/checkout/${session.id}/payment-method`, { assetId: session.addresses[0]!.asset.id });
    return payer.post<{ amountDiscount: string }>(`/checkout/${session.id}/promotion-code`, { code });
  };

  clock.advanceTo(at('2026-03-01T23:59:59.999Z'));
  t.is((await stored())!.promotionCodes[0]!.status, 'active');
  clock.advanceTo(at('2026-03-02T00:00:00.000Z'));
  const early = await eventually(async () => {
    const coupon = await stored();
    return coupon?.promotionCodes[0]?.status === 'expired' ? coupon : undefined;
  }, 'the code to be recorded as expired');
  t.is(early.status, 'active', 'the coupon and its other code stay usable');
  t.like((await api.get<Coupon>(`/api/v1/coupons/${couponId}`)).body.promotionCodes, [
    { code: 'EARLY', status: 'expired', isActive: false },
    { code: 'SPRING', status: 'active', isActive: true },
  ]);
  assertError(t, await apply('early'), 400, { code: 'promotion_code_expired' });
  const discounted = await apply('spring');
  t.is(discounted.status, 200, JSON.stringify(discounted.body));
  t.is(discounted.body.amountDiscount, '30000000');

  clock.advanceTo(at('2026-03-05T00:00:00.000Z'));
  await eventually(
    async () => ((await stored())?.status === 'expired' ? true : undefined),
    'the coupon to be recorded as expired',
  );
  // Recorded, not only shown: the read model's status filter finds it.
  t.deepEqual(
    (await api.get<Page<Coupon>>('/api/v1/coupons?status=expired')).body.data.map((c) => c.id),
    [couponId],
  );
  t.deepEqual((await api.get<Page<Coupon>>('/api/v1/coupons?status=active')).body.data, []);
  assertError(t, await apply('SPRING'), 400, { code: 'coupon_expired' });
  t.is(await weir.readStore.collection<TimerDoc>(COLLECTIONS.timers).count({ recordId: couponId }), 0);
});
