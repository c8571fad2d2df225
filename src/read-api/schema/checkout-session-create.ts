import { isPhone, PHONE_HINT } from '../../actors/customer.ts';
import { CURRENCIES, INTERVALS } from '../../actors/line-items.ts';
import { MAX_TAX_RATES } from '../../actors/tax-rate.ts';
import { isUuid } from '../../shared/ids.ts';
import { ALLOW_PROMOTION_CODES, allowedChainFields } from './checkout-session.ts';
import { AddressInput, email, TaxIdsInput } from './customer.ts';
import {
  amount,
  arrayOf,
  bodyObject,
  bool,
  closedObject,
  ignored,
  unsupported,
  metadata,
  objectField,
  oneOf,
  optional,
  text,
  url,
  withCode,
  z,
  absent,
  REQUIRED,
  required,
  requiredOneOf,
  requiredText,
  integer,
} from './fields.ts';
import { parseWith } from './route.ts';
import { issuing } from './validation-codes.ts';

/**
 * The body of `POST /checkout/sessions` and the line items it shares with invoices. Each field
 * answers with the message, code and path the hand-written checks gave; what needs the database,
 * the organization or the clock (prices, customers, tax rates, payment methods, `expiresAt`'s
 * distance from now) is the creator's (`create-checkout-session.ts`, `line-items.ts`).
 */

/** A non-empty string naming a record by its uuid. */
const uuidText = () => requiredText().refine(isUuid, withCode('must be a uuid')).openapi({ format: 'uuid' });

const TAX_RATE_ID = withCode('must be a tax rate id (a uuid)');

/** Tax rate ids as sent: distinct uuids, at most 5 (whether each names an active rate is checked against the store). */
export const taxRateIds = () =>
  z
    .array(z.string({ error: TAX_RATE_ID }).refine(isUuid, TAX_RATE_ID), {
      error: withCode('must be an array of tax rate ids'),
    })
    .max(MAX_TAX_RATES, withCode(`must have at most ${MAX_TAX_RATES} items`))
    .superRefine((ids, ctx) => {
      for (const [i, id] of ids.entries())
        if (ids.indexOf(id) < i)
          ctx.addIssue({ code: 'custom', path: [i], message: withCode(`tax rate ${id} is listed twice`) });
    })
    .openapi({ items: { type: 'string', format: 'uuid' } });

/**
 * The schedule and amount of a price created with the line: `type` (default recurring when an
 * `interval` is given), `interval` (required for recurring), `currency`, `unitAmount`, and
 * `intervalCount` (recurring only, default 1; not read for a one-time price).
 */
const priceFields = {
  type: optional(oneOf(['one_time', 'recurring'] as const)).openapi({
    description: 'Default: recurring when `interval` is given',
  }),
  interval: optional(oneOf(INTERVALS)),
  currency: requiredOneOf(CURRENCIES),
  unitAmount: amount(),
  // Read once the price's type is settled (`INTERVAL_COUNT`): null is not given there too.
  intervalCount: optional(
    z.unknown().openapi({ type: 'integer', minimum: 1, maximum: 36, description: 'Recurring prices only; default 1' }),
  ),
};

type PriceFields = z.output<z.ZodObject<typeof priceFields>>;

/** An inline price's schedule, settled: what the resolver stores on the new price. */
export type InlinePrice = {
  type: 'one_time' | 'recurring';
  interval: (typeof INTERVALS)[number] | null;
  intervalCount: number | null;
  currency: (typeof CURRENCIES)[number];
  unitAmount: bigint;
};

const INTERVAL_COUNT = optional(integer({ min: 1, max: 36 }));

/** `o`'s schedule settled; an issue's path is under `at` (a line's `price`, checked by the line). */
function settlePrice(o: PriceFields, ctx: z.core.$RefinementCtx<unknown>, at: string[] = []): InlinePrice {
  const type = o.type ?? (o.interval ? 'recurring' : 'one_time');
  if (type === 'recurring' && !o.interval) {
    ctx.addIssue({
      code: 'custom',
      path: [...at, 'interval'],
      message: withCode('is required for a recurring price', 'parameter_missing'),
    });
    return z.NEVER;
  }
  let intervalCount: number | null = null;
  if (type === 'recurring') {
    const count = INTERVAL_COUNT.safeParse(o.intervalCount);
    if (!count.success) {
      ctx.addIssue({ code: 'custom', path: [...at, 'intervalCount'], message: count.error.issues[0]!.message });
      return z.NEVER;
    }
    intervalCount = count.data ?? 1;
  }
  return {
    type,
    interval: type === 'recurring' ? (o.interval ?? null) : null,
    intervalCount,
    currency: o.currency,
    unitAmount: o.unitAmount,
  };
}

