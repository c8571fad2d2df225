import { newInvoiceDraft } from '../../../machines/invoice.decide.ts';
import { dueEndOfDay } from '../../../machines/invoice.due.ts';
import type { RecurringIntervalCount } from '../../../machines/invoice.types.ts';
import { isEmail } from '../../actors/customer.ts';
import { CURRENCIES } from '../../actors/line-items.ts';
import { defaultPaymentSetting } from '../../actors/organization.ts';
import { MAX_TAX_RATES } from '../../actors/tax-rate.ts';
import { publicInvoice } from '../../projections/invoices.projection.ts';
import { isUuid } from '../../shared/ids.ts';
import { TAX_TYPES } from '../../shared/tax.ts';
import { parseIsoInstant } from '../instant-range.ts';
import { PriceSchema } from './catalog.ts';
import { allowedChainFields } from './checkout-session.ts';
import { LineItemsInput, type LineItemsRequest } from './checkout-session-create.ts';
import { CUSTOMER_EXAMPLE, CustomerSchema } from './customer.ts';
import {
  amountString,
  arrayOf,
  bodyObject,
  ignored,
  unsupported,
  bool,
  clearable,
  listQuery,
  metadata,
  objectField,
  oneOf,
  optional,
  queryFilter,
  requiredText,
  text,
  timestamp,
  withCode,
  z,
  required,
  integer,
} from './fields.ts';
import { PaymentSettingSchema } from './organization.ts';
import { issuing } from './validation-codes.ts';

/**
 * Request and answer schemas of invoices. Fields are declared in the order the API checks them,
 * so a body with one fault gets the 400 it always got (the first issue is the one reported).
 */

const STATUSES = ['draft', 'open', 'paid', 'void', 'uncollectible'] as const;
/** The spec's spelling of `uncollectible` (Weir answers the reference's): taken where a status is an input. */
const STATUS_ALIASES = { uncollectable: 'uncollectible' } as const;
const INVOICE_TYPES = ['one_time', 'recurring'] as const;
const COLLECTION_METHODS = ['charge_automatically', 'send_invoice'] as const;
const NUMBER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._/#-]{0,63}$/;

/** Dashboard intervals and their month counts. */
const INTERVAL_MONTHS: Record<string, RecurringIntervalCount> = {
  month: 1,
  monthly: 1,
  quarter: 3,
  quarterly: 3,
  'half-year': 6,
  half_year: 6,
  'half-yearly': 6,
  half_yearly: 6,
  semiannual: 6,
  year: 12,
  yearly: 12,
  annually: 12,
  annual: 12,
};
const INTERVAL_HINT = 'must be one of month, quarter, half-year, year';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A date (`2026-05-01`) or an ISO 8601 timestamp (no offset: UTC), read as an ISO timestamp: a
 * date as its midnight UTC, or with `asDueDay` as its last instant (due all that day, see `dueEndOfDay`).
 */
const invoiceDate = (asDueDay = false) =>
  text({ max: 64 })
    .transform((raw, ctx): string => {
      const time = parseIsoInstant(raw);
      if (Number.isNaN(time)) {
        ctx.addIssue({
          code: 'custom',
          message: withCode('must be a date (2026-05-01) or an ISO 8601 timestamp (2026-05-01T08:00:00Z)'),
        });
        return z.NEVER;
      }
      return asDueDay && DATE_ONLY.test(raw) ? dueEndOfDay(time) : new Date(time).toISOString();
    })
    .openapi({ type: 'string', description: 'A date (midnight UTC) or an ISO 8601 timestamp', example: '2026-05-01' });

/** A list of whole numbers, each checked by `valid` with one message for every fault. */
const wholeNumbers = (max: number, hint: string, valid: (n: number) => boolean) =>
  arrayOf(
    z
      .number({ error: withCode(hint) })
      .refine((n) => Number.isSafeInteger(n) && valid(n), withCode(hint))
      .openapi({ type: 'integer' }),
    { max },
  );

