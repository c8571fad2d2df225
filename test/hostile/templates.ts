import { randomBytes } from 'node:crypto';
import type { Clock } from '../../src/shared/clock.ts';
import { randomEvmAddress, type TenantRecords } from './fixtures.ts';
import type { Random } from './random.ts';

/**
 * A valid request body for each route that takes one, built from the tenant's real records, so a
 * mutated copy gets past the first checks and is judged deep in the route. `undefined` is a route
 * that takes no body (actions and deletes). A route with a body method missing here fails the suite.
 */
export type Template = (records: TenantRecords, random: Random, clock: Clock) => unknown;

const some = <T>(random: Random, items: readonly T[], fallback: T): T => (items.length ? random.pick(items) : fallback);
const uuid = () => crypto.randomUUID();
const hash = () => `0x${randomBytes(32).toString('hex')}`;
const future = (clock: Clock, days: number) => new Date(clock.now() + days * 86_400_000).toISOString();
const email = (random: Random) => `payer${random.int(1000)}@example.com`;
const code = (random: Random) => `H${random.int(1e9).toString(36).toUpperCase()}`;

const lineItems = (r: TenantRecords, random: Random) => ({
  data: random.chance(0.5)
    ? [{ priceId: some(random, [...r.oneTimePrices, ...r.zeroPrices], uuid()), quantity: 1 + random.int(3) }]
    : [
        {
          priceData: {
            currency: random.pick(['usdc', 'usdc', 'eth', 'dai']),
            unitAmount: random.pick(['100000000', '1', '0', '123456789']),
            productData: { name: 'Hostile item' },
          },
          quantity: 1,
        },
      ],
});

const address = { line1: '1 Main St', city: 'Berlin', postalCode: '10115', country: 'DE' };

