import { CURRENCIES, INTERVALS } from '../../actors/line-items.ts';
import {
  amount,
  amountString,
  arrayOf,
  bool,
  clearable,
  closedBody,
  closedObject,
  ignored,
  integer,
  metadata,
  oneOf,
  optional,
  requiredText,
  text,
  timestamp,
  url,
  withCode,
  z,
} from './fields.ts';
import { issuing } from './validation-codes.ts';

/** Request and answer schemas of products and prices. */

const imageList = arrayOf(z.string({ error: withCode('must be a string') }), { max: 8 });
const visibility = integer({ min: 10, max: 20 }).openapi({ description: '10: shown in the dashboard, 20: API only' });

/** A new product's fields, in the order they are checked. */
const productFields = {
  name: requiredText({ max: 250 }),
  description: optional(text({ max: 2000 })),
  isActive: optional(bool()),
  unitLabel: optional(text({ max: 40 })),
  url: optional(url()),
  images: optional(imageList),
  metadata: optional(metadata()),
  visibility: optional(visibility),
};
/** A new product, other keys refused; `error` is what a non-object answers. */
const productInput = (error: string) => closedObject(productFields, 'a product', error);

const STREAMING = withCode(
  'streaming prices are not supported: Weir collects transfers, not per-second streams; use recurring',
  'unsupported_price_type',
);

/** A transform that parses with a later step's schema, reporting its first issue at its own path. */
const thenParse =
  <T extends z.ZodType>(schema: T, at: PropertyKey[] = []) =>
  (value: unknown, ctx: z.core.$RefinementCtx<unknown>): z.output<T> => {
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    const issue = result.error.issues[0]!;
    ctx.addIssue({ code: 'custom', path: [...at, ...issue.path], message: issue.message });
    return z.NEVER;
  };

/** A field checked by a later step: documented here, validated there. */
const later = (doc: Record<string, unknown>) => z.unknown().optional().openapi(doc);
/** An optional field checked by a later step: absent or null is not given, here as there. */
const laterOptional = (doc: Record<string, unknown>) => optional(z.unknown().openapi(doc));

/** A new price's fields as the request names them; `interval` and `type` are checked here, the rest later. */
const priceShape = {
  interval: optional(oneOf(INTERVALS)),
  // Deliberate difference: the reference's streaming prices are paid per second through Superfluid
  // streams, which Weir's transfer-to-deposit-address rail cannot collect.
  type: optional(
    z
      .unknown()
      .refine((v) => v !== 'streaming', STREAMING)
      .pipe(oneOf(['one_time', 'recurring'] as const))
      .openapi({ type: 'string', enum: ['one_time', 'recurring'] }),
  ).openapi({ description: 'Default: recurring when `interval` is given' }),
  currency: later({ type: 'string', enum: [...CURRENCIES], description: 'Required' }),
  unitAmount: later({
    type: 'string',
    pattern: '^\\d+$',
    description: 'Required. Scaled by 10^8 whatever the asset: 150000000 is 1.50 of the currency',
    example: '150000000',
  }),
  intervalCount: laterOptional({
    type: 'integer',
    minimum: 1,
    maximum: 36,
    description: 'Recurring prices only; default 1',
  }),
  nickname: laterOptional({ type: 'string', maxLength: 100 }),
  metadata: laterOptional({ type: 'object', additionalProperties: { type: 'string' } }),
};

/** A price's fields after its schedule: read once `type` and `interval` are settled. */
const laterPriceFields = issuing(
  [integer({ min: 1, max: 36 })],
  z
    .object({
      type: z.enum(['one_time', 'recurring']),
      interval: z.enum(INTERVALS).nullable(),
      currency: issuing(
        ['parameter_missing', 'parameter_invalid'],
        z.unknown().transform((v, ctx) => {
          if (v === undefined || v === null) {
            ctx.addIssue({ code: 'custom', message: withCode('is required', 'parameter_missing') });
            return z.NEVER;
          }
          const parsed = oneOf(CURRENCIES).safeParse(v);
          if (!parsed.success) {
            ctx.addIssue({ code: 'custom', message: withCode(`must be one of ${CURRENCIES.join(', ')}`) });
            return z.NEVER;
          }
          return parsed.data;
        }),
      ),
      unitAmount: amount(),
      intervalCount: z.unknown().optional(),
      nickname: optional(text({ max: 100 })),
      metadata: optional(metadata()),
    })
    .transform((o, ctx) => {
      if (o.type !== 'recurring') return { ...o, intervalCount: null };
      const count = optional(integer({ min: 1, max: 36 })).safeParse(o.intervalCount);
      if (!count.success) {
        ctx.addIssue({ code: 'custom', path: ['intervalCount'], message: count.error.issues[0]!.message });
        return z.NEVER;
      }
      return { ...o, intervalCount: count.data ?? 1 };
    }),
);

/**
 * A new price's fields, in two steps so the first fault reported is the one the hand-written
 * checks met first: schedule (`interval`, `type` and their agreement), then the rest
 * (`intervalCount` is read only for recurring prices).
 */
export const priceInput = (error: string) =>
  issuing(
    [laterPriceFields],
    issuing(
      ['parameter_missing'],
      z
        .strictObject(priceShape, {
          error: (issue) =>
            issue.code === 'unrecognized_keys'
              ? withCode(`is not a price field; use ${Object.keys(priceShape).join(', ')}`)
              : withCode(error),
        })
        .transform((o, ctx) => {
          const type = o.type ?? (o.interval ? 'recurring' : 'one_time');
          if (type === 'recurring' && !o.interval)
            ctx.addIssue({
              code: 'custom',
              path: ['interval'],
              message: withCode('is required for a recurring price', 'parameter_missing'),
            });
          if (type === 'one_time' && o.interval)
            ctx.addIssue({ code: 'custom', path: ['interval'], message: withCode('is only for recurring prices') });
          return { ...o, type, interval: o.interval ?? null };
        }),
    ).transform(thenParse(laterPriceFields)),
  );

