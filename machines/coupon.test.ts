import test from 'ava';
import { IllegalEventError } from '../src/actors/aggregate.ts';
import { givenWhenThen } from '../src/actors/given-when-then.ts';
import { InvalidStateError, ValidationError } from '../src/shared/errors.ts';
import { couponAggregate } from './coupon.aggregate.ts';
import { assertAmountOffPayable, type NewCoupon } from './coupon.decide.ts';
import { discountFor } from './coupon.evolve.ts';
import type { Coupon, CouponEvent, PromotionCode } from './coupon.types.ts';

const given = givenWhenThen(couponAggregate);
const NOW = '2026-01-01T00:30:00.000Z';
const LATER = '2026-03-01T00:00:00.000Z';
const REDEEM_BY = '2026-02-01T00:00:00.000Z';
const CODE_ID = '11111111-1111-4111-8111-111111111111';

const newCoupon = (over: Partial<NewCoupon> = {}): NewCoupon => ({
  id: 'c0000000-0000-4000-8000-000000000001',
  organizationId: 'org-1',
  environment: 'test',
  name: 'Launch',
  percentOff: 10,
  amountOff: null,
  currency: null,
  maxRedemptions: 3,
  redeemBy: REDEEM_BY,
  metadata: {},
  isEnable: true,
  promotionCodes: [{ id: CODE_ID, code: 'Launch10', maxRedemptions: null, expiredAt: null, metadata: {} }],
  ...over,
});
const created = (over: Partial<NewCoupon> = {}): CouponEvent =>
  given([]).when({ type: 'CreateCoupon', coupon: newCoupon(over) }, NOW)[0]!;
const redeemed = (redemptionId: string, promotionCodeId = CODE_ID): CouponEvent => ({
  type: 'PromotionCodeRedeemed',
  data: { redemptionId, promotionCodeId, at: NOW },
});
const disabled: CouponEvent = { type: 'CouponDisabled', data: { at: NOW } };
const archived: CouponEvent = { type: 'CouponArchived', data: { at: NOW } };
const expired: CouponEvent = { type: 'CouponExpired', data: { at: LATER } };
const limitReached: CouponEvent = { type: 'CouponLimitReached', data: { at: NOW } };
const redeem = (redemptionId: string, promotionCode = 'launch10') => ({
  type: 'RedeemPromotionCode' as const,
  redemptionId,
  promotionCode,
});
const full = [created(), redeemed('s1'), redeemed('s2'), redeemed('s3'), limitReached];

// --- create -------------------------------------------------------------------------------

test('given nothing, when created, then CouponCreated and the coupon is active with its code', (t) => {
  const events = given([]).when({ type: 'CreateCoupon', coupon: newCoupon() }, NOW);
  t.is(events.length, 1);
  t.is(events[0]!.type, 'CouponCreated');
  const state = given(events).state();
  t.is(state.value, 'active');
  const coupon = state.context.coupon!;
  t.like(coupon, { status: 'active', isEnable: true, isArchived: false, timesRedeemed: 0, createdAt: NOW });
  t.like(coupon.promotionCodes[0], {
    id: CODE_ID,
    code: 'Launch10',
    couponId: coupon.id,
    timesRedeemed: 0,
    status: 'active',
    organizationId: 'org-1',
  });
});

test('given nothing, when created with isEnable false, then it starts disabled', (t) => {
  const state = given([created({ isEnable: false })]).state();
  t.is(state.value, 'disabled');
  t.is(state.context.coupon?.status, 'disabled');
});

test('given a created coupon, when created again, then nothing (idempotent)', (t) => {
  t.deepEqual(given([created()]).when({ type: 'CreateCoupon', coupon: newCoupon() }), []);
});