/** A list of non-empty strings of at most 200 characters. */
const nonEmptyStrings = (max: number) =>
  arrayOf(
    z
      .string({ error: withCode('must be a non-empty string') })
      .min(1, withCode('must be a non-empty string'))
      .max(200, withCode('must be a non-empty string')),
    { max },
  );

const TAX_RATE_ID = withCode('must be a tax rate id (a uuid)');

/** Tax rate ids (checked again, with their existence, when the lines are taxed); each listed once. */
export const taxRateIdList = () =>
  z
    .array(z.string({ error: TAX_RATE_ID }).refine(isUuid, TAX_RATE_ID), {
      error: withCode('must be an array of tax rate ids'),
    })
    .max(MAX_TAX_RATES, withCode(`must have at most ${MAX_TAX_RATES} items`))
    .superRefine((ids, ctx) => {
      for (const [i, id] of ids.entries())
        if (ids.indexOf(id) !== i)
          ctx.addIssue({ code: 'custom', path: [i], message: withCode(`tax rate ${id} is listed twice`) });
    })
    .openapi({ example: ['0f8fad5b-d9cb-469f-a165-70867728950e'] });

// ---- Line items: the checkout session's (`priceId`, `price` or `priceData`), 1 to 20 in one currency. ----

const lineItemsInput = (isRequired: boolean) => (isRequired ? required(LineItemsInput) : LineItemsInput);

export type InvoiceLineItemsInput = LineItemsRequest;

// ---- The invoice's own fields, shared by create and update. ----

const dueFields = {
  dueDate: optional(invoiceDate(true)).openapi({
    description:
      'Default: 30 days after `issueDate` (from now without one); or send `daysUntilDue`. Not before today nor before `issueDate` (UTC days), checked again at finalize. A date is payable to the end of that UTC day (stored as its last instant, `2026-05-01T23:59:59.999Z`); a timestamp, midnight included, until that instant',
  }),
  daysUntilDue: optional(integer({ min: 0, max: 3650 })).openapi({
    description:
      'Days from `issueDate` (the one sent, else the draft’s, else now) to the due date; 0 is due the end of that UTC day (payable all of it)',
  }),
  issueDate: clearable(invoiceDate()).openapi({ description: 'Default: the day it is finalized; null clears it' }),
};

const invoiceFields = {
  description: clearable(text({ max: 5000 })).openapi({
    description: 'Shown under the heading of the hosted invoice page and its PDF',
  }),
  memo: clearable(text({ max: 5000 })).openapi({ description: 'A note shown after the totals on the page and PDF' }),
  footer: clearable(text({ max: 5000 })).openapi({ description: 'Shown at the foot of the page and PDF' }),
  invoiceType: optional(oneOf(INVOICE_TYPES)).openapi({
    description:
      "Default one_time. `recurring`: the first invoice of a series, billed every `interval` (default: its lines' recurring prices' schedule)",
  }),
  recurring: optional(
    objectField({
      interval: optional(text({ max: 20 })),
      intervalCount: optional(integer()).openapi({ description: 'With `interval: month`: 1, 3, 6 or 12' }),
    }),
  ).openapi({ description: 'The reference form of `interval`' }),
  interval: optional(text({ max: 20 })).openapi({
    description:
      "A recurring invoice: month, quarter, half-year or year (or monthly, quarterly, half-yearly, annually). Default: the schedule of its lines' recurring prices, which must match it when sent",
    example: 'quarter',
  }),
  collectionMethod: optional(oneOf(COLLECTION_METHODS)).openapi({
    description:
      'Default `send_invoice`. Kept on the invoice to filter by: either way the customer pays on its hosted page, Weir never charges a wallet itself',
  }),
  paymentMethods: optional(
    objectField({
      chainIds: optional(wholeNumbers(50, 'must be a positive integer', (n) => n >= 1)),
      assetIds: optional(nonEmptyStrings(50)),
    }).transform((m) => ({ chainIds: m.chainIds ?? [], assetIds: m.assetIds ?? [] })),
  ).openapi({
    description:
      "What the payer may pay with; empty lists mean everything the organization accepts. `chainIds` is the restriction `paymentSetting.allowedChains` also sets; `assetIds` are the only assets the pay page offers. Each chain, and each asset (an id of GET /api/v1/assets, on one of `chainIds` when they are sent, in the invoice's currency), must have a payment method of the organization: else a 400 naming it (`payment_method_not_available` for a missing payment method), also at finalize if one was removed since",
  }),
  reminders: optional(
    objectField({
      enabled: optional(bool()),
      daysBeforeDue: optional(
        wholeNumbers(10, 'must be a whole number of days from 1 to 365', (n) => n >= 1 && n <= 365),
      ),
      daysAfterDue: optional(
        wholeNumbers(10, 'must be a whole number of days from 1 to 365', (n) => n >= 1 && n <= 365),
      ),
    }).transform((r) => ({
      enabled: r.enabled ?? true,
      daysBeforeDue: r.daysBeforeDue ?? [],
      daysAfterDue: r.daysAfterDue ?? [],
    })),
  ).openapi({
    description:
      'Emails to the customer so many days before and after the due date while the invoice is open (`enabled` defaults to true when sent; without it, none). One whose day has passed when the invoice is finalized is not sent',
  }),
  metadata: optional(metadata()),
  number: optional(
    text({
      min: 1,
      max: 64,
      pattern: NUMBER_PATTERN,
      hint: 'must be 1 to 64 letters, digits or . _ / # -, starting with a letter or digit',
    }),
  ).openapi({ description: 'Default: the next number of the organization’s invoice setting', example: 'INV-000042' }),
};

