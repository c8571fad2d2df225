import type { PayerState } from '../../hosted/checkout-status.ts';
import { ADDRESS_INPUTS, INPUT } from '../../hosted/payment-link-form.ts';
import { AssetSchema, CheckoutSessionSchema } from './checkout-session.ts';
import {
  amountString,
  bodyObject,
  chainAmountString,
  optional,
  requiredText,
  text,
  timestamp,
  withCode,
  z,
} from './fields.ts';
import type { PageAnswer } from './route.ts';

/** Request and answer schemas of the public hosted pages' JSON routes (the checkout page's script calls them). */

const PAYER_STATES = [
  'waiting',
  'confirming',
  'partly_paid',
  'paid',
  'expired',
  'canceled',
] as const satisfies readonly PayerState[];

const session = CheckoutSessionSchema.shape;

/** A hosted page's rate limit, answered as a page (hosted-error-pages.ts); its JSON 429 is documented for every hosted route. */
export const limitedPage: PageAnswer = {
  status: 429,
  description: 'Too many requests from this address (`Retry-After` says when to try again): a page saying so',
};

/** A form a hosted page posts, too large to read: a page saying so (hosted-error-pages.ts). */
export const tooLargePage: PageAnswer = { status: 413, description: 'The form is too large to read: a page saying so' };

/** A form sent compressed (`Content-Encoding`), which no page reads: a page saying so (hosted-error-pages.ts). */
export const compressedPage: PageAnswer = {
  status: 415,
  description: 'The form was sent compressed: a page saying so',
};

/** A passing failure on a hosted page, `what` failing: a page to try again from (hosted-error-pages.ts). */
export const unavailablePage = (what: string): PageAnswer => ({
  status: 503,
  description: `${what} for a passing reason: a page saying so`,
});

/**
 * A 400 of a page script's JSON route: its message is the payer's words the page shows as they are
 * (hosted-error-pages.ts), not the API's naming a field's path (`invalidFields`).
 */
export const payerRefusals = (...codes: string[]) => ({
  status: 400,
  codes: ['parameter_invalid', 'parameter_missing', ...codes],
  description:
    "A field is missing or invalid, or the checkout refuses it: the message says why in the payer's words (of a field no payer fills, such as an unknown key, the field and what is wrong with it)",
});

/** The 404 of a public route: its id is the only key there is. */
export const hostedNotFound = (what: string) => ({
  status: 404,
  codes: ['resource_missing'],
  description: `No ${what} with this id`,
});

/** The chosen payment method and what is left to pay in it (null when none is chosen or the session is over). */
const WalletDueSchema = z
  .object({ addressId: z.string(), assetId: z.string(), amountRemainingRaw: chainAmountString() })
  .nullable()
  .openapi('HostedWalletDue', { description: "What is left to pay, in the chosen asset's chain units" });

const qrSvg = () =>
  z.string().openapi({
    description:
      'The payment URI as a QR code (an SVG document); on Tron the address alone (wallets refuse `tron:` URIs)',
  });
/** Tron wallets scan a bare address and refuse the URI: a page should not offer it as a link there. */
const paymentUri = () =>
  z.string().openapi({
    description:
      'The payment request as a URI: EIP-681 (`ethereum:`) on EVM networks, a Solana Pay URL on Solana. On Tron it is a `tron:` URI that few wallets open: encode the address alone in a QR code there (as `qrSvg` does) and give the amount to enter by hand',
  });