test('when created with invalid terms, then a validation error naming the field', (t) => {
  const cases: [Partial<NewCoupon>, RegExp][] = [
    [{ percentOff: null }, /^percentOff: give exactly one/],
    [{ amountOff: '100', currency: 'usdc' }, /^percentOff: give exactly one/],
    [{ percentOff: 0 }, /^percentOff: must be more than 0/],
    [{ percentOff: 12.345 }, /^percentOff: must have at most two decimals/],
    [{ percentOff: null, amountOff: '100000000' }, /^currency: is required/],
    [{ percentOff: null, amountOff: '0', currency: 'usdc' }, /^amountOff:/],
    [{ maxRedemptions: 0 }, /^maxRedemptions:/],
    [{ redeemBy: '2025-12-31T00:00:00.000Z' }, /^redeemBy: must be in the future/],
    [{ promotionCodes: [] }, /^promotionCodeData\.data: must have at least 1/],
    [
      { promotionCodes: [{ id: 'a', code: 'x', maxRedemptions: null, expiredAt: null, metadata: {} }] },
      /code: must be 2 to 20/,
    ],
    [
      {
        promotionCodes: [
          { id: 'a', code: 'SAME', maxRedemptions: null, expiredAt: null, metadata: {} },
          { id: 'b', code: 'same', maxRedemptions: null, expiredAt: null, metadata: {} },
        ],
      },
      /repeats same/,
    ],
    [
      { promotionCodes: [{ id: 'a', code: 'BIG', maxRedemptions: 4, expiredAt: null, metadata: {} }] },
      /maxRedemptions: must not exceed the coupon's maxRedemptions \(3\)/,
    ],
    [
      { promotionCodes: [{ id: 'a', code: 'LATE', maxRedemptions: null, expiredAt: LATER, metadata: {} }] },
      /expiredAt: must not be after the coupon's redeemBy/,
    ],
  ];
  for (const [over, message] of cases) {
    const error = t.throws(() => given([]).when({ type: 'CreateCoupon', coupon: newCoupon(over) }, NOW), {
      instanceOf: ValidationError,
    });
    t.regex(error.message, message);
  }
});

// --- redeem -------------------------------------------------------------------------------

test('given an active coupon, when a code is redeemed (any case), then PromotionCodeRedeemed and both counts rise', (t) => {
  const events = given([created()]).when(redeem('s1', 'LAUNCH10'), NOW);
  t.deepEqual(events, [redeemed('s1')]);
  const coupon = given([created(), ...events]).state().context.coupon!;
  t.is(coupon.timesRedeemed, 1);
  t.is(coupon.promotionCodes[0]!.timesRedeemed, 1);
});

test('a code can be redeemed by its id too', (t) => {
  t.deepEqual(given([created()]).when(redeem('s1', CODE_ID), NOW), [redeemed('s1')]);
});

test('given a redemption, when the same redemption id is redeemed again, then nothing (counted once)', (t) => {
  t.deepEqual(given([created(), redeemed('s1')]).when(redeem('s1'), NOW), []);
});

test('given the limit is reached, a repeat of an accepted redemption is still nothing, not a refusal', (t) => {
  t.deepEqual(given(full).when(redeem('s3'), NOW), []);
});

test('given two redemptions of three, when the last is redeemed, then CouponLimitReached follows and the coupon is limit_reached', (t) => {
  const events = given([created(), redeemed('s1'), redeemed('s2')]).when(redeem('s3'), NOW);
  t.deepEqual(events, [redeemed('s3'), limitReached]);
  const state = given([created(), redeemed('s1'), redeemed('s2'), ...events]).state();
  t.is(state.value, 'limit_reached');
  t.is(state.context.coupon?.status, 'limit_reached');
});

test('given a limit_reached coupon, when redeemed, then refused with coupon_limit_reached', (t) => {
  const error = t.throws(() => given(full).when(redeem('s4'), NOW), { instanceOf: InvalidStateError });
  t.is(error.code, 'coupon_limit_reached');
});

test("when the code's own limit is reached, then PromotionCodeLimitReached; the next is refused while the coupon stays active", (t) => {
  const base = [
    created({
      maxRedemptions: null,
      promotionCodes: [{ id: CODE_ID, code: 'ONCE', maxRedemptions: 1, expiredAt: null, metadata: {} }],
    }),
  ];
  const events = given(base).when(redeem('s1', 'once'), NOW);
  t.deepEqual(events, [
    redeemed('s1'),
    { type: 'PromotionCodeLimitReached', data: { promotionCodeId: CODE_ID, at: NOW } },
  ]);
  const state = given([...base, ...events]).state();
  t.is(state.value, 'active');
  t.is(state.context.coupon?.promotionCodes[0]?.status, 'limit_reached');
  const error = t.throws(() => given([...base, ...events]).when(redeem('s2', 'once'), NOW), {
    instanceOf: InvalidStateError,
  });
  t.is(error.code, 'promotion_code_limit_reached');
});

