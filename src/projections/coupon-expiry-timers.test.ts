import test from 'ava';
import type { Coupon, PromotionCode } from '../../machines/coupon.types.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { COLLECTIONS, type TimerDoc } from './collections.ts';
import {
  COUPON_EXPIRY_TIMER,
  PROMOTION_CODE_EXPIRY_TIMER,
  couponExpiryTimerId,
  couponExpiryTimers,
  promotionCodeExpiryTimerId,
  setCouponExpiryTimers,
} from './coupon-expiry-timers.ts';

const T0 = '2026-01-01T00:00:00.000Z';
const REDEEM_BY = '2026-02-01T00:00:00.000Z';
const CODE_EXPIRY = '2026-01-15T00:00:00.000Z';

const code = (id: string, overrides: Partial<PromotionCode> = {}): PromotionCode => ({
  id,
  organizationId: 'org-1',
  environment: 'test',
  couponId: 'coupon-1',
  code: id.toUpperCase(),
  maxRedemptions: null,
  expiredAt: null,
  timesRedeemed: 0,
  status: 'active',
  metadata: {},
  createdAt: T0,
  updatedAt: T0,
  ...overrides,
});
const coupon = (overrides: Partial<Coupon> = {}): Coupon => ({
  id: 'coupon-1',
  organizationId: 'org-1',
  environment: 'test',
  name: 'Launch',
  percentOff: 10,
  amountOff: null,
  currency: null,
  maxRedemptions: null,
  redeemBy: REDEEM_BY,
  timesRedeemed: 0,
  status: 'active',
  isEnable: true,
  isArchived: false,
  archivedAt: null,
  metadata: {},
  promotionCodes: [code('soon', { expiredAt: CODE_EXPIRY }), code('open')],
  createdAt: T0,
  updatedAt: T0,
  ...overrides,
});
const scheduled = (c: Coupon) =>
  [...couponExpiryTimers(c, 0)].filter(([, wanted]) => wanted !== null).map(([id, wanted]) => [id, wanted!.fireAt]);

test('an active coupon has a timer at redeemBy, and each active code with its own expiry one at expiredAt', (t) => {
  const timers = couponExpiryTimers(coupon(), 3);
  t.deepEqual(timers.get(couponExpiryTimerId('coupon-1')), {
    kind: COUPON_EXPIRY_TIMER,
    recordId: 'coupon-1',
    organizationId: 'org-1',
    environment: 'test',
    version: 3,
    fireAt: Date.parse(REDEEM_BY),
  });
  t.deepEqual(timers.get(promotionCodeExpiryTimerId('soon')), {
    kind: PROMOTION_CODE_EXPIRY_TIMER,
    recordId: 'coupon-1',
    organizationId: 'org-1',
    environment: 'test',
    version: 3,
    fireAt: Date.parse(CODE_EXPIRY),
    args: { promotionCodeId: 'soon' },
  });
  t.is(timers.get(promotionCodeExpiryTimerId('open')), null, 'a code without expiredAt has none');
});

test('no coupon timer without redeemBy or once it is not active; no code timer once the code is used up or expired; nothing when archived', (t) => {
  t.deepEqual(scheduled(coupon({ redeemBy: null })), [[promotionCodeExpiryTimerId('soon'), Date.parse(CODE_EXPIRY)]]);
  for (const status of ['expired', 'disabled', 'limit_reached'] as const) {
    t.deepEqual(
      scheduled(coupon({ status })),
      [[promotionCodeExpiryTimerId('soon'), Date.parse(CODE_EXPIRY)]],
      `${status}: the code still expires on its own`,
    );
  }
  for (const status of ['expired', 'limit_reached'] as const) {
    t.deepEqual(scheduled(coupon({ promotionCodes: [code('soon', { expiredAt: CODE_EXPIRY, status })] })), [
      [couponExpiryTimerId('coupon-1'), Date.parse(REDEEM_BY)],
    ]);
  }
  t.deepEqual(scheduled(coupon({ isArchived: true, isEnable: false })), []);
});

test('setCouponExpiryTimers follows the coupon: a moved redeemBy moves its timer, archiving removes them all', async (t) => {
  const timers = createEmbeddedReadStore({}).collection<TimerDoc>(COLLECTIONS.timers);
  await setCouponExpiryTimers(timers, coupon(), 0);
  t.deepEqual(
    (await timers.find({}, { sort: { fireAt: 1 } })).map((d) => d._id),
    [promotionCodeExpiryTimerId('soon'), couponExpiryTimerId('coupon-1')],
  );
  await setCouponExpiryTimers(timers, coupon({ redeemBy: '2026-03-01T00:00:00.000Z' }), 4);
  t.like(await timers.get(couponExpiryTimerId('coupon-1')), {
    fireAt: Date.parse('2026-03-01T00:00:00.000Z'),
    version: 4,
  });
  t.like(await timers.get(promotionCodeExpiryTimerId('soon')), { version: 0 }, 'an unchanged timer keeps its version');
  await setCouponExpiryTimers(timers, coupon({ isArchived: true }), 5);
  t.is(await timers.count({}), 0);
});
