import test from 'ava';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';
import { assertError, assertRejectedWithoutWrite } from './helpers.ts';

type Price = {
  id: string;
  type: string;
  interval: string | null;
  intervalCount: number | null;
  unitAmount: string;
  isActive: boolean;
  nickname: string | null;
  product: { id: string };
};
type Product = {
  id: string;
  name: string;
  isActive: boolean;
  description: string | null;
  defaultPrice: Price | null;
  metadata: Record<string, string>;
};

test('products: create with a default recurring price, update, deactivate, activate, delete', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const created = await api.post<Product>('/api/v1/products', {
    name: 'Pro plan',
    description: 'Monthly',
    defaultPriceData: { currency: 'usdc', unitAmount: '2500000000', interval: 'month', intervalCount: 1 },
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  t.is(created.body.defaultPrice?.type, 'recurring');
  t.is(created.body.defaultPrice?.unitAmount, '2500000000');

  const id = created.body.id;
  const updated = await api.put<Product>(`/api/v1/products/${id}`, {
    name: 'Pro plan (2026)',
    metadata: { tier: 'pro' },
  });
  t.is(updated.body.name, 'Pro plan (2026)');
  t.deepEqual(updated.body.metadata, { tier: 'pro' });
  assertError(t, await api.put(`/api/v1/products/${id}`, {}), 400);
  assertError(t, await api.put(`/api/v1/products/${id}`, { name: '' }), 400, { field: 'name' });

  t.false((await api.post<Product>(`/api/v1/products/${id}/deactivate`)).body.isActive);
  // An inactive product cannot be sold.
  const refused = await api.post('/api/v1/checkout/sessions', {
    successUrl: 'https://shop.example/ok',
    lineItems: { data: [{ priceId: created.body.defaultPrice!.id }] },
  });
  assertError(t, refused, 400, { code: 'product_inactive' });
  t.true((await api.post<Product>(`/api/v1/products/${id}/activate`)).body.isActive);

  t.deepEqual((await api.delete(`/api/v1/products/${id}`)).body, { message: `product ${id} deleted`, statusCode: 200 });
  t.is((await api.get(`/api/v1/products/${id}`)).status, 404);
});

test("the reference's product requests: PUT activate and deactivate, productData on a price, defaultPrice.product; streaming is refused clearly", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const product = (
    await api.post<Product>('/api/v1/products', {
      name: 'Tea',
      defaultPriceData: { currency: 'usdc', unitAmount: '1000000' },
    })
  ).body;
  t.like(product.defaultPrice, { product: { id: product.id, name: 'Tea', isActive: true } });
  t.false((await api.put<Product>(`/api/v1/products/${product.id}/deactivate`, {})).body.isActive);
  t.true((await api.put<Product>(`/api/v1/products/${product.id}/activate`, {})).body.isActive);

  const price = await api.post<Price & { productId: string }>('/api/v1/prices', {
    currency: 'usdc',
    unitAmount: '3000000',
    productData: { name: 'Coffee', description: 'Fresh' },
  });
  t.is(price.status, 200, JSON.stringify(price.body));
  t.like(price.body, { unitAmount: '3000000', product: { name: 'Coffee' } });
  t.like((await api.get<Product>(`/api/v1/products/${price.body.productId}`)).body, {
    name: 'Coffee',
    description: 'Fresh',
  });
  assertError(t, await api.post('/api/v1/prices', { currency: 'usdc', unitAmount: '1', productData: {} }), 400, {
    field: 'productData.name',
  });
  assertError(
    t,
    await api.post('/api/v1/prices', {
      currency: 'usdc',
      unitAmount: '1',
      productId: product.id,
      productData: { name: 'Both' },
    }),
    400,
    { field: 'productData' },
  );
  assertError(t, await api.post('/api/v1/prices', { currency: 'usdc', unitAmount: '1' }), 400, { field: 'productId' });
  assertError(
    t,
    await api.post('/api/v1/prices', { productId: product.id, currency: 'usdc', unitAmount: '1', type: 'streaming' }),
    400,
    { field: 'type', code: 'unsupported_price_type' },
  );
});