test('given an active coupon past redeemBy (no CouponExpired yet), when redeemed, then refused with coupon_expired', (t) => {
  const error = t.throws(() => given([created()]).when(redeem('s1'), REDEEM_BY), { instanceOf: InvalidStateError });
  t.is(error.code, 'coupon_expired');
});

test('given an expired coupon, when redeemed, then refused with coupon_expired', (t) => {
  const error = t.throws(() => given([created(), expired]).when(redeem('s1'), NOW), { instanceOf: InvalidStateError });
  t.is(error.code, 'coupon_expired');
});

test('given a code past its own expiredAt, when redeemed, then refused with promotion_code_expired', (t) => {
  const base = [
    created({
      promotionCodes: [
        { id: CODE_ID, code: 'SOON', maxRedemptions: null, expiredAt: '2026-01-02T00:00:00.000Z', metadata: {} },
      ],
    }),
  ];
  t.deepEqual(
    given(base)
      .when(redeem('s1', 'soon'), '2026-01-01T23:59:59.000Z')
      .map((e) => e.type),
    ['PromotionCodeRedeemed'],
  );
  const error = t.throws(() => given(base).when(redeem('s2', 'soon'), '2026-01-02T00:00:00.000Z'), {
    instanceOf: InvalidStateError,
  });
  t.is(error.code, 'promotion_code_expired');
});

test('given a disabled coupon, when redeemed, then refused with coupon_disabled', (t) => {
  const error = t.throws(() => given([created(), disabled]).when(redeem('s1'), NOW), { instanceOf: InvalidStateError });
  t.is(error.code, 'coupon_disabled');
});

test('given an archived coupon, when redeemed, then refused with coupon_archived', (t) => {
  const error = t.throws(() => given([created(), archived]).when(redeem('s1'), NOW), { instanceOf: InvalidStateError });
  t.is(error.code, 'coupon_archived');
});

test('when an unknown code is redeemed, then a validation error', (t) => {
  const error = t.throws(() => given([created()]).when(redeem('s1', 'NOPE'), NOW), { instanceOf: ValidationError });
  t.is(error.code, 'promotion_code_invalid');
});

test('given no coupon, a command other than create is refused as missing', (t) => {
  const error = t.throws(() => given([]).when(redeem('s1'), NOW), { instanceOf: InvalidStateError });
  t.is(error.code, 'resource_missing');
});

// --- release (a redemption given back) -----------------------------------------------------

const release = (redemptionId: string, reason = 'the checkout session was canceled') => ({
  type: 'ReleasePromotionCodeRedemption' as const,
  redemptionId,
  reason,
});
const released = (
  redemptionId: string,
  status: Coupon['status'] = 'active',
  promotionCodeStatus: PromotionCode['status'] = 'active',
  at = NOW,
): CouponEvent => ({
  type: 'PromotionCodeRedemptionReleased',
  data: {
    redemptionId,
    promotionCodeId: CODE_ID,
    reason: 'the checkout session was canceled',
    status,
    promotionCodeStatus,
    at,
  },
});

test('given a redemption, when it is released, then PromotionCodeRedemptionReleased and both counts fall back', (t) => {
  const events = given([created(), redeemed('s1'), redeemed('s2')]).when(release('s1'), NOW);
  t.deepEqual(events, [released('s1')]);
  const coupon = given([created(), redeemed('s1'), redeemed('s2'), ...events]).state().context.coupon!;
  t.is(coupon.timesRedeemed, 1);
  t.is(coupon.promotionCodes[0]!.timesRedeemed, 1);
});

test('given a released redemption, when it is released again, then nothing (given back once); a redemption never counted: nothing', (t) => {
  t.deepEqual(given([created(), redeemed('s1'), released('s1')]).when(release('s1'), NOW), []);
  t.deepEqual(given([created(), redeemed('s1')]).when(release('s2'), NOW), []);
});

test('given a released redemption, when the same redemption id is redeemed again, then refused (its session can no longer use it)', (t) => {
  const error = t.throws(() => given([created(), redeemed('s1'), released('s1')]).when(redeem('s1'), NOW), {
    instanceOf: InvalidStateError,
  });
  t.is(error.code, 'promotion_code_redemption_released');
});

