import type { ListFilters } from '../pagination.ts';
import { chainFields } from './chain.ts';
import { Address as PostalAddress } from './customer.ts';
import {
  AMOUNT_SCALE,
  amountString,
  bodyObject,
  chainAmountString,
  requiredText,
  timestamp,
  unsupported,
  withCode,
  z,
} from './fields.ts';

/**
 * Answer schemas of checkout sessions and their payment intents (`sessionPresenter`, built on
 * `publicCheckoutSession`), and the bodies of the session routes that are checked here.
 */

const absent = (input: unknown) => input === undefined || input === null;

/** A coupon has no duration: a code discounts the one payment it is applied to. */
export const ALLOW_PROMOTION_CODES =
  "Whether the payer may apply a promotion code on the hosted page. It discounts this session only: with `mode: subscription`, the first payment (recorded on the subscription's first bill), and renewals are billed in full";

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

/**
 * An item of the reference's `allowedChains`: its chain, and no per-network withdrawal address
 * (dropping one would send the money elsewhere than asked), for the record `whose` names.
 */
export const allowedChainFields = (whose: string) => ({
  chainId: chainIdField('is required'),
  ...unsupported(
    ['withdrawalAddress', 'withdrawalAddresses'],
    `payments go to the organization's withdrawal address for the network (PUT /organization/payment-setting); Weir neither redirects nor splits ${whose}`,
  ),
});