/** `GET /checkout/{id}/status`: the session as the payer's page shows it (see payerStatus). */
export const PayerStatusSchema = z
  .object({
    id: z.string(),
    status: session.status,
    paymentStatus: session.paymentStatus,
    state: z.enum(PAYER_STATES),
    title: z.string(),
    detail: z.string(),
    currency: z.string().openapi({ description: 'Upper case, as the page shows it', example: 'USDC' }),
    amountTotal: amountString(),
    amountTotalFormatted: z.string(),
    amountReceived: amountString().openapi({
      description:
        "All the confirmed money, late money included (the session's `amountReceived`): a closed session's page does not show it as Paid, see `amountReceivedBeforeClose`",
    }),
    amountReceivedFormatted: z.string().openapi({ description: '`amountReceived` as the page writes amounts' }),
    amountReceivedBeforeClose: amountString().openapi({
      description:
        'What the page shows as Paid: all of `amountReceived`, unless the session expired or was canceled and money was confirmed after that; then only what came before the close ("Paid before it expired"), its exact sum rounded down to 10^-8',
    }),
    amountReceivedBeforeCloseFormatted: z.string(),
    amountReceivedAfterClose: amountString().openapi({
      description:
        'Late money: what was confirmed after the session expired or was canceled ("Received after closing" on the page), completing nothing; 0 when none. The rest of `amountReceived` once `amountReceivedBeforeClose` is taken, so the two add up to `amountReceived` exactly (only `amountReceivedBeforeClose` is rounded, down, so the late part takes any unit that the fractions of both parts make together). Late money under 10^-8 that carries no unit reads 0: `amountReceivedAfterCloseFormatted` tells it',
    }),
    amountReceivedAfterCloseFormatted: z.string().openapi({
      description:
        '`amountReceivedAfterClose` as the page writes it: "less than 0.00000001" when late money came and `amountReceivedAfterClose` is 0 (late dust; the sessions export marks it `receivedAfterClose` true)',
    }),
    amountRemaining: amountString(),
    amountRemainingFormatted: z.string(),
    amountPending: amountString(),
    amountPendingFormatted: z
      .string()
      .openapi({ description: 'Seen on the network, not yet confirmed: the page shows it as Confirming' }),
    amountToSend: amountString(),
    amountToSendFormatted: z.string(),
    amountLeftFormatted: z.string().openapi({
      description:
        'What is left to send (the remaining amount less what is confirming), as the Remaining row of the page shows it',
    }),
    confirmations: z.object({
      pending: z.number().int(),
      current: z.number().int().nullable(),
      required: z.number().int().nullable(),
    }),
    expiresAt: timestamp(),
    now: timestamp(),
    payment: z
      .object({
        assetId: z.string(),
        symbol: z.string(),
        assetName: z.string(),
        network: z.string(),
        networkName: z.string(),
        chainId: z.number().int(),
        assetAddress: z.string().openapi({ description: 'The token contract, or `native` for the coin' }),
        decimals: z.number().int(),
        address: z.string(),
        amountDueRaw: chainAmountString(),
        amountDue: z.string(),
        paymentUri: paymentUri(),
        qrSvg: qrSvg(),
      })
      .nullable()
      .openapi({
        description:
          'Where and how much to send now, once an asset is chosen and while it is open; null while nothing is left to send (`amountToSend` is 0: a payment seen covers the rest and waits for its confirmations)',
      }),
    wallet: WalletDueSchema,
    redirectUrl: z.string().nullable(),
    returnUrl: z.string().nullable(),
    message: z.string().nullable(),
  })
  .openapi('HostedCheckoutStatus');

export const PaymentMethodRequest = bodyObject({
  assetId: requiredText({ max: 200 }).openapi({ description: 'A deposit address id or its asset id' }),
}).openapi('HostedPaymentMethodRequest', { example: { assetId: 'base:usdc' } });

export const PromotionCodeRequest = bodyObject({
  code: requiredText({ max: 100 }),
}).openapi('HostedPromotionCodeRequest', { example: { code: 'LAUNCH' } });

const FORM_ACTIONS = ['choose', 'email', 'promotion-code', 'cancel'] as const;

/**
 * The checkout page's forms as posted without its script, by `action`: an asset button (`assetId`,
 * no action), the payer's email (`action=email`, `email`), the promotion code
 * (`action=promotion-code`, `code`) or the cancel (`action=cancel`).
 * Open, as browsers post them: another name is ignored. Fields are checked as the JSON routes check
 * them, but every refusal is the page again saying why (a browser posted it); the code is the
 * payer's typing, any text, which the route checks as the JSON route does.
 */
