import test from 'ava';
import { routeTable } from '../hostile/route-table.ts';
import { apiClient } from '../support/api-client.ts';
import { ADMIN_TOKEN, createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { assertError, type Page } from './helpers.ts';

type Product = { id: string; visibility: number; url: string | null };
type Price = { id: string };

test('every route of /api/v1, whatever its method, refuses a query parameter it does not know, naming it, where it was ignored', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const routes = routeTable(weir).filter((route) => route.area === 'api');
  t.true(routes.filter((route) => route.method === 'GET').length > 30, 'every GET route');
  t.true(routes.filter((route) => route.method !== 'GET').length > 30, 'every route that writes');
  const answered: string[] = [];
  for (const route of routes) {
    const path = route.path.replace(/:[A-Za-z]+/g, () => crypto.randomUUID());
    const body = route.method === 'GET' || route.method === 'DELETE' ? undefined : {};
    const answer = await api.call<{ message?: string }>(route.method, `${path}?statuss=open`, body);
    if (answer.status !== 400 || !answer.body?.message?.startsWith('statuss: is not a known parameter'))
      answered.push(`${route.method} ${route.path}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 120)}`);
  }
  t.deepEqual(answered, []);
});

test('every /admin route refuses a query parameter it does not know, naming it, as /api/v1 does: /admin/organizations?force=1 made an organization', async (t) => {
  const weir = await startTestWeir(t);
  const admin = apiClient(weir.url, ADMIN_TOKEN);
  const routes = routeTable(weir).filter((route) => route.area === 'admin');
  t.true(routes.length > 0, 'the admin routes');
  const answered: string[] = [];
  for (const route of routes) {
    const path = route.path.replace(/:[A-Za-z]+/g, () => crypto.randomUUID());
    const body = route.method === 'GET' || route.method === 'DELETE' ? undefined : { name: 'Query typo' };
    const answer = await admin.call<{ message?: string }>(route.method, `${path}?statuss=open`, body);
    if (answer.status !== 400 || answer.body?.message !== 'statuss: is not a known parameter; this route takes none')
      answered.push(`${route.method} ${route.path}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 120)}`);
  }
  t.deepEqual(answered, []);
  t.is((await admin.post('/admin/organizations', { name: 'No query' })).status, 200, 'without one it answers');
});

test("a list's refusal names the parameters it takes, and paging, createdAt bounds (either spelling) and ids[] still pass", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const refused = assertError(t, await api.get('/api/v1/products?priceCurrencyy=usdc'), 400, {
    field: 'priceCurrencyy',
  });
  t.regex(
    refused.message,
    /^priceCurrencyy: is not a known parameter; use page, limit, createdAt\[gt\], .*priceCurrency$/,
  );
  t.notRegex(refused.message, /isnull/, 'refused names are not suggested');
  assertError(t, await api.get('/api/v1/customers/00000000-0000-4000-8000-000000000000?expand=x'), 400, {
    field: 'expand',
    message: /this route takes none/,
  });
  for (const query of [
    'page=1&limit=5',
    'createdAt[gte]=2026-01-01&createdAt[lt]=2099-01-01',
    'createdAt[gt]=2026-01-01&createdAt[lte]=2099-01-01',
    'createdAt.gt=2026-01-01',
    'createdAt[gte]=2026-01-01&timezone=Europe/Paris',
    'ids[]=a&ids[]=b',
  ]) {
    const answer = await api.get(`/api/v1/customers?${query}`);
    t.is(answer.status, 200, `${query}: ${JSON.stringify(answer.body)}`);
  }
  t.is((await api.get('/api/v1/chains?ids[]=1&page=1')).status, 200);
  t.is((await api.get('/api/v1/subscriptions?startDate[gte]=2026-01-01&endedAt[lt]=2099-01-01')).status, 200);
  t.is((await api.get('/api/v1/invoices?dueDate[gte]=2026-01-01&includes=lineItems')).status, 200);
  t.is((await api.get('/api/v1/transactions?confirmedAt[lte]=2026-01-01&timezone=Asia/Tokyo')).status, 200);
  // The reference's null tests and its bare coupon bounds: refused naming why, not ignored.
  assertError(t, await api.get('/api/v1/customers?createdAt[isnull]=true'), 400, {
    field: 'createdAt[isnull]',
    message: /is not supported by Weir/,
  });
  assertError(t, await api.get('/api/v1/coupons?gte=2026-01-01'), 400, { field: 'gte', message: /createdAt\[gte\]/ });
  assertError(t, await api.get('/api/v1/chains?createdAt[gte]=2026-01-01'), 400, {
    field: 'createdAt[gte]',
    message: /have no createdAt/,
  });
});

