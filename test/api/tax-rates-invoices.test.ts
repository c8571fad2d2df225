import test from 'ava';
import { eventually } from '../support/api-client.ts';
import { startInvoiceTestApp } from '../support/invoice-test-app.ts';
import { pdfText } from '../support/pdf-text.ts';
import { createMerchant } from '../support/weir-harness.ts';
import { assertError, createCustomer, payInFull, type Session } from './helpers.ts';

const RATES = '/api/v1/tax-rates';
const INVOICES = '/api/v1/invoices';

type TaxRate = { id: string };
type Line = {
  unitAmount: string;
  quantity: number;
  amountSubtotal: string;
  amountTotal: string;
  amountTax: string;
  taxRates: { id: string; type: string; isDefault: boolean; amount: string; percentage: number }[];
};
type Invoice = {
  id: string;
  status: string;
  amountDue: string;
  amountPaid: string;
  amountRemaining: string;
  total: string;
  subTotal: string;
  totalTax: string;
  taxRateIds: string[];
  lineItems: { data: Line[] };
};

const line = (unitAmount: string, quantity = 1, extra: Record<string, unknown> = {}) => ({
  priceData: { currency: 'usdc', unitAmount, productData: { name: `Service ${unitAmount}` } },
  quantity,
  ...extra,
});