/** A new product made with the line (`priceData.productData`); other keys are refused. */
const ProductDataInput = objectField({
  name: text({ min: 1, max: 250, required: true }),
  description: optional(text({ max: 2000 })),
  unitLabel: optional(text({ max: 40 })),
  url: optional(text({ max: 2048 })),
  images: optional(arrayOf(z.string({ error: withCode('must be a string') }), { max: 8 })),
  metadata: optional(metadata()),
  ...ignored(['visibility'], 'a product made with a line is shown in the dashboard (visibility 10)'),
}).openapi('ProductDataInput');

/**
 * `price`: alone, a new price of an existing product (`productId`, `currency` and `unitAmount`
 * required, checked by the line); beside `priceId`, a description of that price, whose every field
 * given must agree with it (checked against the store by the line items' resolver).
 */
const PriceInput = objectField({
  productId: optional(uuidText()),
  ...priceFields,
  currency: optional(oneOf(CURRENCIES)),
  unitAmount: optional(amount()),
}).openapi('LineItemPriceInput', {
  description:
    'Alone: a new price of an existing product (`productId`, `currency` and `unitAmount` required). Beside `priceId`: the price it names, as you know it; each field sent must agree with it, else a 400 naming the first that does not',
});

type PriceAsSent = z.output<typeof PriceInput>;

/** What `price` beside `priceId` says of the stored price: only the fields sent, `intervalCount` checked. */
export type PriceDescription = Partial<Omit<InlinePrice, 'intervalCount'>> & {
  productId?: string;
  intervalCount?: number;
};

const PRICE_REQUIRED = ['productId', 'currency', 'unitAmount'] as const;

/** `price` alone: a new price of its `productId`, settled; the issues under `price`. */
function newPriceOf(o: PriceAsSent, ctx: z.core.$RefinementCtx<unknown>) {
  for (const key of PRICE_REQUIRED)
    if (o[key] === undefined) {
      ctx.addIssue({ code: 'custom', path: ['price', key], message: REQUIRED });
      return z.NEVER;
    }
  return {
    productId: o.productId!,
    ...settlePrice({ ...o, currency: o.currency!, unitAmount: o.unitAmount! }, ctx, ['price']),
  };
}

/** `price` beside `priceId`: the fields sent (`intervalCount` read as a count), nothing settled or defaulted. */
function describedPrice(o: PriceAsSent, ctx: z.core.$RefinementCtx<unknown>): PriceDescription {
  const { intervalCount, ...rest } = o;
  const given = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) as PriceDescription;
  const count = INTERVAL_COUNT.safeParse(intervalCount);
  if (!count.success) {
    ctx.addIssue({ code: 'custom', path: ['price', 'intervalCount'], message: count.error.issues[0]!.message });
    return z.NEVER;
  }
  return count.data === undefined ? given : { ...given, intervalCount: count.data };
}

/** `priceData`: a new price of an existing product (`productId`) or of a new one (`productData`), not both. */
const PriceDataInput = issuing(
  ['parameters_exclusive', 'parameter_missing', INTERVAL_COUNT],
  objectField({
    productData: optional(ProductDataInput),
    productId: optional(uuidText()),
    ...priceFields,
  }).transform((o, ctx) => {
    const { productData, productId } = o;
    if (productData !== undefined && productId !== undefined) {
      ctx.addIssue({
        code: 'custom',
        message: withCode('must have productId or productData, not both', 'parameters_exclusive'),
      });
      return z.NEVER;
    }
    const price = settlePrice(o, ctx);
    if (productId !== undefined) return { productId, ...price };
    if (productData !== undefined) return { productData, ...price };
    ctx.addIssue({ code: 'custom', message: withCode('must have productId or productData', 'parameter_missing') });
    return z.NEVER;
  }),
).openapi('LineItemPriceDataInput', {
  description: 'A new price, of an existing product (`productId`) or of a new one (`productData`)',
  oneOf: [{ required: ['productId'] }, { required: ['productData'] }],
});

