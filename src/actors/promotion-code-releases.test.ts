import test from 'ava';
import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CheckoutSession, SessionDiscount } from '../../machines/checkout-session.types.ts';
import { couponAggregate } from '../../machines/coupon.aggregate.ts';
import {
  PROMOTION_CODE_REDEMPTIONS,
  PROMOTION_CODE_RELEASES,
  type PromotionCodeReleaseDoc,
} from '../projections/promotion-code-redemptions.projection.ts';
import { createPromotionCodeApplier } from './apply-promotion-code.ts';
import { MERCHANT, promotionCodeWorld, TENANT } from './promotion-code.fixture.ts';
import { redemptionFate } from './promotion-code-redemption-fate.ts';
import { createPromotionCodeReleases } from './promotion-code-releases.ts';

// --- the fate of a redemption, given its session ------------------------------------------------

const REDEMPTION = { couponId: 'c1', promotionCodeId: 'p1' };
const discount = (couponId: string, promotionCodeId: string): SessionDiscount => ({
  couponId,
  promotionCodeId,
  code: promotionCodeId.toUpperCase(),
  amountDiscount: '1',
  at: '2026-01-01T00:00:00.000Z',
});
const fateOf = (status: CheckoutSession['status'], discounts: SessionDiscount[] = []) =>
  redemptionFate({ status, discounts }, REDEMPTION);

test('given a session canceled or expired, with its discount or none, then the redemption is released', (t) => {
  for (const discounts of [[], [discount('c1', 'p1')]]) {
    t.deepEqual(fateOf('canceled', discounts), { kind: 'release', reason: 'the checkout session was canceled' });
    t.deepEqual(fateOf('expired', discounts), { kind: 'release', reason: 'the checkout session expired unpaid' });
  }
});

test("given a session with another code's discount, then released; with its own, held until completed, then used", (t) => {
  for (const other of [discount('c2', 'p2'), discount('c1', 'p2')])
    for (const status of ['open', 'incomplete', 'complete'] as const)
      t.deepEqual(fateOf(status, [other]), {
        kind: 'release',
        reason: `promotion code ${other.code} was applied to the checkout session instead`,
      });
  t.deepEqual(fateOf('open', [discount('c1', 'p1')]), { kind: 'held' });
  t.deepEqual(fateOf('incomplete', [discount('c1', 'p1')]), { kind: 'held' });
  t.deepEqual(fateOf('complete', [discount('c1', 'p1')]), { kind: 'used' });
});

test('given a session with no discount yet, then held while open, released once paid (in full or in part) without it', (t) => {
  t.deepEqual(fateOf('open'), { kind: 'held' });
  for (const status of ['complete', 'incomplete'] as const)
    t.deepEqual(fateOf(status), { kind: 'release', reason: 'the checkout session was paid without the discount' });
});

// --- the step, over a real log -----------------------------------------------------------------

test('a redemption left by a request that stopped before its discount is held while the session is open, and given back by the releases when it expires', async (t) => {
  const world = await promotionCodeWorld(t);
  const once = await world.coupon('ONCE', { maxRedemptions: 1 });
  const session = await world.session();
  const releases = createPromotionCodeReleases(world);
  t.teardown(() => releases.stop());
  await world.commands.handle(
    couponAggregate,
    once.id,
    { type: 'RedeemPromotionCode', redemptionId: session.id, promotionCode: 'ONCE' },
    { ...TENANT, actor: 'payer' },
  );
  await world.settled();
  await releases.runOnce();
  t.is((await world.couponState(once.id)).timesRedeemed, 1, 'held: the request may still apply it');
  t.is(await world.readStore.collection(PROMOTION_CODE_REDEMPTIONS).count({}), 1);

  world.clock.set(Date.parse(session.expiresAt));
  await world.commands.handle(checkoutSessionAggregate, session.id, { type: 'ExpireCheckoutSession' }, MERCHANT);
  await world.settled();
  await releases.runOnce();
  await world.settled();
  t.like(await world.couponState(once.id), { timesRedeemed: 0, status: 'active' });
  t.is(await world.readStore.collection(PROMOTION_CODE_RELEASES).count({}), 0);
  t.is(await world.readStore.collection(PROMOTION_CODE_REDEMPTIONS).count({}), 0);
});