test('given a redemption counting one code, when the same redemption id redeems another code of the coupon, then refused', (t) => {
  const base = [
    created({
      promotionCodes: [
        { id: CODE_ID, code: 'ONE', maxRedemptions: null, expiredAt: null, metadata: {} },
        { id: 'code-2', code: 'TWO', maxRedemptions: null, expiredAt: null, metadata: {} },
      ],
    }),
    redeemed('s1'),
  ];
  const error = t.throws(() => given(base).when(redeem('s1', 'two'), NOW), { instanceOf: InvalidStateError });
  t.is(error.code, 'promotion_code_already_redeemed');
  t.deepEqual(given(base).when(redeem('s1', 'one'), NOW), [], 'the same code again is still a repeat');
});

test('given a coupon at its limit, when a redemption is released, then it is active again and takes the next one', (t) => {
  const events = given(full).when(release('s2'), NOW);
  t.deepEqual(events, [released('s2', 'active')]);
  const state = given([...full, ...events]).state();
  t.is(state.value, 'active');
  t.like(state.context.coupon, { status: 'active', timesRedeemed: 2 });
  t.deepEqual(given([...full, ...events]).when(redeem('s4'), NOW), [redeemed('s4'), limitReached]);
});

test('given a coupon at its limit past redeemBy, when a redemption is released, then it lands in expired', (t) => {
  const events = given(full).when(release('s1'), LATER);
  t.deepEqual(events, [released('s1', 'expired', 'active', LATER)]);
  t.is(given([...full, ...events]).state().value, 'expired');
});

test('given a code at its own limit, when its redemption is released, then the code is active again (expired past its expiredAt)', (t) => {
  const once = (expiredAt: string | null) => [
    created({
      maxRedemptions: null,
      promotionCodes: [{ id: CODE_ID, code: 'ONCE', maxRedemptions: 1, expiredAt, metadata: {} }],
    }),
    redeemed('s1'),
    { type: 'PromotionCodeLimitReached', data: { promotionCodeId: CODE_ID, at: NOW } } as CouponEvent,
  ];
  const reopened = given(once(null)).when(release('s1'), NOW);
  t.deepEqual(reopened, [released('s1', 'active', 'active')]);
  t.like(given([...once(null), ...reopened]).state().context.coupon!.promotionCodes[0], {
    status: 'active',
    timesRedeemed: 0,
  });
  const SOON = '2026-01-10T00:00:00.000Z';
  t.deepEqual(given(once(SOON)).when(release('s1'), LATER), [released('s1', 'active', 'expired', LATER)]);
});

test('a release is taken in every state (disabled, expired, archived) and keeps the status', (t) => {
  // The machine state, and the coupon's status field (an archived coupon keeps the status it had).
  const cases: [CouponEvent[], 'disabled' | 'expired' | 'archived', Coupon['status']][] = [
    [[created(), redeemed('s1'), disabled], 'disabled', 'disabled'],
    [[created(), redeemed('s1'), expired], 'expired', 'expired'],
    [[created(), redeemed('s1'), archived], 'archived', 'active'],
  ];
  for (const [history, value, status] of cases) {
    const events = given(history).when(release('s1'), LATER);
    t.is(events.length, 1, value);
    const state = given([...history, ...events]).state();
    t.is(state.value, value);
    t.is(state.context.coupon!.timesRedeemed, 0, value);
    t.is(state.context.coupon!.status, status, value);
  }
});

// --- enable / disable / expire / archive ---------------------------------------------------

test('active → disabled → active', (t) => {
  t.deepEqual(given([created()]).when({ type: 'DisableCoupon' }, NOW), [disabled]);
  t.is(given([created(), disabled]).state().context.coupon?.isEnable, false);
  const enabled = given([created(), disabled]).when({ type: 'EnableCoupon' }, NOW);
  t.deepEqual(enabled, [{ type: 'CouponEnabled', data: { status: 'active', at: NOW } }]);
  t.is(given([created(), disabled, ...enabled]).state().value, 'active');
});

test('disable twice and enable an enabled coupon change nothing', (t) => {
  t.deepEqual(given([created(), disabled]).when({ type: 'DisableCoupon' }, NOW), []);
  t.deepEqual(given([created()]).when({ type: 'EnableCoupon' }, NOW), []);
});