type InvoiceFieldsInput = {
  dueDate?: string;
  daysUntilDue?: number;
  interval?: string;
  recurring?: { interval?: string; intervalCount?: number };
};

/**
 * `dueDate` or `daysUntilDue`, not both; `interval` (or `recurring.interval`, the reference's form)
 * read as a month count: `recurring.intervalCount` counts months only with `month`.
 */
function schedule<T extends InvoiceFieldsInput>(body: T, ctx: z.core.$RefinementCtx<T>) {
  if (body.dueDate !== undefined && body.daysUntilDue !== undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['dueDate'],
      message: withCode('send dueDate or daysUntilDue, not both', 'parameters_exclusive'),
    });
  const name = body.interval ?? body.recurring?.interval;
  if (name === undefined) return { ...body, recurring: undefined };
  const months = INTERVAL_MONTHS[name.toLowerCase()];
  if (months === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: body.interval !== undefined ? ['interval'] : ['recurring', 'interval'],
      message: withCode(INTERVAL_HINT),
    });
    return z.NEVER;
  }
  const count = body.recurring?.intervalCount;
  const intervalCount = name.toLowerCase() === 'month' && count !== undefined ? count : months;
  if (![1, 3, 6, 12].includes(intervalCount)) {
    ctx.addIssue({
      code: 'custom',
      path: ['recurring', 'intervalCount'],
      message: withCode('must be 1, 3, 6 or 12'),
    });
    return z.NEVER;
  }
  return { ...body, recurring: { interval: 'month' as const, intervalCount: intervalCount as RecurringIntervalCount } };
}

/** A request that creates a draft of two hours of consulting, with a new product and price. */
export const INVOICE_CREATE_EXAMPLE = {
  customerId: CUSTOMER_EXAMPLE.id,
  lineItems: {
    data: [
      {
        priceData: { currency: 'usdc', unitAmount: '150000000', productData: { name: 'Consulting hour' } },
        quantity: 2,
      },
    ],
  },
  dueDate: '2026-06-01',
  memo: 'Thank you for your business',
};

/** `currency`: what the invoice is in, which is its lines' currency (checked with them, when their prices are read). */
const invoiceCurrency = () =>
  optional(oneOf(CURRENCIES)).openapi({
    description:
      "What the invoice is in: the currency of its line items (default), which must agree with it, else a 400 naming `currency` and the lines' currency",
    example: 'usdc',
  });

