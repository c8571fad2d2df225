import {
  MAX_CUSTOM_FIELDS,
  MAX_DROPDOWN_OPTIONS,
  MAX_SUGGESTED_AMOUNTS,
} from '../../../machines/payment-link.decide.ts';
import { PAYMENT_LINK_PRICINGS, type PRICING_FIELDS } from '../../../machines/payment-link.types.ts';
import { CURRENCIES, INTERVALS } from '../../actors/line-items.ts';
import { DECIMAL } from '../../shared/decimal.ts';
import {
  type JsonType,
  amount,
  amountString,
  arrayOf,
  bodyObject,
  ignored,
  bool,
  clearable,
  metadata,
  objectField,
  oneOf,
  optional,
  requiredText,
  text,
  timestamp,
  url,
  withCode,
  z,
  integer,
} from './fields.ts';

/**
 * Request and answer schemas of payment links. Fields are declared in the order the API has
 * always checked them, so a body with one fault gets the 400 it always got. Rules that need the
 * catalog or the environment (prices, products, networks) and the link's own rules
 * (`validatePaymentLink`) are checked after parsing.
 */

const absent = (input: unknown) => input === undefined || input === null;
const PRICINGS = PAYMENT_LINK_PRICINGS as readonly ['fixed', 'variable', 'subscription'];
const FIELD_TYPES = ['text', 'numeric', 'dropdown'] as const;
const MAX_TAGS = 10;

/** Checks `first` before the documented schema parses, and reports the first fault it finds (for checks that must come first). */
const checkedFirst = <T extends z.ZodType>(first: z.ZodType, then: T) =>
  z.preprocess((value, ctx) => {
    const result = first.safeParse(value);
    if (result.success) return value;
    const issue = result.error.issues[0]!;
    ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
    return value;
  }, then);

// --- custom fields ------------------------------------------------------------------------------

/** `{type: "custom", custom: "Company"}`, or the label's text alone. */
const Label = z
  .union(
    [
      text({ min: 1, max: 50 }),
      objectField({
        type: optional(oneOf(['custom'])),
        custom: requiredText({ max: 50 }),
      }),
    ],
    {
      error: (issue) =>
        absent(issue.input)
          ? withCode('is required: {"type": "custom", "custom": "Company"}', 'parameter_missing')
          : withCode('must be an object'),
    },
  )
  .transform((label) => ({ type: 'custom' as const, custom: typeof label === 'string' ? label : label.custom }))
  .openapi({
    description: '`{type: "custom", custom}`, or the text alone',
    example: { type: 'custom', custom: 'Company' },
  });

const bound = () => optional(integer({ min: 0 })).transform((v) => v ?? null);

const DECIMAL_HINT = withCode('must be a number such as 10 or 2.5');
/** A bound of a numeric answer: a number or a decimal string, kept as its decimal text (null: none). */
const decimalBound = () =>
  optional(
    z
      .union([z.number(), z.string()], { error: DECIMAL_HINT })
      .transform((v) => (typeof v === 'number' ? String(v) : v))
      .refine((v) => DECIMAL.test(v) && v.length <= 40, DECIMAL_HINT)
      .openapi({ description: 'A number, or a decimal string', example: '2.5' }),
  ).transform((v) => v ?? null);

const lengthBounds = { minimumLength: bound(), maximumLength: bound() };
const noBounds = { minimumLength: null, maximumLength: null };

const TextRules = optional(objectField(lengthBounds)).transform((rules) => rules ?? noBounds);
const NumericRules = optional(
  objectField({ ...lengthBounds, minimum: decimalBound(), maximum: decimalBound() }),
).transform((rules) => rules ?? { ...noBounds, minimum: null, maximum: null });
const OPTIONS_HINT = 'is required: [{"label": "Small", "value": "s"}]';
const DropdownRules = z.preprocess(
  (rules) => rules ?? {},
  objectField({
    options: z
      .array(objectField({ label: requiredText({ max: 100 }), value: requiredText({ max: 100 }) }), {
        error: (issue) =>
          absent(issue.input) ? withCode(OPTIONS_HINT, 'parameter_missing') : withCode('must be an array'),
      })
      .max(MAX_DROPDOWN_OPTIONS, withCode(`must have at most ${MAX_DROPDOWN_OPTIONS} items`)),
  }),
);

