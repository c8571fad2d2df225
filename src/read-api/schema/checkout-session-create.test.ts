import test from 'ava';
import { ValidationError } from '../../shared/errors.ts';
import { CheckoutSessionCreate, parseLineItems } from './checkout-session-create.ts';
import { parseWith } from './route.ts';

const PRICE_ID = '3f0e9a52-6a53-4b5e-9c0f-2f6a1d9b7c10';
const TEA = { priceData: { currency: 'usdc', unitAmount: '150000000', productData: { name: 'Tea' } }, quantity: 2 };
const body = (extra: Record<string, unknown> = {}) => ({
  successUrl: 'https://shop.example/thanks',
  lineItems: { data: [TEA] },
  ...extra,
});

/** The 400 a body answers with: `field: message` and its code. */
function refusal(value: unknown): { message: string; code: string } {
  try {
    parseWith(CheckoutSessionCreate, value);
  } catch (error) {
    if (error instanceof ValidationError) return { message: error.message, code: error.code };
    throw error;
  }
  throw new Error(`accepted: ${JSON.stringify(value)}`);
}

test('a minimal body takes the defaults; amounts become bigints and a one-time price has no schedule', (t) => {
  const parsed = parseWith(CheckoutSessionCreate, body());
  t.like(parsed, {
    mode: 'payment',
    submitType: 'pay',
    afterCompletion: 'redirect',
    customerCreation: 'if_required',
    allowPromotionCodes: false,
    metadata: {},
  });
  t.deepEqual(parsed.lineItems.data, [
    {
      quantity: 2,
      priceData: {
        productData: { name: 'Tea' },
        type: 'one_time',
        interval: null,
        intervalCount: null,
        currency: 'usdc',
        unitAmount: 150000000n,
      },
    },
  ]);
});

test('each form of a line item comes out as its own shape; quantity defaults to 1', (t) => {
  const lines = parseLineItems({
    data: [
      { priceId: PRICE_ID },
      { price: { productId: PRICE_ID, currency: 'dai', unitAmount: 5, interval: 'month' }, taxRateIds: [PRICE_ID] },
      { priceData: { productId: PRICE_ID, currency: 'usdc', unitAmount: '1', type: 'recurring', interval: 'year' } },
    ],
  }).data;
  t.deepEqual(lines[0], { quantity: 1, priceId: PRICE_ID });
  t.deepEqual(lines[1], {
    quantity: 1,
    taxRateIds: [PRICE_ID],
    price: {
      productId: PRICE_ID,
      type: 'recurring',
      interval: 'month',
      intervalCount: 1,
      currency: 'dai',
      unitAmount: 5n,
    },
  });
  t.like(lines[2], { priceData: { productId: PRICE_ID, type: 'recurring', interval: 'year', intervalCount: 1 } });
});

