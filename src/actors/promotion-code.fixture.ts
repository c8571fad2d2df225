import type { ExecutionContext } from 'ava';
import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import { sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSession } from '../../machines/checkout-session.types.ts';
import { couponAggregate } from '../../machines/coupon.aggregate.ts';
import type { NewCoupon } from '../../machines/coupon.decide.ts';
import type { CouponEvent } from '../../machines/coupon.types.ts';
import { createTestRail } from '../chain-ingest/test-rail.ts';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { ALL_PROJECTIONS } from '../projections/all-projections.ts';
import { createProjectionRunner } from '../projections/projection-runner.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { newId } from '../shared/ids.ts';
import { createCommandHandler } from './command-handler.ts';

export const TENANT = { organizationId: 'org-1', environment: 'test' as const };
export const MERCHANT = { ...TENANT, actor: 'merchant' };

/**
 * A log, the read models over it and a command handler, at 2026-01-01T00:10Z on a manual clock:
 * what the promotion code workflow and its releases run on in the tests beside them.
 */
export async function promotionCodeWorld(t: ExecutionContext) {
  const clock = createManualClock(Date.parse('2026-01-01T00:10:00.000Z'));
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  const readStore = createEmbeddedReadStore({});
  const commands = createCommandHandler({ eventStore, clock });
  const projections = createProjectionRunner({ eventStore, readStore, projections: ALL_PROJECTIONS, clock });
  await projections.start();
  t.teardown(async () => {
    await projections.stop();
    await eventStore.close();
  });
  const settled = async () => {
    const head = await eventStore.headPosition();
    if (head !== null) await projections.waitFor(head);
  };

  /** A coupon with one promotion code `code`; answers the coupon id and the code's id. */
  async function coupon(code: string, terms: Partial<NewCoupon> = {}) {
    const id = newId();
    const promotionCodeId = newId();
    const created: NewCoupon = {
      id,
      ...TENANT,
      name: code,
      percentOff: 10,
      amountOff: null,
      currency: null,
      maxRedemptions: null,
      redeemBy: null,
      metadata: {},
      isEnable: true,
      promotionCodes: [{ id: promotionCodeId, code, maxRedemptions: null, expiredAt: null, metadata: {} }],
      ...terms,
    };
    await commands.handle(couponAggregate, id, { type: 'CreateCoupon', coupon: created }, MERCHANT);
    await settled();
    return { id, promotionCodeId };
  }

  /** An open session of 3 USDC accepting codes, expiring at 01:00Z. */
  async function session(overrides: Partial<CheckoutSession> = {}) {
    const created = sessionFixture({ id: newId(), allowPromotionCodes: true, ...overrides });
    await commands.handle(
      checkoutSessionAggregate,
      created.id,
      { type: 'CreateCheckoutSession', session: created },
      MERCHANT,
    );
    await settled();
    return created;
  }

  const couponState = async (id: string) => (await commands.load(couponAggregate, id, TENANT)).state.context.coupon!;
  const couponEvents = async (id: string) =>
    (await eventStore.readStream(`coupon-${id}`)).map((e) => e as unknown as CouponEvent & { metadata: unknown });

  return {
    clock,
    eventStore,
    readStore,
    commands,
    projections,
    settled,
    coupon,
    session,
    couponState,
    couponEvents,
    rail: createTestRail(),
  };
}
