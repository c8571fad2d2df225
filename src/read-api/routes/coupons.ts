import Router from '@koa/router';
import { couponAggregate } from '../../../machines/coupon.aggregate.ts';
import {
  assertAmountOffPayable,
  validateNewCoupon,
  type CurrencyAssets,
  type NewCoupon,
  type NewPromotionCode,
} from '../../../machines/coupon.decide.ts';
import type { CouponChanges } from '../../../machines/coupon.types.ts';
import {
  CLAIM_ABANDONED_AFTER_MS,
  promotionCodeClaimAggregate,
  promotionCodeClaimId,
} from '../../actors/promotion-code-claim.ts';
import { COUPONS, findPromotionCode, type CouponDoc } from '../../projections/coupons.projection.ts';
import { assetPaysCurrency } from '../../shared/asset-currency.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors.ts';
import type { Environment } from '../../event-store/event-store.ts';
import { isUuid } from '../../shared/ids.ts';
import { type ApiContext, type ApiDeps, type ApiState, idsOf } from '../api-context.ts';
import { commandFor, ownedBy } from '../command.ts';
import { listPage } from '../pagination.ts';
import { CouponCreate, CouponSchema, CouponUpdate } from '../schema/coupon.ts';
import {
  idParams,
  invalidFields,
  listOf,
  listQuery,
  notFound,
  queryFilter,
  unsupportedQuery,
} from '../schema/fields.ts';
import { schemaRoutes } from '../schema/route.ts';

const STATUSES = ['active', 'expired', 'disabled', 'limit_reached'] as const;

/**
 * Coupons and their promotion codes: create (with `promotionCodeData.data`, or `promotionCodes`),
 * list, read, update, enable, disable, archive. Codes are unique per tenant regardless of case.
 */
