import type { CheckoutSession } from '../../machines/checkout-session.types.ts';

/** A coupon's redemption for a checkout session (the redemption id is the session's id). */
export type SessionRedemption = { couponId: string; promotionCodeId: string };

/**
 * What becomes of a redemption, given its checkout session as it stands:
 * - `used`: the session completed with this code's discount; it stays counted for good;
 * - `held`: the session may still be paid with it (open or part-paid with this discount, or open
 *   with no discount yet: the request that redeemed it is applying it, or stopped before it could);
 * - `release`: the session can never use it. Each of these is final (a session never reopens and
 *   a discount is never taken off), so a release decided on them is never wrong later.
 */
export type RedemptionFate = { kind: 'used' } | { kind: 'held' } | { kind: 'release'; reason: string };

export function redemptionFate(
  session: Pick<CheckoutSession, 'status' | 'discounts'>,
  redemption: SessionRedemption,
): RedemptionFate {
  if (session.status === 'canceled') return { kind: 'release', reason: 'the checkout session was canceled' };
  if (session.status === 'expired') return { kind: 'release', reason: 'the checkout session expired unpaid' };
  const applied = session.discounts[0];
  if (applied) {
    if (applied.couponId !== redemption.couponId || applied.promotionCodeId !== redemption.promotionCodeId)
      return { kind: 'release', reason: `promotion code ${applied.code} was applied to the checkout session instead` };
    return session.status === 'complete' ? { kind: 'used' } : { kind: 'held' };
  }
  if (session.status === 'open') return { kind: 'held' };
  return { kind: 'release', reason: 'the checkout session was paid without the discount' };
}
