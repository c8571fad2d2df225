import test from 'ava';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';
import { assertRejectedWithoutWrite, createCustomer, type Page, type Price } from './helpers.ts';

/**
 * Requests the spec (gateway-spec.md) writes that Weir once refused: an invoice's `currency`, a line
 * with `priceId` and the `price` it names, `paymentSetting.paymentMethodTypes`, and the spec's
 * spelling `uncollectable` of the invoice status.
 */

const SESSIONS = '/api/v1/checkout/sessions';
const SESSION = { successUrl: 'https://shop.example/ok' };

type Line = { currency: string; priceId: string | null; price: Price | null };
type Invoice = { id: string; status: string; currency: string; lineItems: { data: Line[] } };
type Session = {
  currency: string;
  paymentSetting: { paymentMethodTypes: string[] };
  lineItems: { data: { price: Price; currency: string }[] };
};

async function merchant(t: Parameters<typeof startTestWeir>[0]) {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const customerId = await createCustomer(api);
  /** A product with its default price: one-time, or recurring every month. */
  const product = async (defaultPriceData: Record<string, unknown>) =>
    (
      await api.post<{ id: string; defaultPrice: Price & { id: string; productId: string } }>('/api/v1/products', {
        name: 'Support plan',
        defaultPriceData,
      })
    ).body;
  return { weir, api, customerId, product };
}

test("an invoice takes the spec's currency when its line items are in it: it is what the invoice and each line are in; another is a 400 naming currency and the lines' currency, writing nothing", async (t) => {
  const { weir, api, customerId } = await merchant(t);
  const lineItems = {
    data: [{ priceData: { currency: 'usdc', unitAmount: '150000000', productData: { name: 'Audit' } }, quantity: 2 }],
  };
  const created = await api.post<Invoice>('/api/v1/invoices', { customerId, currency: 'usdc', lineItems });
  t.is(created.status, 200, JSON.stringify(created.body));
  t.is(created.body.currency, 'usdc');
  // The spec's response line item carries its currency, as a session's line does.
  t.deepEqual(
    created.body.lineItems.data.map((line) => [line.currency, line.price?.currency]),
    [['usdc', 'usdc']],
  );
  t.deepEqual((await api.get<Invoice>(`/api/v1/invoices/${created.body.id}`)).body.lineItems, created.body.lineItems);

  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/invoices', { customerId, currency: 'dai', lineItems }),
    {
      field: 'currency',
      message: /is dai, but the line items are in usdc/,
    },
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.put(`/api/v1/invoices/${created.body.id}`, { currency: 'dai', memo: 'changed' }),
    { field: 'currency', message: /line items are in usdc/ },
  );
  t.is((await api.put(`/api/v1/invoices/${created.body.id}`, { currency: 'usdc', memo: 'kept' })).status, 200);
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/invoices', { customerId, currency: 'usd', lineItems }),
    {
      field: 'currency',
    },
  );
});

