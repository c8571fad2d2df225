import { evolveCheckoutSession } from './checkout-session.evolve.ts';
import type {
  CheckoutSession,
  CheckoutSessionEvent,
  SessionLineItem,
  SessionPayment,
} from './checkout-session.types.ts';

const ID = '11111111-1111-4111-8111-111111111111';
const USDC = {
  id: 'weir-testnet:usdc',
  name: 'USD Coin',
  symbol: 'USDC',
  currency: 'usdc',
  chainId: 7357,
  address: '0x00000000000000000000000000000000000a11ce',
  decimals: 6,
};

/** `quantity` of a one-time 1 USDC price of Tea, untaxed; `fields` over it. */
export const lineItemFixture = (quantity: number, fields: Partial<SessionLineItem> = {}): SessionLineItem => ({
  description: 'Tea',
  quantity,
  price: {
    id: 'price-tea',
    productId: 'prod-tea',
    product: { id: 'prod-tea', name: 'Tea', description: null, isActive: true },
    type: 'one_time',
    currency: 'usdc',
    unitAmount: '100000000',
    interval: null,
    intervalCount: null,
    isActive: true,
  },
  amountSubtotal: `${quantity}00000000`,
  amountTotal: `${quantity}00000000`,
  currency: 'usdc',
  ...fields,
});

/** A session of 3 USDC created at 2026-01-01T00:00Z, expiring an hour later. */
export function sessionFixture(overrides: Partial<CheckoutSession> = {}): CheckoutSession {
  const at = '2026-01-01T00:00:00.000Z';
  return {
    id: ID,
    organizationId: 'org-1',
    environment: 'test',
    createdAt: at,
    updatedAt: at,
    mode: 'payment',
    status: 'open',
    paymentStatus: 'unpaid',
    expiresAt: '2026-01-01T01:00:00.000Z',
    currency: 'usdc',
    amountSubtotal: '300000000',
    amountTotal: '300000000',
    amountFee: '0',
    amountNet: '300000000',
    amountGasFee: '0',
    amountReceived: '0',
    amountOverpaid: '0',
    amountDetails: {
      currency: 'usdc',
      amountTotal: '300000000',
      amountSubtotal: '300000000',
      amountDiscount: '0',
      amountTax: '0',
      amountFee: '0',
      amountGasFee: '0',
      feePercentage: 0,
      applyFee: false,
      applyGasFee: false,
      discountAmounts: [],
    },
    paymentMethodTypes: ['wallet'],
    paymentSetting: {
      paymentMethodTypes: ['wallet'],
      allowedChains: [{ chainId: 7357 }],
      preferredChainId: null,
      allowSwap: false,
      allowFiatPayment: false,
    },
    submitType: 'pay',
    successUrl: 'https://shop.example/ok',
    cancelUrl: null,
    clientReferenceId: null,
    customerId: null,
    metadata: {},
    afterCompletion: 'redirect',
    afterCompletionConfirmMsg: null,
    paymentLinkId: null,
    invoiceId: null,
    subscriptionId: null,
    url: `http://127.0.0.1/checkout/${ID}`,
    lineItems: { object: 'list', data: [] },
    addresses: [
      {
        id: 'addr-usdc',
        checkoutSessionId: ID,
        network: 'weir-testnet',
        asset: USDC,
        paymentAddress: '0x00000000000000000000000000000000000d3b05',
        merchantAddress: '0x5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1f',
        gas: '0',
        gasAmount: '0',
      },
    ],
    paymentIntent: {
      id: 'pi-1',
      organizationId: 'org-1',
      createdAt: at,
      updatedAt: at,
      amount: '300000000',
      amountReceived: '0',
      currency: 'usdc',
      status: 'requires_payment_method',
      paymentMethodTypes: ['wallet'],
      paymentMethod: null,
    },
    payments: [],
    sweeps: [],
    discounts: [],
    isManualPayment: false,
    completedAt: null,
    canceledAt: null,
    expiredAt: null,
    transactionHash: null,
    ...overrides,
  };
}

/** A transfer of `amount` (10^8 scale) of USDC to the session's address. */
export function paymentFixture(
  transferId: string,
  amount: string,
): Omit<SessionPayment, 'status' | 'detectedAt' | 'confirmedAt' | 'late'> {
  return {
    transferId,
    network: 'weir-testnet',
    chainId: 7357,
    transactionHash: `0x${transferId.padStart(64, '0')}`,
    logIndex: 0,
    blockNumber: 10,
    blockHash: '0xb10c',
    fromAddress: '0xbeef',
    toAddress: '0x00000000000000000000000000000000000d3b05',
    asset: USDC,
    amountRaw: (BigInt(amount) / 100n).toString(),
    amount,
  };
}

