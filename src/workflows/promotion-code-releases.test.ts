import test from 'ava';
import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import { sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import type { CouponEvent } from '../../machines/coupon.types.ts';
import { couponAggregate } from '../../machines/coupon.aggregate.ts';
import { createPromotionCodeApplier } from '../actors/apply-promotion-code.ts';
import { MERCHANT, promotionCodeWorld, TENANT } from '../actors/promotion-code.fixture.ts';
import { createTestLog } from '../projections/test-log.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { promotionCodeReleases } from './promotion-code-releases.ts';
import { eventsOfInstance, givenWhenThenWorkflow, type WorkflowCommand } from './workflow.ts';
import { createWorkflowRunner, workflowInstances } from './workflow-runner.ts';

const AT = '2026-01-01T00:20:00.000Z';
const given = givenWhenThenWorkflow(promotionCodeReleases);

/** Session `cs-1` accepting codes, and the coupons `c1` / `c2` redeeming for it (tenant `org-1` unless told). */
function logOf() {
  const { events, append } = createTestLog(AT);
  const session = (event: CheckoutSessionEvent) => append('checkout_session-cs-1', event);
  const coupon = (couponId: string, event: CouponEvent, organizationId = 'org-1') =>
    append(`coupon-${couponId}`, event, organizationId);
  session({
    type: 'CheckoutSessionCreated',
    data: { session: sessionFixture({ id: 'cs-1', allowPromotionCodes: true }) },
  });
  return {
    history: () => eventsOfInstance(promotionCodeReleases, events, 'cs-1'),
    session,
    redeemed: (couponId: string, organizationId = 'org-1') =>
      coupon(
        couponId,
        { type: 'PromotionCodeRedeemed', data: { redemptionId: 'cs-1', promotionCodeId: `${couponId}-code`, at: AT } },
        organizationId,
      ),
    released: (couponId: string) =>
      coupon(couponId, {
        type: 'PromotionCodeRedemptionReleased',
        data: {
          redemptionId: 'cs-1',
          promotionCodeId: `${couponId}-code`,
          reason: 'given back',
          status: 'active',
          promotionCodeStatus: 'active',
          at: AT,
        },
      }),
    applied: (couponId: string) =>
      session({
        type: 'DiscountApplied',
        data: {
          discount: {
            couponId,
            promotionCodeId: `${couponId}-code`,
            code: couponId.toUpperCase(),
            amountDiscount: '10000000',
            at: AT,
          },
        },
      }),
    canceled: () => session({ type: 'CheckoutSessionCanceled', data: { reason: null, at: AT } }),
    expired: () => session({ type: 'CheckoutSessionExpired', data: { at: AT } }),
  };
}

/** The commands in short: [coupon, redemption, reason, actor]. */
const short = (commands: WorkflowCommand[]) =>
  commands.map((c) => [c.id, (c.command as { redemptionId: string }).redemptionId, c.command.reason, c.context.actor]);

/** The `when` event decided on the history before it, and decided again once folded in (which must be nothing). */
function once(t: import('ava').ExecutionContext, log: ReturnType<typeof logOf>, when: () => unknown) {
  const history = log.history();
  when();
  const all = log.history();
  const [first, again] = given(history).whenTwice(all.at(-1)!);
  t.deepEqual(again, [], 'a repeat decides nothing');
  return short(first);
}

test('a redemption held while its session is open is given back once the session is canceled or expires, saying why; once', (t) => {
  for (const [end, reason] of [
    ['canceled', 'the checkout session was canceled'],
    ['expired', 'the checkout session expired unpaid'],
  ] as const) {
    const log = logOf();
    t.deepEqual(
      once(t, log, () => log.redeemed('c1')),
      [],
      'open: held (the request may still apply it)',
    );
    log.applied('c1');
    t.deepEqual(
      once(t, log, () => log[end]()),
      [['c1', 'cs-1', reason, 'system:promotion-code-releases']],
    );
  }
});

test('a redemption recorded after its session ended (a race), or for a session that took another code, is given back at once', (t) => {
  const late = logOf();
  late.expired();
  t.deepEqual(
    once(t, late, () => late.redeemed('c1')),
    [['c1', 'cs-1', 'the checkout session expired unpaid', 'system:promotion-code-releases']],
  );

  const other = logOf();
  other.redeemed('c1');
  other.redeemed('c2');
  t.deepEqual(
    once(t, other, () => other.applied('c2')),
    [['c1', 'cs-1', 'promotion code C2 was applied to the checkout session instead', 'system:promotion-code-releases']],
  );
});

test('a redemption given back already, one of another tenant’s coupon, or a session that takes no codes: nothing', (t) => {
  const released = logOf();
  released.redeemed('c1');
  released.released('c1');
  t.deepEqual(
    once(t, released, () => released.canceled()),
    [],
  );

  const foreign = logOf();
  foreign.redeemed('c1', 'org-2');
  t.deepEqual(
    once(t, foreign, () => foreign.canceled()),
    [],
    'another tenant’s coupon is not this session’s',
  );

  const plain = createTestLog(AT);
  const created = plain.append('checkout_session-cs-9', {
    type: 'CheckoutSessionCreated',
    data: { session: sessionFixture({ id: 'cs-9', allowPromotionCodes: false }) },
  });
  t.false(promotionCodeReleases.correlate(created));
  t.deepEqual(promotionCodeReleases.correlate(logOf().redeemed('c1')), { only: 'cs-1' });
});

// --- over the real deciders --------------------------------------------------------------------

type World = Awaited<ReturnType<typeof promotionCodeWorld>>;

/** The workflow over the world's log, on `readStore` (a fresh one replays the whole log). */
async function runReleases(world: World, readStore: ReadStore = world.readStore, lines: string[] = []) {
  const runner = createWorkflowRunner({
    workflow: promotionCodeReleases,
    eventStore: world.eventStore,
    readStore,
    commands: world.commands,
    clock: world.clock,
    log: (line, fields) => {
      if (fields?.level !== 'debug') lines.push(line);
    },
  });
  await runner.runOnce();
  await runner.stop();
}

/** A request that redeemed `code` for the session and stopped before applying its discount. */
const redeemOnly = (world: World, couponId: string, sessionId: string, code: string) =>
  world.commands.handle(
    couponAggregate,
    couponId,
    { type: 'RedeemPromotionCode', redemptionId: sessionId, promotionCode: code },
    { ...TENANT, actor: 'payer' },
  );

test('a redemption left by a request that stopped before its discount is held while the session is open, and given back when it expires', async (t) => {
  const world = await promotionCodeWorld(t);
  const once = await world.coupon('ONCE', { maxRedemptions: 1 });
  const session = await world.session();
  await redeemOnly(world, once.id, session.id, 'ONCE');
  await runReleases(world);
  t.is((await world.couponState(once.id)).timesRedeemed, 1, 'held: the request may still apply it');

  world.clock.set(Date.parse(session.expiresAt));
  await world.commands.handle(checkoutSessionAggregate, session.id, { type: 'ExpireCheckoutSession' }, MERCHANT);
  await runReleases(world);
  t.like(await world.couponState(once.id), { timesRedeemed: 0, status: 'active' });
  t.is(await world.readStore.collection(workflowInstances(promotionCodeReleases.name)).count({ pending: true }), 0);
});

test('a release is recorded once: the workflow run again, by another instance, or replaying the whole log gives nothing back twice', async (t) => {
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
  const lines: string[] = [];
  await runReleases(world, world.readStore, lines);
  const logged = (await world.eventStore.readAll(null, 10_000)).length;
  await runReleases(world, world.readStore, lines);
  await Promise.all([
    runReleases(world, createEmbeddedReadStore({}), lines),
    runReleases(world, createEmbeddedReadStore({}), lines),
  ]);
  t.deepEqual(lines, [], 'nothing refused or failed: a repeat is simply nothing');
  t.is((await world.eventStore.readAll(null, 10_000)).length, logged);
  t.deepEqual(
    (await world.couponEvents(twice.id))
      .filter((e) => e.type === 'PromotionCodeRedemptionReleased')
      .map((e) => [(e.data as { redemptionId: string }).redemptionId, (e.metadata as { actor: string }).actor]),
    [[canceled.id, 'system:promotion-code-releases']],
  );
  t.is((await world.couponState(twice.id)).timesRedeemed, 1);
});

test('a session completed with its code keeps the redemption for good; one redeemed for it without being applied is given back', async (t) => {
  const world = await promotionCodeWorld(t);
  const used = await world.coupon('USED');
  const unused = await world.coupon('UNUSED');
  const session = await world.session();
  await createPromotionCodeApplier(world)({ ...session, ...TENANT }, 'USED');
  // A redemption recorded for the same session whose discount never came (the request stopped).
  await redeemOnly(world, unused.id, session.id, 'UNUSED');
  await runReleases(world);
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
  await runReleases(world);
  const paid = (await world.commands.load(checkoutSessionAggregate, session.id, TENANT)).state.context.session!;
  t.is(paid.status, 'complete');
  t.is((await world.couponState(used.id)).timesRedeemed, 1, 'used for good');
});