/** The reference's invoice fields that Weir does not use. */
const ignoredInvoiceFields = {
  ...ignored(
    ['customFields'],
    'an invoice shows no custom fields; put such details in its description, memo or footer',
  ),
  ...ignored(['clientReferenceId'], 'an invoice keeps your own references in metadata'),
  ...ignored(['visibility'], 'every invoice is shown in the dashboard'),
  ...ignored(
    ['allowPromotionCodes'],
    "an invoice's amount is fixed when it is finalized: its page takes no promotion codes",
  ),
};

/**
 * The reference's `paymentSetting`: its `allowedChains` are the invoice's networks, one restriction
 * with `paymentMethods.chainIds` (the route reconciles the two), and `preferredChainId` one of them.
 */
const InvoicePaymentSettingInput = objectField({
  allowedChains: optional(
    arrayOf(
      objectField({
        ...allowedChainFields("an invoice's"),
        // The reference itself uses it only for checkout sessions.
        ...ignored(
          ['blacklistCurrencies'],
          "the payer may pay in any of the network's assets in the invoice's currency",
        ),
      }),
      { max: 50 },
    ),
  ).openapi({
    description:
      'The networks the invoice may be paid on, each with a payment method of the organization (else 400 naming it). Empty or absent: every network with one. The same restriction as `paymentMethods.chainIds`: sending both with different networks is a 400 naming both',
    example: [{ chainId: 137 }],
  }),
  preferredChainId: clearable(integer({ min: 1 })).openapi({
    description:
      "The network the pay page's checkout session prefers: one of the invoice's networks with an asset in its currency (of `paymentMethods.assetIds`, when it names some), else 400, also at finalize if it is no longer one. Default, and after null on update clears it: the organization's (null on create is as absent)",
    example: 137,
  }),
  ...ignored(['preferredCurrency'], "the payer picks among the network's assets in the invoice's currency"),
  ...ignored(['allowSwap'], 'Weir takes the payment in the asset paid: it does no swaps'),
}).openapi('InvoicePaymentSettingInput', { example: { allowedChains: [{ chainId: 137 }], preferredChainId: 137 } });

/** The invoice fields create and update share after the others: the reference's payment setting. */
const paymentSettingField = {
  paymentSetting: optional(InvoicePaymentSettingInput).openapi({
    description:
      "The invoice's networks in the reference's form (`allowedChains`, as `paymentMethods.chainIds`) and the preferred one; the rest of the payment setting is the organization's",
  }),
};

/** What `schedule` refuses: both due fields, or an interval it does not know. */
const SCHEDULE_CODES = ['parameters_exclusive', 'parameter_invalid'];

export const InvoiceCreate = issuing(
  SCHEDULE_CODES,
  bodyObject({
    customerId: requiredText({ max: 64 }).openapi({
      description: "The customer billed: one of the organization's customers in this environment",
      example: '0f8fad5b-d9cb-469f-a165-70867728950e',
    }),
    ...dueFields,
    ...invoiceFields,
    currency: invoiceCurrency(),
    lineItems: lineItemsInput(true).openapi({
      description: "1 to 20 lines in one currency, as a checkout session's: each a `priceId`, `price` or `priceData`",
    }),
    taxRateIds: optional(taxRateIdList()).openapi({
      description: 'Tax rates of the lines that name none of their own',
    }),
    ...paymentSettingField,
    ...ignoredInvoiceFields,
    ...ignored(['fromInvoiceId'], 'to copy an invoice, use POST /invoices/{id}/duplicate'),
  }).transform(schedule),
).openapi('InvoiceCreateRequest', { example: INVOICE_CREATE_EXAMPLE });

export const InvoiceUpdate = issuing(
  SCHEDULE_CODES,
  bodyObject({
    ...dueFields,
    ...invoiceFields,
    customerId: requiredText({ max: 64 }).optional(),
    taxRateIds: optional(taxRateIdList()).openapi({
      description: 'Tax rates of the lines that name none of their own; the draft is taxed again',
    }),
    currency: invoiceCurrency(),
    lineItems: lineItemsInput(false).optional().openapi({ description: 'Replaces every line' }),
    ...paymentSettingField,
    ...ignoredInvoiceFields,
  }).transform(schedule),
).openapi('InvoiceUpdateRequest', {
  description: 'A draft only; the fields sent change (null clears a text field)',
  example: { memo: 'Thank you!', daysUntilDue: 14 },
});

