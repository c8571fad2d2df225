import type { Aggregate } from './aggregate.ts';
import type { Environment } from '../event-store/event-store.ts';
import { ConflictError } from '../shared/errors.ts';
import { deterministicId } from '../shared/ids.ts';

/**
 * A reservation of a promotion code's text for one tenant. Its stream id is derived from the
 * tenant and the lower-cased code, so two coupons claiming `SUMMER` and `summer` append to the
 * same stream and the log's expected-revision check lets only one of them hold it.
 */
export type PromotionCodeClaim = {
  code: string;
  couponId: string;
  promotionCodeId: string;
  organizationId: string;
  environment: Environment;
  claimedAt: string;
};

export type PromotionCodeClaimEvent = { type: 'PromotionCodeClaimed'; data: { claim: PromotionCodeClaim } };

export type PromotionCodeClaimCommand = {
  type: 'ClaimPromotionCode';
  claim: Omit<PromotionCodeClaim, 'claimedAt'>;
  /**
   * A coupon id the caller has checked was never created (a create that failed after reserving
   * its codes): a claim held by it may be taken over.
   */
  replacingAbandonedCoupon?: string;
};

/**
 * A claim whose coupon still does not exist this long after it was made was left by a create that
 * failed: another coupon may take it. A younger one may belong to a create still under way.
 */
export const CLAIM_ABANDONED_AFTER_MS = 60_000;

export const promotionCodeClaimId = (
  tenant: { organizationId: string; environment: Environment },
  code: string,
): string => deterministicId(`promotion_code:${tenant.organizationId}:${tenant.environment}:${code.toLowerCase()}`);

export const promotionCodeClaimAggregate: Aggregate<
  PromotionCodeClaim | null,
  PromotionCodeClaimEvent,
  PromotionCodeClaimCommand
> = {
  category: 'promotion_code_claim',
  initialState: () => null,
  evolve: (_claim, event) => event.data.claim,
  decide(claim, command, { now }) {
    const wanted = command.claim;
    if (claim && claim.couponId === wanted.couponId && claim.promotionCodeId === wanted.promotionCodeId) return [];
    if (claim && claim.couponId !== command.replacingAbandonedCoupon) {
      throw new ConflictError(
        `promotion code ${wanted.code} is already in use (codes are unique regardless of case)`,
        'promotion_code_in_use',
      );
    }
    return [{ type: 'PromotionCodeClaimed', data: { claim: { ...wanted, claimedAt: now } } }];
  },
};