const FORMS = ['priceId', 'price', 'priceData'] as const;
const EXCLUSIVE = withCode('must have exactly one of priceId, price or priceData', 'parameters_exclusive');

/** The forms a line sends: one, or `priceId` with the `price` it names. */
const formsTaken = (sent: string[]) => sent.length === 1 || (sent.length === 2 && !sent.includes('priceData'));

/**
 * A line: exactly one of `priceId`, `price` and `priceData` (or `priceId` with a `price` describing
 * it, as the spec's recurring invoice sends), checked before any of them is read.
 */
const LineItemInput = issuing(
  ['parameters_exclusive', 'parameter_missing', INTERVAL_COUNT],
  z.preprocess(
    (value, ctx) => {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
      const item = value as Record<string, unknown>;
      if (!formsTaken(FORMS.filter((k) => !absent(item[k])))) ctx.addIssue({ code: 'custom', message: EXCLUSIVE });
      return value;
    },
    objectField({
      quantity: optional(integer({ min: 1, max: 1_000_000 })).openapi({ description: 'Default 1' }),
      priceId: optional(uuidText()).openapi({ description: 'An existing, active price' }),
      price: optional(PriceInput),
      priceData: optional(PriceDataInput),
      taxRateIds: optional(taxRateIds()).openapi({ description: "The line's own tax rates (else the request's)" }),
      ...ignored(['periodStart', 'periodEnd'], "Weir keeps no service period on a line; say it in the product's name"),
    }).transform(({ quantity = 1, taxRateIds, priceId, price, priceData }, ctx) => {
      const line = { quantity, ...(taxRateIds === undefined ? {} : { taxRateIds }) };
      if (priceId !== undefined)
        return price === undefined
          ? { ...line, priceId }
          : { ...line, priceId, describedAs: describedPrice(price, ctx) };
      if (price !== undefined) return { ...line, price: newPriceOf(price, ctx) };
      return { ...line, priceData: priceData! };
    }),
  ),
).openapi('LineItemInput', {
  description:
    'Exactly one of `priceId`, `price` and `priceData`; or `priceId` with a `price` describing that price (each field sent must agree with it)',
  oneOf: [
    { required: ['priceId'] },
    // Alone, `price` needs productId, currency and unitAmount (its description says so).
    { required: ['price'], not: { required: ['priceId'] } },
    { required: ['priceData'] },
  ],
});

const lineItemList = z
  .array(LineItemInput, {
    error: (issue) => (absent(issue.input) ? REQUIRED : withCode('must be an array')),
  })
  .max(20, withCode('must have at most 20 items'))
  .min(1, withCode('must have at least 1 item'));

/** `{data: [line, …]}`, 1 to 20 lines; `lineItems` itself absent is the caller's to refuse. */
export const LineItemsInput = objectField({ data: lineItemList }).openapi('LineItemsInput');

export type LineItemsRequest = z.output<typeof LineItemsInput>;

/** Line items sent as `lineItems` by a route not declared with a schema yet: the API's 400 naming `lineItems…` on failure. */
const LineItemsField = z.object({ lineItems: LineItemsInput });
export const parseLineItems = (value: unknown): LineItemsRequest =>
  parseWith(LineItemsField, { lineItems: value }).lineItems;

/** A prefilled detail: absent or null is null; the empty string is refused. */
const detail = (max: number) => optional(text({ min: 1, max })).transform((v) => v ?? null);

/**
 * `customerData`: the customer's details the merchant prefills, kept on the session as
 * `customerDetails`. Every part is optional; other keys are refused (never dropped). `taxIds` go
 * onto the customer the session creates (an empty list is as none).
 */
const CustomerDataInput = closedObject(
  {
    name: detail(250),
    email: optional(email({ min: 1 })).transform((v) => v ?? null),
    phone: optional(text({ min: 1, max: 40 }).refine(isPhone, withCode(PHONE_HINT)))
      .transform((v) => v ?? null)
      .openapi({ example: '+44 20 7946 0958' }),
    organizationName: detail(250),
    address: optional(AddressInput).transform((v) => v ?? null),
    taxIds: optional(TaxIdsInput),
  },
  'a customer data',
)
  .transform(({ taxIds, ...details }) => (taxIds?.data.length ? { ...details, taxIds } : details))
  .openapi('CheckoutCustomerData', {
    description: "The customer's details, prefilled on the hosted page and kept as `customerDetails`",
    example: { email: 'ada@example.com', name: 'Ada Lovelace' },
  });