test('a release already recorded is not recorded again: the step run again on work still listed (a stop before the list moved), by another instance, or after a rebuild from the log', async (t) => {
  const world = await promotionCodeWorld(t);
  const twice = await world.coupon('TWICE', { maxRedemptions: 2 });
  const kept = await world.session();
  const canceled = await world.session();
  const apply = createPromotionCodeApplier(world);
  for (const session of [kept, canceled]) await apply({ ...session, ...TENANT }, 'TWICE');
  await world.commands.handle(
    checkoutSessionAggregate,
    canceled.id,
    { type: 'CancelCheckoutSession', reason: null },
    { ...TENANT, actor: 'payer' },
  );
  await world.settled();
  const listed = await world.readStore.collection<PromotionCodeReleaseDoc>(PROMOTION_CODE_RELEASES).find({});
  t.deepEqual(
    listed.map((doc) => doc._id),
    [`${twice.id}:${canceled.id}`],
  );

  const first = createPromotionCodeReleases(world);
  await first.runOnce();
  await world.settled();
  await first.stop();
  t.is(await world.readStore.collection(PROMOTION_CODE_RELEASES).count({}), 0);

  // The work back on the list, as if the process stopped after the append and before the projection.
  await world.readStore.collection<PromotionCodeReleaseDoc>(PROMOTION_CODE_RELEASES).put(listed[0]!);
  const lines: string[] = [];
  const restarted = createPromotionCodeReleases({ ...world, log: (line) => lines.push(line) });
  const other = createPromotionCodeReleases({ ...world, log: (line) => lines.push(line) });
  await Promise.all([restarted.runOnce(), other.runOnce()]);
  await Promise.all([restarted.stop(), other.stop()]);
  t.deepEqual(lines, [], 'nothing refused or failed: a repeat is simply nothing');

  await world.projections.rebuild();
  t.is(await world.readStore.collection(PROMOTION_CODE_RELEASES).count({}), 0, 'rebuilt: nothing left to give back');
  t.deepEqual(
    (await world.readStore.collection(PROMOTION_CODE_REDEMPTIONS).find({})).map((doc) => doc._id),
    [`${twice.id}:${kept.id}`],
  );
  t.deepEqual(
    (await world.couponEvents(twice.id))
      .filter((e) => e.type === 'PromotionCodeRedemptionReleased')
      .map((e) => (e.data as { redemptionId: string }).redemptionId),
    [canceled.id],
  );
  t.is((await world.couponState(twice.id)).timesRedeemed, 1);
});

test('a session completed with its code keeps the redemption for good; one completed without it gives it back', async (t) => {
  const world = await promotionCodeWorld(t);
  const used = await world.coupon('USED');
  const unused = await world.coupon('UNUSED');
  const session = await world.session();
  await createPromotionCodeApplier(world)({ ...session, ...TENANT }, 'USED');
  // A redemption recorded for the same session whose discount never came (the request stopped).
  await world.commands.handle(
    couponAggregate,
    unused.id,
    { type: 'RedeemPromotionCode', redemptionId: session.id, promotionCode: 'UNUSED' },
    { ...TENANT, actor: 'payer' },
  );
  await world.settled();
  const releases = createPromotionCodeReleases(world);
  t.teardown(() => releases.stop());
  await releases.runOnce();
  t.is((await world.couponState(unused.id)).timesRedeemed, 0, 'another code is on the session: given back at once');

  const payment = {
    transferId: 't1',
    network: 'weir-testnet',
    chainId: 7357,
    transactionHash: `0x${'1'.padStart(64, '0')}`,
    logIndex: 0,
    blockNumber: 10,
    blockHash: '0xb10c',
    fromAddress: '0xbeef',
    toAddress: session.addresses[0]!.paymentAddress,
    asset: session.addresses[0]!.asset,
    amountRaw: '2700000',
    amount: '270000000',
  };
  for (const command of [
    { type: 'RecordTransfer', payment },
    { type: 'ConfirmTransfer', transferId: 't1' },
  ] as const)
    await world.commands.handle(checkoutSessionAggregate, session.id, command, MERCHANT);
  await world.settled();
  await releases.runOnce();
  t.is((await commandsSession(world, session.id)).status, 'complete');
  t.is((await world.couponState(used.id)).timesRedeemed, 1);
  t.is(await world.readStore.collection(PROMOTION_CODE_REDEMPTIONS).count({}), 0, 'used for good: no longer held');
  t.is(await world.readStore.collection(PROMOTION_CODE_RELEASES).count({}), 0);
});

const commandsSession = async (world: Awaited<ReturnType<typeof promotionCodeWorld>>, id: string) =>
  (await world.commands.load(checkoutSessionAggregate, id, TENANT)).state.context.session!;