export const InvoiceSendRequest = bodyObject({
  // The empty string means "not given" (the customer's address, when there is one).
  to: optional(text({ max: 254 }).refine((v) => v === '' || isEmail(v), withCode('must be an email address'))).openapi({
    format: 'email',
    description: "Default: the customer's email address",
    example: 'payer@example.com',
  }),
  cc: optional(
    nonEmptyStrings(50).superRefine((list, ctx) => {
      for (const [i, address] of list.entries())
        if (!isEmail(address))
          ctx.addIssue({ code: 'custom', path: [i], message: withCode('must be an email address') });
    }),
  ),
  ...unsupported(['finalizeScheduleAt'], 'a draft is finalized when it is sent, at once; Weir schedules no sending'),
}).openapi('InvoiceSendRequest', { example: { to: 'payer@example.com', cc: ['accounts@example.com'] } });

export const InvoiceListQuery = listQuery(
  {
    ids: queryFilter('Comma-separated invoice ids'),
    status: queryFilter(
      `One of ${STATUSES.join(', ')}; \`uncollectable\` (the spec's spelling) is taken as \`uncollectible\`, the status an invoice answers with`,
    ),
    customerId: queryFilter("The customer's id"),
    invoiceType: queryFilter(`One of ${INVOICE_TYPES.join(', ')}`),
    collectionMethod: queryFilter(`One of ${COLLECTION_METHODS.join(', ')}`),
    number: queryFilter('The invoice number'),
    subscriptionId: queryFilter('The subscription whose invoices to list (the first of its series and its renewals)'),
    ...ignored(
      ['includes'],
      'an invoice always answers with its line items and totals: there is nothing more to include',
    ),
  },
  { dateFields: ['dueDate'] },
);

export const INVOICE_LIST_FILTERS = {
  ids: { field: 'id', kind: 'csv' as const },
  status: { values: STATUSES, aliases: STATUS_ALIASES },
  customerId: {},
  invoiceType: { values: INVOICE_TYPES },
  collectionMethod: { values: COLLECTION_METHODS },
  number: {},
  subscriptionId: {},
};

// ---- Answers ----

/** A tax rate as applied to a line: its terms when applied, and its tax on the line. */
export const AppliedTaxRateSchema = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    country: z.string().nullable(),
    percentage: z.number(),
    type: z.enum(TAX_TYPES as readonly ['exclusive', 'inclusive']),
    isDefault: z.boolean().openapi({ description: "Whether it is the invoice's rate rather than the line's own" }),
    amount: amountString(),
  })
  .openapi('AppliedTaxRate');

const lineFields = {
  description: z.string().nullable(),
  priceId: z.string().nullable(),
  quantity: z.number().int(),
  unitAmount: amountString(),
  amountSubtotal: amountString().openapi({ description: 'quantity × unitAmount' }),
  amountTax: amountString().openapi({ description: 'All the tax of the line, inclusive and exclusive' }),
  amountTotal: amountString().openapi({ description: 'amountSubtotal plus exclusive tax' }),
  currency: z.string().openapi({ description: "The line's price's currency: the invoice's", example: 'usdc' }),
  taxRates: z.array(AppliedTaxRateSchema),
};

const reminderRecord = z.strictObject({
  kind: z.enum(['before_due', 'after_due']),
  days: z.number().int(),
  dueDate: timestamp(),
  at: timestamp(),
});

