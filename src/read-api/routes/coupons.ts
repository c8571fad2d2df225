import Router from '@koa/router';
import { couponAggregate } from '../../../machines/coupon.aggregate.ts';
import {
  PROMOTION_CODE_PATTERN,
  validateNewCoupon,
  type NewCoupon,
  type NewPromotionCode,
} from '../../../machines/coupon.decide.ts';
import type { CouponChanges } from '../../../machines/coupon.types.ts';
import { CURRENCIES } from '../../actors/line-items.ts';
import {
  CLAIM_ABANDONED_AFTER_MS,
  promotionCodeClaimAggregate,
  promotionCodeClaimId,
} from '../../actors/promotion-code-claim.ts';
import { COUPONS, findPromotionCode, type CouponDoc } from '../../projections/coupons.projection.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors.ts';
import { isUuid, type IdSource } from '../../shared/ids.ts';
import {
  asObject,
  optionalArray,
  optionalBoolean,
  optionalEnum,
  optionalInteger,
  optionalMetadata,
  optionalNumber,
  optionalObject,
  optionalString,
  requiredString,
  type Input,
} from '../../shared/input.ts';
import { AmountError, parseAmount } from '../../shared/money.ts';
import { type ApiContext, type ApiDeps, type ApiState, idsOf } from '../api-context.ts';
import { commandFor, ownedBy } from '../command.ts';
import { listPage } from '../pagination.ts';

const MAX_CODES = 20;
const STATUSES = ['active', 'expired', 'disabled', 'limit_reached'] as const;

/** An ISO 8601 timestamp (with a time and an offset), normalised to UTC; null clears it. */
function timestamp(o: Input, key: string, path = ''): string | null | undefined {
  if (!(key in o)) return undefined;
  if (o[key] === null) return null;
  const field = path ? `${path}.${key}` : key;
  const raw = optionalString(o, key, path, { max: 40 });
  const time =
    raw !== undefined && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/.test(raw)
      ? Date.parse(raw)
      : Number.NaN;
  if (Number.isNaN(time))
    throw new ValidationError(field, 'must be an ISO 8601 timestamp with a time zone, such as 2026-12-31T23:59:59Z');
  return new Date(time).toISOString();
}

function codeItems(body: Input): Input[] {
  const wrapper = optionalObject(body, 'promotionCodeData');
  const items = wrapper
    ? optionalArray(wrapper, 'data', 'promotionCodeData', { min: 1, max: MAX_CODES })
    : optionalArray(body, 'promotionCodes', '', { min: 1, max: MAX_CODES });
  if (!items)
    throw new ValidationError('promotionCodeData', 'is required: {"data": [{"code": "SUMMER"}]}', 'parameter_missing');
  const path = wrapper ? 'promotionCodeData.data' : 'promotionCodes';
  return items.map((item, i) => asObject(item, `${path}[${i}]`));
}

function newPromotionCode(item: Input, path: string, nextId: IdSource): NewPromotionCode {
  return {
    id: nextId(),
    code: requiredString(item, 'code', path, {
      max: 20,
      pattern: PROMOTION_CODE_PATTERN,
      hint: 'must be 2 to 20 letters, digits, - or _',
    }),
    maxRedemptions: optionalInteger(item, 'maxRedemptions', path, { min: 1 }) ?? null,
    expiredAt: timestamp(item, 'expiredAt', path) ?? null,
    metadata: optionalMetadata(item, 'metadata', path) ?? {},
  };
}

function amountOffOf(body: Input): string | null {
  if (body.amountOff === undefined || body.amountOff === null) return null;
  try {
    const amount = parseAmount(body.amountOff);
    if (amount === 0n) throw new ValidationError('amountOff', 'must be more than 0');
    return amount.toString();
  } catch (error) {
    if (error instanceof AmountError)
      throw new ValidationError('amountOff', error.message, 'parameter_invalid_integer');
    throw error;
  }
}

/**
 * Coupons and their promotion codes: create (with `promotionCodeData.data`, or `promotionCodes`),
 * list, read, update, enable, disable, archive. Codes are unique per tenant regardless of case.
 */