test('field errors name the full path, with the messages and codes the API always gave', (t) => {
  const withLine = (line: unknown) => body({ lineItems: { data: [line] } });
  const cases: [unknown, string, string][] = [
    [
      withLine({ ...TEA, priceData: { ...TEA.priceData, unitAmount: '1.5' } }),
      'lineItems.data[0].priceData.unitAmount: must be a non-negative integer of digits, scaled by 10^8',
      'parameter_invalid_integer',
    ],
    [
      withLine({ ...TEA, priceData: { ...TEA.priceData, unitAmount: null } }),
      'lineItems.data[0].priceData.unitAmount: is required',
      'parameter_missing',
    ],
    [
      withLine({ priceId: PRICE_ID, priceData: TEA.priceData }),
      'lineItems.data[0]: must have exactly one of priceId, price or priceData',
      'parameters_exclusive',
    ],
    [withLine({ priceId: 'price_1' }), 'lineItems.data[0].priceId: must be a uuid', 'parameter_invalid'],
    [
      withLine({ priceId: PRICE_ID, quantity: 0 }),
      'lineItems.data[0].quantity: must be at least 1',
      'parameter_invalid',
    ],
    [
      withLine({ priceData: { currency: 'usdc', unitAmount: '1' } }),
      'lineItems.data[0].priceData: must have productId or productData',
      'parameter_missing',
    ],
    [
      withLine({ priceData: { ...TEA.priceData, productId: PRICE_ID } }),
      'lineItems.data[0].priceData: must have productId or productData, not both',
      'parameters_exclusive',
    ],
    [
      withLine({ priceData: { ...TEA.priceData, type: 'recurring' } }),
      'lineItems.data[0].priceData.interval: is required for a recurring price',
      'parameter_missing',
    ],
    [
      withLine({ priceData: { ...TEA.priceData, productData: { name: '' } } }),
      'lineItems.data[0].priceData.productData.name: must not be empty',
      'parameter_invalid_string_empty',
    ],
    [
      withLine({ ...TEA, taxRateIds: [PRICE_ID, PRICE_ID] }),
      `lineItems.data[0].taxRateIds[1]: tax rate ${PRICE_ID} is listed twice`,
      'parameter_invalid',
    ],
    [body({ lineItems: undefined }), 'lineItems: is required', 'parameter_missing'],
    [body({ lineItems: { data: [] } }), 'lineItems.data: must have at least 1 item', 'parameter_invalid'],
    [
      body({ customerData: { email: 'pat@' } }),
      'customerData.email: must be an email address, such as payer@example.com',
      'email_invalid',
    ],
    [
      body({ customerData: { taxIds: { data: [{ value: 'DE1', country: 'DEU' }] } } }),
      'customerData.taxIds.data[0].country: must be at most 2 characters',
      'parameter_invalid',
    ],
    [
      body({ customerData: { address: { country: 'U1' } } }),
      'customerData.address.country: must be a two-letter ISO 3166-1 country code',
      'parameter_invalid',
    ],
    [
      body({ customerUpdate: { name: 'always' } }),
      'customerUpdate.name: must be one of auto, never',
      'parameter_invalid',
    ],
    [
      body({ paymentSetting: { allowedChains: [{ chainId: '1' }] } }),
      'paymentSetting.allowedChains[0].chainId: must be an integer',
      'parameter_invalid_integer',
    ],
    [
      body({ paymentSetting: { allowedChains: [{}] } }),
      'paymentSetting.allowedChains[0].chainId: is required',
      'parameter_missing',
    ],
    [body({ successUrl: 'thanks.html' }), 'successUrl: must be an absolute URL', 'url_invalid'],
    [body({ expiresAt: 'tomorrow' }), 'expiresAt: must be an ISO 8601 timestamp', 'parameter_invalid'],
    [[body()], 'the request body must be a JSON object', 'parameter_invalid'],
  ];
  for (const [value, message, code] of cases) t.deepEqual(refusal(value), { message, code }, message);
});

test('the first field in the order the API checks them is the one reported', (t) => {
  t.is(refusal(body({ mode: 'gift', successUrl: 7 })).message, 'mode: must be one of payment, subscription');
  // paymentSetting before lineItems; a later line's fault before nothing of an earlier line is kept.
  t.regex(
    refusal(body({ paymentSetting: { allowFiatPayment: true }, lineItems: { data: [{}] } })).message,
    /^paymentSetting\.allowFiatPayment: card payments/,
  );
  t.regex(
    refusal(body({ lineItems: { data: [TEA, { ...TEA, quantity: 'two' }] } })).message,
    /^lineItems\.data\[1\]\.quantity: must be an integer$/,
  );
});

test('unknown keys of the body, a line, a price and paymentSetting are refused, naming them', (t) => {
  const refused = (extra: Record<string, unknown>) =>
    t.throws(() => parseWith(CheckoutSessionCreate, body(extra)), { instanceOf: ValidationError })?.field;
  t.is(refused({ note: 'x' }), 'note');
  t.is(
    refused({ paymentSetting: { allowSwap: true, paymentMethodType: ['wallet'] } }),
    'paymentSetting.paymentMethodType',
  );
  t.is(refused({ lineItems: { data: [{ ...TEA, note: 1 }] } }), 'lineItems.data[0].note');
  t.is(refused({ lineItems: { data: [TEA], hasMore: false } }), 'lineItems.hasMore');
  t.is(
    refused({ lineItems: { data: [{ ...TEA, priceData: { ...TEA.priceData, taxBehavior: 'inclusive' } }] } }),
    'lineItems.data[0].priceData.taxBehavior',
  );
});

test("the reference's fields Weir does not use are taken and ignored", (t) => {
  const parsed = parseWith(
    CheckoutSessionCreate,
    body({
      nameCollection: true,
      defaultPromotionCode: null,
      paymentSetting: { allowedChains: [{ chainId: 1, blacklistCurrencies: [] }] },
      lineItems: { data: [{ ...TEA, periodStart: '2030-01-01' }] },
    }),
  );
  t.is(parsed.nameCollection, undefined);
  t.is(parsed.defaultPromotionCode, undefined);
  t.deepEqual(parsed.paymentSetting?.allowedChains?.[0]?.chainId, 1);
  t.is(parsed.lineItems.data[0]?.quantity, 2);
});