export const TEMPLATES: Record<string, Template> = {
  'POST /api/v1/checkout/sessions': (r, random, clock) =>
    random.chance(0.3)
      ? {
          mode: 'subscription',
          successUrl: 'https://shop.example/ok',
          lineItems: { data: [{ priceId: some(random, r.recurringPrices, uuid()), quantity: 1 }] },
          customerData: { email: email(random), name: 'Sub Scriber' },
        }
      : {
          mode: 'payment',
          successUrl: 'https://shop.example/thanks?session={CHECKOUT_SESSION_ID}',
          cancelUrl: 'https://shop.example/cart',
          lineItems: lineItems(r, random),
          allowPromotionCodes: random.chance(0.5),
          clientReferenceId: 'order-1',
          customerId: random.chance(0.3) ? some(random, r.ids.customer, uuid()) : undefined,
          customerData: random.chance(0.3) ? { email: email(random), address } : undefined,
          paymentSetting: random.chance(0.3)
            ? { allowedChains: [{ chainId: 7357 }], preferredChainId: 7357 }
            : undefined,
          expiresAt: random.chance(0.2) ? future(clock, 1) : undefined,
          taxRateIds: random.chance(0.3) ? [some(random, r.ids.taxRate, uuid())] : undefined,
          metadata: { orderId: '1' },
        },
  'POST /api/v1/checkout/sessions/auto-recover-by-transaction-hash': () => ({ chainId: 7357, transactionHash: hash() }),
  'POST /api/v1/checkout/sessions/:id/auto-recover': () => ({ chainId: 7357, transactionHash: hash() }),
  'POST /api/v1/checkout/sessions/:id/complete-partial-checkout-session': () => undefined,
  'POST /api/v1/checkout/sessions/:id/cancel': () => undefined,
  'PUT /api/v1/organization': () => ({
    name: 'Hostile Suite A',
    email: 'owner@shop.example',
    supportEmail: 'help@shop.example',
    websiteUrl: 'https://shop.example',
    phone: '+4930123456',
    addressDetails: { line1: '1 Main St', city: 'Berlin', country: 'DE' },
  }),
  'PUT /api/v1/organization/brand': () => ({ brandColor: '#112233', brandLogo: 'https://shop.example/logo.png' }),
  'DELETE /api/v1/organization/brand-logo': () => undefined,
  'PUT /api/v1/organization/payment-setting': () => ({
    preferredChainId: 7357,
    preferredCurrency: 'usdc',
    allowSwap: false,
    applyGasFee: false,
    allowSplitPayments: true,
    slippagePercentage: 1.5,
  }),
  'PUT /api/v1/organization/invoice-setting': (_r, random) => ({
    invoicePrefix: `H${random.int(1000)}-`,
    nextInvoiceSequence: 1 + random.int(5000),
    description: 'Hostile services',
    footer: random.chance(0.5) ? null : 'Thank you',
  }),
  'POST /api/v1/organization/invoice-setting': () => ({ numberingScheme: 'merchant_level', footer: 'Thanks' }),
  'POST /api/v1/payment-intents/:id/mark-as-refund': () => ({ markRefundedComment: 'refunded by bank transfer' }),
  'POST /api/v1/payment-intents/:id/payment-receipts/send': () => undefined,
  'POST /api/v1/organization/withdrawal-addresses': () => ({
    chainId: 7357,
    address: randomEvmAddress(),
    name: 'another wallet',
  }),
  'PUT /api/v1/organization/withdrawal-addresses/:id': () => ({ name: 'renamed wallet', address: randomEvmAddress() }),
  'DELETE /api/v1/organization/withdrawal-addresses/:id': () => undefined,
  'POST /api/v1/organization/withdrawal-addresses/:id/mark-as-default': () => undefined,
  'POST /api/v1/api-keys': (_r, random) =>
    random.chance(0.3) ? { name: 'ci key', scope: random.pick(['full', 'read', 'audit']) } : { name: 'ci key' },
  'POST /api/v1/api-keys/:id/regenerate': () => undefined,
  'DELETE /api/v1/api-keys/:id': () => undefined,
  'POST /api/v1/webhook-endpoints': (_r, random) => ({
    description: 'orders',
    url: 'https://hooks.example/weir',
    // Rarely every event: each endpoint that takes them all adds background deliveries to later writes.
    enabledEvents: { events: random.chance(0.1) ? ['*'] : ['checkout_session.completed', 'invoice.paid'] },
    isDisabled: random.chance(0.2),
  }),
  'PUT /api/v1/webhook-endpoints/:id': (_r, random) => ({
    description: 'renamed',
    url: 'https://hooks.example/other',
    isDisabled: random.chance(0.3),
    enabledEvents: { events: ['checkout_session.completed'] },
  }),
  'DELETE /api/v1/webhook-endpoints/:id': () => undefined,
  'POST /api/v1/webhook-endpoints/:id/regenerate': () => undefined,
  'POST /api/v1/webhook-endpoints/:id/test': () => undefined,
  'POST /api/v1/webhook-endpoints/:id/deliveries/:deliveryId/resend': () => undefined,
  'PUT /api/v1/organization/card-processor': (_r, random) => ({
    provider: 'stripe',
    publishableKey: `pk_test_${random.int(1e9).toString(36)}hostile`,
    secretKey: `sk_test_${random.int(1e9).toString(36)}hostile`,
  }),
  'PUT /api/v1/users/:id/role': (_r, random) => ({ role: random.pick(['admin', 'developer', 'viewer']) }),
  'POST /api/v1/invites': (_r, random) => ({
    email: email(random),
    role: random.pick(['admin', 'developer', 'viewer']),
  }),
  'POST /api/v1/invites/:id/resend': () => undefined,
  'POST /api/v1/analytics/query': (_r, random) => ({
    collection: random.pick(['checkout_sessions', 'transactions', 'invoices']),
    pipeline: [{ $match: { status: 'complete' } }, { $group: { _id: '$currency', n: { $sum: 1 } } }],
  }),
  'POST /api/v1/products': (_r, random) => ({
    name: 'Hostile product',
    description: 'made by the hostile suite',
    unitLabel: 'seat',
    url: 'https://shop.example/p',
    images: ['https://shop.example/p.png'],
    visibility: 10,
    metadata: { sku: '1' },
    defaultPriceData: random.chance(0.7)
      ? random.chance(0.5)
        ? { currency: 'usdc', unitAmount: '500000000' }
        : { currency: 'usdc', unitAmount: '500000000', type: 'recurring', interval: 'month', intervalCount: 3 }
      : undefined,
  }),
  'PUT /api/v1/products/:id': () => ({
    name: 'Renamed product',
    description: null,
    isActive: true,
    metadata: { sku: '2' },
    visibility: 20,
    images: [],
  }),
  'POST /api/v1/products/:id/activate': () => undefined,
  'POST /api/v1/products/:id/deactivate': () => undefined,
  'PUT /api/v1/products/:id/activate': () => undefined,
  'PUT /api/v1/products/:id/deactivate': () => undefined,
  'DELETE /api/v1/products/:id': () => undefined,
  'POST /api/v1/prices': (r, random) => ({
    productId: some(random, r.ids.product, uuid()),
    currency: random.pick(['usdc', 'eth', 'dai']),
    unitAmount: random.pick(['100000000', '0', '1']),
    ...(random.chance(0.4) ? { type: 'recurring', interval: random.pick(['month', 'year', 'week', 'day']) } : {}),
    nickname: 'hostile',
  }),
  'PUT /api/v1/prices/:id': (_r, random) => ({
    nickname: 'renamed',
    isActive: random.chance(0.8),
    metadata: { a: 'b' },
  }),
  'POST /api/v1/customers': (_r, random) => ({
    email: email(random),
    name: 'Hostile Customer',
    phone: '+4915112345678',
    organizationName: 'Acme',
    customerReferenceId: 'ref-1',
    address,
    shipping: { name: 'Hostile Customer', address },
    metadata: { a: 'b' },
    visibility: 10,
  }),
  'PUT /api/v1/customers/:id': (_r, random) => ({ name: 'Renamed', email: email(random), metadata: null }),
  'DELETE /api/v1/customers/:id': () => undefined,
  'POST /api/v1/coupons': (_r, random, clock) => ({
    name: 'Hostile coupon',
    ...(random.chance(0.5) ? { percentOff: 20 } : { amountOff: '10000000', currency: 'usdc' }),
    maxRedemptions: 5,
    redeemBy: future(clock, 30),
    promotionCodeData: { data: [{ code: code(random), maxRedemptions: 2, expiredAt: future(clock, 10) }] },
  }),
  'PUT /api/v1/coupons/:id': (_r, random, clock) => ({
    name: 'Renamed coupon',
    maxRedemptions: 10,
    redeemBy: future(clock, 60),
    metadata: { a: 'b' },
    isEnable: random.chance(0.7),
  }),
  'POST /api/v1/coupons/:id/enable': () => undefined,
  'POST /api/v1/coupons/:id/disable': () => undefined,
  'POST /api/v1/coupons/:id/archive': () => undefined,
  'POST /api/v1/tax-rates': (_r, random) => ({
    name: 'Hostile tax',
    description: 'd',
    country: 'DE',
    percentage: random.pick([0, 7, 8.25, '19.5', 100]),
    type: random.pick(['exclusive', 'inclusive']),
    metadata: { a: 'b' },
  }),
  'PUT /api/v1/tax-rates/:id': (_r, random) => ({
    name: 'Renamed tax',
    description: random.chance(0.5) ? null : 'changed',
    isActive: random.chance(0.8),
  }),
  'PUT /api/v1/tax-rates/:id/activate': () => undefined,
  'PUT /api/v1/tax-rates/:id/deactivate': () => undefined,
  'POST /api/v1/payment-links': (r, random) =>
    random.weighted<() => unknown>([
      [2, () => ({ title: 'Fixed', amount: '2500000000', currency: 'usdc' })],
      [1, () => ({ title: 'By price', priceId: some(random, [...r.oneTimePrices, ...r.recurringPrices], uuid()) })],
      [1, () => ({ title: 'By product', productId: some(random, r.ids.product, uuid()) })],
      [
        1,
        () => ({
          title: 'Variable',
          currency: 'usdc',
          pricing: 'variable',
          minimumAmount: '100000000',
          suggestedAmounts: ['200000000'],
          customFields: { fields: [{ key: 'note', type: 'text', label: 'Note' }] },
          allowedChains: [{ chainId: 7357, isPreferred: true }],
        }),
      ],
    ])(),
  'PUT /api/v1/payment-links/:id': (_r, random) => ({
    title: 'Renamed link',
    description: 'new',
    tags: ['a'],
    nameCollection: random.chance(0.5),
    afterCompletion: random.pick(['redirect', 'hosted_confirmation']),
    afterCompletionRedirectUrl: 'https://shop.example/done',
    isActive: random.chance(0.7),
  }),
  'DELETE /api/v1/payment-links/:id': () => undefined,
  'PUT /api/v1/payment-links/:id/activate': () => undefined,
  'POST /api/v1/payment-links/:id/activate': () => undefined,
  'PUT /api/v1/payment-links/:id/deactivate': () => undefined,
  'POST /api/v1/payment-links/:id/deactivate': () => undefined,
  'POST /api/v1/invoices': (r, random) => ({
    customerId: some(random, r.ids.customer, uuid()),
    lineItems: lineItems(r, random),
    memo: 'Thanks',
    ...(random.chance(0.3) ? { taxRateIds: [some(random, r.ids.taxRate, uuid())] } : {}),
    ...(random.chance(0.3) ? { invoiceType: 'recurring', interval: 'quarter' } : {}),
    ...(random.chance(0.5) ? { dueDate: '2030-02-01' } : { daysUntilDue: 7 }),
    reminders: { enabled: true, daysBeforeDue: [1], daysAfterDue: [3] },
    paymentMethods: { chainIds: [7357], assetIds: ['weir-testnet:usdc'] },
    ...(random.chance(0.3) ? { paymentSetting: { allowedChains: [{ chainId: 7357 }], preferredChainId: 7357 } } : {}),
  }),
  'PUT /api/v1/invoices/:id': (r, random) => ({
    memo: 'Changed',
    footer: 'f',
    number: `INV-${random.int(1e6)}`,
    ...(random.chance(0.4) ? { lineItems: lineItems(r, random) } : {}),
    ...(random.chance(0.2) ? { taxRateIds: [some(random, r.ids.taxRate, uuid())] } : {}),
    ...(random.chance(0.2) ? { paymentSetting: { allowedChains: [{ chainId: 7357 }] } } : {}),
  }),
  'DELETE /api/v1/invoices/:id': () => undefined,
  'POST /api/v1/invoices/:id/finalize': () => undefined,
  'POST /api/v1/invoices/:id/send': (_r, random) => ({ to: email(random), cc: ['cc@example.com'] }),
  'POST /api/v1/invoices/:id/pay': () => undefined,
  'POST /api/v1/invoices/:id/void': () => undefined,
  'POST /api/v1/invoices/:id/mark-uncollectible': () => undefined,
  'POST /api/v1/invoices/:id/duplicate': () => undefined,
  'POST /api/v1/subscriptions/:id/cancel': () => ({ cancellationComment: 'too expensive' }),
  'POST /api/v1/subscriptions/:id/end': () => ({ cancellationComment: 'moving on' }),
  'POST /api/v1/subscriptions/:id/resume': () => undefined,
  'POST /api/v1/subscriptions/:id/pause': () => undefined,
  'POST /api/v1/faucet': () => ({ address: randomEvmAddress(), asset: 'usdc', amount: '100000000' }),
  // Mostly the asset the suite's sessions are priced in; the others are offered only to sessions in their currency.
  'POST /checkout/:id/payment-method': (r, random) => ({
    assetId: random.chance(0.7) ? 'weir-testnet:usdc' : some(random, r.ids.asset, 'weir-testnet:usdc'),
  }),
  // The page's forms without its script (see the generator): the asset choice as payment-method, the
  // promotion code as promotion-code, or the cancel.
  'POST /checkout/:id': (r, random) =>
    random.weighted<() => Record<string, unknown>>([
      [
        6,
        () => ({ assetId: random.chance(0.7) ? 'weir-testnet:usdc' : some(random, r.ids.asset, 'weir-testnet:usdc') }),
      ],
      [2, () => ({ action: 'promotion-code', code: some(random, r.codes, 'NOPE') })],
      [1, () => ({ action: 'cancel' })],
    ])(),
  'POST /checkout/:id/promotion-code': (r, random) => ({
    code: random.chance(0.6) ? some(random, r.codes.slice(-4), 'NOPE') : some(random, r.codes, 'NOPE'),
  }),
  'POST /checkout/:id/cancel': () => undefined,
  // The hostile Weir offers no Solana network: a well-formed request is refused as not payable there.
  'POST /checkout/:id/solana-transaction': (_r, random) => ({
    assetId: random.chance(0.5) ? 'weir-testnet:usdc' : 'solana-devnet:usdc',
    account: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM',
  }),
  // The hostile Weir has no devnet: always refused, and must never be a 5xx.
  'POST /checkout/:id/test-payment': (_r, random) =>
    random.chance(0.5) ? { assetId: 'weir-testnet:usdc' } : undefined,
  'POST /pay/:id': (_r, random) => ({
    amount: random.pick(['12.5', '5', '1000']),
    // A suggested amount's button, pressed without the page's script.
    ...(random.chance(0.3) ? { suggestedAmount: random.pick(['5', '15', '0']) } : {}),
    name: 'Pay Er',
    email: email(random),
    phone: '+4915112345678',
    'billing.line1': '1 Main St',
    'billing.city': 'Berlin',
    'billing.postalCode': '10115',
    'billing.country': 'DE',
    'shipping.line1': '1 Main St',
    'shipping.city': 'Berlin',
    'shipping.postalCode': '10115',
    'shipping.country': 'DE',
    'custom.company': 'Acme',
    'custom.seats': '3',
    'custom.size': 's',
  }),
  'POST /admin/organizations': () => ({ name: 'Admin-made shop' }),
};
