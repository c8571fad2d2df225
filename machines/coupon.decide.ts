import { InvalidStateError, ValidationError } from '../src/shared/errors.ts';
import { API_DECIMALS, formatAmount } from '../src/shared/money.ts';
import type { CouponSnapshot } from './coupon.aggregate.ts';
import type {
  Coupon,
  CouponChanges,
  CouponEvent,
  CouponStatus,
  CouponUsableStatus,
  PromotionCode,
} from './coupon.types.ts';

/** A coupon as the API asks for it; the decider fills in counts, status and times. */
export type NewPromotionCode = Pick<PromotionCode, 'id' | 'code' | 'maxRedemptions' | 'expiredAt' | 'metadata'>;
export type NewCoupon = Pick<
  Coupon,
  | 'id'
  | 'organizationId'
  | 'environment'
  | 'name'
  | 'percentOff'
  | 'amountOff'
  | 'currency'
  | 'maxRedemptions'
  | 'redeemBy'
  | 'metadata'
  | 'isEnable'
> & {
  promotionCodes: NewPromotionCode[];
};

export type CouponCommand =
  | { type: 'CreateCoupon'; coupon: NewCoupon }
  | { type: 'UpdateCoupon'; changes: CouponChanges; isEnable?: boolean }
  | { type: 'EnableCoupon' }
  | { type: 'DisableCoupon' }
  | { type: 'ArchiveCoupon' }
  /** Record that `redeemBy` has passed (for a timer); nothing before then. */
  | { type: 'ExpireCoupon' }
  /** Record that the code's own `expiredAt` has passed (for a timer); nothing before then. */
  | { type: 'ExpirePromotionCode'; promotionCodeId: string }
  /** `promotionCode` is the code's id or its text (any case); `redemptionId` makes it idempotent. */
  | { type: 'RedeemPromotionCode'; redemptionId: string; promotionCode: string }
  /** Give a counted redemption back (its checkout session ended without using it); nothing for one not counted. */
  | { type: 'ReleasePromotionCodeRedemption'; redemptionId: string; reason: string };

export type DecideContext = { now: string };

export const PROMOTION_CODE_PATTERN = /^[A-Za-z0-9_-]{2,20}$/;
const PERCENT_PRECISION = /^\d{1,3}(\.\d{1,2})?$/;

const reached = (limit: number | null, times: number) => limit !== null && times >= limit;
const passed = (at: string | null, now: string) => at !== null && Date.parse(now) >= Date.parse(at);

/** Where a coupon that is not disabled stands at `now`. */
export function usableStatus(
  coupon: Pick<Coupon, 'maxRedemptions' | 'timesRedeemed' | 'redeemBy'>,
  now: string,
): CouponUsableStatus {
  if (reached(coupon.maxRedemptions, coupon.timesRedeemed)) return 'limit_reached';
  if (passed(coupon.redeemBy, now)) return 'expired';
  return 'active';
}

/** The assets that pay a coupon's currency (`USDC on Base`) and the decimals of each. */
export type CurrencyAssets = readonly { name: string; decimals: number }[];

/**
 * An amount off must be one its currency's assets can take off: a multiple of the smallest unit of
 * the coarsest (USDC's 6 decimals: 10^-6). A finer one would be rounded down to that unit when
 * applied (`discountFor`), so "10" (10^-7 USDC) would take nothing off; refused as an invoice's
 * total no asset can hold is. No asset of the currency here: nothing to round to, nothing refused.
 */
export function assertAmountOffPayable(
  coupon: Pick<NewCoupon, 'amountOff' | 'currency'>,
  assets: CurrencyAssets,
): void {
  if (coupon.amountOff === null || coupon.currency === null || assets.length === 0) return;
  const decimals = Math.min(API_DECIMALS, ...assets.map((a) => a.decimals));
  const unit = 10n ** BigInt(API_DECIMALS - decimals);
  if (BigInt(coupon.amountOff) % unit === 0n) return;
  const currency = coupon.currency.toUpperCase();
  const coarsest = assets.filter((a) => a.decimals === decimals).map((a) => `${a.name} (${a.decimals} decimals)`);
  throw new ValidationError(
    'amountOff',
    `${coupon.amountOff} (10^-8 ${currency}) cannot be taken off exactly in ${coarsest.join(', ')}: the smallest unit of ${currency} is ${formatAmount(unit)} (${unit} scaled by 10^8), and a finer discount would be rounded down to it; use a multiple of ${unit}`,
  );
}

