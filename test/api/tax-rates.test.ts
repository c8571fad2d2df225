import test from 'ava';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';
import { assertError, type Page } from './helpers.ts';

const RATES = '/api/v1/tax-rates';
const SESSIONS = '/api/v1/checkout/sessions';

type TaxRate = {
  id: string;
  object: 'tax_rate';
  name: string;
  description: string | null;
  country: string | null;
  percentage: number;
  type: 'exclusive' | 'inclusive';
  isActive: boolean;
  metadata: Record<string, string>;
  livemode: boolean;
  createdAt: string;
  updatedAt: string;
};
type AppliedRate = { id: string; percentage: number; type: string; isDefault: boolean; amount: string };
type TaxedLine = {
  amountSubtotal: string;
  amountTotal: string;
  amountTax?: string;
  taxRates?: AppliedRate[];
};
type TaxedSession = {
  id: string;
  url: string;
  amountSubtotal: string;
  amountTotal: string;
  amountDetails: { amountTotal: string; amountSubtotal: string; amountTax: string };
  paymentIntent: { amount: string };
  lineItems: { data: TaxedLine[] };
};

const line = (unitAmount: string, quantity = 1, extra: Record<string, unknown> = {}) => ({
  priceData: { currency: 'usdc', unitAmount, productData: { name: `Item ${unitAmount}` } },
  quantity,
  ...extra,
});
const sessionWith = (lines: unknown[], extra: Record<string, unknown> = {}) => ({
  mode: 'payment',
  successUrl: 'https://shop.example/ok',
  lineItems: { data: lines },
  ...extra,
});

test('tax rates: create, read, update, deactivate, activate; percentage and type are fixed', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const created = await api.post<TaxRate>(RATES, {
    name: 'Sales tax',
    description: 'California',
    country: 'us',
    percentage: 7.25,
    metadata: { region: 'CA' },
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  t.like(created.body, {
    object: 'tax_rate',
    name: 'Sales tax',
    description: 'California',
    country: 'US',
    percentage: 7.25,
    type: 'exclusive',
    isActive: true,
    livemode: false,
  });
  t.deepEqual(created.body.metadata, { region: 'CA' });
  const id = created.body.id;
  t.deepEqual((await api.get<TaxRate>(`${RATES}/${id}`)).body, created.body);

  // A decimal string is taken too, and canonicalised.
  const vat = await api.post<TaxRate>(RATES, { name: 'VAT', percentage: '19.50', type: 'inclusive' });
  t.is(vat.status, 200, JSON.stringify(vat.body));
  t.is(vat.body.percentage, 19.5);
  t.is(vat.body.type, 'inclusive');

  const updated = await api.put<TaxRate>(`${RATES}/${id}`, { name: 'CA sales tax', description: null });
  t.is(updated.status, 200, JSON.stringify(updated.body));
  t.like(updated.body, { name: 'CA sales tax', description: null, percentage: 7.25 });
  assertError(t, await api.put(`${RATES}/${id}`, { percentage: 8 }), 400, { field: 'percentage' });
  assertError(t, await api.put(`${RATES}/${id}`, { type: 'inclusive' }), 400, { field: 'type' });
  assertError(t, await api.put(`${RATES}/${id}`, {}), 400);
  assertError(t, await api.put(`${RATES}/${id}`, { name: '' }), 400, { field: 'name' });

  t.false((await api.put<TaxRate>(`${RATES}/${id}/deactivate`, {})).body.isActive);
  t.false((await api.put<TaxRate>(`${RATES}/${id}/deactivate`, {})).body.isActive, 'again: nothing changes');
  t.true((await api.put<TaxRate>(`${RATES}/${id}/activate`, {})).body.isActive);
  // The reference's methods: PUT, not POST.
  t.is((await api.post(`${RATES}/${id}/activate`, {})).status, 405);
  t.is((await api.delete(`${RATES}/${id}`)).status, 405);
});

test('tax rates: validation names the field', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  assertError(t, await api.post(RATES, { percentage: 5 }), 400, { field: 'name' });
  assertError(t, await api.post(RATES, { name: 'x' }), 400, { field: 'percentage', code: 'parameter_missing' });
  for (const percentage of [-1, 100.5, '1e2', 'abc', 1.23456, '', true, null])
    assertError(
      t,
      await api.post(RATES, { name: 'x', percentage: percentage === null ? undefined : percentage }),
      400,
      { field: 'percentage' },
    );
  assertError(t, await api.post(RATES, { name: 'x', percentage: 5, type: 'both' }), 400, { field: 'type' });
  assertError(t, await api.post(RATES, { name: 'x', percentage: 5, country: 'USA' }), 400, { field: 'country' });
  // Stripe's `inclusive` would be dropped unseen and the rate added on top: refused, naming it and the field to use.
  assertError(t, await api.post(RATES, { name: 'VAT', percentage: 19, inclusive: true }), 400, {
    field: 'inclusive',
    message: /is not a tax rate field; use .*\btype\b/,
  });
  t.is((await api.get<{ data: unknown[] }>(RATES)).body.data.length, 0, 'nothing was created');
  t.is((await api.post<TaxRate>(RATES, { name: 'zero', percentage: 0 })).body.percentage, 0);
  t.is((await api.post<TaxRate>(RATES, { name: 'all', percentage: 100 })).body.percentage, 100);
  t.is((await api.get(`${RATES}/not-a-uuid`)).status, 404);
});