test('an invoice with an exclusive and an inclusive rate: totals, amountDue, rounding, retax on update, duplicate', async (t) => {
  const app = await startInvoiceTestApp(t);
  const { api } = await createMerchant(app.url);
  const customerId = await createCustomer(api);
  const sales = (await api.post<TaxRate>(RATES, { name: 'Sales tax', percentage: 8.875 })).body;
  const vat = (await api.post<TaxRate>(RATES, { name: 'VAT', percentage: 20, type: 'inclusive' })).body;

  const created = await api.post<Invoice>(INVOICES, {
    customerId,
    taxRateIds: [sales.id],
    lineItems: { data: [line('333333300', 3), line('1200000000', 1, { taxRateIds: [vat.id] })] },
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  const inv = created.body;
  const [a, b] = inv.lineItems.data;
  // 9.999999 × 8.875% = 0.8874999…: half up at 10^-6 is 0.887500.
  t.like(a, { amountSubtotal: '999999900', amountTax: '88750000', amountTotal: '1088749900' });
  t.like(a!.taxRates[0], { id: sales.id, isDefault: true, type: 'exclusive', amount: '88750000' });
  // 12.00 holds 2.00 of 20% VAT; the line's own rate replaces the invoice's.
  t.like(b, { amountSubtotal: '1200000000', amountTax: '200000000', amountTotal: '1200000000' });
  t.deepEqual(
    b!.taxRates.map((r) => [r.id, r.isDefault]),
    [[vat.id, false]],
  );
  t.deepEqual(inv.taxRateIds, [sales.id]);
  t.is(inv.subTotal, '2199999900');
  t.is(inv.totalTax, '288750000');
  t.is(inv.amountDue, '2288749900');
  t.is(inv.total, '2288749900');
  t.is(inv.amountRemaining, '2288749900');

  // Other invoice-level rates: lines without their own are taxed again.
  const retaxed = await api.put<Invoice>(`${INVOICES}/${inv.id}`, { taxRateIds: [] });
  t.is(retaxed.status, 200, JSON.stringify(retaxed.body));
  t.like(retaxed.body.lineItems.data[0], { amountTax: '0', amountTotal: '999999900' });
  t.deepEqual(retaxed.body.lineItems.data[0]!.taxRates, []);
  t.like(retaxed.body.lineItems.data[1], { amountTax: '200000000', amountTotal: '1200000000' });
  t.is(retaxed.body.amountDue, '2199999900');
  t.deepEqual(retaxed.body.taxRateIds, []);
  const back = await api.put<Invoice>(`${INVOICES}/${inv.id}`, { taxRateIds: [sales.id] });
  t.is(back.body.amountDue, '2288749900');
  // New lines take the invoice's rates.
  const relined = await api.put<Invoice>(`${INVOICES}/${inv.id}`, { lineItems: { data: [line('100000000', 2)] } });
  t.like(relined.body.lineItems.data[0], { amountTax: '17750000', amountTotal: '217750000' });
  t.is(relined.body.amountDue, '217750000');

  const copy = await api.post<Invoice>(`${INVOICES}/${inv.id}/duplicate`, {});
  t.is(copy.status, 200, JSON.stringify(copy.body));
  t.deepEqual(copy.body.taxRateIds, [sales.id]);
  t.is(copy.body.amountDue, '217750000');
  t.is(copy.body.totalTax, '17750000');

  // The payer is asked for the taxed total.
  await api.post(`${INVOICES}/${inv.id}/finalize`, {});
  const pay = await fetch(`${app.url}/invoices/${inv.id}/pay`, { redirect: 'manual' });
  t.is(pay.status, 302);
  const sessionId = pay.headers.get('location')!.split('/').pop()!;
  const session = (await api.get<Session>(`/api/v1/checkout/sessions/${sessionId}`)).body;
  t.is(session.amountTotal, '217750000');
  await payInFull({ url: app.url, bus: app.bus }, api, session);
  const paid = await eventually(async () => {
    const invoice = (await api.get<Invoice>(`${INVOICES}/${inv.id}`)).body;
    return invoice.status === 'paid' ? invoice : undefined;
  }, 'the invoice to be paid');
  t.is(paid.amountPaid, '217750000');
});

test("an invoice refuses unknown, inactive or other tenants' tax rates, naming the field; without rates it is as before", async (t) => {
  const app = await startInvoiceTestApp(t);
  const { api } = await createMerchant(app.url);
  const other = await createMerchant(app.url, 'Other Shop');
  const customerId = await createCustomer(api);
  const theirs = (await other.api.post<TaxRate>(RATES, { name: 'Theirs', percentage: 5 })).body;
  const inactive = (await api.post<TaxRate>(RATES, { name: 'Old', percentage: 5, isActive: false })).body;
  assertError(
    t,
    await api.post(INVOICES, { customerId, taxRateIds: [theirs.id], lineItems: { data: [line('100000000')] } }),
    400,
    { field: 'taxRateIds[0]', code: 'resource_missing' },
  );
  assertError(
    t,
    await api.post(INVOICES, {
      customerId,
      lineItems: { data: [line('100000000', 1, { taxRateIds: [inactive.id] })] },
    }),
    400,
    { field: 'lineItems.data[0].taxRateIds[0]', code: 'tax_rate_inactive' },
  );
  const plain = (await api.post<Invoice>(INVOICES, { customerId, lineItems: { data: [line('150000000', 2)] } })).body;
  t.like(plain, { amountDue: '300000000', total: '300000000', subTotal: '300000000', totalTax: '0' });
  t.deepEqual(plain.taxRateIds, []);
  t.like(plain.lineItems.data[0], { amountSubtotal: '300000000', amountTax: '0', amountTotal: '300000000' });
  assertError(t, await api.put(`${INVOICES}/${plain.id}`, { taxRateIds: [inactive.id] }), 400, {
    field: 'taxRateIds[0]',
  });
});

test('the hosted invoice page and its PDF show each tax rate between subtotal and total', async (t) => {
  const app = await startInvoiceTestApp(t);
  const { api } = await createMerchant(app.url);
  const customerId = await createCustomer(api);
  const sales = (await api.post<TaxRate>(RATES, { name: 'Sales tax', percentage: 8.25 })).body;
  const vat = (await api.post<TaxRate>(RATES, { name: 'VAT', percentage: 19, type: 'inclusive' })).body;
  const inv = (
    await api.post<Invoice>(INVOICES, {
      customerId,
      lineItems: {
        data: [line('1000000000', 1, { taxRateIds: [sales.id] }), line('1190000000', 1, { taxRateIds: [vat.id] })],
      },
    })
  ).body;
  t.is(inv.amountDue, '2272500000');
  await api.post(`${INVOICES}/${inv.id}/finalize`, {});
  const html = await (await fetch(`${app.url}/invoices/${inv.id}`)).text();
  t.regex(html, /<th scope="row">Subtotal<\/th><td id="subtotal">21\.90 USDC<\/td>/);
  t.regex(html, /<tr class="tax"><th scope="row">Sales tax \(8\.25%\)<\/th><td id="tax-0">0\.825 USDC<\/td>/);
  t.regex(html, /<tr class="tax-included"><th scope="row">VAT \(19%, included\)<\/th><td id="tax-1">1\.90 USDC<\/td>/);
  t.regex(html, /<td id="total">22\.725 USDC<\/td>/);
  const lines = pdfText(Buffer.from(await (await fetch(`${app.url}/invoices/${inv.id}/pdf`)).arrayBuffer()));
  for (const part of ['Sales tax (8.25%)', '0.825 USDC', 'VAT (19%, included)', '1.90 USDC', '22.725 USDC'])
    t.true(lines.includes(part), `"${part}" in the PDF: ${JSON.stringify(lines)}`);
});

test('a draft whose rates were deactivated since can still be edited with its lines as they are; an inactive rate is refused on other goods, named', async (t) => {
  // Every update sending lineItems looked each rate up again: once the merchant deactivated a rate a
  // draft used, any such edit (the dashboard's, of the memo alone) was refused tax_rate_inactive.
  const app = await startInvoiceTestApp(t);
  const { api } = await createMerchant(app.url);
  const customerId = await createCustomer(api);
  const vat = (await api.post<TaxRate>(RATES, { name: 'VAT', percentage: 10 })).body;
  const reduced = (await api.post<TaxRate>(RATES, { name: 'Reduced', percentage: 5 })).body;
  const inv = (
    await api.post<Invoice>(INVOICES, {
      customerId,
      taxRateIds: [vat.id],
      lineItems: { data: [line('100000000', 1, { taxRateIds: [reduced.id] }), line('200000000')] },
    })
  ).body;
  const [books, goods] = (inv.lineItems.data as (Line & { priceId: string })[]).map((l) => l.priceId);
  const off = (id: string) => api.put(`${RATES}/${id}`, { isActive: false });
  // As the dashboard sends a draft back: its lines with their own rates, the invoice's rates kept.
  const asItWas = [
    { priceId: books, quantity: 2, taxRateIds: [reduced.id] },
    { priceId: goods, quantity: 1 },
  ];
  t.is((await off(reduced.id)).status, 200);
  const edited = await api.put<Invoice>(`${INVOICES}/${inv.id}`, { memo: 'Thanks', lineItems: { data: asItWas } });
  t.is(edited.status, 200, JSON.stringify(edited.body));
  t.like(edited.body.lineItems.data[0], { amountSubtotal: '200000000', amountTax: '10000000' });
  t.like(edited.body.lineItems.data[1], { amountSubtotal: '200000000', amountTax: '20000000' });
  t.is(edited.body.amountDue, '430000000');
  // The invoice's own rate alike, sent again or not.
  t.is((await off(vat.id)).status, 200);
  const kept = await api.put<Invoice>(`${INVOICES}/${inv.id}`, { memo: 'Thank you', lineItems: { data: asItWas } });
  t.is(kept.status, 200, JSON.stringify(kept.body));
  t.is(kept.body.amountDue, '430000000');
  const again = await api.put<Invoice>(`${INVOICES}/${inv.id}`, { taxRateIds: [vat.id], lineItems: { data: asItWas } });
  t.is(again.status, 200, JSON.stringify(again.body));
  t.is(again.body.amountDue, '430000000');

  // Not on other goods: the goods never held the reduced rate, nor a new line.
  const moved = await api.put(`${INVOICES}/${inv.id}`, {
    lineItems: { data: [{ priceId: goods, quantity: 1, taxRateIds: [reduced.id] }] },
  });
  assertError(t, moved, 400, { field: 'lineItems.data[0].taxRateIds[0]', code: 'tax_rate_inactive' });
  t.regex(
    (moved.body as { message: string }).message,
    /tax rate "Reduced" \(5%, [0-9a-f-]{36}\) is not active: leave it out, or activate it again \(PUT \/api\/v1\/tax-rates\/[0-9a-f-]{36} with isActive true\)/,
  );
  assertError(
    t,
    await api.put(`${INVOICES}/${inv.id}`, {
      lineItems: { data: [line('300000000', 1, { taxRateIds: [reduced.id] })] },
    }),
    400,
    { field: 'lineItems.data[0].taxRateIds[0]', code: 'tax_rate_inactive' },
  );
  // Nor on another invoice.
  assertError(
    t,
    await api.post(INVOICES, { customerId, taxRateIds: [vat.id], lineItems: { data: [line('100000000')] } }),
    400,
    { field: 'taxRateIds[0]', code: 'tax_rate_inactive' },
  );
  const stored = (await api.get<Invoice>(`${INVOICES}/${inv.id}`)).body;
  t.is(stored.amountDue, '430000000', 'nothing written by the refusals');
});