export const created = (session = sessionFixture()): CheckoutSessionEvent => ({
  type: 'CheckoutSessionCreated',
  data: { session },
});
/** `payment` seen, not yet final, at `at`. */
const seen = (
  payment: Omit<SessionPayment, 'status' | 'detectedAt' | 'confirmedAt' | 'late'>,
  at: string,
): CheckoutSessionEvent => ({
  type: 'PaymentDetected',
  data: { payment: { ...payment, status: 'pending', detectedAt: at, confirmedAt: null, late: false } },
});
export const detected = (transferId: string, amount: string, at = '2026-01-01T00:10:00.000Z'): CheckoutSessionEvent =>
  seen(paymentFixture(transferId, amount), at);
export const confirmed = (transferId: string, at = '2026-01-01T00:11:00.000Z'): CheckoutSessionEvent => ({
  type: 'PaymentConfirmed',
  data: { transferId, at },
});

const DAI = {
  id: 'weir-testnet:dai',
  name: 'Dai Stablecoin',
  symbol: 'DAI',
  currency: 'dai',
  chainId: 7357,
  address: '0x0000000000000000000000000000000000000da1',
  decimals: 18,
};

/** A session of 0.00013993 DAI (18 decimals, finer than the 10^8 scale), otherwise as `sessionFixture`. */
export function daiSessionFixture(): CheckoutSession {
  const base = sessionFixture();
  const total = '13993';
  return sessionFixture({
    currency: 'dai',
    amountSubtotal: total,
    amountTotal: total,
    amountNet: total,
    amountDetails: { ...base.amountDetails, currency: 'dai', amountTotal: total, amountSubtotal: total },
    addresses: [{ ...base.addresses[0]!, id: 'addr-dai', asset: DAI }],
    paymentIntent: { ...base.paymentIntent, amount: total, currency: 'dai' },
  });
}

/** A transfer of `amountRaw` wei of DAI to the DAI session's address, its `amount` cut to 10^8 as the matcher does. */
export const daiPaymentFixture = (
  transferId: string,
  amountRaw: string,
): Omit<SessionPayment, 'status' | 'detectedAt' | 'confirmedAt' | 'late'> => ({
  ...paymentFixture(transferId, '0'),
  asset: DAI,
  amountRaw,
  amount: (BigInt(amountRaw) / 10n ** 10n).toString(),
});

/** `amountRaw` wei of DAI (18 decimals, finer than the 10^8 scale) seen at the fixture's address at `at`. */
export const detectedDai = (
  transferId: string,
  amountRaw: string,
  at = '2026-01-01T00:10:00.000Z',
): CheckoutSessionEvent => seen(daiPaymentFixture(transferId, amountRaw), at);

/** The fixture's session after `events`, folded as the machine and the projection fold them. */
export function sessionAfterEvents(...events: CheckoutSessionEvent[]): CheckoutSession {
  let session: CheckoutSession | null = null;
  for (const event of [created(sessionFixture()), ...events]) session = evolveCheckoutSession(session, event);
  return session!;
}

/** The merchant canceled the session at `at`. */
export const canceled = (at = '2026-01-01T00:20:00.000Z'): CheckoutSessionEvent => ({
  type: 'CheckoutSessionCanceled',
  data: { at, reason: null },
});

/** `transferId` final at `at` after its session closed: late money. */
export const confirmedLate = (
  transferId: string,
  amount: string,
  at = '2026-01-01T00:25:00.000Z',
): CheckoutSessionEvent[] => [
  confirmed(transferId, at),
  { type: 'LatePaymentReceived', data: { transferId, amount, at } },
];

/** The merchant marked the session's payment refunded at `at` (its own note `comment`). */
export const markedRefunded = (
  at = '2026-01-02T09:00:00.000Z',
  comment: string | null = null,
): CheckoutSessionEvent => ({
  type: 'PaymentMarkedRefunded',
  data: { comment, at },
});

/** 1.000000005 DAI in time, then the cancel: half a 10^-8 unit over, for late money's fraction to make up. */
export const halfOverThenCanceled = (): CheckoutSessionEvent[] => [
  detectedDai('a', '1000000005000000000'),
  confirmed('a'),
  canceled(),
];

/** `halfOverThenCanceled`, then 0.000000005 DAI late: 1.00000001 received, the late part carrying the halves' unit. */
export const lateHalfMakesAUnit = (): CheckoutSessionEvent[] => [
  ...halfOverThenCanceled(),
  detectedDai('b', '5000000000', '2026-01-01T00:21:00.000Z'),
  ...confirmedLate('b', '0'),
];

/** 1 wei of DAI seen before the cancel and confirmed after it: dust sent before the close, 0 at the 10^8 scale. */
export const dustSentBeforeCancel = (): CheckoutSessionEvent[] => [
  detectedDai('a', '1'),
  canceled(),
  ...confirmedLate('a', '0'),
];
