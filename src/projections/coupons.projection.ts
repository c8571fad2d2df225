import { evolveCoupon } from '../../machines/coupon.evolve.ts';
import type { Coupon, CouponEvent, PromotionCode } from '../../machines/coupon.types.ts';
import type { Environment } from '../event-store/event-store.ts';
import type { ReadDocument, ReadStore } from '../read-store/read-store.ts';
import { COLLECTIONS, type TimerDoc } from './collections.ts';
import { setCouponExpiryTimers } from './coupon-expiry-timers.ts';
import type { Projection } from './projection.ts';
import { foldIntoDocument, type RecordDoc } from './record-document.ts';

export type CouponDoc = RecordDoc<Coupon>;
/** One promotion code, keyed for lookup by what a payer types: `<org>:<env>:<lower-cased code>`. */
export type PromotionCodeDoc = ReadDocument & PromotionCode & { codeLower: string };

export const COUPONS = 'coupons';
export const PROMOTION_CODES = 'promotion_codes';

const PREFIX = 'coupon-';

export const promotionCodeKey = (tenant: { organizationId: string; environment: Environment }, code: string): string =>
  `${tenant.organizationId}:${tenant.environment}:${code.toLowerCase()}`;

/** The tenant's promotion code with this text (any case), or null. */
export async function findPromotionCode(
  readStore: ReadStore,
  tenant: { organizationId: string; environment: Environment },
  code: string,
): Promise<PromotionCodeDoc | null> {
  return readStore.collection<PromotionCodeDoc>(PROMOTION_CODES).get(promotionCodeKey(tenant, code));
}

/**
 * Coupons with their promotion codes, a promotion-code lookup by tenant and code, and the durable
 * timers that record a coupon's `redeemBy` and a code's `expiredAt` when they pass.
 */
export const couponsProjection: Projection = {
  name: 'coupons',
  collections: [COUPONS, PROMOTION_CODES, COLLECTIONS.timers],
  categories: ['coupon'],
  async apply(event, store) {
    if (!event.streamId.startsWith(PREFIX)) return;
    const coupons = store.collection<CouponDoc>(COUPONS);
    const id = event.streamId.slice(PREFIX.length);
    const typed = event as unknown as CouponEvent;
    await foldIntoDocument<Coupon, CouponEvent>(coupons, id, event, evolveCoupon, async (next) => {
      // A redemption never changes when the coupon or a code expires.
      if (typed.type !== 'PromotionCodeRedeemed')
        await setCouponExpiryTimers(store.collection<TimerDoc>(COLLECTIONS.timers), next, event.revision);
      const codes = store.collection<PromotionCodeDoc>(PROMOTION_CODES);
      for (const code of next.promotionCodes) {
        await codes.put({ ...code, codeLower: code.code.toLowerCase(), _id: promotionCodeKey(next, code.code) });
      }
    });
  },
};