const fieldBase = {
  key: requiredText({ max: 40 }).openapi({
    description: 'Letters, digits or _; unique in the link',
    example: 'company',
  }),
  label: Label,
  optional: optional(bool())
    .transform((v) => v ?? false)
    .openapi({ description: 'Whether the payer may leave it empty (default false)' }),
};

/** A field's type, and no rules of another type: checked before the field's own keys. */
const FieldKind = z
  .looseObject(
    {
      type: z.enum(FIELD_TYPES, {
        error: (issue) =>
          absent(issue.input)
            ? withCode(`is required: one of ${FIELD_TYPES.join(', ')}`, 'parameter_missing')
            : withCode(`must be one of ${FIELD_TYPES.join(', ')}`),
      }),
    },
    { error: withCode('must be an object') },
  )
  .superRefine((field, ctx) => {
    for (const other of FIELD_TYPES) {
      if (other !== field.type && !absent(field[other]))
        ctx.addIssue({
          code: 'custom',
          path: [other],
          message: withCode(`is only for ${other} fields; this field is ${field.type}`),
        });
    }
  });

/** A question on the link's page; its rules sit under a key named by its type. */
export const CustomFieldInput = checkedFirst(
  FieldKind,
  z.discriminatedUnion('type', [
    objectField({ type: z.literal('text'), ...fieldBase, text: TextRules }),
    objectField({ type: z.literal('numeric'), ...fieldBase, numeric: NumericRules }),
    objectField({ type: z.literal('dropdown'), ...fieldBase, dropdown: DropdownRules }),
  ]),
).openapi('PaymentLinkCustomFieldInput', {
  example: { key: 'company', type: 'text', label: { type: 'custom', custom: 'Company' }, text: { maximumLength: 40 } },
});

// --- the fields a merchant sets at creation and may change later ------------------------------

const AllowedChain = objectField({
  chainId: z
    .number({
      error: (issue) =>
        absent(issue.input)
          ? withCode('is required', 'parameter_missing')
          : withCode('must be an integer', 'parameter_invalid_integer'),
    })
    .refine(Number.isSafeInteger, { message: withCode('must be an integer', 'parameter_invalid_integer'), abort: true })
    .refine((v) => v >= 1, withCode('must be at least 1'))
    .openapi({ type: 'integer', minimum: 1, description: 'A network of the key’s environment', example: 7357 }),
  isPreferred: optional(bool()).transform((v) => v ?? false),
});

const tag = z
  .string({ error: withCode('must be a non-empty string') })
  .refine((v) => v.trim().length > 0, withCode('must be a non-empty string'))
  .max(50, withCode('must be at most 50 characters'));

/** Amounts of a variable-price link; null clears them. */
const clearableAmount = () => clearable(amount());

