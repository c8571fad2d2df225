import { evolveCheckoutSession } from '../../machines/checkout-session.evolve.ts';
import { isTenants } from '../tenancy/same-tenant.ts';
import type { CheckoutSession, CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import { couponAggregate } from '../../machines/coupon.aggregate.ts';
import type { CouponEvent } from '../../machines/coupon.types.ts';
import { redemptionFate } from '../actors/promotion-code-redemption-fate.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { actingFor, commandFor, type Correlation, type Workflow, type WorkflowCommand } from './workflow.ts';

/** A redemption of a coupon's promotion code for the session, and whether the coupon gave it back. */
type Redemption = { promotionCodeId: string; released: boolean };

/** One checkout session that accepts promotion codes: the session as its log has it, and its redemptions by coupon. */
export type PromotionCodeReleasesState = {
  session: CheckoutSession | null;
  redemptions: Record<string, Redemption>;
};

const SESSION_PREFIX = 'checkout_session-';
const COUPON_PREFIX = 'coupon-';

const couponIdOf = (event: RecordedEvent): string => event.streamId.slice(COUPON_PREFIX.length);

/** The reason to give the coupon's redemption back, when the session as it stands can never use it. */
function releaseReason(state: PromotionCodeReleasesState, couponId: string): string | null {
  const redemption = state.redemptions[couponId];
  if (!state.session || !redemption || redemption.released) return null;
  const fate = redemptionFate(state.session, { couponId, promotionCodeId: redemption.promotionCodeId });
  return fate.kind === 'release' ? fate.reason : null;
}

function evolveCoupon(state: PromotionCodeReleasesState, event: RecordedEvent): PromotionCodeReleasesState {
  const typed = event as unknown as CouponEvent;
  const couponId = couponIdOf(event);
  const session = state.session;
  if (typed.type === 'PromotionCodeRedeemed') {
    // Only a session of the coupon's own tenant redeems it.
    if (!isTenants(session, event.metadata) || state.redemptions[couponId]) return state;
    const redemption = { promotionCodeId: typed.data.promotionCodeId, released: false };
    return { ...state, redemptions: { ...state.redemptions, [couponId]: redemption } };
  }
  const known = state.redemptions[couponId];
  if (typed.type !== 'PromotionCodeRedemptionReleased' || !known || known.released) return state;
  return { ...state, redemptions: { ...state.redemptions, [couponId]: { ...known, released: true } } };
}

/**
 * Promotion code releases, per checkout session that accepts codes: a redemption it holds (the
 * session's id is the redemption's id) is given back to its coupon once the session can never use
 * it (canceled, expired unpaid, paid without the discount, or another code applied: see
 * `redemptionFate`), with the coupon's own `ReleasePromotionCodeRedemption`. Whichever comes later
 * in the log, the redemption or the session's change, decides, so a redemption recorded as its
 * session ended (a race, or a request that stopped between redeeming and applying) is given back
 * too. The coupon's decider gives a redemption back at most once: a repeat or a replay changes
 * nothing.
 */
export const promotionCodeReleases: Workflow<PromotionCodeReleasesState, WorkflowCommand> = {
  name: 'promotion-code-releases',
  version: 1,
  categories: ['checkout_session', 'coupon'],
  aggregates: [couponAggregate],
  correlate(event): Correlation {
    if (event.streamId.startsWith(COUPON_PREFIX)) {
      const typed = event as unknown as CouponEvent;
      // A coupon's stream holds the redemptions of many sessions: each reaches its session alone.
      return typed.type === 'PromotionCodeRedeemed' || typed.type === 'PromotionCodeRedemptionReleased'
        ? { only: typed.data.redemptionId }
        : false;
    }
    const typed = event as unknown as CheckoutSessionEvent;
    if (typed.type === 'CheckoutSessionCreated')
      return typed.data.session.allowPromotionCodes ? event.streamId.slice(SESSION_PREFIX.length) : false;
    return null;
  },
  initialState: () => ({ session: null, redemptions: {} }),
  evolve(state, event) {
    if (event.streamId.startsWith(COUPON_PREFIX)) return evolveCoupon(state, event);
    const session = evolveCheckoutSession(state.session, event as unknown as CheckoutSessionEvent);
    return session === state.session ? state : { ...state, session };
  },
  decide(event, state) {
    const next = promotionCodeReleases.evolve(state, event);
    const session = next.session;
    if (!session) return [];
    // Given back now: a redemption whose session has just become one that can never use it.
    return Object.keys(next.redemptions).flatMap((couponId) => {
      const reason = releaseReason(next, couponId);
      if (reason === null || releaseReason(state, couponId) !== null) return [];
      const context = actingFor(event, 'system:promotion-code-releases', session.id);
      const command = { type: 'ReleasePromotionCodeRedemption', redemptionId: session.id, reason } as const;
      return [commandFor(couponAggregate, couponId, command, context)];
    });
  },
};