export const PaymentMethodForm = z
  .discriminatedUnion(
    'action',
    [
      z.object({
        action: z
          .literal('choose')
          .optional()
          .openapi({ description: 'What the payer asks for; left out: `choose`, the asset named by `assetId`' }),
        assetId: PaymentMethodRequest.shape.assetId.openapi({
          description: 'The deposit address id (or its asset id) of the asset button pressed',
        }),
      }),
      z.object({
        action: z.literal('email'),
        email: z.string().optional().openapi({
          description:
            "The payer's email, asked first by the page of a `mode: subscription` session created with neither `customerId` nor `customerData.email` (renewal invoices are mailed to it): recorded as the session's `customerDetails.email`, and the subscription's customer is created from it. One that is not an email address is answered with the page again saying why (400), the text kept in its input",
        }),
      }),
      z.object({
        action: z.literal('promotion-code'),
        code: z.string().optional().openapi({
          description:
            'The promotion code typed in, as the page sends it: any text. One `POST /checkout/{id}/promotion-code` would refuse (left out, empty, over 100 characters) or no coupon takes is answered with the page again saying why (400), the code kept in its input',
        }),
      }),
      z.object({ action: z.literal('cancel') }),
    ],
    // Only an action none of the forms sends gets here: a missing one is `choose`.
    { error: withCode(`must be one of ${FORM_ACTIONS.join(', ')}`) },
  )
  .openapi('HostedPaymentMethodForm', { example: { assetId: 'base:usdc' } });

/** The "QR reveal": where to send, how much, and the QR of it. */
export const PaymentMethodAnswer = z
  .object({
    address: z.string(),
    network: z.string(),
    networkName: z.string(),
    chainId: z.number().int(),
    symbol: z.string(),
    assetName: z.string(),
    asset: AssetSchema,
    amountDueRaw: chainAmountString(),
    amountDue: z.string(),
    paymentUri: paymentUri(),
    qrSvg: qrSvg(),
    wallet: WalletDueSchema,
  })
  .openapi('HostedPaymentMethod');

export const PromotionCodeAnswer = z
  .object({
    status: session.status,
    code: z.string(),
    amountDiscount: amountString(),
    amountSubtotal: amountString(),
    amountTotal: amountString(),
    amountDetails: session.amountDetails,
  })
  .openapi('HostedPromotionCode');

export const CancelAnswer = z
  .object({
    status: session.status,
    redirectUrl: z
      .string()
      .nullable()
      .openapi({ description: "The session's cancel URL, where the page sends the payer" }),
  })
  .openapi('HostedCheckoutCanceled');

export const TestPaymentRequest = bodyObject({
  assetId: optional(text({ max: 200 })).openapi({
    description: 'The payment method chosen on the page (its address or asset id); default: that one',
  }),
}).openapi('HostedTestPaymentRequest', { example: { assetId: 'devnet:usdc' } });

export const TestPaymentAnswer = z
  .object({
    transactionHash: z.string(),
    from: z.string().nullable(),
    to: z.string(),
    assetId: z.string(),
    amountRaw: chainAmountString(),
    chainId: z.number().int(),
  })
  .openapi('HostedTestPayment');

const formValue = (description: string) => z.string().optional().openapi({ description });
const addressInputs = (kind: 'billing' | 'shipping') =>
  Object.fromEntries(
    ADDRESS_INPUTS.map((input) => [INPUT.address(kind, input.part), formValue(`${kind} address: ${input.label}`)]),
  );

/**
 * The payment link page's form as posted. What is required depends on what the link collects; the
 * page names every problem at once, so the form is checked by the route against its link.
 */
export const PayerFormSchema = z
  .object({
    [INPUT.amount]: formValue('The amount, for a link that lets the payer choose it (a decimal, such as 12.5)'),
    [INPUT.suggested]: formValue(
      "The suggested amount whose button was pressed (the page without JavaScript): the amount, over `amount`'s",
    ),
    [INPUT.name]: formValue("The payer's name"),
    [INPUT.email]: formValue("The payer's email address"),
    [INPUT.phone]: formValue("The payer's phone number"),
    ...addressInputs('billing'),
    ...addressInputs('shipping'),
  })
  .catchall(z.string())
  .openapi('PaymentLinkForm', {
    description:
      'Input name to value; `custom.<key>` answers a custom field of the link. A repeated name keeps its last value.',
  });

export const SolanaPayTransactionRequest = bodyObject({
  assetId: requiredText({ max: 200 }).openapi({
    description: 'The Solana asset chosen on the page (its address or asset id)',
  }),
  account: requiredText({ max: 64 }).openapi({
    description: "The payer's Solana wallet (base58), which signs and pays the fee",
  }),
}).openapi('HostedSolanaPayTransactionRequest');

export const SolanaPayTransactionAnswer = z
  .object({
    transaction: z.string().openapi({ description: 'The unsigned transaction, base64 wire format' }),
    chain: z.string().openapi({ description: 'The Wallet Standard chain, e.g. `solana:mainnet`' }),
  })
  .openapi('HostedSolanaPayTransaction');