test('enabling a disabled coupon past redeemBy lands in expired; one at its limit lands in limit_reached', (t) => {
  const late = given([created(), disabled]).when({ type: 'EnableCoupon' }, LATER);
  t.deepEqual(late, [{ type: 'CouponEnabled', data: { status: 'expired', at: LATER } }]);
  t.is(given([created(), disabled, ...late]).state().value, 'expired');
  const exhausted = given([...full, disabled]).when({ type: 'EnableCoupon' }, NOW);
  t.deepEqual(exhausted, [{ type: 'CouponEnabled', data: { status: 'limit_reached', at: NOW } }]);
  t.is(given([...full, disabled, ...exhausted]).state().value, 'limit_reached');
});

test('ExpireCoupon: nothing before redeemBy, CouponExpired after, nothing once expired', (t) => {
  t.deepEqual(given([created()]).when({ type: 'ExpireCoupon' }, NOW), []);
  t.deepEqual(given([created()]).when({ type: 'ExpireCoupon' }, LATER), [expired]);
  t.is(given([created(), expired]).state().value, 'expired');
  t.deepEqual(given([created(), expired]).when({ type: 'ExpireCoupon' }, LATER), []);
  t.deepEqual(given([created({ redeemBy: null })]).when({ type: 'ExpireCoupon' }, LATER), []);
});

test('ExpireCoupon and ExpirePromotionCode on an archived coupon: nothing (a stale timer)', (t) => {
  t.deepEqual(given([created(), archived]).when({ type: 'ExpireCoupon' }, LATER), []);
  t.deepEqual(given([created(), archived]).when({ type: 'ExpirePromotionCode', promotionCodeId: CODE_ID }, LATER), []);
});

test('ExpirePromotionCode: nothing before expiredAt, PromotionCodeExpired after (in any live state), nothing once expired', (t) => {
  const SOON = '2026-01-10T00:00:00.000Z';
  const base = [
    created({
      promotionCodes: [
        { id: CODE_ID, code: 'SOON', maxRedemptions: null, expiredAt: SOON, metadata: {} },
        { id: 'code-2', code: 'OPEN', maxRedemptions: null, expiredAt: null, metadata: {} },
      ],
    }),
  ];
  const expire = { type: 'ExpirePromotionCode' as const, promotionCodeId: CODE_ID };
  t.deepEqual(given(base).when(expire, '2026-01-09T23:59:59.999Z'), []);
  const codeExpired: CouponEvent = { type: 'PromotionCodeExpired', data: { promotionCodeId: CODE_ID, at: SOON } };
  t.deepEqual(given(base).when(expire, SOON), [codeExpired]);
  const state = given([...base, codeExpired]).state();
  t.is(state.value, 'active', 'the coupon and its other codes stay usable');
  t.like(state.context.coupon!.promotionCodes[0], { status: 'expired', updatedAt: SOON });
  t.like(state.context.coupon!.promotionCodes[1], { status: 'active' });
  t.deepEqual(given([...base, codeExpired]).when(expire, LATER), []);
  t.deepEqual(
    given(base).when({ type: 'ExpirePromotionCode', promotionCodeId: 'code-2' }, LATER),
    [],
    'a code without expiredAt never expires',
  );
  t.deepEqual(given(base).when({ type: 'ExpirePromotionCode', promotionCodeId: 'unknown' }, LATER), []);
  for (const history of [
    [...base, disabled],
    [...base, expired],
  ]) {
    t.deepEqual(given(history).when(expire, LATER), [{ ...codeExpired, data: { ...codeExpired.data, at: LATER } }]);
    t.is(given([...history, codeExpired]).state().context.coupon!.promotionCodes[0]!.status, 'expired');
  }
  const error = t.throws(() => given([...base, codeExpired]).when(redeem('s1', 'soon'), SOON), {
    instanceOf: InvalidStateError,
  });
  t.is(error.code, 'promotion_code_expired');
  t.deepEqual(
    given([...base, codeExpired])
      .when(redeem('s1', 'open'), SOON)
      .map((e) => e.type),
    ['PromotionCodeRedeemed'],
  );
  t.throws(() => given([...base, archived, codeExpired]).state(), { instanceOf: IllegalEventError });
});

