import { assign, setup } from 'xstate';
import { evolveCoupon } from './coupon.evolve.ts';
import type { Coupon, CouponEvent, CouponStatus } from './coupon.types.ts';

export type CouponMachineContext = {
  coupon: Coupon | null;
  /** Redemption id → promotion code id, for the redemptions counted now: each counts once, whatever repeats it. */
  redemptions: Record<string, string>;
  /** Redemption id → promotion code id, for the redemptions given back: each is given back once. */
  released: Record<string, string>;
};

/** The redemption bookkeeping after an event: a redemption moves from counted to released, never back. */
function redemptionsAfter(context: CouponMachineContext, event: CouponEvent): Omit<CouponMachineContext, 'coupon'> {
  if (event.type === 'PromotionCodeRedeemed')
    return {
      redemptions: { ...context.redemptions, [event.data.redemptionId]: event.data.promotionCodeId },
      released: context.released,
    };
  if (event.type === 'PromotionCodeRedemptionReleased') {
    const { [event.data.redemptionId]: _released, ...redemptions } = context.redemptions;
    return { redemptions, released: { ...context.released, [event.data.redemptionId]: event.data.promotionCodeId } };
  }
  return { redemptions: context.redemptions, released: context.released };
}

const apply = assign<CouponMachineContext, CouponEvent, undefined, CouponEvent, never>(({ context, event }) => ({
  coupon: evolveCoupon(context.coupon, event),
  ...redemptionsAfter(context, event),
}));

/** The status an event says the coupon ends in (created, updated, enabled). */
const statusIn = (event: CouponEvent): CouponStatus | null => {
  if (event.type === 'CouponCreated') return event.data.coupon.status;
  if (
    event.type === 'CouponUpdated' ||
    event.type === 'CouponEnabled' ||
    event.type === 'PromotionCodeRedemptionReleased'
  )
    return event.data.status;
  return null;
};

/** One guarded branch per target status, so the stored fact decides where the coupon goes. */
const toStatus = <S extends CouponStatus>(status: S) => ({
  guard: { type: 'statusIs' as const, params: { status } },
  target: status,
  actions: 'apply' as const,
});

/**
 * Lifecycle of a coupon and its promotion codes. Driven by the coupon's recorded events, so
 * folding the stream through `transition()` rebuilds it. Redemptions are only accepted while it
 * is active; the last allowed one is followed by `CouponLimitReached`. `expired` is recorded by
 * `CouponExpired` (a timer's job); until then the decider still refuses by comparing `redeemBy`
 * with the current time. A promotion code's own expiry is recorded the same way
 * (`PromotionCodeExpired`, in any state but archived). A redemption given back
 * (`PromotionCodeRedemptionReleased`) is taken in every state, archived included, so the counts stay
 * exact; it moves a coupon at its limit back to active (or expired, past `redeemBy`). Archiving is
 * otherwise final: nothing else happens to an archived coupon.
 */
export const couponMachine = setup({
  types: {
    context: {} as CouponMachineContext,
    events: {} as CouponEvent,
  },
  actions: { apply },
  guards: {
    statusIs: ({ event }, params: { status: CouponStatus }) => statusIn(event) === params.status,
  },
}).createMachine({
  id: 'coupon',
  context: { coupon: null, redemptions: {}, released: {} },
  initial: 'new',
  states: {
    new: {
      on: { CouponCreated: [toStatus('active'), toStatus('disabled')] },
    },
    active: {
      on: {
        CouponUpdated: [toStatus('active'), toStatus('expired'), toStatus('limit_reached')],
        PromotionCodeRedeemed: { actions: 'apply' },
        PromotionCodeRedemptionReleased: [toStatus('active')],
        PromotionCodeLimitReached: { actions: 'apply' },
        PromotionCodeExpired: { actions: 'apply' },
        CouponLimitReached: { target: 'limit_reached', actions: 'apply' },
        CouponExpired: { target: 'expired', actions: 'apply' },
        CouponDisabled: { target: 'disabled', actions: 'apply' },
        CouponArchived: { target: 'archived', actions: 'apply' },
      },
    },
    disabled: {
      on: {
        CouponUpdated: [toStatus('disabled')],
        CouponEnabled: [toStatus('active'), toStatus('expired'), toStatus('limit_reached')],
        PromotionCodeRedemptionReleased: [toStatus('disabled')],
        PromotionCodeExpired: { actions: 'apply' },
        CouponArchived: { target: 'archived', actions: 'apply' },
      },
    },
    expired: {
      on: {
        CouponUpdated: [toStatus('active'), toStatus('expired'), toStatus('limit_reached')],
        PromotionCodeRedemptionReleased: [toStatus('expired')],
        PromotionCodeExpired: { actions: 'apply' },
        CouponDisabled: { target: 'disabled', actions: 'apply' },
        CouponArchived: { target: 'archived', actions: 'apply' },
      },
    },
    limit_reached: {
      on: {
        CouponUpdated: [toStatus('active'), toStatus('expired'), toStatus('limit_reached')],
        PromotionCodeRedemptionReleased: [toStatus('active'), toStatus('expired'), toStatus('limit_reached')],
        PromotionCodeExpired: { actions: 'apply' },
        CouponDisabled: { target: 'disabled', actions: 'apply' },
        CouponArchived: { target: 'archived', actions: 'apply' },
      },
    },
    // Not a final state: a redemption still counted when the coupon was archived can be given back.
    archived: {
      on: { PromotionCodeRedemptionReleased: { actions: 'apply' } },
    },
  },
});