/** A product with, optionally, its default price. */
export const ProductCreate = closedBody(
  { ...productFields, defaultPriceData: optional(priceInput('must be an object')) },
  'a product',
).openapi('ProductCreate', {
  example: { name: 'Pro plan', defaultPriceData: { currency: 'usdc', unitAmount: '150000000' } },
});

export const ProductUpdate = closedBody(
  {
    name: optional(text({ min: 1, max: 250 })),
    description: clearable(text({ max: 2000 })),
    unitLabel: clearable(text({ max: 40 })),
    url: clearable(url()),
    isActive: optional(bool()),
    metadata: optional(metadata()),
    visibility: optional(visibility),
    images: clearable(imageList),
    // The reference's clients send the product back whole: its default price may be repeated, not changed.
    defaultPriceId: optional(text({ max: 64 })).openapi({
      description: "Cannot be changed (a product's default price is its first): may only repeat the product's value",
    }),
  },
  'a product',
).openapi('ProductUpdate', {
  description: 'Only the fields sent change; null clears a text field',
  example: { name: 'Pro plan (yearly)' },
});

/** The reference's price `visibility`, which Weir's prices do not have. */
const priceVisibility = ignored(['visibility'], 'prices have no visibility of their own in Weir (products have one)');

/** A price of an existing product (`productId`) or of a new one (`productData`), as the reference allows. */
export const PriceCreate = issuing(
  [productInput('must be an object'), requiredText(), priceInput(''), 'parameter_invalid'],
  closedBody(
    {
      productId: z.unknown().optional(),
      productData: z.unknown().optional(),
      ...priceShape,
      ...ignored(
        ['customPreset', 'customUnitAmountSuggestions'],
        'a price has its amount: the payer enters one on a variable payment link (its minimumAmount, suggestedAmounts)',
      ),
      ...priceVisibility,
    },
    'a price',
  )
    // Read in later steps (unknown here), so the document is told what they require: the amount,
    // and the product as an id or as a new one's data.
    .openapi({
      required: ['currency', 'unitAmount'],
      oneOf: [{ required: ['productId'] }, { required: ['productData'] }],
    })
    .transform((body, ctx) => {
      const {
        productId: _id,
        productData: _data,
        customPreset: _p,
        customUnitAmountSuggestions: _s,
        visibility: _v,
        ...rest
      } = body;
      let productData: z.output<ReturnType<typeof productInput>> | undefined;
      let productId: string | undefined;
      const failed = () => ctx.issues.length > 0;
      if (body.productId === undefined) {
        productData = thenParse(optional(productInput('must be an object')), ['productData'])(body.productData, ctx);
        if (failed()) return z.NEVER;
      } else if (body.productData !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['productData'],
          message: withCode('give productId or productData, not both'),
        });
        return z.NEVER;
      }
      if (productData === undefined) productId = thenParse(requiredText(), ['productId'])(body.productId, ctx);
      if (failed()) return z.NEVER;
      const price = thenParse(priceInput('the request body must be a JSON object'))(rest, ctx);
      return { productId, productData, price };
    }),
);

const FIXED = ['unitAmount', 'currency', 'type', 'interval', 'intervalCount', 'productId'] as const;
const fixedField = z
  .unknown()
  .refine((v) => v === undefined, withCode('cannot be changed on an existing price; create a new price instead'))
  .optional()
  .openapi({ description: 'Cannot be changed: create a new price instead', deprecated: true });

export const PriceUpdate = closedBody(
  {
    ...(Object.fromEntries(FIXED.map((k) => [k, fixedField])) as { [K in (typeof FIXED)[number]]: typeof fixedField }),
    isActive: optional(bool()),
    nickname: clearable(text({ max: 100 })),
    metadata: optional(metadata()),
    ...priceVisibility,
  },
  'a price',
).openapi('PriceUpdate', {
  description: 'A price keeps its amount and schedule: only these change',
  example: { nickname: 'Launch price' },
});

const ProductSummary = z.object({ id: z.string(), name: z.string(), isActive: z.boolean() });

const priceFields = {
  id: z.string(),
  organizationId: z.string(),
  environment: z.enum(['test', 'live']),
  productId: z.string(),
  type: z.enum(['one_time', 'recurring']),
  currency: z.string(),
  unitAmount: amountString(),
  interval: z.enum(INTERVALS).nullable(),
  intervalCount: z.number().int().nullable(),
  isActive: z.boolean(),
  nickname: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  billingScheme: z.literal('per_unit'),
  createdAt: timestamp(),
  updatedAt: timestamp(),
};

export const PriceSchema = z.object({ ...priceFields, product: ProductSummary.nullable() }).openapi('Price');

export const ProductSchema = z
  .object({
    id: z.string(),
    organizationId: z.string(),
    environment: z.enum(['test', 'live']),
    name: z.string(),
    description: z.string().nullable(),
    isActive: z.boolean(),
    unitLabel: z.string().nullable(),
    url: z.string().nullable(),
    images: z.array(z.string()),
    metadata: z.record(z.string(), z.string()),
    visibility: z.number().int(),
    defaultPriceId: z.string().nullable(),
    deleted: z.boolean(),
    defaultPrice: z.object({ ...priceFields, product: ProductSummary }).nullable(),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .openapi('Product');

export type ProductInput = z.output<ReturnType<typeof productInput>>;
export type PriceInput = z.output<ReturnType<typeof priceInput>>;