test('expired and limit_reached coupons can be disabled', (t) => {
  t.is(given([created(), expired, disabled]).state().value, 'disabled');
  t.deepEqual(given(full).when({ type: 'DisableCoupon' }, NOW), [disabled]);
  t.is(given([...full, disabled]).state().value, 'disabled');
});

test('every live state can be archived; archive is final and idempotent', (t) => {
  for (const history of [[created()], [created(), disabled], [created(), expired], full]) {
    t.deepEqual(given(history).when({ type: 'ArchiveCoupon' }, NOW), [archived]);
    const state = given([...history, archived]).state();
    t.is(state.value, 'archived');
    t.like(state.context.coupon, { isArchived: true, isEnable: false, archivedAt: NOW });
  }
  t.deepEqual(given([created(), archived]).when({ type: 'ArchiveCoupon' }, NOW), []);
  for (const command of [
    { type: 'EnableCoupon' as const },
    { type: 'DisableCoupon' as const },
    { type: 'UpdateCoupon' as const, changes: { name: 'x' } },
  ]) {
    const error = t.throws(() => given([created(), archived]).when(command, NOW), { instanceOf: InvalidStateError });
    t.is(error.code, 'coupon_archived');
  }
});

// --- update -------------------------------------------------------------------------------

test('update records only what changed and keeps the status', (t) => {
  const events = given([created()]).when(
    { type: 'UpdateCoupon', changes: { name: 'Renamed', maxRedemptions: 3, metadata: { a: '1' } } },
    NOW,
  );
  t.deepEqual(events, [
    { type: 'CouponUpdated', data: { changes: { name: 'Renamed', metadata: { a: '1' } }, status: 'active', at: NOW } },
  ]);
  t.is(given([created(), ...events]).state().context.coupon?.name, 'Renamed');
  t.deepEqual(given([created()]).when({ type: 'UpdateCoupon', changes: { name: 'Launch' } }, NOW), []);
});

test('raising maxRedemptions on a limit_reached coupon makes it active again', (t) => {
  const events = given(full).when({ type: 'UpdateCoupon', changes: { maxRedemptions: 5 } }, NOW);
  t.deepEqual(events, [{ type: 'CouponUpdated', data: { changes: { maxRedemptions: 5 }, status: 'active', at: NOW } }]);
  t.is(given([...full, ...events]).state().value, 'active');
  t.deepEqual(given([...full, ...events]).when(redeem('s4'), NOW), [redeemed('s4')]);
});

test('lowering maxRedemptions to timesRedeemed reaches the limit; below it is refused', (t) => {
  const base = [created(), redeemed('s1')];
  const events = given(base).when({ type: 'UpdateCoupon', changes: { maxRedemptions: 1 } }, NOW);
  t.is((events[0] as Extract<CouponEvent, { type: 'CouponUpdated' }>).data.status, 'limit_reached');
  t.is(given([...base, ...events]).state().value, 'limit_reached');
  t.throws(
    () =>
      given([created(), redeemed('s1'), redeemed('s2')]).when(
        { type: 'UpdateCoupon', changes: { maxRedemptions: 1 } },
        NOW,
      ),
    { instanceOf: ValidationError },
  );
});

test('moving redeemBy into the past expires the coupon; moving it forward revives an expired one', (t) => {
  const past = given([created()]).when(
    { type: 'UpdateCoupon', changes: { redeemBy: '2026-01-01T00:00:00.000Z' } },
    NOW,
  );
  t.is(given([created(), ...past]).state().value, 'expired');
  const revived = given([created(), expired]).when(
    { type: 'UpdateCoupon', changes: { redeemBy: '2026-06-01T00:00:00.000Z' } },
    LATER,
  );
  t.is(given([created(), expired, ...revived]).state().value, 'active');
});

test('update of a disabled coupon keeps it disabled; isEnable toggles it in the same command', (t) => {
  const events = given([created(), disabled]).when({ type: 'UpdateCoupon', changes: { name: 'B' } }, NOW);
  t.is(given([created(), disabled, ...events]).state().value, 'disabled');
  const enabled = given([created(), disabled]).when(
    { type: 'UpdateCoupon', changes: { name: 'B' }, isEnable: true },
    NOW,
  );
  t.deepEqual(
    enabled.map((e) => e.type),
    ['CouponUpdated', 'CouponEnabled'],
  );
  t.is(given([created(), disabled, ...enabled]).state().value, 'active');
  const off = given([created()]).when({ type: 'UpdateCoupon', changes: {}, isEnable: false }, NOW);
  t.deepEqual(off, [disabled]);
});