/**
 * The rules a new coupon must meet, apart from field shapes: exactly one of percent-off and
 * amount-off, a currency with an amount, limits of at least one, dates in the future, and codes
 * that fit inside the coupon's own limits. Exported so the API can check before reserving codes.
 */
export function validateNewCoupon(coupon: NewCoupon, now: string): void {
  const hasPercent = coupon.percentOff !== null;
  const hasAmount = coupon.amountOff !== null;
  if (hasPercent === hasAmount) throw new ValidationError('percentOff', 'give exactly one of percentOff and amountOff');
  if (hasPercent) {
    const p = coupon.percentOff!;
    if (!(p > 0 && p <= 100)) throw new ValidationError('percentOff', 'must be more than 0 and at most 100');
    if (!PERCENT_PRECISION.test(String(p))) throw new ValidationError('percentOff', 'must have at most two decimals');
    if (coupon.currency !== null) throw new ValidationError('currency', 'is only for amount-off coupons');
  } else {
    if (!/^[1-9][0-9]*$/.test(coupon.amountOff!))
      throw new ValidationError('amountOff', 'must be a positive integer scaled by 10^8');
    if (coupon.currency === null)
      throw new ValidationError('currency', 'is required with amountOff', 'parameter_missing');
  }
  if (coupon.maxRedemptions !== null && !(Number.isSafeInteger(coupon.maxRedemptions) && coupon.maxRedemptions >= 1)) {
    throw new ValidationError('maxRedemptions', 'must be a positive integer');
  }
  if (coupon.redeemBy !== null && passed(coupon.redeemBy, now))
    throw new ValidationError('redeemBy', 'must be in the future');
  if (coupon.promotionCodes.length === 0)
    throw new ValidationError('promotionCodeData.data', 'must have at least 1 item');
  const seen = new Set<string>();
  coupon.promotionCodes.forEach((code, i) => {
    const path = `promotionCodeData.data[${i}]`;
    if (!PROMOTION_CODE_PATTERN.test(code.code))
      throw new ValidationError(`${path}.code`, 'must be 2 to 20 letters, digits, - or _');
    const key = code.code.toLowerCase();
    if (seen.has(key))
      throw new ValidationError(`${path}.code`, `repeats ${code.code} (codes are compared regardless of case)`);
    seen.add(key);
    if (code.maxRedemptions !== null) {
      if (!(Number.isSafeInteger(code.maxRedemptions) && code.maxRedemptions >= 1))
        throw new ValidationError(`${path}.maxRedemptions`, 'must be a positive integer');
      if (coupon.maxRedemptions !== null && code.maxRedemptions > coupon.maxRedemptions) {
        throw new ValidationError(
          `${path}.maxRedemptions`,
          `must not exceed the coupon's maxRedemptions (${coupon.maxRedemptions})`,
        );
      }
    }
    if (code.expiredAt !== null) {
      if (passed(code.expiredAt, now)) throw new ValidationError(`${path}.expiredAt`, 'must be in the future');
      if (coupon.redeemBy !== null && Date.parse(code.expiredAt) > Date.parse(coupon.redeemBy)) {
        throw new ValidationError(`${path}.expiredAt`, "must not be after the coupon's redeemBy");
      }
    }
  });
}

const statusOf = (snapshot: CouponSnapshot) => snapshot.value as CouponStatus | 'new' | 'archived';

function requireCoupon(snapshot: CouponSnapshot): Coupon {
  const coupon = snapshot.context.coupon;
  if (!coupon) throw new InvalidStateError('coupon does not exist', 'resource_missing');
  return coupon;
}

const findCode = (coupon: Coupon, ref: string): PromotionCode | undefined => {
  const lower = ref.toLowerCase();
  return coupon.promotionCodes.find((c) => c.id === ref || c.code.toLowerCase() === lower);
};

/**
 * Whether a redemption id was seen before: true for a repeat of the redemption counted now (it
 * counts once); a refusal when that id now counts another code of this coupon (one code per
 * checkout session), or was given back (its session ended, or can no longer use it).
 */
