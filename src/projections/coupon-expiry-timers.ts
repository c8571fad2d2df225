import type { Coupon } from '../../machines/coupon.types.ts';
import type { Collection } from '../read-store/read-store.ts';
import type { TimerDoc } from './collections.ts';
import { setTimer, type WantedTimer } from './set-timer.ts';

export const COUPON_EXPIRY_TIMER = 'coupon.expire';
export const PROMOTION_CODE_EXPIRY_TIMER = 'coupon.promotion_code.expire';

export const couponExpiryTimerId = (couponId: string): string => `${COUPON_EXPIRY_TIMER}:${couponId}`;
export const promotionCodeExpiryTimerId = (promotionCodeId: string): string =>
  `${PROMOTION_CODE_EXPIRY_TIMER}:${promotionCodeId}`;

/**
 * The expiry timers a coupon asks for, by timer id: one at `redeemBy` while the coupon is active
 * (a disabled or exhausted coupon learns it expired when it is enabled or raised again), and one
 * at each promotion code's own `expiredAt` while that code is active. An archived coupon has none.
 */
export function couponExpiryTimers(coupon: Coupon, version: number): Map<string, WantedTimer> {
  const base = { recordId: coupon.id, organizationId: coupon.organizationId, environment: coupon.environment, version };
  const live = !coupon.isArchived;
  const timers = new Map<string, WantedTimer>();
  timers.set(
    couponExpiryTimerId(coupon.id),
    live && coupon.status === 'active' && coupon.redeemBy !== null
      ? { ...base, kind: COUPON_EXPIRY_TIMER, fireAt: Date.parse(coupon.redeemBy) }
      : null,
  );
  for (const code of coupon.promotionCodes) {
    timers.set(
      promotionCodeExpiryTimerId(code.id),
      live && code.status === 'active' && code.expiredAt !== null
        ? {
            ...base,
            kind: PROMOTION_CODE_EXPIRY_TIMER,
            fireAt: Date.parse(code.expiredAt),
            args: { promotionCodeId: code.id },
          }
        : null,
    );
  }
  return timers;
}

/** Put or remove the coupon's expiry timers as its state asks; the coupons projection calls this after each change. */
export async function setCouponExpiryTimers(
  timers: Collection<TimerDoc>,
  coupon: Coupon,
  version: number,
): Promise<void> {
  for (const [id, wanted] of couponExpiryTimers(coupon, version)) await setTimer(timers, id, wanted);
}