/** The invoice as its webhook events carry it (`data.object`). */
const invoiceFieldsOut = {
  id: z.string(),
  object: z.literal('invoice'),
  organizationId: z.string(),
  livemode: z.boolean(),
  number: z.string(),
  invoiceNumber: z.string().openapi({ description: 'The same as `number` (the reference’s name)' }),
  status: z.enum(STATUSES),
  customerId: z.string(),
  description: z.string().nullable(),
  currency: z.string(),
  lineItems: z.strictObject({ object: z.literal('list'), data: z.array(z.strictObject(lineFields)) }),
  taxRateIds: z.array(z.string()),
  subTotal: amountString().openapi({ description: 'The lines before exclusive tax' }),
  totalTax: amountString(),
  amountDue: amountString(),
  total: amountString().openapi({ description: 'The same as `amountDue`' }),
  amountPaid: amountString().openapi({
    description:
      "Received so far: what its checkout sessions received for it, less the network fee a session charged on top (its attempt's `amountGasFee`; a partial payment counts while the invoice is still open, and money a session received after it expired or was canceled counts too, unless the invoice is void), or the rest when marked paid out of band. An invoice that has received anything cannot be voided",
  }),
  amountRemaining: amountString().openapi({
    description: 'What is still owed: `amountDue` − `amountPaid`, never below 0',
  }),
  amountOverpaid: amountString().openapi({
    description:
      'What was received beyond the amount: `amountPaid` − `amountDue`, never below 0 (Stripe’s `amount_overpaid`). Two checkout sessions of the invoice both paid for it (one partly before the other completed, or one after the invoice was paid, late money to an expired or canceled session included), or one was sent more than it asked. The money is in the merchant’s wallet (Weir holds none): the merchant refunds it to the payer',
  }),
  dueDate: timestamp(),
  issueDate: timestamp().nullable(),
  memo: z.string().nullable(),
  footer: z.string().nullable(),
  invoiceType: z.enum(INVOICE_TYPES),
  recurring: z
    .strictObject({
      interval: z.literal('month'),
      intervalCount: z.union([z.literal(1), z.literal(3), z.literal(6), z.literal(12)]),
    })
    .nullable(),
  collectionMethod: z.enum(COLLECTION_METHODS),
  billingReason: z.enum([
    'subscription_cycle',
    'subscription_create',
    'subscription_update',
    'subscription',
    'manual',
    'upcoming',
    'subscription_threshold',
  ]),
  subscriptionId: z.string().nullable().openapi({
    description:
      "The subscription the invoice bills: a renewal's, or the one the first invoice of a recurring series creates when finalized (the API and its webhooks name it from the finalize on, moments before the subscription exists)",
  }),
  paymentMethods: z.strictObject({ chainIds: z.array(z.number().int()), assetIds: z.array(z.string()) }),
  reminders: z.strictObject({
    enabled: z.boolean(),
    daysBeforeDue: z.array(z.number().int()),
    daysAfterDue: z.array(z.number().int()),
  }),
  metadata: z.record(z.string(), z.string()),
  url: z.string().nullable().openapi({
    description: 'The hosted invoice page: null while a draft (a draft has no page until it is finalized)',
  }),
  paid: z.boolean(),
  paidOutOfBand: z.boolean(),
  attempted: z.boolean(),
  attemptCount: z.number().int(),
  checkoutSessionId: z.string().nullable().openapi({ description: 'The latest checkout session opened to pay it' }),
  paymentAttempts: z.array(
    z.strictObject({
      checkoutSessionId: z.string(),
      status: z.enum(['pending', 'succeeded', 'failed']),
      startedAt: timestamp(),
      endedAt: timestamp().nullable(),
      failureReason: z.string().nullable(),
      amountReceived: amountString().openapi({
        description:
          'What the session has received so far: part of its amount while it waits for the rest; money it received after it expired or was canceled included (a late payment, which the invoice counts unless void)',
      }),
      amountGasFee: amountString().optional().openapi({
        description:
          'The network fee the session charged on top of the invoice (`paymentSetting.applyGasFee`): paid first from what it received, so not counted in `amountPaid`. Absent without one (and on payments recorded before Weir recorded it)',
      }),
    }),
  ),
  transactionHash: z.string().nullable(),
  remindersSent: z.array(reminderRecord),
  remindersSkipped: z.array(reminderRecord),
  nextInvoice: z.strictObject({ id: z.string(), issueDate: timestamp() }).nullable(),
  finalizedAt: timestamp().nullable(),
  lastFinalizationError: z
    .strictObject({ code: z.string(), field: z.string().nullable(), message: z.string(), at: timestamp() })
    .nullable()
    .openapi({
      description:
        "Why Weir could not finalize this draft itself (a subscription's renewal: a network or asset it is restricted to lost its payment method, the organization has none, its total cannot be paid exactly…): the refusal the finalize route answers, and when. The draft waits for the merchant to fix the organization or the draft and finalize it; null once finalized, and on every other invoice",
    }),
  sentAt: timestamp().nullable(),
  paidAt: timestamp().nullable(),
  voidedAt: timestamp().nullable(),
  markedUncollectibleAt: timestamp().nullable(),
  deletedAt: timestamp().nullable(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
};

export const InvoiceEventObjectSchema = z.strictObject(invoiceFieldsOut).openapi('InvoiceEventObject', {
  description:
    'The invoice as its webhook events carry it: as the API answers it, without `customer`, `autoAdvance`, `paymentSetting` and the lines’ `price`',
});

const { createdAt: _c, updatedAt: _u, ...settingFields } = PaymentSettingSchema.shape;

export const InvoiceSchema = z
  .strictObject({
    ...invoiceFieldsOut,
    lineItems: z.strictObject({
      object: z.literal('list'),
      data: z.array(
        z.strictObject({ ...lineFields, price: PriceSchema.nullable().openapi({ description: 'The catalog price' }) }),
      ),
    }),
    customer: CustomerSchema.nullable(),
    autoAdvance: z.boolean().openapi({
      description: 'True for the invoices subscription billing makes (finalized and sent without the merchant)',
    }),
    paymentSettingId: z.string().nullable(),
    paymentSetting: z
      .strictObject({
        ...settingFields,
        allowedChains: z.array(z.strictObject({ chainId: z.number().int() })).openapi({
          description:
            "The invoice's networks (its `paymentMethods.chainIds`); empty: every network with a payment method of the organization",
        }),
      })
      .nullable()
      .openapi({ description: "The organization's payment setting it is paid under, with the invoice's networks" }),
  })
  .openapi('Invoice');

const PRICE_ID = '5d7b1a3e-2f0c-4c1e-9a55-0c7e2b8d4f61';
const PRODUCT_ID = '8c2f6e1d-7a4b-4b0e-8f3d-1e6a9c5b2d70';
const { organizationId, createdAt } = CUSTOMER_EXAMPLE;

/** What `INVOICE_CREATE_EXAMPLE` answers: a new draft, as the API presents it. */
export const INVOICE_EXAMPLE = (() => {
  const draft = newInvoiceDraft({
    id: '3b9e4c2a-6d1f-4e8b-a7c5-9f0d2e1b4a63',
    organizationId,
    environment: 'test',
    createdAt,
  });
  const view = publicInvoice({
    ...draft,
    number: 'INV-000001',
    customerId: CUSTOMER_EXAMPLE.id,
    lineItems: {
      object: 'list',
      data: [
        {
          description: 'Consulting hour',
          priceId: PRICE_ID,
          quantity: 2,
          unitAmount: '150000000',
          amountTotal: '300000000',
        },
      ],
    },
    amountDue: '300000000',
    amountRemaining: '300000000',
    dueDate: '2026-06-01T23:59:59.999Z',
    memo: INVOICE_CREATE_EXAMPLE.memo,
  });
  const price = {
    id: PRICE_ID,
    organizationId,
    environment: 'test',
    productId: PRODUCT_ID,
    type: 'one_time',
    currency: 'usdc',
    unitAmount: '150000000',
    interval: null,
    intervalCount: null,
    isActive: true,
    nickname: null,
    metadata: {},
    billingScheme: 'per_unit',
    createdAt,
    updatedAt: createdAt,
    product: { id: PRODUCT_ID, name: 'Consulting hour', isActive: true },
  };
  return {
    ...view,
    lineItems: { ...view.lineItems, data: view.lineItems.data.map((line) => ({ ...line, price })) },
    customer: CUSTOMER_EXAMPLE,
    autoAdvance: false,
    paymentSettingId: organizationId,
    paymentSetting: { id: organizationId, ...defaultPaymentSetting, allowedChains: [] },
  };
})();