function repeatedRedemption(
  snapshot: CouponSnapshot,
  coupon: Coupon,
  command: Extract<CouponCommand, { type: 'RedeemPromotionCode' }>,
): boolean {
  const { redemptions, released } = snapshot.context;
  const counted = redemptions[command.redemptionId];
  if (counted !== undefined) {
    const code = findCode(coupon, command.promotionCode);
    if (code?.id === counted) return true;
    throw new InvalidStateError(
      `redemption ${command.redemptionId} already counts another promotion code of coupon ${coupon.id}`,
      'promotion_code_already_redeemed',
    );
  }
  if (released[command.redemptionId] !== undefined) {
    throw new InvalidStateError(
      `redemption ${command.redemptionId} of coupon ${coupon.id} was given back and cannot be redeemed again`,
      'promotion_code_redemption_released',
    );
  }
  return false;
}

/**
 * Give a counted redemption back, in any state (an archived coupon's counts stay exact too). A
 * coupon or code held at its limit only by this redemption is usable again: `active`, or `expired`
 * when its `redeemBy` / `expiredAt` has passed meanwhile (its expiry timer did nothing while it was
 * at its limit).
 */
function release(
  snapshot: CouponSnapshot,
  coupon: Coupon,
  command: Extract<CouponCommand, { type: 'ReleasePromotionCodeRedemption' }>,
  now: string,
): CouponEvent[] {
  const promotionCodeId = snapshot.context.redemptions[command.redemptionId];
  if (promotionCodeId === undefined) return [];
  const code = coupon.promotionCodes.find((c) => c.id === promotionCodeId);
  if (!code) return [];
  const status =
    statusOf(snapshot) === 'limit_reached'
      ? usableStatus({ ...coupon, timesRedeemed: coupon.timesRedeemed - 1 }, now)
      : coupon.status;
  const promotionCodeStatus =
    code.status === 'limit_reached' && !reached(code.maxRedemptions, code.timesRedeemed - 1)
      ? passed(code.expiredAt, now)
        ? 'expired'
        : 'active'
      : code.status;
  return [
    {
      type: 'PromotionCodeRedemptionReleased',
      data: {
        redemptionId: command.redemptionId,
        promotionCodeId,
        reason: command.reason,
        status,
        promotionCodeStatus,
        at: now,
      },
    },
  ];
}

/**
 * Decide which facts a command produces. Repeating a command that already took effect (enable
 * an enabled coupon, archive twice, the same redemption id again) produces no events.
 */