const updateMode = () =>
  optional(oneOf(['auto', 'never'] as const))
    .transform((v) => v ?? 'never')
    .openapi({ default: 'never' });

/**
 * `customerUpdate`: which details the session collects (`name`, billing `address`, `shipping`)
 * are copied onto its `customerId` customer when it completes; a part left out is `never`.
 */
const CustomerUpdateInput = closedObject(
  { address: updateMode(), name: updateMode(), shipping: updateMode() },
  'a customer update',
).openapi('CheckoutCustomerUpdate', {
  description:
    'Only with `customerId`: `auto` copies the collected detail onto the customer when the session completes',
  example: { name: 'auto', address: 'auto' },
});

const NO_CARDS = withCode('card payments need a connected card processor, which this Weir server does not have');

/** The payment method types of a session: Weir's one, a wallet paying on chain. */
const PAYMENT_METHOD_TYPES = ['wallet'] as const;
const CARD_TYPES = new Set(['card', 'stripe']);

/** `paymentMethodTypes`: each must be one Weir takes (a card is named as such: Weir takes no cards). */
const paymentMethodTypes = () =>
  arrayOf(
    z.enum(PAYMENT_METHOD_TYPES, {
      error: (issue) =>
        withCode(
          typeof issue.input === 'string' && CARD_TYPES.has(issue.input)
            ? `${issue.input} is not taken: card payments are not available in Weir; the only payment method type is wallet`
            : `must be one of ${PAYMENT_METHOD_TYPES.join(', ')} (the only payment method type of Weir)`,
        ),
    }),
    { min: 1, max: 10 },
  );

/** `paymentSetting`: the networks the session offers (default: every one with a payment method) and the preferred one. */
const PaymentSettingInput = objectField({
  allowedChains: optional(
    arrayOf(
      objectField({
        ...allowedChainFields("one session's"),
        ...unsupported(
          ['blacklistCurrencies'],
          "the payer may pay in any of the network's assets in the session's currency",
        ),
      }),
      { max: 50 },
    ),
  ).openapi({
    description: 'Default: every network with a payment method of the organization',
  }),
  preferredChainId: optional(integer({ min: 1 })).openapi({
    description:
      "The network whose assets the checkout page lists first, marked as preferred (none is chosen for the payer). One of the session's networks (those of allowedChains with a payment method, or every one with a payment method, each with an asset in the session's currency), else a 400. Default: the organization's, where the session offers it",
  }),
  paymentMethodTypes: optional(paymentMethodTypes()).openapi({
    description:
      'How the payer may pay: `wallet` (a transfer on chain) is the only type Weir takes, and the default; any other (`card`: card payments are not available in Weir) is a 400 naming it',
    example: ['wallet'],
  }),
  allowSwap: optional(bool()).openapi({
    description:
      "Recorded on the session, and used by nothing: Weir does no currency conversion (the payer pays in an asset of the session's currency)",
  }),
  allowFiatPayment: optional(bool().refine((v) => !v, NO_CARDS)).openapi({
    description: 'Card payments: not offered by Weir (true is refused)',
  }),
}).openapi('CheckoutPaymentSetting', { example: { allowedChains: [{ chainId: 1 }], preferredChainId: 1 } });

/** `value ?? fallback` after `schema`, documented as that default. */
const withDefault = <T extends z.ZodType, D extends z.output<T>>(schema: T, fallback: D) =>
  optional(schema)
    .transform((v) => (v ?? fallback) as z.output<T>)
    .openapi({ default: fallback });

/**
 * The create body, its fields in the order the API has always checked them (the first fault is
 * the one reported). Unknown keys are refused; the reference's that Weir does not use are ignored.
 */