/** `{chainId, transactionHash}`: the body of both recovery routes, as in the reference API. */
export const RecoveryRequest = bodyObject({
  chainId: chainIdField('is required: the chain id of the network the transaction is on, e.g. 1 for Ethereum'),
  transactionHash: requiredText({
    // An EVM transaction hash, a Tron transaction id (0x optional) or a Solana signature (base58 of 64 bytes);
    // the network's rail checks the form its chain uses.
    pattern: /^((0x)?[0-9a-fA-F]{64}|[1-9A-HJ-NP-Za-km-z]{64,88})$/,
    hint: 'must be a transaction hash: 0x and 64 hex digits (a Tron transaction id: 64 hex digits; a Solana signature: base58)',
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

/**
 * An asset as a session shows it: with its flags and network, as `GET /chains/{id}` shows it without
 * its assets (null for a network no longer offered). Inline: a nullable component reference refuses null.
 */
const PresentedAssetSchema = AssetSchema.extend({
  isEIP5827Supported: z.boolean(),
  isPublic: z.boolean(),
  chain: z.object(chainFields).nullable(),
});

/** The coupon a discount came from, as it was when its code was applied. */
const DiscountCouponSchema = z.object({
  name: z.string(),
  percentOff: z.number().nullable(),
  amountOff: amountString().nullable(),
  currency: z.string().nullable(),
  code: z.string().openapi({ description: 'The promotion code applied' }),
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
  amountDiscount: amountString().optional().openapi({
    description:
      "The line's share of the session's discount (`amountDetails.amountDiscount` shared among the lines as their `amountSubtotal`, as their tax is figured), not taken off `amountTotal`; absent until a promotion code applies",
  }),
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

/** A transfer credited to the payment intent, as its `transactions` show it. */
export const IntentTransactionSchema = z.object({
  type: z.literal('incoming'),
  transactionHash: z.string().openapi({
    description:
      'As the network’s own tools write it: `0x` and 64 hex digits on EVM networks, the bare 64-hex txID on Tron (as Tronscan and TronWeb take it), the base58 signature on Solana',
  }),
  fromAddress: z.string(),
  toAddress: z.string(),
  currency: z.string(),
  amount: amountString(),
  amountRaw: chainAmountString(),
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
      assetId: z.string(),
      asset: PresentedAssetSchema,
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

/** An on-chain transfer credited to the session, as the matcher recorded it. */
const PaymentSchema = z
  .object({
    transferId: z.string(),
    network: z.string(),
    chainId: z.number().int(),
    transactionHash: z.string(),
    logIndex: z.number().int(),
    blockNumber: z.number().int(),
    blockHash: z.string().openapi({
      description:
        'As the network’s own tools write it: `0x` and 64 hex digits on EVM networks, the bare 64-hex block id on Tron',
    }),
    fromAddress: z.string(),
    toAddress: z.string(),
    asset: AssetSchema,
    amountRaw: chainAmountString(),
    amount: amountString(),
    status: z.enum(['pending', 'confirmed', 'withdrawn']),
    detectedAt: timestamp(),
    confirmedAt: timestamp().nullable(),
    late: z.boolean().openapi({ description: 'Confirmed after the session had expired or been canceled' }),
  })
  .openapi('SessionPayment');

/** Funds moved from the session's deposit address to the merchant's wallet. */
const SweepSchema = z
  .object({
    network: z.string(),
    chainId: z.number().int(),
    transactionHash: z.string(),
    blockNumber: z
      .number()
      .int()
      .optional()
      .openapi({ description: 'The block the transaction is in; absent on sweeps recorded before it was kept' }),
    depositAddress: z.string().optional().openapi({
      description: "The session's deposit address swept; absent on sweeps recorded before it was kept",
    }),
    merchantAddress: z.string().optional().openapi({
      description: "The merchant's wallet the funds went to; absent on sweeps recorded before it was kept",
    }),
    transferIds: z.array(z.string()),
    gasUsed: amountString().openapi({ description: "Gas units: this session's share of the transaction" }),
    gasCost: amountString().openapi({
      description: "Native coin spent on that gas, in the coin's smallest unit (wei; on Tron, the sun burnt)",
    }),
    tron: z
      .object({
        energyUsed: amountString().openapi({ description: "Energy units: this session's share" }),
        bandwidthUsed: amountString().openapi({ description: "Bandwidth (bytes): this session's share" }),
        trxBurnt: amountString().openapi({
          description: "TRX burnt (sun) for the energy and bandwidth the sweeper account's own did not cover",
        }),
        energySource: z.enum(['burn', 'staked', 'rented']),
        rentalCost: amountString().optional().openapi({ description: 'Paid to the energy rental provider (sun)' }),
      })
      .optional()
      .openapi({ description: 'Tron only: the resources the sweep used and the TRX it burnt' }),
    reverted: z
      .boolean()
      .optional()
      .openapi({ description: 'Mined but reverted: nothing moved, the gas was paid (absent when it went through)' }),
    replaces: z.string().optional().openapi({
      description:
        'The sweep transaction broadcast that this one was mined in place of: the same call with the same nonce at a higher fee (sped up in a wallet); absent when mined as broadcast',
    }),
    at: timestamp(),
  })
  .openapi('SessionSweep');

/** The payer as they described themselves on a payment link's page, or as `customerData` prefilled them. */
const CustomerDetailsSchema = z
  .object({
    name: z.string().nullable(),
    email: z.string().nullable(),
    phone: z.string().nullable(),
    organizationName: z.string().nullable().optional().openapi({ description: 'Only from `customerData`' }),
    address: PostalAddress.nullable().openapi({ description: 'The billing address, when one was asked for' }),
    taxIds: z
      .object({
        object: z.literal('list'),
        data: z.array(
          z.object({
            id: z
              .null()
              .openapi({ description: "Null: the session's copy has none; the customer's tax ids carry theirs" }),
            customerId: z
              .string()
              .nullable()
              .openapi({ description: "The session's customer; null while it has none" }),
            name: z.string().nullable(),
            value: z.string(),
            country: z.string().nullable(),
          }),
        ),
      })
      .optional()
      .openapi({ description: "Only from `customerData`: the tax ids the session's new customer takes" }),
  })
  .openapi('SessionCustomerDetails');

/** A billing or shipping address with the name it is for. */
const AddressDetailsSchema = z
  .object({ name: z.string().nullable(), address: PostalAddress })
  .openapi('SessionAddressDetails');

const lengthBounds = { minimumLength: z.number().int().nullable(), maximumLength: z.number().int().nullable() };
const answer = z.string().nullable().openapi({ description: 'The answer; null for an optional field left empty' });
const customFieldBase = {
  key: z.string(),
  label: z.object({ type: z.literal('custom'), custom: z.string() }),
  optional: z.boolean(),
};

/** A payment link's question with the payer's answer under `<type>.value`. */
const AnsweredCustomFieldSchema = z.discriminatedUnion('type', [
  z.object({ ...customFieldBase, type: z.literal('text'), text: z.object({ ...lengthBounds, value: answer }) }),
  z.object({
    ...customFieldBase,
    type: z.literal('numeric'),
    numeric: z.object({
      ...lengthBounds,
      minimum: z.string().nullable(),
      maximum: z.string().nullable(),
      value: answer,
    }),
  }),
  z.object({
    ...customFieldBase,
    type: z.literal('dropdown'),
    dropdown: z.object({ options: z.array(z.object({ label: z.string(), value: z.string() })), value: answer }),
  }),
]);

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
    amountNet: amountString().openapi({
      description: `${AMOUNT_SCALE}. What the merchant keeps after Weir's fee: of amountTotal while the session is open, of amountReceived once it is complete (a session completed partly paid nets its part)`,
    }),
    amountGasFee: amountString(),
    amountReceived: amountString().openapi({
      description: `${AMOUNT_SCALE}. What payers sent, summed exactly in each asset's own units and rounded down to this scale (an 18-decimal token's dust below 10^-8 is kept on the payments' amountRaw)`,
    }),
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
      discountAmounts: z.array(
        z.object({ amount: amountString(), couponId: z.string(), promotionCodeId: z.string().nullable() }),
      ),
    }),
    allowPromotionCodes: z.boolean().optional().openapi({ description: ALLOW_PROMOTION_CODES }),
    paymentMethodTypes: z.array(z.string()),
    paymentSetting: z.object({
      paymentMethodTypes: z.array(z.string()),
      allowedChains: z.array(z.object({ chainId: z.number().int() })),
      preferredChainId: z.number().int().nullable(),
      allowSwap: z.boolean().openapi({
        description: 'As the session was created with: Weir does no currency conversion, so it changes nothing',
      }),
      allowFiatPayment: z.boolean(),
    }),
    submitType: z.string(),
    successUrl: z.string(),
    cancelUrl: z.string().nullable(),
    clientReferenceId: z.string().nullable(),
    customerId: z.string().nullable().openapi({
      description:
        "The session's customer: the one it was created for, the one `customerCreation: always` made, or (null when it was created) the one a subscription session's `customerData.email` made with its subscription",
    }),
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
    customerDetails: CustomerDetailsSchema.nullable().optional(),
    billingDetails: AddressDetailsSchema.nullable().optional(),
    shippingDetails: AddressDetailsSchema.nullable().optional(),
    customFields: z
      .object({ fields: z.array(AnsweredCustomFieldSchema) })
      .nullable()
      .optional()
      .openapi({ description: "A payment link's questions with the payer's answers" }),
    invoiceId: z.string().nullable().openapi({ description: 'The invoice whose hosted pay page opened the session' }),
    subscriptionId: z.string().nullable().openapi({
      description:
        "The subscription the session bills: the one a `mode: subscription` session creates, or the subscription of the invoice whose pay page opened it (a renewal's, or the one the first invoice of a recurring series creates). A session made with neither customer nor email creates its subscription only once the payer gives their email on its page: if it expires or is canceled before that, no subscription with this id ever exists",
    }),
    url: z.string(),
    lineItems: z.object({ object: z.literal('list'), data: z.array(LineItemSchema) }),
    addresses: z.array(AddressSchema),
    paymentIntent: z.object(PaymentIntentFields),
    payments: z.array(PaymentSchema),
    sweeps: z.array(SweepSchema),
    discounts: z.array(
      z.object({
        couponId: z.string(),
        promotionCodeId: z.string(),
        code: z.string(),
        amount: amountString().openapi({ description: `${AMOUNT_SCALE}. What the discount took off` }),
        amountDiscount: amountString().openapi({ description: 'The same as `amount`' }),
        coupon: DiscountCouponSchema,
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
    markRefundedComment: z
      .string()
      .nullable()
      .openapi({ description: "The merchant's own note with the mark: not shown to the payer" }),
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
  couponId: { field: 'discounts.couponId' },
  paymentMethodTypes: { kind: 'csv' },
};

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
    asset: PresentedAssetSchema.nullable(),
    amountRaw: chainAmountString().nullable(),
    amount: amountString(),
    transactionUrl: z.string().nullable().openapi({
      description:
        "The transaction on its network's explorer; null when the network has none (a local chain: the devnet, a local Tron) or is no longer offered",
    }),
    confirmedAt: timestamp().nullable().optional().openapi({
      description:
        'Payments (`incoming`): when the payment was confirmed, the time the volume report counts it by (null while pending); absent on sweeps',
    }),
    trxBurnt: amountString().nullable().optional().openapi({
      description:
        "Tron sweeps (`transfer`): TRX burnt (sun) for the energy and bandwidth the sweeper account's own did not cover, this session's share; null until mined",
    }),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .openapi('Transaction');