/** What a link's create and update bodies share, in the order they are checked; null clears a field. */
const editable = {
  allowedChains: optional(arrayOf(AllowedChain, { max: 50 })).openapi({
    description:
      "Networks the payer may pay on (none: every network of the organization). A request setting them must allow one the link can be paid on (a payment method of the organization there that can be paid, and an asset in the link's currency): else a 400 `payment_method_not_available` naming `allowedChains`. At most one preferred, which a request setting it must name among those",
  }),
  suggestedAmounts: clearable(arrayOf(amount(), { max: MAX_SUGGESTED_AMOUNTS }))
    .transform((v) => (v === null ? [] : v))
    .openapi({ description: 'Variable price only: one-click amounts' }),
  type: optional(oneOf(['one_time', 'multiple'])).openapi({
    description: '`multiple` (default): reusable; `one_time`: one payment',
  }),
  title: optional(text({ min: 1, max: 250 })).openapi({ description: "The heading of the link's page" }),
  description: clearable(text({ max: 2000 })).openapi({ description: 'Shown under the title on the page' }),
  image: clearable(url()).openapi({ description: 'An image shown on the page, by its URL' }),
  tags: optional(arrayOf(tag, { max: MAX_TAGS })).openapi({
    description: `Your own labels, at most ${MAX_TAGS}; not shown to the payer`,
  }),
  nameCollection: optional(bool()).openapi({ description: "The page asks the payer's name (required to pay)" }),
  emailCollection: optional(bool()).openapi({ description: 'Default: true for a subscription link (required there)' }),
  phoneNumberCollection: optional(bool()).openapi({ description: 'The page asks a phone number (required to pay)' }),
  billingAddressCollection: optional(bool()).openapi({ description: 'The page asks a billing address' }),
  shippingAddressCollection: optional(bool()).openapi({ description: 'The page asks a shipping address' }),
  customFields: clearable(
    objectField({
      fields: optional(arrayOf(CustomFieldInput, { max: MAX_CUSTOM_FIELDS })).transform((v) => v ?? []),
    }),
  )
    .transform((v) => (v === null ? { fields: [] } : v))
    .openapi({ description: `Questions the page asks the payer, at most ${MAX_CUSTOM_FIELDS}; null removes them` }),
  submitType: optional(oneOf(['pay', 'book', 'donate'])).openapi({
    description: "The word on the page's button: Pay (default), Book or Donate",
  }),
  afterCompletion: optional(oneOf(['redirect', 'hosted_confirmation'])).openapi({
    description: 'Default: redirect when afterCompletionRedirectUrl is given, else hosted_confirmation',
  }),
  afterCompletionRedirectUrl: clearable(url()).openapi({
    description: 'With `afterCompletion: redirect`: where the payer goes once paid',
  }),
  afterCompletionConfirmMsg: clearable(text({ max: 500 })).openapi({
    description: 'With `afterCompletion: hosted_confirmation`: shown to the payer once paid',
  }),
  allowPromotionCodes: optional(bool()).openapi({
    description: 'Whether the payer may enter a promotion code on the checkout page the link opens',
  }),
  minimumAmount: clearableAmount().openapi({ description: 'Variable price only: the least the payer may enter' }),
  maximumAmount: clearableAmount().openapi({ description: 'Variable price only: the most the payer may enter' }),
  metadata: clearable(metadata()).transform((v) => (v === null ? {} : v)),
};

const isActive = optional(bool()).openapi({ description: 'Whether payers can use the link (default true)' });

// --- create ------------------------------------------------------------------------------------

const currency = () => oneOf(CURRENCIES);
const { title: _title, ...editableWithoutTitle } = editable;

/** The reference's `suggestedCurrency`: a Weir link sells in one currency. */
const suggestedCurrency = ignored(
  ['suggestedCurrency'],
  'a link sells in one currency: `currency`, else `preferredCurrency`, else the first of `currencies`',
);

/**
 * A new link. It sells a catalog price: `priceId`, a product's default price (`productId`), or
 * one made from `amount` and a currency; without a price the payer enters the amount. The
 * currency is the reference's `currencies` (and `preferredCurrency`, one of them) or the
 * deprecated `currency`; a Weir price has one currency, so the link sells in `currency`, else the
 * preferred one, else the first listed.
 */