export function couponRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1' });
  const coupons = deps.readStore.collection<CouponDoc>(COUPONS);
  const nowIso = () => new Date(deps.clock.now()).toISOString();

  /**
   * The coupon as the API shows it. Until a timer records `CouponExpired`, a coupon past its
   * `redeemBy` already shows as expired (and redemptions are refused by the decider).
   */
  const present = (doc: CouponDoc) => {
    const { _id, _revision, ...coupon } = doc;
    const now = Date.parse(nowIso());
    const status =
      coupon.status === 'active' && coupon.redeemBy !== null && now >= Date.parse(coupon.redeemBy)
        ? 'expired'
        : coupon.status;
    return {
      ...coupon,
      status,
      livemode: coupon.environment === 'live',
      promotionCodes: coupon.promotionCodes.map((code) => {
        // Likewise a code past its own `expiredAt` shows as expired before its timer records it.
        const codeStatus =
          code.status === 'active' && code.expiredAt !== null && now >= Date.parse(code.expiredAt)
            ? 'expired'
            : code.status;
        return { ...code, status: codeStatus, isActive: status === 'active' && codeStatus === 'active' };
      }),
    };
  };

  const loadCoupon = async (ctx: ApiContext, id: string) => {
    const doc = isUuid(id) ? await coupons.get(id) : null;
    if (!ownedBy(ctx, doc)) throw new NotFoundError('coupon', id);
    return doc;
  };

  /** Reserve a code for a coupon; a reservation left by a coupon that was never created is taken over. */
  async function claim(ctx: ApiContext, couponId: string, code: NewPromotionCode): Promise<void> {
    const { tenant } = ctx.state;
    const claimId = promotionCodeClaimId(tenant, code.code);
    const command = {
      type: 'ClaimPromotionCode' as const,
      claim: {
        code: code.code,
        couponId,
        promotionCodeId: code.id,
        organizationId: tenant.organizationId,
        environment: tenant.environment,
      },
    };
    try {
      await commandFor(deps, ctx, promotionCodeClaimAggregate, claimId, command);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      const held = (await deps.commands.load(promotionCodeClaimAggregate, claimId, tenant)).state;
      if (!held || deps.clock.now() - Date.parse(held.claimedAt) < CLAIM_ABANDONED_AFTER_MS) throw error;
      const holder = held.couponId;
      if ((await deps.commands.load(couponAggregate, holder, tenant)).revision !== null) throw error;
      await commandFor(deps, ctx, promotionCodeClaimAggregate, claimId, {
        ...command,
        replacingAbandonedCoupon: holder,
      });
    }
  }

  router.post('/coupons', async (ctx) => {
    const body = asObject(ctx.state.body, '');
    const { tenant } = ctx.state;
    const items = codeItems(body);
    const path = optionalObject(body, 'promotionCodeData') ? 'promotionCodeData.data' : 'promotionCodes';
    const coupon: NewCoupon = {
      id: idsOf(ctx)(),
      organizationId: tenant.organizationId,
      environment: tenant.environment,
      name: requiredString(body, 'name', '', { max: 250 }),
      percentOff: optionalNumber(body, 'percentOff', '', { min: 0, max: 100 }) ?? null,
      amountOff: amountOffOf(body),
      currency: optionalEnum(body, 'currency', CURRENCIES) ?? null,
      maxRedemptions: optionalInteger(body, 'maxRedemptions', '', { min: 1 }) ?? null,
      redeemBy: timestamp(body, 'redeemBy') ?? null,
      metadata: optionalMetadata(body, 'metadata') ?? {},
      isEnable: optionalBoolean(body, 'isEnable') ?? true,
      promotionCodes: items.map((item, i) => newPromotionCode(item, `${path}[${i}]`, idsOf(ctx))),
    };
    // Every rule is checked before a code is reserved, so a refused request writes nothing.
    validateNewCoupon(coupon, nowIso());
    for (const code of coupon.promotionCodes) {
      if (await findPromotionCode(deps.readStore, tenant, code.code)) {
        throw new ConflictError(
          `promotion code ${code.code} is already in use (codes are unique regardless of case)`,
          'promotion_code_in_use',
        );
      }
    }
    for (const code of coupon.promotionCodes) await claim(ctx, coupon.id, code);
    await commandFor(deps, ctx, couponAggregate, coupon.id, { type: 'CreateCoupon', coupon });
    ctx.body = present((await coupons.get(coupon.id))!);
  });

  router.get('/coupons', async (ctx) => {
    const raw = ctx.query.searchText;
    const search = (Array.isArray(raw) ? raw[raw.length - 1] : raw)?.trim();
    if (search && search.length > 100) throw new ValidationError('searchText', 'must be at most 100 characters');
    const escaped = search ? search.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : null;
    ctx.body = await listPage(ctx, coupons, {
      base: escaped ? { name: { $regex: escaped, $options: 'i' } } : {},
      filters: {
        ids: { field: 'id', kind: 'csv' },
        isEnable: { kind: 'boolean' },
        isArchived: { kind: 'boolean' },
        status: { values: STATUSES },
      },
      present,
    });
  });

  router.get('/coupons/:id', async (ctx) => {
    ctx.body = present(await loadCoupon(ctx, ctx.params.id!));
  });

  router.put('/coupons/:id', async (ctx) => {
    const existing = await loadCoupon(ctx, ctx.params.id!);
    const body = asObject(ctx.state.body, '');
    const changes: CouponChanges = {
      name: optionalString(body, 'name', '', { max: 250, min: 1 }),
      maxRedemptions:
        'maxRedemptions' in body && body.maxRedemptions === null
          ? null
          : optionalInteger(body, 'maxRedemptions', '', { min: 1 }),
      redeemBy: timestamp(body, 'redeemBy'),
      metadata: 'metadata' in body && body.metadata === null ? {} : optionalMetadata(body, 'metadata'),
    };
    const isEnable = optionalBoolean(body, 'isEnable');
    await commandFor(deps, ctx, couponAggregate, existing.id, {
      type: 'UpdateCoupon',
      changes,
      ...(isEnable === undefined ? {} : { isEnable }),
    });
    ctx.body = present((await coupons.get(existing.id))!);
  });

  const action = (name: 'enable' | 'disable' | 'archive', type: 'EnableCoupon' | 'DisableCoupon' | 'ArchiveCoupon') =>
    router.post(`/coupons/:id/${name}`, async (ctx) => {
      const existing = await loadCoupon(ctx, ctx.params.id!);
      await commandFor(deps, ctx, couponAggregate, existing.id, { type });
      ctx.body = present((await coupons.get(existing.id))!);
    });
  action('enable', 'EnableCoupon');
  action('disable', 'DisableCoupon');
  action('archive', 'ArchiveCoupon');

  return router;
}
