import type { ListFilters } from '../pagination.ts';
import { amountString, bodyObject, requiredText, timestamp, withCode, z } from './fields.ts';

/**
 * Answer schemas of checkout sessions and their payment intents (`sessionPresenter`, built on
 * `publicCheckoutSession`), and the bodies of the session routes that are checked here.
 */

const absent = (input: unknown) => input === undefined || input === null;

/** A chain id in a body: a positive safe integer; absent or null answers `missing` with parameter_missing. */
export const chainIdField = (missing: string) =>
  z
    .int({
      error: (issue) =>
        absent(issue.input)
          ? withCode(missing, 'parameter_missing')
          : withCode('must be an integer', 'parameter_invalid_integer'),
    })
    .min(1, withCode('must be at least 1'))
    .openapi({ example: 1 });

/** `{chainId, transactionHash}`: the body of both recovery routes, as in the reference API. */
export const RecoveryRequest = bodyObject({
  chainId: chainIdField('is required: the chain id of the network the transaction is on, e.g. 1 for Ethereum'),
  transactionHash: requiredText({
    pattern: /^0x[0-9a-fA-F]{64}$/,
    hint: 'must be a transaction hash: 0x and 64 hex digits',
  }).openapi({ example: `0x${'ab'.repeat(32)}` }),
}).openapi('RecoveryRequest');

export const AssetSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    symbol: z.string(),
    currency: z.string(),
    chainId: z.number().int(),
    address: z.string(),
    decimals: z.number().int(),
  })
  .openapi('SessionAsset');

/** An asset as a session shows it: with its flags and network (null for a network no longer offered). */
const PresentedAssetSchema = AssetSchema.extend({
  isEIP5827Supported: z.boolean(),
  isPublic: z.boolean(),
  chain: z.object({ id: z.number().int(), name: z.string(), network: z.string() }).nullable(),
});

const PriceSnapshotSchema = z.object({
  id: z.string(),
  productId: z.string(),
  product: z.object({ id: z.string(), name: z.string(), description: z.string().nullable(), isActive: z.boolean() }),
  type: z.enum(['one_time', 'recurring']),
  currency: z.string(),
  unitAmount: amountString(),
  interval: z.string().nullable(),
  intervalCount: z.number().int().nullable(),
  isActive: z.boolean(),
});

const AppliedTaxRateSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  country: z.string().nullable(),
  percentage: z.number(),
  type: z.string(),
  isDefault: z.boolean(),
  amount: amountString(),
});

const LineItemSchema = z.object({
  description: z.string().nullable(),
  quantity: z.number().int(),
  price: PriceSnapshotSchema,
  amountSubtotal: amountString(),
  amountTotal: amountString(),
  currency: z.string(),
  amountTax: amountString().optional(),
  taxRates: z.array(AppliedTaxRateSchema).optional(),
});

const AddressSchema = z.object({
  id: z.string(),
  checkoutSessionId: z.string(),
  network: z.string(),
  asset: PresentedAssetSchema,
  paymentAddress: z.string(),
  merchantAddress: z.string(),
  gas: z.string(),
  gasAmount: z.string(),
});

const IntentTransactionSchema = z.object({
  type: z.literal('incoming'),
  transactionHash: z.string(),
  fromAddress: z.string(),
  toAddress: z.string(),
  currency: z.string(),
  amount: amountString(),
  amountRaw: amountString(),
  assetId: z.string(),
  asset: PresentedAssetSchema,
  chainId: z.number().int(),
  blockNumber: z.number().int(),
  status: z.enum(['pending', 'confirmed']),
  late: z.boolean(),
  createdAt: timestamp(),
});