export function decideCoupon(snapshot: CouponSnapshot, command: CouponCommand, ctx: DecideContext): CouponEvent[] {
  const status = statusOf(snapshot);
  const { now } = ctx;
  if (command.type === 'CreateCoupon') {
    if (status !== 'new') return [];
    validateNewCoupon(command.coupon, now);
    const { promotionCodes, ...fields } = command.coupon;
    const coupon: Coupon = {
      ...fields,
      timesRedeemed: 0,
      status: command.coupon.isEnable ? 'active' : 'disabled',
      isArchived: false,
      archivedAt: null,
      createdAt: now,
      updatedAt: now,
      promotionCodes: promotionCodes.map((code) => ({
        ...code,
        organizationId: fields.organizationId,
        environment: fields.environment,
        couponId: fields.id,
        timesRedeemed: 0,
        status: 'active',
        createdAt: now,
        updatedAt: now,
      })),
    };
    return [{ type: 'CouponCreated', data: { coupon } }];
  }
  const coupon = requireCoupon(snapshot);

  if (command.type === 'ArchiveCoupon')
    return status === 'archived' ? [] : [{ type: 'CouponArchived', data: { at: now } }];
  // An expiry timer that outlived an archived coupon does nothing.
  if ((command.type === 'ExpireCoupon' || command.type === 'ExpirePromotionCode') && status === 'archived') return [];
  if (command.type === 'RedeemPromotionCode' && repeatedRedemption(snapshot, coupon, command)) return [];
  if (command.type === 'ReleasePromotionCodeRedemption') return release(snapshot, coupon, command, now);
  if (status === 'archived') throw new InvalidStateError(`coupon ${coupon.id} is archived`, 'coupon_archived');

  switch (command.type) {
    case 'UpdateCoupon': {
      const changes: CouponChanges = {};
      for (const [key, value] of Object.entries(command.changes) as [keyof CouponChanges, unknown][]) {
        if (value !== undefined && JSON.stringify(coupon[key]) !== JSON.stringify(value))
          (changes as Record<string, unknown>)[key] = value;
      }
      if (changes.maxRedemptions != null) {
        if (!(Number.isSafeInteger(changes.maxRedemptions) && changes.maxRedemptions >= 1))
          throw new ValidationError('maxRedemptions', 'must be a positive integer');
        if (changes.maxRedemptions < coupon.timesRedeemed) {
          throw new ValidationError('maxRedemptions', `must be at least timesRedeemed (${coupon.timesRedeemed})`);
        }
      }
      if (changes.redeemBy != null && Number.isNaN(Date.parse(changes.redeemBy)))
        throw new ValidationError('redeemBy', 'must be an ISO 8601 timestamp');
      const events: CouponEvent[] = [];
      if (Object.keys(changes).length > 0) {
        const next = { ...coupon, ...changes };
        const nextStatus: CouponStatus = status === 'disabled' ? 'disabled' : usableStatus(next, now);
        events.push({ type: 'CouponUpdated', data: { changes, status: nextStatus, at: now } });
      }
      const updated = events.reduce<Coupon>(
        (c, e) => ({ ...c, ...(e.type === 'CouponUpdated' ? e.data.changes : {}) }),
        coupon,
      );
      if (command.isEnable === true && status === 'disabled')
        events.push({ type: 'CouponEnabled', data: { status: usableStatus(updated, now), at: now } });
      if (command.isEnable === false && status !== 'disabled')
        events.push({ type: 'CouponDisabled', data: { at: now } });
      return events;
    }
    case 'EnableCoupon':
      return status === 'disabled'
        ? [{ type: 'CouponEnabled', data: { status: usableStatus(coupon, now), at: now } }]
        : [];
    case 'DisableCoupon':
      return status === 'disabled' ? [] : [{ type: 'CouponDisabled', data: { at: now } }];
    case 'ExpireCoupon':
      return status === 'active' && passed(coupon.redeemBy, now) ? [{ type: 'CouponExpired', data: { at: now } }] : [];
    case 'ExpirePromotionCode': {
      const code = coupon.promotionCodes.find((c) => c.id === command.promotionCodeId);
      if (!code || code.status !== 'active' || !passed(code.expiredAt, now)) return [];
      return [{ type: 'PromotionCodeExpired', data: { promotionCodeId: code.id, at: now } }];
    }
    case 'RedeemPromotionCode': {
      if (status === 'disabled') throw new InvalidStateError(`coupon ${coupon.id} is disabled`, 'coupon_disabled');
      if (status === 'limit_reached' || reached(coupon.maxRedemptions, coupon.timesRedeemed)) {
        throw new InvalidStateError(
          `coupon ${coupon.id} has reached its maximum of ${coupon.maxRedemptions} redemptions`,
          'coupon_limit_reached',
        );
      }
      if (status === 'expired' || passed(coupon.redeemBy, now))
        throw new InvalidStateError(`coupon ${coupon.id} expired at ${coupon.redeemBy}`, 'coupon_expired');
      const code = findCode(coupon, command.promotionCode);
      if (!code)
        throw new ValidationError(
          'promotionCode',
          `${command.promotionCode} is not a promotion code of this coupon`,
          'promotion_code_invalid',
        );
      if (code.status === 'expired' || passed(code.expiredAt, now))
        throw new InvalidStateError(
          `promotion code ${code.code} expired at ${code.expiredAt}`,
          'promotion_code_expired',
        );
      if (code.status === 'limit_reached' || reached(code.maxRedemptions, code.timesRedeemed)) {
        throw new InvalidStateError(
          `promotion code ${code.code} has reached its maximum of ${code.maxRedemptions} redemptions`,
          'promotion_code_limit_reached',
        );
      }
      const events: CouponEvent[] = [
        {
          type: 'PromotionCodeRedeemed',
          data: { redemptionId: command.redemptionId, promotionCodeId: code.id, at: now },
        },
      ];
      if (reached(code.maxRedemptions, code.timesRedeemed + 1))
        events.push({ type: 'PromotionCodeLimitReached', data: { promotionCodeId: code.id, at: now } });
      if (reached(coupon.maxRedemptions, coupon.timesRedeemed + 1))
        events.push({ type: 'CouponLimitReached', data: { at: now } });
      return events;
    }
  }
}