test('tax rates: list filters and pages, and each tenant and environment sees only its own', async (t) => {
  const weir = await startTestWeir(t);
  const { api, live } = await createMerchant(weir.url);
  const other = await createMerchant(weir.url, 'Other Shop');
  const ids: string[] = [];
  for (const [name, percentage, type] of [
    ['A', 5, 'exclusive'],
    ['B', 10, 'inclusive'],
    ['C', 20, 'exclusive'],
  ] as const)
    ids.push((await api.post<TaxRate>(RATES, { name, percentage, type })).body.id);
  await api.put(`${RATES}/${ids[2]}/deactivate`, {});
  const all = await api.get<Page<TaxRate>>(RATES);
  t.is(all.status, 200);
  t.like(all.body, { page: 1, count: 3, hasMore: false });
  t.deepEqual(all.body.data.map((r) => r.name).sort(), ['A', 'B', 'C']);
  t.deepEqual((await api.get<Page<TaxRate>>(`${RATES}?isActive=true`)).body.data.map((r) => r.name).sort(), ['A', 'B']);
  t.deepEqual(
    (await api.get<Page<TaxRate>>(`${RATES}?type=inclusive`)).body.data.map((r) => r.name),
    ['B'],
  );
  t.deepEqual((await api.get<Page<TaxRate>>(`${RATES}?ids=${ids[0]},${ids[2]}`)).body.data.map((r) => r.name).sort(), [
    'A',
    'C',
  ]);
  const first = await api.get<Page<TaxRate>>(`${RATES}?limit=2&page=1`);
  t.like(first.body, { limit: 2, count: 3, hasMore: true });
  t.is(first.body.data.length, 2);
  t.is((await api.get<Page<TaxRate>>(`${RATES}?limit=2&page=2`)).body.data.length, 1);
  assertError(t, await api.get(`${RATES}?limit=0`), 400, { field: 'limit' });
  assertError(t, await api.get(`${RATES}?isActive=maybe`), 400);

  // Another organization, and this one's live environment, see none of them.
  t.is((await other.api.get<Page<TaxRate>>(RATES)).body.count, 0);
  t.is((await live.get<Page<TaxRate>>(RATES)).body.count, 0);
  t.is((await other.api.get(`${RATES}/${ids[0]}`)).status, 404);
  t.is((await other.api.put(`${RATES}/${ids[0]}`, { name: 'mine' })).status, 404);
  t.is((await other.api.put(`${RATES}/${ids[0]}/deactivate`, {})).status, 404);
  // Nor can they tax with them.
  assertError(t, await other.api.post(SESSIONS, sessionWith([line('100000000')], { taxRateIds: [ids[0]] })), 400, {
    field: 'taxRateIds[0]',
    code: 'resource_missing',
  });
});

