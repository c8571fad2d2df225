import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { createCommandHandler } from '../src/actors/command-handler.ts';
import { streamIdOf } from '../src/actors/aggregate.ts';
import type { EventStore } from '../src/event-store/event-store.ts';
import { createSqliteEventStore } from '../src/event-store/sqlite-event-store.ts';
import { createManualClock } from '../src/shared/clock.ts';
import { InvalidStateError } from '../src/shared/errors.ts';
import { newId } from '../src/shared/ids.ts';
import { couponAggregate } from './coupon.aggregate.ts';
import { conflictCountingStore } from '../test/support/counting-stores.ts';
import type { NewCoupon } from './coupon.decide.ts';

const tenant = { organizationId: 'org-1', environment: 'test' as const, actor: 'test' };

async function sqliteStore(t: ExecutionContext): Promise<EventStore> {
  const dir = await mkdtemp(join(tmpdir(), 'weir-coupons-'));
  const eventStore = createSqliteEventStore({ path: join(dir, 'events.sqlite3') });
  t.teardown(async () => {
    await eventStore.close();
    await rm(dir, { recursive: true, force: true });
  });
  return eventStore;
}

const couponWithCode = (maxRedemptions: number): NewCoupon => ({
  id: newId(),
  organizationId: tenant.organizationId,
  environment: tenant.environment,
  name: 'Ten only',
  percentOff: 10,
  amountOff: null,
  currency: null,
  maxRedemptions: null,
  redeemBy: null,
  metadata: {},
  isEnable: true,
  promotionCodes: [{ id: newId(), code: 'TENONLY', maxRedemptions, expiredAt: null, metadata: {} }],
});

test('50 parallel redemptions of a code with maxRedemptions 10: exactly 10 recorded, 40 refused', async (t) => {
  const eventStore = await sqliteStore(t);
  const counting = conflictCountingStore(eventStore);
  // Every contender may lose up to 10 rounds (one per slot) before it sees the limit: room to retry.
  const commands = createCommandHandler({ eventStore: counting, clock: createManualClock() });
  const coupon = couponWithCode(10);
  await commands.handle(couponAggregate, coupon.id, { type: 'CreateCoupon', coupon }, tenant);

  const results = await Promise.allSettled(
    Array.from({ length: 50 }, (_, i) =>
      commands.handle(
        couponAggregate,
        coupon.id,
        { type: 'RedeemPromotionCode', redemptionId: `session-${i}`, promotionCode: 'tenonly' },
        tenant,
      ),
    ),
  );

  const accepted = results.filter((r) => r.status === 'fulfilled');
  const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  t.is(accepted.length, 10);
  t.is(refused.length, 40);
  for (const r of refused) {
    t.true(r.reason instanceof InvalidStateError, String(r.reason));
    t.is((r.reason as InvalidStateError).code, 'promotion_code_limit_reached');
  }
  t.true(counting.conflicts() > 0, 'the racing appends really conflicted');

  const stream = await eventStore.readStream(streamIdOf('coupon', coupon.id));
  t.is(stream.filter((e) => e.type === 'PromotionCodeRedeemed').length, 10);
  t.is(stream.filter((e) => e.type === 'PromotionCodeLimitReached').length, 1);
  t.is(
    new Set(
      stream
        .filter((e) => e.type === 'PromotionCodeRedeemed')
        .map((e) => (e.data as { redemptionId: string }).redemptionId),
    ).size,
    10,
  );
  const { state } = await commands.load(couponAggregate, coupon.id, null);
  t.is(state.context.coupon?.timesRedeemed, 10);
  t.is(state.context.coupon?.promotionCodes[0]?.status, 'limit_reached');
});

test('a repeated redemption id counts once, also when the repeats race each other', async (t) => {
  const eventStore = await sqliteStore(t);
  const commands = createCommandHandler({ eventStore, clock: createManualClock() });
  const coupon = couponWithCode(10);
  await commands.handle(couponAggregate, coupon.id, { type: 'CreateCoupon', coupon }, tenant);
  const redeem = () =>
    commands.handle(
      couponAggregate,
      coupon.id,
      { type: 'RedeemPromotionCode', redemptionId: 'session-a', promotionCode: 'TenOnly' },
      tenant,
    );

  const first = await redeem();
  t.is(first.events.length, 1);
  const again = await redeem();
  t.is(again.events.length, 0, 'the repeat appends nothing');
  const racing = await Promise.all(Array.from({ length: 10 }, redeem));
  t.true(racing.every((r) => r.events.length === 0));

  const stream = await eventStore.readStream(streamIdOf('coupon', coupon.id));
  t.is(stream.filter((e) => e.type === 'PromotionCodeRedeemed').length, 1);
  const { state } = await commands.load(couponAggregate, coupon.id, null);
  t.is(state.context.coupon?.timesRedeemed, 1);
});

test('with the default retry budget, racing first redemptions of one id still count once', async (t) => {
  const eventStore = await sqliteStore(t);
  const commands = createCommandHandler({ eventStore, clock: createManualClock() });
  const coupon = couponWithCode(10);
  await commands.handle(couponAggregate, coupon.id, { type: 'CreateCoupon', coupon }, tenant);
  await Promise.all(
    Array.from({ length: 20 }, () =>
      commands.handle(
        couponAggregate,
        coupon.id,
        { type: 'RedeemPromotionCode', redemptionId: 'session-b', promotionCode: 'TENONLY' },
        tenant,
      ),
    ),
  );
  const stream = await eventStore.readStream(streamIdOf('coupon', coupon.id));
  t.is(stream.filter((e) => e.type === 'PromotionCodeRedeemed').length, 1);
});
