import test, { type ExecutionContext } from 'ava';
import { apiClient } from '../support/api-client.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { payInFull, type LineItem, type Page, type Price, type Session } from './helpers.ts';

const SESSIONS = '/api/v1/checkout/sessions';
type Product = { id: string; name: string; defaultPrice: Price | null };

const base = { mode: 'payment', successUrl: 'https://shop.example/ok', cancelUrl: 'https://shop.example/cart' };

function assertLineItemShape(t: ExecutionContext, item: LineItem) {
  t.true(item.description === null || typeof item.description === 'string');
  t.true(Number.isInteger(item.quantity));
  t.is(typeof item.amountTotal, 'string');
  t.regex(item.amountTotal, /^[0-9]+$/);
  t.is(typeof item.price.unitAmount, 'string');
  t.regex(item.price.unitAmount, /^[0-9]+$/);
  t.is(typeof item.currency, 'string');
  t.regex(item.price.id, /^[0-9a-f-]{36}$/);
}

test('line item by priceId: the default price of a product made with POST /api/v1/products', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const product = await api.post<Product>('/api/v1/products', {
    name: 'Annual pass',
    description: 'One year',
    defaultPriceData: { currency: 'usdc', unitAmount: 25000000000, type: 'one_time' },
  });
  t.is(product.status, 200, JSON.stringify(product.body));
  const price = product.body.defaultPrice!;
  t.truthy(price);
  t.is(price.unitAmount, '25000000000', 'a number in the request is a string in the answer');
  t.is(price.productId, product.body.id);

  const created = await api.post<Session>(SESSIONS, {
    ...base,
    lineItems: { data: [{ priceId: price.id, quantity: 3 }] },
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  const session = created.body;
  t.is(session.lineItems.object, 'list');
  t.is(session.lineItems.data.length, 1);
  const [item] = session.lineItems.data;
  assertLineItemShape(t, item!);
  t.is(item!.description, 'Annual pass');
  t.is(item!.quantity, 3);
  t.is(item!.price.id, price.id, 'the existing price is used, not a copy');
  t.is(item!.price.productId, product.body.id);
  t.is(item!.price.unitAmount, '25000000000');
  t.is(item!.amountTotal, '75000000000');
  t.is(item!.currency, 'usdc');
  t.is(session.amountTotal, '75000000000');
  t.is(session.currency, 'usdc');
  // No new price was made for it.
  t.is((await api.get<Page<Price>>(`/api/v1/prices?productId=${product.body.id}`)).body.count, 1);
  // The GET answers the same line items.
  t.deepEqual((await api.get<Session>(`${SESSIONS}/${session.id}`)).body.lineItems, session.lineItems);
});

test('line item by inline price: {productId, unitAmount, currency, type} of an existing product', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const product = (await api.post<Product>('/api/v1/products', { name: 'Sticker' })).body;
  t.is(product.defaultPrice, null);

  const created = await api.post<Session>(SESSIONS, {
    ...base,
    lineItems: {
      data: [
        { price: { productId: product.id, unitAmount: '50000000', currency: 'usdc', type: 'one_time' }, quantity: 4 },
      ],
    },
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  const [item] = created.body.lineItems.data;
  assertLineItemShape(t, item!);
  t.is(item!.description, 'Sticker');
  t.is(item!.price.productId, product.id);
  t.is(item!.price.type, 'one_time');
  t.is(item!.price.unitAmount, '50000000');
  t.is(item!.amountTotal, '200000000');
  t.is(created.body.amountTotal, '200000000');
  // The inline price now exists as a price of that product.
  const prices = (await api.get<Page<Price>>(`/api/v1/prices?productId=${product.id}`)).body;
  t.is(prices.count, 1);
  t.is(prices.data[0]!.id, item!.price.id);
});

test('line item by priceData with productData: a new product and price; several items add up', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const existing = (
    await api.post<Product>('/api/v1/products', {
      name: 'Mug',
      defaultPriceData: { currency: 'usdc', unitAmount: '1000000000' },
    })
  ).body;

  const created = await api.post<Session>(SESSIONS, {
    ...base,
    lineItems: {
      data: [
        {
          priceData: {
            currency: 'usdc',
            unitAmount: '150000000',
            productData: { name: 'Weir T-shirt', description: 'Cotton' },
          },
          quantity: 2,
        },
        { priceData: { currency: 'usdc', unitAmount: 30000000, productId: existing.id } },
        { priceId: existing.defaultPrice!.id, quantity: 1 },
      ],
    },
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  const items = created.body.lineItems.data;
  t.is(items.length, 3);
  for (const item of items) assertLineItemShape(t, item);
  t.deepEqual(
    items.map((i) => [i.description, i.quantity, i.price.unitAmount, i.amountTotal]),
    [
      ['Weir T-shirt', 2, '150000000', '300000000'],
      ['Mug', 1, '30000000', '30000000'],
      ['Mug', 1, '1000000000', '1000000000'],
    ],
  );
  t.is(created.body.amountTotal, '1330000000');
  t.is(created.body.amountSubtotal, '1330000000');

  // productData made a product the merchant can now see.
  const shirtProductId = items[0]!.price.productId;
  const shirt = await api.get<Product>(`/api/v1/products/${shirtProductId}`);
  t.is(shirt.status, 200);
  t.is(shirt.body.name, 'Weir T-shirt');
  t.is((await api.get<Page<Product>>('/api/v1/products')).body.count, 2);
});

test('successUrl keeps {CHECKOUT_SESSION_ID}; the status route redirects with the id once complete', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const request = {
    ...sessionRequest('150000000', 1),
    successUrl: 'https://shop.example/thanks?session={CHECKOUT_SESSION_ID}&again={CHECKOUT_SESSION_ID}',
  };
  const session = (await api.post<Session>(SESSIONS, request)).body;
  t.is(session.successUrl, request.successUrl, 'the stored field keeps the placeholder');
  t.is((await api.get<Session>(`${SESSIONS}/${session.id}`)).body.successUrl, request.successUrl);

  const payer = apiClient(weir.url);
  type Status = { id: string; status: string; paymentStatus: string; redirectUrl: string | null };
  const open = await payer.get<Status>(`/checkout/${session.id}/status`);
  t.is(open.status, 200);
  t.is(open.body.status, 'open');
  t.is(open.body.redirectUrl, null, 'no redirect before completion');

  const complete = await payInFull(weir, api, session);
  t.is(complete.paymentStatus, 'paid');
  t.is(complete.successUrl, request.successUrl, 'still the template after completion');
  const done = await payer.get<Status>(`/checkout/${session.id}/status`);
  t.is(done.body.status, 'complete');
  t.is(done.body.redirectUrl, `https://shop.example/thanks?session=${session.id}&again=${session.id}`);

  // Unknown sessions are a 404 on the public routes too.
  t.is((await payer.get('/checkout/00000000-0000-4000-8000-000000000000/status')).status, 404);
  t.is((await payer.get('/checkout/not-a-uuid/status')).status, 404);
});