test('a session with an exclusive rate: tax added per line, rounded half up, and asked of the payer', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const rate = (await api.post<TaxRate>(RATES, { name: 'Sales tax', percentage: 8.25 })).body;
  // 1.23 × 3 = 3.69 USDC at 8.25% is 0.304425 exactly; tax rounds half up at USDC's 10^-6 (its coarsest asset).
  const created = await api.post<TaxedSession>(
    SESSIONS,
    sessionWith([line('123000000', 3), line('5000', 1), line('1000000', 1, { taxRateIds: [] })], {
      taxRateIds: [rate.id],
    }),
  );
  t.is(created.status, 200, JSON.stringify(created.body));
  const s = created.body;
  const [a, b, c] = s.lineItems.data;
  t.like(a, { amountSubtotal: '369000000', amountTax: '30442500', amountTotal: '399442500' });
  t.like(a!.taxRates![0], { id: rate.id, percentage: 8.25, type: 'exclusive', isDefault: true, amount: '30442500' });
  // 0.00005 × 8.25% = 0.000004125: half up at USDC's 10^-6 is 0.000004.
  t.like(b, { amountSubtotal: '5000', amountTax: '400', amountTotal: '5400' });
  // A line's own empty list: no tax on it.
  t.like(c, { amountSubtotal: '1000000', amountTax: '0', amountTotal: '1000000' });
  t.deepEqual(c!.taxRates, []);
  t.is(s.amountSubtotal, '370005000');
  t.is(s.amountDetails.amountTax, '30442900');
  t.is(s.amountTotal, '400447900');
  t.is(s.amountDetails.amountTotal, '400447900');
  t.is(s.paymentIntent.amount, '400447900');

  // The payer is asked for the taxed total: 400.447900 USDC in 6-decimal units.
  const usdc = (
    await api.get<{ addresses: { asset: { id: string; currency: string } }[] }>(`${SESSIONS}/${s.id}`)
  ).body.addresses.find((x) => x.asset.currency === 'usdc')!;
  const { apiClient } = await import('../support/api-client.ts');
  const reveal = await apiClient(weir.url).post<{ amountDueRaw: string }>(`/checkout/${s.id}/payment-method`, {
    assetId: usdc.asset.id,
  });
  t.is(reveal.status, 200, JSON.stringify(reveal.body));
  t.is(reveal.body.amountDueRaw, '4004479');

  // Half up: 0.000007 at 8.25% is 0.0000005775, which rounds to 0.000001.
  const half = await api.post<TaxedSession>(SESSIONS, sessionWith([line('700', 1)], { taxRateIds: [rate.id] }));
  t.is(half.body.lineItems.data[0]!.amountTax, '100');
  t.is(half.body.amountTotal, '800');
});

test('a session with an inclusive rate: tax is reported, the total is the price', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const vat = (await api.post<TaxRate>(RATES, { name: 'VAT', percentage: 19, type: 'inclusive' })).body;
  const created = await api.post<TaxedSession>(
    SESSIONS,
    sessionWith([line('1000000000', 1, { taxRateIds: [vat.id] })]),
  );
  t.is(created.status, 200, JSON.stringify(created.body));
  const s = created.body;
  // 10 × 19 / 119 = 1.596638655…: 1.596639 at USDC's 10^-6.
  t.like(s.lineItems.data[0], { amountSubtotal: '1000000000', amountTax: '159663900', amountTotal: '1000000000' });
  t.like(s.lineItems.data[0]!.taxRates![0], { isDefault: false, type: 'inclusive', amount: '159663900' });
  t.is(s.amountDetails.amountTax, '159663900');
  t.is(s.amountTotal, '1000000000');
  t.is(s.paymentIntent.amount, '1000000000');

  // Inclusive and exclusive together: the exclusive rate taxes the net price.
  const sales = (await api.post<TaxRate>(RATES, { name: 'Levy', percentage: 10 })).body;
  const both = await api.post<TaxedSession>(
    SESSIONS,
    sessionWith([line('1190000000')], { taxRateIds: [vat.id, sales.id] }),
  );
  t.is(both.status, 200, JSON.stringify(both.body));
  // 11.90 contains 1.90 VAT; the levy is 10% of the 10.00 net.
  t.like(both.body.lineItems.data[0], { amountTax: '290000000', amountTotal: '1290000000' });
  t.is(both.body.amountTotal, '1290000000');
});

test('a session refuses unknown, inactive, malformed or repeated tax rate ids, naming the field', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const rate = (await api.post<TaxRate>(RATES, { name: 'T', percentage: 5 })).body;
  const inactive = (await api.post<TaxRate>(RATES, { name: 'Old', percentage: 5, isActive: false })).body;
  const unknown = '7d0c2d4e-1f5a-4c1e-9a59-3a2b6c7d8e9f';
  assertError(t, await api.post(SESSIONS, sessionWith([line('100000000')], { taxRateIds: [unknown] })), 400, {
    field: 'taxRateIds[0]',
    code: 'resource_missing',
  });
  assertError(t, await api.post(SESSIONS, sessionWith([line('100000000')], { taxRateIds: [inactive.id] })), 400, {
    field: 'taxRateIds[0]',
    code: 'tax_rate_inactive',
  });
  assertError(
    t,
    await api.post(SESSIONS, sessionWith([line('100000000', 1, { taxRateIds: [rate.id, inactive.id] })])),
    400,
    { field: 'lineItems.data[0].taxRateIds[1]' },
  );
  assertError(t, await api.post(SESSIONS, sessionWith([line('100000000')], { taxRateIds: rate.id })), 400, {
    field: 'taxRateIds',
  });
  assertError(t, await api.post(SESSIONS, sessionWith([line('100000000')], { taxRateIds: [rate.id, rate.id] })), 400, {
    field: 'taxRateIds[1]',
  });
  assertError(t, await api.post(SESSIONS, sessionWith([line('100000000')], { taxRateIds: ['x'] })), 400, {
    field: 'taxRateIds[0]',
  });
});