const PaymentIntentFields = {
  id: z.string(),
  organizationId: z.string(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
  amount: amountString(),
  amountReceived: amountString(),
  currency: z.string(),
  status: z.enum(['requires_payment_method', 'processing', 'succeeded', 'canceled']),
  paymentMethodTypes: z.array(z.string()),
  paymentMethod: z
    .object({
      id: z.string(),
      type: z.literal('wallet'),
      accountAddress: z.string(),
      asset: AssetSchema,
      amountDue: amountString(),
      options: z.object({
        wallet: z.object({
          assetId: z.string(),
          transactionHash: z.string().nullable(),
          contractAddress: z.string(),
        }),
      }),
    })
    .nullable(),
  transactions: z.array(IntentTransactionSchema),
  paymentMethodId: z.string().nullable(),
};

const SESSION_STATUSES = ['open', 'complete', 'incomplete', 'expired', 'canceled'] as const;

export const CheckoutSessionSchema = z
  .object({
    id: z.string(),
    organizationId: z.string(),
    livemode: z.boolean(),
    createdAt: timestamp(),
    updatedAt: timestamp(),
    mode: z.enum(['payment', 'subscription']),
    status: z.enum(SESSION_STATUSES),
    paymentStatus: z.enum(['unpaid', 'paid']),
    expiresAt: timestamp(),
    currency: z.string(),
    amountSubtotal: amountString(),
    amountTotal: amountString(),
    amountFee: amountString(),
    amountNet: amountString(),
    amountGasFee: amountString(),
    amountReceived: amountString(),
    amountOverpaid: amountString(),
    amountDetails: z.object({
      currency: z.string(),
      amountTotal: amountString(),
      amountSubtotal: amountString(),
      amountDiscount: amountString(),
      amountTax: amountString(),
      amountFee: amountString(),
      amountGasFee: amountString(),
      feePercentage: z.number(),
      applyFee: z.boolean(),
      applyGasFee: z.boolean(),
      discountAmounts: z.array(z.object({ amount: amountString(), promotionCodeId: z.string().nullable() })),
    }),
    allowPromotionCodes: z.boolean().optional(),
    paymentMethodTypes: z.array(z.string()),
    paymentSetting: z.object({
      paymentMethodTypes: z.array(z.string()),
      allowedChains: z.array(z.object({ chainId: z.number().int() })),
      preferredChainId: z.number().int().nullable(),
      allowSwap: z.boolean(),
      allowFiatPayment: z.boolean(),
    }),
    submitType: z.string(),
    successUrl: z.string(),
    cancelUrl: z.string().nullable(),
    clientReferenceId: z.string().nullable(),
    customerId: z.string().nullable(),
    customerCreation: z.enum(['if_required', 'always']).optional(),
    customerUpdate: z
      .object({
        address: z.enum(['auto', 'never']),
        name: z.enum(['auto', 'never']),
        shipping: z.enum(['auto', 'never']),
      })
      .optional(),
    metadata: z.record(z.string(), z.string()),
    afterCompletion: z.enum(['redirect', 'hosted_confirmation']),
    afterCompletionConfirmMsg: z.string().nullable(),
    paymentLinkId: z.string().nullable(),
    customerDetails: z.looseObject({}).nullable().optional(),
    billingDetails: z.looseObject({}).nullable().optional(),
    shippingDetails: z.looseObject({}).nullable().optional(),
    customFields: z
      .array(z.looseObject({ key: z.string(), type: z.string() }))
      .nullable()
      .optional(),
    invoiceId: z.string().nullable(),
    subscriptionId: z.string().nullable(),
    url: z.string(),
    lineItems: z.object({ object: z.literal('list'), data: z.array(LineItemSchema) }),
    addresses: z.array(AddressSchema),
    paymentIntent: z.object(PaymentIntentFields),
    payments: z.array(z.looseObject({ transferId: z.string(), transactionHash: z.string() })),
    sweeps: z.array(z.looseObject({ transactionHash: z.string() })),
    discounts: z.array(
      z.object({
        couponId: z.string(),
        promotionCodeId: z.string(),
        code: z.string(),
        amountDiscount: amountString(),
        at: timestamp(),
      }),
    ),
    isManualPayment: z.boolean(),
    completedAt: timestamp().nullable(),
    canceledAt: timestamp().nullable(),
    expiredAt: timestamp().nullable(),
    transactionHash: z.string().nullable(),
  })
  .openapi('CheckoutSession');

/** A payment intent as `/payment-intents` answers it: the session's, with its session id and refund record. */
export const PaymentIntentSchema = z
  .object({
    ...PaymentIntentFields,
    object: z.literal('payment_intent'),
    checkoutSessionId: z.string(),
    isMarkRefunded: z.boolean(),
    markRefundedAt: timestamp().nullable(),
    markRefundedComment: z.string().nullable(),
  })
  .openapi('PaymentIntent');

export const SESSION_STATUS_VALUES = SESSION_STATUSES;

/** The list route's filters (the CSV export takes these and a few of its own). */
export const SESSION_LIST_FILTERS: ListFilters = {
  ids: { field: 'id', kind: 'csv' },
  paymentLinkId: {},
  subscriptionId: {},
  invoiceId: {},
  customerId: {},
  mode: { values: ['payment', 'subscription'] },
  status: { values: SESSION_STATUSES },
  paymentStatus: { values: ['unpaid', 'paid'] },
};

const documented = (openapi: Record<string, unknown>) => z.unknown().optional().openapi(openapi);

/**
 * The create body as the document shows it. The creator (`create-checkout-session.ts` with the
 * line-item resolver) still checks each field, with the messages and paths it always gave: this
 * schema refuses a body that is no object and passes every field on untouched.
 */
export const CheckoutSessionCreate = z
  .looseObject(
    {
      mode: documented({ type: 'string', enum: ['payment', 'subscription'], default: 'payment' }),
      successUrl: documented({
        type: 'string',
        format: 'uri',
        description: 'Required: where the payer goes after paying',
      }),
      cancelUrl: documented({ type: 'string', format: 'uri' }),
      lineItems: documented({
        type: 'array',
        minItems: 1,
        description:
          'Required: `{priceId, quantity}` or `{priceData: {currency, unitAmount, productData | productId}, quantity}`',
        items: { type: 'object' },
      }),
      taxRateIds: documented({ type: 'array', items: { type: 'string' } }),
      submitType: documented({ type: 'string', enum: ['pay', 'book', 'donate'] }),
      afterCompletion: documented({ type: 'string', enum: ['redirect', 'hosted_confirmation'] }),
      afterCompletionConfirmMsg: documented({ type: 'string', maxLength: 500 }),
      clientReferenceId: documented({ type: 'string', maxLength: 200 }),
      customerId: documented({ type: 'string' }),
      customerData: documented({ type: 'object', description: '`{name, email, phone, organizationName, address}`' }),
      customerCreation: documented({ type: 'string', enum: ['if_required', 'always'] }),
      customerUpdate: documented({ type: 'object', description: '`{address, name, shipping}`: auto or never' }),
      metadata: documented({ type: 'object', additionalProperties: { type: 'string' } }),
      allowPromotionCodes: documented({ type: 'boolean' }),
      expiresAt: documented({ type: 'string', format: 'date-time' }),
      paymentSetting: documented({
        type: 'object',
        description: '`{allowedChains: [{chainId}], preferredChainId, allowSwap}`',
      }),
    },
    { error: withCode('the request body must be a JSON object') },
  )
  .openapi('CheckoutSessionCreate', {
    example: {
      successUrl: 'https://shop.example/thanks',
      lineItems: [
        { priceData: { currency: 'usdc', unitAmount: '1500000000', productData: { name: 'Tea' } }, quantity: 1 },
      ],
    },
  });

/** What `POST /payment-intents/{id}/payment-receipts/send` answers: the receipt requested. */
export const PaymentReceiptSchema = z
  .object({
    id: z.string(),
    object: z.literal('payment_receipt'),
    createdAt: timestamp(),
    updatedAt: timestamp(),
    organizationId: z.string(),
    paymentIntentId: z.string(),
    checkoutSessionId: z.string(),
    name: z.string(),
    receiptNumber: z.string(),
    uri: z.string(),
    to: z.string(),
    requestedAt: timestamp(),
  })
  .openapi('PaymentReceipt');

/** A transaction of `GET /transactions`: a payment to a deposit address (`incoming`) or its sweep (`transfer`). */
export const TransactionSchema = z
  .object({
    id: z.string(),
    object: z.literal('transaction'),
    livemode: z.boolean(),
    type: z.enum(['incoming', 'transfer']),
    status: z.enum(['pending', 'confirmed', 'withdrawn', 'broadcast', 'swept', 'reverted', 'dropped']),
    organizationId: z.string(),
    checkoutSessionId: z.string(),
    paymentIntentId: z.string(),
    invoiceId: z.string().nullable(),
    subscriptionId: z.string().nullable(),
    network: z.string(),
    chainId: z.number().int(),
    transactionHash: z.string(),
    fromAddress: z.string(),
    toAddress: z.string(),
    currency: z.string().nullable(),
    assetId: z.string().nullable(),
    asset: AssetSchema.nullable(),
    amountRaw: amountString().nullable(),
    amount: amountString(),
    transactionUrl: z.string().nullable(),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .openapi('Transaction');