export const PaymentLinkCreate = bodyObject({
  title: requiredText({ max: 250 }).openapi({
    description: "The heading of the link's page",
    example: 'Concert ticket',
  }),
  ...editableWithoutTitle,
  pricing: optional(oneOf(PRICINGS)).openapi({
    description: 'Checked against the price the link sells: fixed (one-time), subscription (recurring) or variable',
  }),
  priceId: optional(text({ max: 64 })).openapi({ description: 'The catalog price to sell' }),
  productId: optional(text({ max: 64 })).openapi({
    description:
      'The product to sell: its default price, or a new price from `amount`, or variable with `pricing: variable`',
  }),
  amount: optional(amount()).openapi({ description: 'A fixed price made for the link (with a currency)' }),
  currencies: optional(arrayOf(currency(), { min: 1, max: CURRENCIES.length })).openapi({
    description: 'The currency of the price made for the link: a link sells in one, `preferredCurrency` else the first',
  }),
  preferredCurrency: optional(currency()).openapi({ description: 'One of `currencies`' }),
  currency: optional(currency()).openapi({ deprecated: true, description: 'Use `currencies`' }),
  isActive,
  ...suggestedCurrency,
})
  .superRefine((body, ctx) => {
    const listed = body.currencies;
    if (!Array.isArray(listed)) return;
    for (const key of ['preferredCurrency', 'currency'] as const) {
      const chosen = body[key];
      if (chosen !== undefined && !listed.includes(chosen))
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: withCode(`must be one of currencies (${listed.join(', ')})`),
        });
    }
  })
  .transform(({ currencies, preferredCurrency, currency, ...body }) => ({
    ...body,
    currency: currency ?? preferredCurrency ?? currencies?.[0],
  }))
  .openapi('PaymentLinkCreate', {
    example: {
      title: 'Concert ticket',
      amount: '2500000000',
      currencies: ['usdc'],
      afterCompletionRedirectUrl: 'https://shop.example/thanks',
    },
  });

// --- update ------------------------------------------------------------------------------------

/** What an update answers for a pricing field sent with another value than the link's. */
export const FIXED_ON_LINK = 'cannot be changed on a payment link; create a new payment link instead';

/**
 * A field that fixes the link's price: a body may repeat it (clients send the whole link back), never
 * change it (the route compares it). Null is another value unless `doc`'s type takes it (a link's
 * price id or schedule may be null), so it is refused here, as documented.
 */
const repeated = (doc: { type: JsonType | JsonType[]; enum?: unknown[] }) =>
  z
    .unknown()
    .refine((value) => value !== null || [doc.type].flat().includes('null'), withCode(FIXED_ON_LINK))
    .optional()
    .openapi({ ...doc, description: "Cannot be changed: may only repeat the link's value" });

/** Changes to a link: only the fields sent change, null clears one; the price is fixed. */
export const PaymentLinkUpdate = bodyObject({
  pricing: repeated({ type: 'string', enum: [...PRICINGS] }),
  priceType: repeated({ type: 'string', enum: ['one_time', 'recurring'] }),
  currency: repeated({ type: 'string' }),
  amount: clearableAmount().openapi({ description: "Cannot be changed: may only repeat the link's value" }),
  priceId: repeated({ type: ['string', 'null'] }),
  productId: repeated({ type: 'string' }),
  interval: repeated({ type: ['string', 'null'], enum: [...INTERVALS, null] }),
  intervalCount: repeated({ type: ['integer', 'null'] }),
  ...editable,
  isActive,
  ...ignored(
    ['currencies', 'preferredCurrency'],
    "a link's currency is fixed when it is made (see `currency`); clients of the reference send it back with the link",
  ),
  ...suggestedCurrency,
}).openapi('PaymentLinkUpdate', {
  example: { title: 'Concert ticket (late entry)', afterCompletionConfirmMsg: 'See you there' },
});

// --- answers -------------------------------------------------------------------------------------

const LabelSchema = z.object({ type: z.literal('custom'), custom: z.string() });
const bounds = { minimumLength: z.number().int().nullable(), maximumLength: z.number().int().nullable() };
const answerBase = { key: z.string(), label: LabelSchema, optional: z.boolean() };

const CustomFieldSchema = z
  .discriminatedUnion('type', [
    z.object({ ...answerBase, type: z.literal('text'), text: z.object(bounds) }),
    z.object({
      ...answerBase,
      type: z.literal('numeric'),
      numeric: z.object({ ...bounds, minimum: z.string().nullable(), maximum: z.string().nullable() }),
    }),
    z.object({
      ...answerBase,
      type: z.literal('dropdown'),
      dropdown: z.object({ options: z.array(z.object({ label: z.string(), value: z.string() })) }),
    }),
  ])
  .openapi('PaymentLinkCustomField');