test("products: the list filters by the reference's visibility, url and the prices a product has (priceTypes, interval, intervalCount, priceCurrency), where they were ignored", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const product = async (body: Record<string, unknown>) => {
    const made = await api.post<Product>('/api/v1/products', body);
    t.is(made.status, 200, JSON.stringify(made.body));
    return made.body.id;
  };
  const monthly = await product({
    name: 'Monthly',
    url: 'https://shop.example/monthly',
    defaultPriceData: { currency: 'usdc', unitAmount: '100000000', interval: 'month', intervalCount: 1 },
  });
  const quarterly = await product({
    name: 'Quarterly',
    visibility: 20,
    defaultPriceData: { currency: 'usdt', unitAmount: '100000000', interval: 'month', intervalCount: 3 },
  });
  const once = await product({ name: 'Once', defaultPriceData: { currency: 'usdc', unitAmount: '100000000' } });
  const bare = await product({ name: 'No price' });
  const listed = async (query: string) => {
    const answer = await api.get<Page<Product>>(`/api/v1/products?${query}`);
    t.is(answer.status, 200, `${query}: ${JSON.stringify(answer.body)}`);
    return answer.body.data.map((p) => p.id).sort();
  };
  const sorted = (...ids: string[]) => ids.sort();
  t.deepEqual(await listed(''), sorted(monthly, quarterly, once, bare));
  t.deepEqual(await listed('visibility=20'), [quarterly]);
  t.deepEqual(await listed('visibility=10'), sorted(monthly, once, bare));
  t.deepEqual(await listed('url=https://shop.example/monthly'), [monthly]);
  t.deepEqual(await listed('priceTypes=recurring'), sorted(monthly, quarterly));
  t.deepEqual(await listed('priceTypes=one_time,recurring'), sorted(monthly, quarterly, once));
  t.deepEqual(await listed('interval=month&intervalCount=3'), [quarterly]);
  t.deepEqual(await listed('priceCurrency=USDC'), sorted(monthly, once));
  t.deepEqual(await listed('priceCurrency=usdc&priceTypes=recurring'), [monthly]);
  t.deepEqual(await listed(`priceCurrency=usdc&ids=${once},${quarterly}`), [once]);
  t.deepEqual(await listed('priceCurrency=dai'), []);
  for (const [query, field] of [
    ['visibility=30', 'visibility'],
    ['priceTypes=streaming', 'priceTypes'],
    ['interval=fortnight', 'interval'],
    ['intervalCount=0', 'intervalCount'],
    ['priceCurrency=gold', 'priceCurrency'],
  ] as const)
    assertError(t, await api.get(`/api/v1/products?${query}`), 400, { field });
});

test("prices: the list filters by the reference's ids, and refuses its visibility (prices have none) rather than ignore it", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const made = await api.post<{ id: string }>('/api/v1/products', { name: 'Thing' });
  const price = async () =>
    (
      await api.post<Price>('/api/v1/prices', {
        productId: made.body.id,
        currency: 'usdc',
        unitAmount: '100000000',
      })
    ).body.id;
  const first = await price();
  await price();
  const answer = await api.get<Page<Price>>(`/api/v1/prices?ids=${first}`);
  t.is(answer.status, 200, JSON.stringify(answer.body));
  t.deepEqual(
    answer.body.data.map((p) => p.id),
    [first],
  );
  t.is((await api.get('/api/v1/prices?visibility=')).status, 200);
  assertError(t, await api.get('/api/v1/prices?visibility=10'), 400, {
    field: 'visibility',
    message: /not supported by Weir: prices have no visibility/,
  });
});

test("checkout sessions: the list filters by the reference's couponId and paymentMethodTypes, as the export does, where they were ignored", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const made = await api.post<{ id: string; paymentMethodTypes: string[] }>(
    '/api/v1/checkout/sessions',
    sessionRequest(),
  );
  t.is(made.status, 200, JSON.stringify(made.body));
  const listed = async (query: string) =>
    (await api.get<Page<{ id: string }>>(`/api/v1/checkout/sessions?${query}`)).body.data.map((s) => s.id);
  t.deepEqual(await listed(`couponId=${crypto.randomUUID()}`), []);
  t.deepEqual(await listed('paymentMethodTypes=no_such_method'), []);
  t.deepEqual(await listed(`paymentMethodTypes=${made.body.paymentMethodTypes.join(',')}`), [made.body.id]);
});

test('API keys: the list filters by ids, as every other list does, where ids was ignored and every key answered', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const made = await api.post<{ id: string }>('/api/v1/api-keys', { name: 'second' });
  t.is(made.status, 200, JSON.stringify(made.body));
  const all = await api.get<Page<{ id: string }>>('/api/v1/api-keys');
  t.true(all.body.data.length >= 2, JSON.stringify(all.body));
  const listed = await api.get<Page<{ id: string }>>(`/api/v1/api-keys?ids=${made.body.id}`);
  t.is(listed.status, 200, JSON.stringify(listed.body));
  t.deepEqual(
    listed.body.data.map((k) => k.id),
    [made.body.id],
  );
});

test('ids given as ids[]=a&ids[]=b or ids=a&ids=b select those records, on stored lists and products alike, where ids[] answered every record and a repeat kept only the last', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const customers: string[] = [];
  for (const email of ['a@example.com', 'b@example.com', 'c@example.com'])
    customers.push((await api.post<{ id: string }>('/api/v1/customers', { email })).body.id);
  const [a, b] = customers as [string, string];
  const listed = async (path: string) =>
    (await api.get<Page<{ id: string }>>(path)).body.data.map((record) => record.id).sort();
  for (const query of [`ids[]=${a}&ids[]=${b}`, `ids=${a}&ids=${b}`, `ids=${a},${b}`])
    t.deepEqual(await listed(`/api/v1/customers?${query}`), [a, b].sort(), query);
  const products: string[] = [];
  for (const name of ['Tea', 'Coffee', 'Cocoa'])
    products.push((await api.post<{ id: string }>('/api/v1/products', { name })).body.id);
  const [p, q] = products as [string, string];
  t.deepEqual(await listed(`/api/v1/products?ids[]=${p}&ids[]=${q}`), [p, q].sort());
  t.deepEqual(await listed(`/api/v1/products?ids=${p}&ids=${q}`), [p, q].sort());
});
