import type { Coupon, CouponEvent, PromotionCode } from './coupon.types.ts';

const updateCode = (
  codes: PromotionCode[],
  id: string,
  change: (code: PromotionCode) => PromotionCode,
): PromotionCode[] => codes.map((code) => (code.id === id ? change(code) : code));

/**
 * The one place that computes a coupon's data from its events. The statechart calls it from its
 * actions and the projection calls it directly, so the write and read sides cannot drift.
 */
export function evolveCoupon(coupon: Coupon | null, event: CouponEvent): Coupon | null {
  if (event.type === 'CouponCreated') return event.data.coupon;
  if (coupon === null) return null;
  switch (event.type) {
    case 'CouponUpdated':
      return { ...coupon, ...event.data.changes, status: event.data.status, updatedAt: event.data.at };
    case 'CouponEnabled':
      return { ...coupon, isEnable: true, status: event.data.status, updatedAt: event.data.at };
    case 'CouponDisabled':
      return { ...coupon, isEnable: false, status: 'disabled', updatedAt: event.data.at };
    case 'CouponExpired':
      return { ...coupon, status: 'expired', updatedAt: event.data.at };
    case 'CouponArchived':
      return { ...coupon, isEnable: false, isArchived: true, archivedAt: event.data.at, updatedAt: event.data.at };
    case 'PromotionCodeRedeemed':
      return {
        ...coupon,
        timesRedeemed: coupon.timesRedeemed + 1,
        updatedAt: event.data.at,
        promotionCodes: updateCode(coupon.promotionCodes, event.data.promotionCodeId, (code) => ({
          ...code,
          timesRedeemed: code.timesRedeemed + 1,
          updatedAt: event.data.at,
        })),
      };
    case 'PromotionCodeRedemptionReleased':
      return {
        ...coupon,
        timesRedeemed: coupon.timesRedeemed - 1,
        status: event.data.status,
        updatedAt: event.data.at,
        promotionCodes: updateCode(coupon.promotionCodes, event.data.promotionCodeId, (code) => ({
          ...code,
          timesRedeemed: code.timesRedeemed - 1,
          status: event.data.promotionCodeStatus,
          updatedAt: event.data.at,
        })),
      };
    case 'PromotionCodeLimitReached':
      return {
        ...coupon,
        updatedAt: event.data.at,
        promotionCodes: updateCode(coupon.promotionCodes, event.data.promotionCodeId, (code) => ({
          ...code,
          status: 'limit_reached',
          updatedAt: event.data.at,
        })),
      };
    case 'PromotionCodeExpired':
      return {
        ...coupon,
        updatedAt: event.data.at,
        promotionCodes: updateCode(coupon.promotionCodes, event.data.promotionCodeId, (code) => ({
          ...code,
          status: 'expired',
          updatedAt: event.data.at,
        })),
      };
    case 'CouponLimitReached':
      return { ...coupon, status: 'limit_reached', updatedAt: event.data.at };
  }
}

/**
 * The discount a coupon gives on a subtotal (10^8 units): percent-off rounds down, amount-off is
 * the amount; never more than the subtotal, never negative. Rounded down to a multiple of
 * 10^-`decimals` (the currency's coarsest asset), so every asset can still take the total exactly.
 */
export function discountFor(
  coupon: Pick<Coupon, 'percentOff' | 'amountOff'>,
  amountSubtotal: bigint,
  decimals = 8,
): bigint {
  if (amountSubtotal <= 0n) return 0n;
  let discount = 0n;
  if (coupon.percentOff !== null) {
    // Validated to two decimals at most, so basis points are an exact integer.
    const basisPoints = BigInt(Math.round(coupon.percentOff * 100));
    discount = (amountSubtotal * basisPoints) / 10_000n;
  } else if (coupon.amountOff !== null) {
    discount = BigInt(coupon.amountOff);
  }
  if (discount < 0n) return 0n;
  if (discount >= amountSubtotal) return amountSubtotal;
  const unit = 10n ** BigInt(8 - Math.min(Math.max(decimals, 0), 8));
  return (discount / unit) * unit;
}