export function couponRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1' });
  const coupons = deps.readStore.collection<CouponDoc>(COUPONS);
  const nowIso = () => new Date(deps.clock.now()).toISOString();
  /** The assets that pay `currency` on the networks of `environment`, as `USDC on Base`. */
  const assetsPaying = (environment: Environment, currency: string | null): CurrencyAssets =>
    currency === null
      ? []
      : deps.rail
          .networks(environment)
          .flatMap((n) =>
            n.assets
              .filter((a) => assetPaysCurrency(a, currency))
              .map((a) => ({ name: `${a.symbol} on ${n.name}`, decimals: a.decimals })),
          );

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
        return {
          ...code,
          organizationId: coupon.organizationId,
          status: codeStatus,
          isActive: status === 'active' && codeStatus === 'active',
        };
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

  const api = schemaRoutes(router, { tag: 'Coupons', auth: 'secretKey' });
  const params = idParams('coupon');
  const inUse = {
    status: 409,
    codes: ['promotion_code_in_use'],
    description: 'A promotion code is already in use (codes are unique regardless of case)',
  };

  api.route(
    {
      method: 'post',
      path: '/coupons',
      summary: 'Create a coupon with its promotion codes',
      description:
        'Percent off (`percentOff`) or an amount off (`amountOff` with its `currency`); codes come in `promotionCodeData.data` or `promotionCodes`.',
      body: CouponCreate,
      response: CouponSchema,
      errors: [invalidFields(), inUse],
    },
    async (ctx, { body }) => {
      const { tenant } = ctx.state;
      const nextId = idsOf(ctx);
      const items = (body.promotionCodeData ? body.promotionCodeData.data : body.promotionCodes) ?? [];
      const id = nextId();
      const coupon: NewCoupon = {
        id,
        organizationId: tenant.organizationId,
        environment: tenant.environment,
        name: body.name,
        percentOff: body.percentOff ?? null,
        amountOff: body.amountOff === undefined ? null : body.amountOff.toString(),
        currency: body.currency ?? null,
        maxRedemptions: body.maxRedemptions ?? null,
        redeemBy: body.redeemBy ?? null,
        metadata: body.metadata ?? {},
        isEnable: body.isEnable ?? true,
        promotionCodes: items.map(
          (item): NewPromotionCode => ({
            id: nextId(),
            code: item.code,
            maxRedemptions: item.maxRedemptions ?? null,
            expiredAt: item.expiredAt ?? null,
            metadata: item.metadata ?? {},
          }),
        ),
      };
      // Every rule is checked before a code is reserved, so a refused request writes nothing.
      validateNewCoupon(coupon, nowIso());
      assertAmountOffPayable(coupon, assetsPaying(tenant.environment, coupon.currency));
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
      return present((await coupons.get(coupon.id))!);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/coupons',
      summary: 'List coupons',
      query: listQuery({
        searchText: queryFilter('Part of the name, any case (at most 100 characters)'),
        ids: queryFilter('Comma-separated coupon ids'),
        isEnable: queryFilter('true or false'),
        isArchived: queryFilter('true or false'),
        status: queryFilter(`One of ${STATUSES.join(', ')}`),
        // The reference lists these bare, without the date they bound: refused rather than guessed.
        ...unsupportedQuery(
          ['isnull', 'notnull', 'gt', 'gte', 'lt', 'lte'],
          'a bound names its date: use createdAt[gt], createdAt[gte], createdAt[lt] or createdAt[lte]',
        ),
      }),
      response: listOf(CouponSchema),
      errors: [invalidFields()],
    },
    (ctx, { query }) => {
      const search = query.searchText?.trim();
      if (search && search.length > 100) throw new ValidationError('searchText', 'must be at most 100 characters');
      const escaped = search ? search.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : null;
      return listPage(ctx, coupons, {
        base: escaped ? { name: { $regex: escaped, $options: 'i' } } : {},
        filters: {
          ids: { field: 'id', kind: 'csv' },
          isEnable: { kind: 'boolean' },
          isArchived: { kind: 'boolean' },
          status: { values: STATUSES },
        },
        present,
      });
    },
  );

  api.route(
    {
      method: 'get',
      path: '/coupons/:id',
      summary: 'Read a coupon',
      params,
      response: CouponSchema,
      errors: [notFound('coupon')],
    },
    async (ctx, { params }) => present(await loadCoupon(ctx, params.id)),
  );

  api.route(
    {
      method: 'put',
      path: '/coupons/:id',
      summary: 'Update a coupon',
      description: 'Name, maxRedemptions, redeemBy, metadata and isEnable; the discount itself is fixed.',
      params,
      body: CouponUpdate,
      response: CouponSchema,
      errors: [invalidFields(), notFound('coupon')],
    },
    async (ctx, { params, body }) => {
      const existing = await loadCoupon(ctx, params.id);
      const changes: CouponChanges = {
        name: body.name,
        maxRedemptions: body.maxRedemptions,
        redeemBy: body.redeemBy,
        metadata: body.metadata === null ? {} : body.metadata,
      };
      await commandFor(deps, ctx, couponAggregate, existing.id, {
        type: 'UpdateCoupon',
        changes,
        ...(body.isEnable === undefined ? {} : { isEnable: body.isEnable }),
      });
      return present((await coupons.get(existing.id))!);
    },
  );

  const action = (name: 'enable' | 'disable' | 'archive', type: 'EnableCoupon' | 'DisableCoupon' | 'ArchiveCoupon') =>
    api.route(
      {
        method: 'post',
        path: `/coupons/:id/${name}`,
        summary: `${name[0]!.toUpperCase()}${name.slice(1)} a coupon`,
        params,
        response: CouponSchema,
        errors: [notFound('coupon')],
      },
      async (ctx, { params }) => {
        const existing = await loadCoupon(ctx, params.id);
        await commandFor(deps, ctx, couponAggregate, existing.id, { type });
        return present((await coupons.get(existing.id))!);
      },
    );
  action('enable', 'EnableCoupon');
  action('disable', 'DisableCoupon');
  action('archive', 'ArchiveCoupon');

  return router;
}