test('prices: monthly, quarterly, half-yearly and annual; only isActive, nickname and metadata change', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const product = (await api.post<Product>('/api/v1/products', { name: 'Plan' })).body;
  const schedules = [
    ['month', 1],
    ['month', 3],
    ['month', 6],
    ['year', 1],
  ] as const;
  for (const [interval, intervalCount] of schedules) {
    const price = await api.post<Price>('/api/v1/prices', {
      productId: product.id,
      currency: 'usdc',
      unitAmount: 1000000000,
      interval,
      intervalCount,
    });
    t.is(price.status, 200, JSON.stringify(price.body));
    t.like(price.body, { type: 'recurring', interval, intervalCount, unitAmount: '1000000000' });
  }
  assertError(
    t,
    await api.post('/api/v1/prices', { productId: product.id, currency: 'usdc', unitAmount: '1', type: 'recurring' }),
    400,
    { field: 'interval' },
  );
  assertError(
    t,
    await api.post('/api/v1/prices', {
      productId: product.id,
      currency: 'usdc',
      unitAmount: '1',
      interval: 'fortnight',
    }),
    400,
    { field: 'interval' },
  );
  const price = (
    await api.post<Price>('/api/v1/prices', { productId: product.id, currency: 'usdc', unitAmount: '100' })
  ).body;
  const renamed = await api.put<Price>(`/api/v1/prices/${price.id}`, { nickname: 'launch', isActive: false });
  t.like(renamed.body, { nickname: 'launch', isActive: false });
  assertError(t, await api.put(`/api/v1/prices/${price.id}`, { unitAmount: '2' }), 400, { field: 'unitAmount' });
  const list = await api.get<{ count: number }>(`/api/v1/prices?productId=${product.id}`);
  t.is(list.body.count, 5);
});

test("a product update may repeat its defaultPriceId (the reference's clients send the product back), never change it", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const product = await api.post<Product>('/api/v1/products', {
    name: 'Tea',
    defaultPriceData: { currency: 'usdc', unitAmount: '1000000' },
  });
  const other = await api.post<Price>('/api/v1/prices', {
    productId: product.body.id,
    currency: 'usdc',
    unitAmount: '2000000',
  });
  t.is(other.status, 200, JSON.stringify(other.body));
  const repeated = await api.put<Product>(`/api/v1/products/${product.body.id}`, {
    name: 'Green tea',
    defaultPriceId: product.body.defaultPrice?.id,
  });
  t.is(repeated.status, 200, JSON.stringify(repeated.body));
  t.is(repeated.body.name, 'Green tea');
  const changed = await api.put(`/api/v1/products/${product.body.id}`, {
    name: 'Black tea',
    defaultPriceId: other.body.id,
  });
  assertError(t, changed, 400, { field: 'defaultPriceId', message: /cannot be changed/ });
  const after = await api.get<Product>(`/api/v1/products/${product.body.id}`);
  t.is(after.body.name, 'Green tea');
  t.is(after.body.defaultPrice?.id, product.body.defaultPrice?.id);
});