export const CheckoutSessionCreate = bodyObject({
  mode: withDefault(oneOf(['payment', 'subscription'] as const), 'payment').openapi({
    description:
      '`payment` bills once and takes one-time prices only (a recurring price is a 400 naming its line); `subscription` takes recurring prices and bills them every period',
  }),
  successUrl: url({ required: true }).openapi({ description: 'Where the payer goes after paying' }),
  cancelUrl: optional(url()).openapi({
    description:
      'Where the payer goes after canceling on the hosted page, or from a session that expired or was canceled; without it the page offers no cancel button',
    example: 'https://shop.example/cart',
  }),
  submitType: withDefault(oneOf(['pay', 'book', 'donate'] as const), 'pay').openapi({
    description: "Kept on the session as sent; the checkout page's wording does not change with it",
  }),
  afterCompletion: withDefault(oneOf(['redirect', 'hosted_confirmation'] as const), 'redirect').openapi({
    description:
      '`redirect`: once paid, the payer goes to `successUrl` (`{CHECKOUT_SESSION_ID}` filled in); `hosted_confirmation`: the hosted page shows the payment confirmed, with `afterCompletionConfirmMsg`',
  }),
  clientReferenceId: optional(text({ max: 200 })).openapi({
    description: 'Your own reference (an order number), kept on the session and on a subscription it starts',
    example: 'order-6735',
  }),
  customerId: optional(text({ min: 1, max: 64 })).openapi({
    description:
      "One of the organization's customers in this environment. A `mode: subscription` session with neither `customerId` nor `customerData.email` is accepted: its checkout page asks the payer's email before a payment method can be chosen (renewal invoices are mailed to it), shows it as `customerDetails.email`, and the subscription's customer is created from it as from `customerData.email`",
  }),
  customerData: optional(CustomerDataInput).openapi({
    description:
      "The customer's details you already have: prefilled on the hosted page and kept on the session. On a `mode: subscription` session without `customerId`, `customerData.email` becomes the subscription's customer; left out, the checkout page asks the payer for it first",
  }),
  customerCreation: withDefault(oneOf(['if_required', 'always'] as const), 'if_required').openapi({
    description: '`always` also creates a customer (from `customerData.email`) for a payment',
  }),
  customerUpdate: optional(CustomerUpdateInput).openapi({
    description: 'With `customerId`: which collected details are copied onto that customer when the session completes',
  }),
  metadata: withDefault(metadata(), {}),
  afterCompletionConfirmMsg: optional(text({ max: 500 })).openapi({
    description: 'Shown to the payer on the hosted page once the session is complete',
  }),
  allowPromotionCodes: withDefault(bool(), false).openapi({ description: ALLOW_PROMOTION_CODES }),
  expiresAt: optional(
    text({ max: 64 }).refine((v) => !Number.isNaN(Date.parse(v)), withCode('must be an ISO 8601 timestamp')),
  ).openapi({ format: 'date-time', description: 'From one minute to 30 days ahead; default one hour' }),
  paymentSetting: optional(PaymentSettingInput).openapi({
    description:
      'The networks the session offers and the one preselected; default: every network with a payment method',
  }),
  lineItems: required(LineItemsInput).openapi({
    description: 'What the payer buys: 1 to 20 lines in one currency, each a `priceId`, `price` or `priceData`',
  }),
  taxRateIds: optional(taxRateIds()).openapi({ description: 'Tax rates of every line that names none of its own' }),
  ...ignored(
    [
      'nameCollection',
      'emailCollection',
      'phoneNumberCollection',
      'billingAddressCollection',
      'shippingAddressCollection',
    ],
    "the checkout page asks the payer for no details (only a subscription's email, when the session names no customer): prefill them with customerData, or sell through a payment link, whose page collects them",
  ),
  ...ignored(['customFields'], "a checkout page asks no questions; a payment link's page does (its customFields)"),
  ...unsupported(
    ['defaultPromotionCode'],
    'no code is applied when a session is made, and the payer would be asked the full price; with allowPromotionCodes the payer enters it',
  ),
}).openapi('CheckoutSessionCreate', {
  example: {
    successUrl: 'https://shop.example/thanks',
    lineItems: {
      data: [{ priceData: { currency: 'usdc', unitAmount: '1500000000', productData: { name: 'Tea' } }, quantity: 1 }],
    },
    customerData: { email: 'ada@example.com' },
    paymentSetting: { allowedChains: [{ chainId: 1 }] },
  },
});

export type CheckoutSessionRequest = z.output<typeof CheckoutSessionCreate>;