test('a one-time price does not read intervalCount; null stands for a field left out', (t) => {
  const parsed = parseWith(
    CheckoutSessionCreate,
    body({
      cancelUrl: null,
      customerData: null,
      lineItems: { data: [{ ...TEA, priceData: { ...TEA.priceData, type: 'one_time', intervalCount: 99 } }] },
    }),
  );
  t.is(parsed.cancelUrl, undefined);
  t.is(parsed.customerData, undefined);
  t.like(parsed.lineItems.data[0], { priceData: { type: 'one_time', intervalCount: null } });
});

test('invoice lines sent as lineItems are refused with the path under lineItems', (t) => {
  const error = t.throws(() => parseLineItems({ data: [{ priceId: 'nope' }] }), { instanceOf: ValidationError });
  t.is(error?.message, 'lineItems.data[0].priceId: must be a uuid');
  t.is(t.throws(() => parseLineItems(null))?.message, 'lineItems: must be an object');
});

test("paymentSetting.paymentMethodTypes takes Weir's one type, wallet; another is refused naming it and wallet", (t) => {
  const setting = (paymentMethodTypes: unknown) =>
    parseWith(CheckoutSessionCreate, body({ paymentSetting: { paymentMethodTypes } })).paymentSetting;
  t.deepEqual(setting(['wallet'])?.paymentMethodTypes, ['wallet']);
  t.is(setting(null)?.paymentMethodTypes, undefined);
  t.is(
    refusal(body({ paymentSetting: { paymentMethodTypes: ['wallet', 'card'] } })).message,
    'paymentSetting.paymentMethodTypes[1]: card is not taken: card payments are not available in Weir; the only payment method type is wallet',
  );
  t.is(
    refusal(body({ paymentSetting: { paymentMethodTypes: ['superfluid'] } })).message,
    'paymentSetting.paymentMethodTypes[0]: must be one of wallet (the only payment method type of Weir)',
  );
  t.is(
    refusal(body({ paymentSetting: { paymentMethodTypes: [] } })).message,
    'paymentSetting.paymentMethodTypes: must have at least 1 item',
  );
});

test('a line may send priceId with a price describing it: only the fields sent are kept, to be checked against the stored price; priceData beside priceId stays refused', (t) => {
  const lines = parseLineItems({
    data: [
      { priceId: PRICE_ID, price: { unitAmount: '5', currency: 'dai', interval: 'month', intervalCount: 3 } },
      { priceId: PRICE_ID, price: { productId: PRICE_ID, type: 'recurring', currency: null } },
    ],
  }).data;
  t.deepEqual(lines[0], {
    quantity: 1,
    priceId: PRICE_ID,
    describedAs: { unitAmount: 5n, currency: 'dai', interval: 'month', intervalCount: 3 },
  });
  t.deepEqual(lines[1], { quantity: 1, priceId: PRICE_ID, describedAs: { productId: PRICE_ID, type: 'recurring' } });
  const refused = (line: unknown) => refusal(body({ lineItems: { data: [line] } })).message;
  t.is(
    refused({ priceId: PRICE_ID, price: { unitAmount: '1.5' } }),
    'lineItems.data[0].price.unitAmount: must be a non-negative integer of digits, scaled by 10^8',
  );
  t.is(
    refused({ priceId: PRICE_ID, price: { intervalCount: 0 } }),
    'lineItems.data[0].price.intervalCount: must be at least 1',
  );
  t.is(
    refused({ priceId: PRICE_ID, price: { note: 1 } }),
    'lineItems.data[0].price.note: is not a known field; use productId, type, interval, currency, unitAmount, intervalCount',
  );
  t.is(
    refused({ priceId: PRICE_ID, price: { unitAmount: '1' }, priceData: TEA.priceData }),
    'lineItems.data[0]: must have exactly one of priceId, price or priceData',
  );
  // Alone, a price is still a new price: its product, currency and amount are required.
  t.is(refused({ price: { currency: 'usdc', unitAmount: '1' } }), 'lineItems.data[0].price.productId: is required');
  t.is(refused({ price: { productId: PRICE_ID, unitAmount: '1' } }), 'lineItems.data[0].price.currency: is required');
  t.is(
    refused({ price: { productId: PRICE_ID, currency: 'usdc', type: 'recurring', unitAmount: '1' } }),
    'lineItems.data[0].price.interval: is required for a recurring price',
  );
});