const EXAMPLE = {
  id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  organizationId: 'b1e5a0a4-6c4e-4f55-9d8a-4a9a0c5e2f10',
  type: 'multiple',
  pricing: 'fixed',
  priceType: 'one_time',
  title: 'Concert ticket',
  description: null,
  image: null,
  tags: [],
  currency: 'usdc',
  amount: '2500000000',
  priceId: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
  productId: '9b2d5c1e-6f3a-4b7c-8d9e-0a1b2c3d4e5f',
  interval: null,
  intervalCount: null,
  suggestedAmounts: [],
  minimumAmount: null,
  maximumAmount: null,
  nameCollection: false,
  emailCollection: false,
  phoneNumberCollection: false,
  billingAddressCollection: false,
  shippingAddressCollection: false,
  customFields: { fields: [] },
  submitType: 'pay',
  afterCompletion: 'redirect',
  afterCompletionRedirectUrl: 'https://shop.example/thanks',
  afterCompletionConfirmMsg: null,
  allowPromotionCodes: false,
  allowedChains: [],
  metadata: {},
  isActive: true,
  createdAt: '2026-05-01T08:00:00.000Z',
  updatedAt: '2026-05-01T08:00:00.000Z',
  url: 'https://pay.shop.example/pay/7c9e6679-7425-40de-944b-e07fc1f90ae7',
  livemode: false,
};

/**
 * A link as the API shows it: the reference's PaymentLinkDto, with its pricing, its public `url`
 * and `livemode`. `isActive` is whether payers can use it now (a paid one_time link, or one
 * whose product is gone, shows false).
 */
export const PaymentLinkSchema = z
  .object({
    id: z.string(),
    organizationId: z.string(),
    type: z.enum(['one_time', 'multiple']),
    pricing: z.enum(PRICINGS),
    priceType: z.enum(['one_time', 'recurring']),
    title: z.string(),
    description: z.string().nullable(),
    image: z.string().nullable(),
    tags: z.array(z.string()),
    currency: z.string(),
    amount: amountString().nullable().openapi({ description: 'The unit amount; null for a variable-price link' }),
    priceId: z.string().nullable(),
    productId: z.string(),
    interval: z.enum(INTERVALS).nullable(),
    intervalCount: z.number().int().nullable(),
    suggestedAmounts: z.array(amountString()),
    minimumAmount: amountString().nullable(),
    maximumAmount: amountString().nullable(),
    nameCollection: z.boolean(),
    emailCollection: z.boolean(),
    phoneNumberCollection: z.boolean(),
    billingAddressCollection: z.boolean(),
    shippingAddressCollection: z.boolean(),
    customFields: z.object({ fields: z.array(CustomFieldSchema) }),
    submitType: z.enum(['pay', 'book', 'donate']),
    afterCompletion: z.enum(['redirect', 'hosted_confirmation']),
    afterCompletionRedirectUrl: z.string().nullable(),
    afterCompletionConfirmMsg: z.string().nullable(),
    allowPromotionCodes: z.boolean(),
    allowedChains: z.array(z.object({ chainId: z.number().int(), isPreferred: z.boolean() })),
    metadata: z.record(z.string(), z.string()),
    isActive: z.boolean().openapi({
      description:
        'Whether payers can use the link now: false while it is switched off, once a one_time link is paid, and while its product or price is deleted or inactive',
    }),
    createdAt: timestamp(),
    updatedAt: timestamp(),
    url: z.string().openapi({ format: 'uri', description: 'The hosted page payers open' }),
    livemode: z.boolean(),
  })
  .openapi('PaymentLink', { example: EXAMPLE });

export const PAYMENT_LINK_EXAMPLE = EXAMPLE;
export type PaymentLinkCreateBody = z.output<typeof PaymentLinkCreate>;
export type PaymentLinkUpdateBody = z.output<typeof PaymentLinkUpdate>;
/** The fields a create and an update body share (what `editableFields` reads). */
export type PaymentLinkEditable = Omit<
  PaymentLinkUpdateBody,
  (typeof PRICING_FIELDS)[number] | 'isActive' | 'currencies' | 'preferredCurrency' | 'suggestedCurrency'
>;