test("a line with priceId and the price it names (the spec's recurring invoice) uses the stored price, in invoices and sessions; a price that disagrees is a 400 naming its first field that does, writing nothing", async (t) => {
  const { weir, api, customerId, product } = await merchant(t);
  const monthly = await product({ currency: 'usdc', unitAmount: '2500000000', type: 'recurring', interval: 'month' });
  const price = monthly.defaultPrice;
  const described = {
    productId: monthly.id,
    unitAmount: '2500000000',
    currency: 'usdc',
    type: 'recurring',
    interval: 'month',
  };
  const invoice = await api.post<Invoice & { invoiceType: string }>('/api/v1/invoices', {
    customerId,
    invoiceType: 'recurring',
    collectionMethod: 'charge_automatically',
    lineItems: { data: [{ priceId: price.id, price: described, quantity: 1 }] },
  });
  t.is(invoice.status, 200, JSON.stringify(invoice.body));
  t.is(invoice.body.invoiceType, 'recurring');
  t.is(invoice.body.lineItems.data[0]!.priceId, price.id, 'the stored price, not a copy');
  t.is((await api.get<Page<Price>>(`/api/v1/prices?productId=${monthly.id}`)).body.count, 1, 'no price was made');
  t.is((await api.post(`/api/v1/invoices/${invoice.body.id}/finalize`)).status, 200);

  // Only the fields sent are compared.
  const once = await product({ currency: 'usdc', unitAmount: '500000000' });
  const session = await api.post<Session>(SESSIONS, {
    ...SESSION,
    lineItems: { data: [{ priceId: once.defaultPrice.id, price: { unitAmount: 500000000 } }] },
  });
  t.is(session.status, 200, JSON.stringify(session.body));
  t.is(session.body.lineItems.data[0]!.price.id, once.defaultPrice.id);

  const refused = (path: string, line: Record<string, unknown>, field: string, message: RegExp) =>
    assertRejectedWithoutWrite(
      t,
      weir,
      () =>
        path === SESSIONS
          ? api.post(SESSIONS, { ...SESSION, lineItems: { data: [line] } })
          : api.post(path, { customerId, lineItems: { data: [line] } }),
      { field, message },
    );
  const wrong = { ...described, unitAmount: '100', currency: 'dai' };
  for (const path of [SESSIONS, '/api/v1/invoices']) {
    await refused(
      path,
      { priceId: once.defaultPrice.id, price: { unitAmount: '100' } },
      'lineItems.data[0].price.unitAmount',
      /is 100, but price .* has unitAmount 500000000/,
    );
    await refused(
      path,
      { priceId: once.defaultPrice.id, price: { currency: 'usdc', interval: 'month' } },
      'lineItems.data[0].price.interval',
      /has no interval \(a one_time price\)/,
    );
  }
  await refused('/api/v1/invoices', { priceId: price.id, price: wrong }, 'lineItems.data[0].price.currency', /usdc/);
  await refused(
    '/api/v1/invoices',
    { priceId: price.id, price: { ...described, productId: once.id } },
    'lineItems.data[0].price.productId',
    new RegExp(`has productId ${monthly.id}`),
  );
  // priceData beside priceId stays one too many.
  await refused(
    '/api/v1/invoices',
    { priceId: price.id, priceData: described },
    'lineItems.data[0]',
    /exactly one of priceId, price or priceData/,
  );
});

test("a session's paymentSetting.paymentMethodTypes takes wallet, Weir's only type; card is a 400 naming it and wallet", async (t) => {
  const { weir, api } = await merchant(t);
  const lineItems = {
    data: [{ priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Tea' } } }],
  };
  const created = await api.post<Session>(SESSIONS, {
    ...SESSION,
    lineItems,
    paymentSetting: { paymentMethodTypes: ['wallet'] },
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  t.deepEqual(created.body.paymentSetting.paymentMethodTypes, ['wallet']);
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(SESSIONS, { ...SESSION, lineItems, paymentSetting: { paymentMethodTypes: ['card'] } }),
    { field: 'paymentSetting.paymentMethodTypes[0]', message: /card payments are not available in Weir.*wallet/ },
  );
});

test("the invoice list takes the spec's status uncollectable as uncollectible, the status it answers with", async (t) => {
  const { api, customerId } = await merchant(t);
  const lineItems = {
    data: [{ priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Fee' } } }],
  };
  const draft = (await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems })).body;
  await api.post(`/api/v1/invoices/${draft.id}/finalize`);
  t.is((await api.post<Invoice>(`/api/v1/invoices/${draft.id}/mark-uncollectible`)).body.status, 'uncollectible');
  await api.post('/api/v1/invoices', { customerId, lineItems });
  for (const status of ['uncollectable', 'uncollectible']) {
    const listed = await api.get<Page<Invoice>>(`/api/v1/invoices?status=${status}`);
    t.is(listed.status, 200, JSON.stringify(listed.body));
    t.deepEqual(
      listed.body.data.map((i) => [i.id, i.status]),
      [[draft.id, 'uncollectible']],
    );
  }
  const refused = await api.get<{ message: string }>('/api/v1/invoices?status=lost');
  t.is(refused.status, 400);
  t.regex(refused.body.message, /^status: must be one of draft, open, paid, void, uncollectible$/);
});
