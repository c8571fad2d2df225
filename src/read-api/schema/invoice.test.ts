import test from 'ava';
import { ValidationError } from '../../shared/errors.ts';
import type { z } from './fields.ts';
import {
  INVOICE_CREATE_EXAMPLE,
  INVOICE_EXAMPLE,
  InvoiceCreate,
  InvoiceSchema,
  InvoiceSendRequest,
  InvoiceUpdate,
} from './invoice.ts';
import { parseWith } from './route.ts';

const CUSTOMER = '0f8fad5b-d9cb-469f-a165-70867728950e';
const LINES = {
  data: [{ priceData: { currency: 'usdc', unitAmount: '150000000', productData: { name: 'Hour' } }, quantity: 2 }],
};

/** The 400 `schema` answers `value` with, as `field: message (code)`. */
const refusal = (schema: z.ZodType, value: unknown): string => {
  try {
    parseWith(schema, value);
  } catch (error) {
    if (error instanceof ValidationError) return `${error.message} (${error.code})`;
    throw error;
  }
  throw new Error(`${JSON.stringify(value)} was accepted`);
};
const create = (extra: Record<string, unknown>) =>
  refusal(InvoiceCreate, { customerId: CUSTOMER, lineItems: LINES, ...extra });
const line = (item: Record<string, unknown>) =>
  refusal(InvoiceCreate, { customerId: CUSTOMER, lineItems: { data: [item] } });

test('a create reads dates, days until due and the dashboard intervals as the invoice stores them', (t) => {
  const body = parseWith(InvoiceCreate, {
    customerId: CUSTOMER,
    lineItems: LINES,
    dueDate: '2030-02-01',
    issueDate: '2030-01-01T08:00:00+02:00',
    invoiceType: 'recurring',
    interval: 'Half-Year',
    clientReferenceId: 'ignored: a reference field Weir does not use',
  });
  t.is(body.dueDate, '2030-02-01T23:59:59.999Z', 'a due date: payable all that day');
  t.is(body.issueDate, '2030-01-01T06:00:00.000Z');
  t.is(
    parseWith(InvoiceCreate, { customerId: CUSTOMER, lineItems: LINES, dueDate: '2030-02-01T00:00:00Z' }).dueDate,
    '2030-02-01T00:00:00.000Z',
    'a timestamp at midnight: that instant',
  );
  t.deepEqual(body.recurring, { interval: 'month', intervalCount: 6 });
  t.false('unknown' in body);
  const months = parseWith(InvoiceCreate, {
    customerId: CUSTOMER,
    lineItems: LINES,
    recurring: { interval: 'month', intervalCount: 3 },
  });
  t.deepEqual(months.recurring, { interval: 'month', intervalCount: 3 });
  t.notThrows(() => parseWith(InvoiceCreate, INVOICE_CREATE_EXAMPLE));
});

test('a create refuses each bad field with the message, code and path the API always gave', (t) => {
  t.is(refusal(InvoiceCreate, { lineItems: LINES }), 'customerId: is required (parameter_missing)');
  t.is(refusal(InvoiceCreate, { customerId: CUSTOMER, lineItems: null }), 'lineItems: is required (parameter_missing)');
  t.is(refusal(InvoiceCreate, []), 'the request body must be a JSON object (parameter_invalid)');
  t.is(
    create({ dueDate: '2030-02-31' }),
    'dueDate: must be a date (2026-05-01) or an ISO 8601 timestamp (2026-05-01T08:00:00Z) (parameter_invalid)',
  );
  t.is(
    create({ dueDate: '2030-02-01', daysUntilDue: 3 }),
    'dueDate: send dueDate or daysUntilDue, not both (parameters_exclusive)',
  );
  t.is(create({ daysUntilDue: 4000 }), 'daysUntilDue: must be at most 3650 (parameter_invalid)');
  t.is(
    create({ interval: 'fortnight' }),
    'interval: must be one of month, quarter, half-year, year (parameter_invalid)',
  );
  t.is(
    create({ recurring: { interval: 'fortnight' } }),
    'recurring.interval: must be one of month, quarter, half-year, year (parameter_invalid)',
  );
  t.is(
    create({ recurring: { interval: 'month', intervalCount: 2 } }),
    'recurring.intervalCount: must be 1, 3, 6 or 12 (parameter_invalid)',
  );
  t.is(create({ memo: 5 }), 'memo: must be a string (parameter_invalid)');
  t.is(
    create({ collectionMethod: 'cash' }),
    'collectionMethod: must be one of charge_automatically, send_invoice (parameter_invalid)',
  );
  t.is(
    create({ paymentMethods: { chainIds: [0] } }),
    'paymentMethods.chainIds[0]: must be a positive integer (parameter_invalid)',
  );
  t.is(
    create({ paymentMethods: { assetIds: [''] } }),
    'paymentMethods.assetIds[0]: must be a non-empty string (parameter_invalid)',
  );
  t.is(
    create({ reminders: { daysAfterDue: [400] } }),
    'reminders.daysAfterDue[0]: must be a whole number of days from 1 to 365 (parameter_invalid)',
  );
  t.is(create({ reminders: [] }), 'reminders: must be an object (parameter_invalid)');
  t.is(create({ metadata: { a: {} } }), 'metadata.a: must be a string (parameter_invalid)');
  t.is(
    create({ number: '-7' }),
    'number: must be 1 to 64 letters, digits or . _ / # -, starting with a letter or digit (parameter_invalid)',
  );
  t.is(create({ taxRateIds: 'x' }), 'taxRateIds: must be an array of tax rate ids (parameter_invalid)');
  t.is(create({ taxRateIds: ['x'] }), 'taxRateIds[0]: must be a tax rate id (a uuid) (parameter_invalid)');
  t.is(
    create({ taxRateIds: [CUSTOMER, CUSTOMER] }),
    `taxRateIds[1]: tax rate ${CUSTOMER} is listed twice (parameter_invalid)`,
  );
});