test('a product an active payment link sells is not deleted: a 409 names the links, and once they are off it is, where the link stayed on and refused its payers', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const product = await api.post<Product>('/api/v1/products', {
    name: 'Tea',
    defaultPriceData: { currency: 'usdc', unitAmount: '100000000' },
  });
  const id = product.body.id;
  const byPrice = await api.post<{ id: string }>('/api/v1/payment-links', {
    title: 'Tea',
    priceId: product.body.defaultPrice!.id,
  });
  const byAmount = await api.post<{ id: string }>('/api/v1/payment-links', {
    title: 'Big tea',
    productId: id,
    amount: '200000000',
    currency: 'usdc',
  });
  t.is(byPrice.status, 200, JSON.stringify(byPrice.body));
  t.is(byAmount.status, 200, JSON.stringify(byAmount.body));
  const refused = assertError(t, await api.delete(`/api/v1/products/${id}`), 409, { code: 'product_in_use' });
  t.regex(refused.message, new RegExp(`^product ${id} is sold by active payment links `));
  t.regex(refused.message, new RegExp(byPrice.body.id));
  t.regex(refused.message, new RegExp(byAmount.body.id));
  t.regex(refused.message, /deactivate or delete them first$/);
  t.is((await api.get(`/api/v1/products/${id}`)).status, 200, 'nothing deleted');

  t.is((await api.put(`/api/v1/payment-links/${byPrice.body.id}/deactivate`, {})).status, 200);
  t.is((await api.delete(`/api/v1/payment-links/${byAmount.body.id}`)).status, 200);
  t.deepEqual((await api.delete(`/api/v1/products/${id}`)).body, { message: `product ${id} deleted`, statusCode: 200 });
});

test('a product or price an active payment link sells is not deactivated, by any route: a 409 names the links and nothing is written; once the links are off it is, where the link stayed on and refused its payers', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const product = await api.post<Product>('/api/v1/products', {
    name: 'Tea',
    defaultPriceData: { currency: 'usdc', unitAmount: '100000000' },
  });
  const id = product.body.id;
  const priceId = product.body.defaultPrice!.id;
  const byPrice = await api.post<{ id: string }>('/api/v1/payment-links', { title: 'Tea', priceId });
  const variable = await api.post<{ id: string }>('/api/v1/payment-links', {
    title: 'Tip',
    productId: id,
    pricing: 'variable',
    currency: 'usdc',
  });
  t.is(byPrice.status, 200, JSON.stringify(byPrice.body));
  t.is(variable.status, 200, JSON.stringify(variable.body));

  const deactivations = [
    () => api.put(`/api/v1/products/${id}/deactivate`, {}),
    () => api.post(`/api/v1/products/${id}/deactivate`),
    () => api.put(`/api/v1/products/${id}`, { isActive: false, name: 'Green tea' }),
  ];
  for (const deactivate of deactivations) {
    const refused = await assertRejectedWithoutWrite(t, weir, deactivate, { status: 409, code: 'product_in_use' });
    t.regex(refused.message, new RegExp(`^product ${id} is sold by active payment links `));
    t.regex(refused.message, new RegExp(byPrice.body.id));
    t.regex(refused.message, new RegExp(variable.body.id));
    t.regex(refused.message, /deactivate or delete them first$/);
  }
  const price = await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.put(`/api/v1/prices/${priceId}`, { isActive: false }),
    { status: 409, code: 'price_in_use' },
  );
  t.is(
    price.message,
    `price ${priceId} is sold by active payment links ${byPrice.body.id}; deactivate or delete them first`,
    'the variable link sells no price',
  );
  t.like((await api.get<Product>(`/api/v1/products/${id}`)).body, { isActive: true, name: 'Tea' });
  // What does not switch anything off is not refused.
  t.is((await api.put(`/api/v1/prices/${priceId}`, { nickname: 'Cup' })).status, 200);
  t.is((await api.put(`/api/v1/products/${id}`, { isActive: true, name: 'Green tea' })).status, 200);

  t.is((await api.put(`/api/v1/payment-links/${byPrice.body.id}/deactivate`, {})).status, 200);
  t.false((await api.put<Price>(`/api/v1/prices/${priceId}`, { isActive: false })).body.isActive);
  assertError(t, await api.put(`/api/v1/products/${id}/deactivate`, {}), 409, { code: 'product_in_use' });
  t.is((await api.delete(`/api/v1/payment-links/${variable.body.id}`)).status, 200);
  t.false((await api.put<Product>(`/api/v1/products/${id}/deactivate`, {})).body.isActive);
});