// --- the machine refuses facts the decider must never produce -------------------------------

test('the machine refuses events its state does not accept', (t) => {
  t.throws(() => given([created(), disabled, redeemed('s1')]).state(), { instanceOf: IllegalEventError });
  t.throws(() => given([created(), archived, disabled]).state(), { instanceOf: IllegalEventError });
  t.throws(() => given([created(), expired, redeemed('s1')]).state(), { instanceOf: IllegalEventError });
  t.throws(() => given([...full, redeemed('s9')]).state(), { instanceOf: IllegalEventError });
  t.throws(() => given([redeemed('s1')]).state(), { instanceOf: IllegalEventError });
  t.throws(() => given([created(), { type: 'CouponEnabled', data: { status: 'active', at: NOW } }]).state(), {
    instanceOf: IllegalEventError,
  });
});

// --- discount -----------------------------------------------------------------------------

test('discountFor: rounded down to the unit of the coarsest asset, so a 6-decimal asset can still take the total', (t) => {
  const percent = (p: number) => ({ percentOff: p, amountOff: null });
  // 15% of 1.234567 USDC is 0.18518505: 0.185185 on a 6-decimal currency, the total 1.049382.
  t.is(discountFor(percent(15), 123_456_700n, 6), 18_518_500n);
  t.is(discountFor(percent(15), 123_456_700n), 18_518_505n, 'an 8-decimal currency keeps every unit');
  t.is(discountFor({ percentOff: null, amountOff: '12345678' }, 500_000_000n, 6), 12_345_600n);
  t.is(discountFor(percent(100), 123_456_700n, 6), 123_456_700n, 'all of it is the whole subtotal');
  t.is(discountFor(percent(15), 100n, 6), 0n);
});

test('discountFor: percent rounds down, amount is capped at the subtotal', (t) => {
  const percent = (p: number): Pick<Coupon, 'percentOff' | 'amountOff'> => ({ percentOff: p, amountOff: null });
  const amount = (a: string): Pick<Coupon, 'percentOff' | 'amountOff'> => ({ percentOff: null, amountOff: a });
  t.is(discountFor(percent(10), 300_000_000n), 30_000_000n);
  t.is(discountFor(percent(33.33), 1n), 0n);
  t.is(discountFor(percent(33.33), 100n), 33n);
  t.is(discountFor(percent(12.5), 99n), 12n);
  t.is(discountFor(percent(100), 12345n), 12345n);
  t.is(discountFor(amount('500'), 300n), 300n);
  t.is(discountFor(amount('100'), 300n), 100n);
  t.is(discountFor(amount('100'), 0n), 0n);
});

test("an amountOff finer than the smallest unit of its currency's coarsest asset is refused naming amountOff and that unit; a multiple of it, a percent, or a currency with no asset here is not", (t) => {
  const assets = [
    { name: 'USDC on Base', decimals: 6 },
    { name: 'USDC on BNB Smart Chain', decimals: 18 },
  ];
  const amountOff = (value: string) => ({ amountOff: value, currency: 'usdc' });
  for (const fine of ['10', '100000001', '150']) {
    const error = t.throws(() => assertAmountOffPayable(amountOff(fine), assets), { instanceOf: ValidationError });
    t.is(error.code, 'parameter_invalid');
    t.is(
      error.message,
      `amountOff: ${fine} (10^-8 USDC) cannot be taken off exactly in USDC on Base (6 decimals): the smallest unit of USDC is 0.000001 (100 scaled by 10^8), and a finer discount would be rounded down to it; use a multiple of 100`,
    );
  }
  t.notThrows(() => assertAmountOffPayable(amountOff('100'), assets));
  t.notThrows(() => assertAmountOffPayable(amountOff('10'), [{ name: 'DAI on Base', decimals: 18 }]));
  t.notThrows(() => assertAmountOffPayable(amountOff('10'), []));
  t.notThrows(() => assertAmountOffPayable({ amountOff: null, currency: null }, assets));
});