test("a create's lines are refused as the line-item resolver refuses them, the form checked before its fields", (t) => {
  t.is(
    refusal(InvoiceCreate, { customerId: CUSTOMER, lineItems: [] }),
    'lineItems: must be an object (parameter_invalid)',
  );
  t.is(
    refusal(InvoiceCreate, { customerId: CUSTOMER, lineItems: {} }),
    'lineItems.data: is required (parameter_missing)',
  );
  t.is(
    refusal(InvoiceCreate, { customerId: CUSTOMER, lineItems: { data: [] } }),
    'lineItems.data: must have at least 1 item (parameter_invalid)',
  );
  t.is(line({ quantity: 0, priceId: CUSTOMER }), 'lineItems.data[0].quantity: must be at least 1 (parameter_invalid)');
  t.is(
    line({ quantity: 1 }),
    'lineItems.data[0]: must have exactly one of priceId, price or priceData (parameters_exclusive)',
  );
  t.is(
    line({ priceId: CUSTOMER, priceData: {} }),
    'lineItems.data[0]: must have exactly one of priceId, price or priceData (parameters_exclusive)',
  );
  t.is(line({ priceId: 'x' }), 'lineItems.data[0].priceId: must be a uuid (parameter_invalid)');
  t.is(
    line({ price: { currency: 'usdc', unitAmount: '1' } }),
    'lineItems.data[0].price.productId: is required (parameter_missing)',
  );
  t.is(
    line({ priceData: { currency: 'usdc', unitAmount: '1' } }),
    'lineItems.data[0].priceData: must have productId or productData (parameter_missing)',
  );
  t.is(
    line({ priceData: { productId: CUSTOMER, productData: { name: 'A' }, currency: 'usdc', unitAmount: '1' } }),
    'lineItems.data[0].priceData: must have productId or productData, not both (parameters_exclusive)',
  );
  t.is(
    line({ priceData: { productData: 'A', currency: 'usdc', unitAmount: '1' } }),
    'lineItems.data[0].priceData.productData: must be an object (parameter_invalid)',
  );
  t.is(
    line({ priceData: { productId: CUSTOMER, unitAmount: '1' } }),
    'lineItems.data[0].priceData.currency: is required (parameter_missing)',
  );
  t.is(
    line({ priceData: { productId: CUSTOMER, type: 'recurring', currency: 'usdc', unitAmount: '1' } }),
    'lineItems.data[0].priceData.interval: is required for a recurring price (parameter_missing)',
  );
  t.is(
    line({
      priceData: { productId: CUSTOMER, interval: 'month', intervalCount: 99, currency: 'usdc', unitAmount: '1' },
    }),
    'lineItems.data[0].priceData.intervalCount: must be at most 36 (parameter_invalid)',
  );
  // A one-time price never reads intervalCount.
  t.notThrows(() =>
    parseWith(InvoiceCreate, {
      customerId: CUSTOMER,
      lineItems: {
        data: [{ priceData: { productId: CUSTOMER, intervalCount: 99, currency: 'usdc', unitAmount: '1' } }],
      },
    }),
  );
  t.is(
    line({ priceData: { productId: CUSTOMER, currency: 'usdc', unitAmount: '1.5' } }),
    'lineItems.data[0].priceData.unitAmount: must be a non-negative integer of digits, scaled by 10^8 (parameter_invalid_integer)',
  );
  t.is(
    line({ priceId: CUSTOMER, taxRateIds: [1] }),
    'lineItems.data[0].taxRateIds[0]: must be a tax rate id (a uuid) (parameter_invalid)',
  );
});

test('an update takes any subset; null clears text and is refused for customerId and lineItems', (t) => {
  t.deepEqual(parseWith(InvoiceUpdate, {}), { recurring: undefined });
  t.like(parseWith(InvoiceUpdate, { memo: null, taxRateIds: null }), { memo: null, taxRateIds: undefined });
  t.is(refusal(InvoiceUpdate, { customerId: null }), 'customerId: is required (parameter_missing)');
  t.is(refusal(InvoiceUpdate, { lineItems: null }), 'lineItems: must be an object (parameter_invalid)');
});

test('send takes to and cc as email addresses', (t) => {
  t.deepEqual(parseWith(InvoiceSendRequest, { to: 'payer@example.com', cc: ['a@example.com'] }), {
    to: 'payer@example.com',
    cc: ['a@example.com'],
  });
  t.is(refusal(InvoiceSendRequest, { to: 'payer' }), 'to: must be an email address (parameter_invalid)');
  t.is(
    refusal(InvoiceSendRequest, { cc: ['a@example.com', 'x'] }),
    'cc[1]: must be an email address (parameter_invalid)',
  );
  t.is(refusal(InvoiceSendRequest, { cc: [''] }), 'cc[0]: must be a non-empty string (parameter_invalid)');
});

test("the create example's answer is an Invoice", (t) => {
  t.notThrows(() => InvoiceSchema.parse(INVOICE_EXAMPLE));
});