test('a session without tax rates is as before: no tax fields on its lines, amountTax 0', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const s = (await api.post<TaxedSession>(SESSIONS, sessionWith([line('150000000', 2)]))).body;
  t.is(s.amountDetails.amountTax, '0');
  t.is(s.amountTotal, '300000000');
  t.false('taxRates' in s.lineItems.data[0]!);
});

test('the hosted checkout page shows each tax rate in its totals', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const sales = (await api.post<TaxRate>(RATES, { name: 'Sales tax', percentage: 8.25 })).body;
  const vat = (await api.post<TaxRate>(RATES, { name: 'VAT', percentage: 19, type: 'inclusive' })).body;
  const s = (
    await api.post<TaxedSession>(
      SESSIONS,
      sessionWith([line('1000000000', 1, { taxRateIds: [sales.id] }), line('1190000000', 1, { taxRateIds: [vat.id] })]),
    )
  ).body;
  const html = await (await fetch(s.url)).text();
  t.regex(html, /Subtotal<\/dt><dd><span id="subtotal">21\.90?<\/span>/);
  t.regex(html, /Sales tax \(8\.25%\)<\/dt><dd><span>0\.825<\/span>/);
  t.regex(html, /VAT \(19%, included\)<\/dt><dd><span>1\.90?<\/span>/);
  t.regex(html, /22\.725/);
});

test('a promotion code is taken off before tax: tax is of the discounted lines, and a 100% code leaves nothing to pay', async (t) => {
  // Tax stayed that of the undiscounted lines: half off 10.00 + 1.00 with 10% VAT asked 5.50 + 1.10 (VAT on 11.00,
  // for goods sold at 5.50), and a 100% code left the payer owing the VAT of goods given away.
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const vat = (await api.post<TaxRate>(RATES, { name: 'VAT', percentage: 10 })).body;
  const included = (await api.post<TaxRate>(RATES, { name: 'City tax', percentage: 5, type: 'inclusive' })).body;
  for (const [percentOff, code] of [
    [50, 'HALF'],
    [100, 'FREE'],
  ] as const)
    await api.post('/api/v1/coupons', { name: code, percentOff, promotionCodeData: { data: [{ code }] } });
  const { apiClient } = await import('../support/api-client.ts');
  const payer = apiClient(weir.url);
  const taxed = async () =>
    (
      await api.post<TaxedSession>(
        SESSIONS,
        sessionWith([line('1000000000'), line('100000000', 1, { taxRateIds: [included.id] })], {
          taxRateIds: [vat.id],
          allowPromotionCodes: true,
        }),
      )
    ).body;

  const half = await taxed();
  t.is(half.amountTotal, '1200000000', '10.00 + 1.00 VAT + 1.00 (its city tax included)');
  const applied = await payer.post(`/checkout/${half.id}/promotion-code`, { code: 'HALF' });
  t.is(applied.status, 200, JSON.stringify(applied.body));
  const s = (await api.get<TaxedSession & { status: string }>(`${SESSIONS}/${half.id}`)).body;
  // 5.50 off, split as the lines' amounts: 5.00 of the first, 0.50 of the second.
  t.like(s.lineItems.data[0], { amountSubtotal: '1000000000', amountTax: '50000000', amountTotal: '1050000000' });
  t.like(s.lineItems.data[0]!.taxRates![0], { id: vat.id, amount: '50000000' });
  // 0.50 with 5% included: 0.02381 (half up at 10^-6: 0.023810).
  t.like(s.lineItems.data[1], { amountSubtotal: '100000000', amountTax: '2381000', amountTotal: '100000000' });
  t.is(s.amountDetails.amountTax, '52381000');
  t.is(s.amountTotal, '600000000', '11.00 − 5.50 + 0.50 VAT');
  t.is(s.paymentIntent.amount, '600000000');

  const free = await taxed();
  const freed = await payer.post(`/checkout/${free.id}/promotion-code`, { code: 'FREE' });
  t.is(freed.status, 200, JSON.stringify(freed.body));
  const f = (await api.get<TaxedSession & { status: string }>(`${SESSIONS}/${free.id}`)).body;
  t.is(f.amountTotal, '0');
  t.is(f.amountDetails.amountTax, '0');
  t.is(f.status, 'complete', 'nothing left to pay completes it');
});
