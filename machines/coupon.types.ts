import type { Environment } from '../src/event-store/event-store.ts';

/** Coupon statuses of the reference API (`CouponStatus`). Archiving is a flag (`isArchived`) and a final machine state. */
export type CouponStatus = 'active' | 'expired' | 'disabled' | 'limit_reached';
/** Where a coupon can be when it is not disabled by the merchant. */
export type CouponUsableStatus = Exclude<CouponStatus, 'disabled'>;

export type PromotionCode = {
  id: string;
  organizationId: string;
  environment: Environment;
  couponId: string;
  /** The customer-facing code as the merchant wrote it; unique per tenant regardless of case. */
  code: string;
  /** At most this many redemptions of this code (null: only the coupon's limit applies). */
  maxRedemptions: number | null;
  /** The code can no longer be redeemed from this instant (null: only the coupon's `redeemBy`). */
  expiredAt: string | null;
  timesRedeemed: number;
  /** `limit_reached` once `timesRedeemed` reaches `maxRedemptions`; `expired` once `expiredAt` passed (recorded by a timer). */
  status: 'active' | 'limit_reached' | 'expired';
  metadata: Record<string, string>;
  createdAt: string;
  updatedAt: string;
};

export type Coupon = {
  id: string;
  organizationId: string;
  environment: Environment;
  name: string;
  /** Percent taken off the subtotal (0 < p ≤ 100, at most two decimals); null for an amount-off coupon. */
  percentOff: number | null;
  /** Amount taken off, 10^8-scaled integer string; null for a percent-off coupon. */
  amountOff: string | null;
  /** Currency of `amountOff` (null for a percent-off coupon). */
  currency: string | null;
  maxRedemptions: number | null;
  redeemBy: string | null;
  timesRedeemed: number;
  status: CouponStatus;
  /** The merchant's switch: false after disable or archive. */
  isEnable: boolean;
  isArchived: boolean;
  archivedAt: string | null;
  metadata: Record<string, string>;
  promotionCodes: PromotionCode[];
  createdAt: string;
  updatedAt: string;
};

/** What a merchant may change on a coupon after creation (amounts are fixed, as in the reference). */
export type CouponChanges = Partial<Pick<Coupon, 'name' | 'maxRedemptions' | 'redeemBy' | 'metadata'>>;

/** The domain events of a coupon and its promotion codes, as stored in the log (`type` + `data`). */
export type CouponEvent =
  | { type: 'CouponCreated'; data: { coupon: Coupon } }
  /** `status` is where the coupon stands after the change (an update may lift or reach a limit). */
  | { type: 'CouponUpdated'; data: { changes: CouponChanges; status: CouponStatus; at: string } }
  | { type: 'CouponEnabled'; data: { status: CouponUsableStatus; at: string } }
  | { type: 'CouponDisabled'; data: { at: string } }
  | { type: 'CouponExpired'; data: { at: string } }
  | { type: 'CouponArchived'; data: { at: string } }
  /** One redemption, e.g. by a checkout session (`redemptionId` = its id): counted once per id. */
  | { type: 'PromotionCodeRedeemed'; data: { redemptionId: string; promotionCodeId: string; at: string } }
  /**
   * A redemption given back (its checkout session ended without using it): both counts fall by one,
   * once per redemption id. `status` and `promotionCodeStatus` are where the coupon and the code
   * stand after it (a coupon or code at its limit is usable again).
   */
  | {
      type: 'PromotionCodeRedemptionReleased';
      data: {
        redemptionId: string;
        promotionCodeId: string;
        reason: string;
        status: CouponStatus;
        promotionCodeStatus: PromotionCode['status'];
        at: string;
      };
    }
  | { type: 'PromotionCodeLimitReached'; data: { promotionCodeId: string; at: string } }
  | { type: 'PromotionCodeExpired'; data: { promotionCodeId: string; at: string } }
  | { type: 'CouponLimitReached'; data: { at: string } };

export type CouponEventType = CouponEvent['type'];
