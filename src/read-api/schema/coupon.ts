import { PROMOTION_CODE_PATTERN } from '../../../machines/coupon.decide.ts';
import { CURRENCIES } from '../../actors/line-items.ts';
import {
  amount,
  amountString,
  arrayOf,
  closedBody,
  bool,
  clearable,
  integer,
  metadata,
  objectField,
  oneOf,
  optional,
  requiredText,
  text,
  timestamp,
  withCode,
  z,
} from './fields.ts';
import { issuing } from './validation-codes.ts';

const MAX_CODES = 20;
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;
const TIMESTAMP_HINT = 'must be an ISO 8601 timestamp with a time zone, such as 2026-12-31T23:59:59Z';

/** An ISO 8601 timestamp with a time and an offset, normalised to UTC; null clears it. */
const instant = () =>
  clearable(
    text({ max: 40 })
      .transform((raw, ctx): string => {
        const time = ISO_WITH_ZONE.test(raw) ? Date.parse(raw) : Number.NaN;
        if (Number.isNaN(time)) {
          ctx.addIssue({ code: 'custom', message: withCode(TIMESTAMP_HINT) });
          return z.NEVER;
        }
        return new Date(time).toISOString();
      })
      .openapi({ type: 'string', format: 'date-time', example: '2026-12-31T23:59:59Z' }),
  );

const PromotionCodeInput = objectField({
  code: requiredText({ max: 20, pattern: PROMOTION_CODE_PATTERN, hint: 'must be 2 to 20 letters, digits, - or _' }),
  maxRedemptions: optional(integer({ min: 1 })),
  expiredAt: instant(),
  metadata: optional(metadata()),
}).openapi('PromotionCodeInput', { example: { code: 'SUMMER25', maxRedemptions: 100 } });

const codeList = () => optional(arrayOf(PromotionCodeInput, { min: 1, max: MAX_CODES }));

export const CouponCreate = issuing(
  ['parameter_missing'],
  closedBody(
    {
      promotionCodeData: optional(objectField({ data: codeList() })).openapi({
        description: 'The coupon\'s promotion codes: `{"data": [{"code": "SUMMER"}]}` (or `promotionCodes`)',
      }),
      promotionCodes: codeList().openapi({ description: 'The same codes as a plain array' }),
      name: requiredText({ max: 250 }).openapi({ example: 'Summer sale' }),
      percentOff: optional(
        z
          .number({ error: withCode('must be a number') })
          .min(0, withCode('must be at least 0'))
          .max(100, withCode('must be at most 100')),
      ),
      amountOff: optional(amount().refine((v) => v > 0n, { message: withCode('must be more than 0') })).openapi({
        description:
          "Amount off, scaled by 10^8, with its `currency`: a multiple of the smallest unit of the currency's coarsest asset (100, 10^-6, for USDC, whose assets have 6 decimals); a finer one would take nothing off, so it is a 400 `parameter_invalid` naming it",
      }),
      currency: optional(oneOf(CURRENCIES)),
      maxRedemptions: optional(integer({ min: 1 })),
      redeemBy: instant(),
      metadata: optional(metadata()),
      isEnable: optional(bool()),
    },
    'a coupon',
  ).superRefine((body, ctx) => {
    const codes = body.promotionCodeData ? body.promotionCodeData.data : body.promotionCodes;
    if (!codes)
      ctx.addIssue({
        code: 'custom',
        path: ['promotionCodeData'],
        message: withCode('is required: {"data": [{"code": "SUMMER"}]}', 'parameter_missing'),
      });
  }),
).openapi('CouponCreateRequest', {
  // The codes come as `promotionCodeData` or, the same list plainly, as `promotionCodes`.
  anyOf: [{ required: ['promotionCodeData'] }, { required: ['promotionCodes'] }],
  example: { name: 'Summer sale', percentOff: 25, promotionCodeData: { data: [{ code: 'SUMMER25' }] } },
});

export const CouponUpdate = closedBody(
  {
    name: optional(text({ min: 1, max: 250 })),
    // null clears the limit, and metadata.
    maxRedemptions: clearable(integer({ min: 1 })),
    redeemBy: instant(),
    metadata: clearable(metadata()),
    isEnable: optional(bool()),
  },
  'a coupon',
).openapi('CouponUpdateRequest', { example: { name: 'Summer sale (extended)', redeemBy: '2026-09-30T23:59:59Z' } });

const PromotionCodeSchema = z
  .object({
    id: z.string(),
    organizationId: z.string(),
    couponId: z.string(),
    code: z.string(),
    maxRedemptions: z.number().int().nullable(),
    expiredAt: timestamp().nullable(),
    timesRedeemed: z.number().int(),
    status: z.enum(['active', 'limit_reached', 'expired']),
    isActive: z.boolean(),
    metadata: z.record(z.string(), z.string()),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .openapi('PromotionCode', {
    description:
      'A code a payer enters on the hosted checkout page to take its coupon off that one payment: on a subscription session, the first payment only (renewals are billed in full)',
  });

export const CouponSchema = z
  .object({
    id: z.string(),
    organizationId: z.string(),
    livemode: z.boolean(),
    name: z.string(),
    percentOff: z.number().nullable(),
    amountOff: amountString().nullable(),
    currency: z.string().nullable(),
    maxRedemptions: z.number().int().nullable(),
    redeemBy: timestamp().nullable(),
    timesRedeemed: z.number().int(),
    status: z.enum(['active', 'expired', 'disabled', 'limit_reached']),
    isEnable: z.boolean(),
    isArchived: z.boolean(),
    archivedAt: timestamp().nullable(),
    metadata: z.record(z.string(), z.string()),
    promotionCodes: z.array(PromotionCodeSchema),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .openapi('Coupon', {
    description:
      'A discount applied through its promotion codes. It has no duration: it discounts the one payment its code is applied to, so on a subscription session the first payment only, and renewals are billed in full',
  });
