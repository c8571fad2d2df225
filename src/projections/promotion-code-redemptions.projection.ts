import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import type { CouponEvent } from '../../machines/coupon.types.ts';
import { redemptionFate } from '../actors/promotion-code-redemption-fate.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import type { ReadDocument, ReadStore } from '../read-store/read-store.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from './collections.ts';
import type { Projection } from './projection.ts';

/** Redemptions counted for checkout sessions that may still use them; `_id` is `<coupon id>:<session id>`. */
export const PROMOTION_CODE_REDEMPTIONS = 'promotion_code_redemptions';
/** Redemptions to give back: the work list of `promotion-code-releases.ts`; `_id` as above. */
export const PROMOTION_CODE_RELEASES = 'promotion_code_releases';

export type PromotionCodeRedemptionDoc = ReadDocument & {
  couponId: string;
  promotionCodeId: string;
  checkoutSessionId: string;
  organizationId: string;
  environment: string;
  redeemedAt: string;
};
export type PromotionCodeReleaseDoc = PromotionCodeRedemptionDoc & {
  /** Why it is given back, recorded on its `PromotionCodeRedemptionReleased`. */
  reason: string;
  /** When the session's fate was recorded: the order of the work. */
  at: string;
};

const COUPON_PREFIX = 'coupon-';
const SESSION_PREFIX = 'checkout_session-';

/** The session events after which a redemption it holds may be used for good or never. */
const FATE_CHANGES: ReadonlySet<CheckoutSessionEvent['type']> = new Set<CheckoutSessionEvent['type']>([
  'DiscountApplied',
  'CheckoutSessionPartiallyPaid',
  'CheckoutSessionCompleted',
  'CheckoutSessionExpired',
  'CheckoutSessionCanceled',
]);

const keyOf = (couponId: string, sessionId: string): string => `${couponId}:${sessionId}`;

/** Keep, end or list for release one redemption, as its session stands now. */
async function settle(
  store: ReadStore,
  redemption: PromotionCodeRedemptionDoc,
  session: CheckoutSessionDoc,
  at: string,
): Promise<void> {
  const held = store.collection<PromotionCodeRedemptionDoc>(PROMOTION_CODE_REDEMPTIONS);
  const fate = redemptionFate(session, redemption);
  if (fate.kind === 'held') {
    await held.put(redemption);
    return;
  }
  await held.delete(redemption._id);
  if (fate.kind === 'release')
    await store
      .collection<PromotionCodeReleaseDoc>(PROMOTION_CODE_RELEASES)
      .put({ ...redemption, reason: fate.reason, at });
}

async function applyCouponEvent(event: RecordedEvent, store: ReadStore): Promise<void> {
  const typed = event as unknown as CouponEvent;
  const couponId = event.streamId.slice(COUPON_PREFIX.length);
  if (typed.type === 'PromotionCodeRedemptionReleased') {
    const id = keyOf(couponId, typed.data.redemptionId);
    await store.collection(PROMOTION_CODE_REDEMPTIONS).delete(id);
    await store.collection(PROMOTION_CODE_RELEASES).delete(id);
    return;
  }
  if (typed.type !== 'PromotionCodeRedeemed') return;
  const { redemptionId, promotionCodeId, at } = typed.data;
  const session = await store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(redemptionId);
  // Only a checkout session of the coupon's own tenant redeems; anything else is not this work's.
  if (
    !session ||
    session.organizationId !== event.metadata.organizationId ||
    session.environment !== event.metadata.environment
  )
    return;
  const redemption: PromotionCodeRedemptionDoc = {
    _id: keyOf(couponId, redemptionId),
    couponId,
    promotionCodeId,
    checkoutSessionId: redemptionId,
    organizationId: session.organizationId,
    environment: session.environment,
    redeemedAt: at,
  };
  await settle(store, redemption, session, event.metadata.occurredAt);
}

async function applySessionEvent(event: RecordedEvent, store: ReadStore): Promise<void> {
  if (!FATE_CHANGES.has(event.type as CheckoutSessionEvent['type'])) return;
  const sessionId = event.streamId.slice(SESSION_PREFIX.length);
  const session = await store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(sessionId);
  if (!session) return;
  const held = await store
    .collection<PromotionCodeRedemptionDoc>(PROMOTION_CODE_REDEMPTIONS)
    .find({ organizationId: session.organizationId, checkoutSessionId: sessionId });
  for (const redemption of held) await settle(store, redemption, session, event.metadata.occurredAt);
}

/**
 * The coupon redemptions checkout sessions hold, and those to give back. A redemption is held
 * while its session may still be paid with it; once the session is canceled, expires, is paid
 * without it or takes another code, it moves to the release list until the coupon records it
 * given back; a session completed with it ends it. Whichever of the redemption and the session's
 * change comes later in the log decides, so a redemption recorded as its session ended (a race)
 * is listed too. Must run after the checkout sessions projection (it reads the session documents
 * as of this event).
 */
export const promotionCodeRedemptionsProjection: Projection = {
  name: 'promotion-code-redemptions',
  collections: [PROMOTION_CODE_REDEMPTIONS, PROMOTION_CODE_RELEASES],
  categories: ['coupon', 'checkout_session'],
  async apply(event, store) {
    if (event.streamId.startsWith(COUPON_PREFIX)) return applyCouponEvent(event, store);
    if (event.streamId.startsWith(SESSION_PREFIX)) return applySessionEvent(event, store);
  },
};
