import { randomUUID } from 'node:crypto';
import test from 'ava';
import type { Api } from './helpers.ts';
import { startInvoiceTestApp } from '../support/invoice-test-app.ts';
import { pdfText } from '../support/pdf-text.ts';
import { CUSTOMERS } from '../../src/projections/customers.projection.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { ReadModelsBehindError } from '../../src/shared/errors.ts';
import { faultyReadStore } from '../support/faulty-read-store.ts';
import { assertNoticePage, pageAnswer } from '../support/notice-page.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';

type Invoice = { id: string; number: string; status: string; url: string | null };

/** The text of an HTML page with its tags dropped and its entities read, spaces collapsed. */
const textOf = (html: string): string =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ');

/** A merchant with its business details and branding, a customer with an address, and a catalog product. */
async function merchantWithInvoiceParts(url: string, api?: Api) {
  const merchant = api ? { api } : await createMerchant(url, 'Northwind Studio');
  const ok = async <T>(answer: Promise<{ status: number; body: T }>, what: string): Promise<T> => {
    const { status, body } = await answer;
    if (status !== 200) throw new Error(`${what}: ${status} ${JSON.stringify(body)}`);
    return body;
  };
  await ok(
    merchant.api.put('/api/v1/organization', {
      supportEmail: 'billing@northwind.example',
      supportPhone: '+1 555 0100',
      websiteUrl: 'https://northwind.example',
      termsUrl: 'https://northwind.example/terms',
      privacyUrl: 'https://northwind.example/privacy',
      companyIdentificationNumber: 'NW-778899',
      taxIdentificationNumber: 'VAT-DE123456789',
      addressDetails: { line1: '1 Harbour Road', city: 'Hamburg', postalCode: '20457', country: 'Germany' },
    }),
    'business details',
  );
  await ok(merchant.api.put('/api/v1/organization/brand', { brandColor: '#7c3aed' }), 'brand');
  const customer = await ok(
    merchant.api.post<{ id: string }>('/api/v1/customers', {
      email: 'ada@lovelace.example',
      name: 'Ada Lovelace',
      organizationName: 'Analytical Engines Ltd',
      address: { line1: '12 St James Square', city: 'London', postalCode: 'SW1Y 4JH', country: 'GB' },
    }),
    'customer',
  );
  const product = await ok(
    merchant.api.post<{ id: string; defaultPrice: { id: string } }>('/api/v1/products', {
      name: 'Design retainer',
      description: 'Up to 20 hours of design work in the month',
      defaultPriceData: { currency: 'usdc', unitAmount: '120000000000' },
    }),
    'product',
  );
  return { api: merchant.api, customerId: customer.id, priceId: product.defaultPrice.id, ok };
}

test('the hosted invoice page shows the invoice as a document: number, dates, billed-to, lines, totals, memo, footer, business details, status and the pay action', async (t) => {
  const app = await startInvoiceTestApp(t);
  const { api, customerId, priceId, ok } = await merchantWithInvoiceParts(app.url);
  const draft = await ok(
    api.post<Invoice>('/api/v1/invoices', {
      customerId,
      description: 'Studio work for March',
      dueDate: '2030-02-01',
      memo: 'Thank you for your business <3',
      footer: 'Payment in USDC only. Late payments accrue no interest.',
      lineItems: {
        data: [
          { priceId, quantity: 1 },
          {
            priceData: { currency: 'usdc', unitAmount: '15000000000', productData: { name: 'Illustration' } },
            quantity: 3,
          },
          {
            priceData: { currency: 'usdc', unitAmount: '2550000000', productData: { name: 'Stock photo licence' } },
            quantity: 2,
          },
        ],
      },
    }),
    'invoice',
  );

  // A draft is no one's to see yet: no page, no PDF.
  t.is((await fetch(`${app.url}/invoices/${draft.id}`)).status, 404);
  t.is((await fetch(`${app.url}/invoices/${draft.id}/pdf`)).status, 404);

  const finalized = await ok(api.post<Invoice>(`/api/v1/invoices/${draft.id}/finalize`), 'finalize');
  t.is(finalized.url, `${app.url}/invoices/${draft.id}`, "the invoice's public url is this page");
  const page = await fetch(`${app.url}/invoices/${draft.id}`);
  t.is(page.status, 200);
  t.is(page.headers.get('content-type'), 'text/html; charset=utf-8');
  t.regex(page.headers.get('content-security-policy') ?? '', /style-src 'self'/);
  const html = await page.text();
  const text = textOf(html);
  const has = (part: string, what: string) => t.true(text.includes(part), `${what}: "${part}" in ${text}`);

  has(`Invoice number ${finalized.number}`, 'number');
  has('Date due February 1, 2030', 'due date');
  t.regex(text, /Date of issue [A-Z][a-z]+ \d{1,2}, \d{4}/, 'issue date');
  has('Billed to Ada Lovelace Analytical Engines Ltd 12 St James Square SW1Y 4JH London United Kingdom', 'billed to');
  has('ada@lovelace.example', 'customer email');
  has('Studio work for March', 'description');
  // Lines: name, product description, quantity, unit amount and amount.
  has('Design retainer Up to 20 hours of design work in the month', 'catalog line with its description');
  has('1,200.00 USDC 1,200.00 USDC', 'retainer unit price and amount');
  has('Illustration 3 × 150.00 USDC 3 150.00 USDC 450.00 USDC', 'illustration line');
  has('Stock photo licence 2 × 25.50 USDC 2 25.50 USDC 51.00 USDC', 'photo line');
  has('Subtotal 1,701.00 USDC Total 1,701.00 USDC', 'subtotal and total');
  has('Amount remaining 1,701.00 USDC', 'remaining');
  has('Thank you for your business <3', 'memo');
  has('Payment in USDC only. Late payments accrue no interest.', 'footer');
  // The business details and branding.
  has('Northwind Studio', 'business name');
  has('1 Harbour Road 20457 Hamburg Germany', 'business address');
  has('billing@northwind.example', 'support email');
  has('+1 555 0100', 'support phone');
  has('northwind.example', 'website');
  has('Company no. NW-778899', 'company number');
  has('Tax ID VAT-DE123456789', 'tax number');
  t.true(html.includes('href="https://northwind.example/terms"'), 'terms link');
  t.true(html.includes('href="https://northwind.example/privacy"'), 'privacy link');
  t.true(html.includes('href="/assets/brand/7c3aed.css"'), 'brand colour');
  t.true(
    html.includes('<span class="badge">Test mode</span>'),
    "a test invoice says so, as a test session's page does",
  );
  t.regex(html, /<link rel="stylesheet" href="\/assets\/invoice\.css\?v=[0-9a-f]+">/);
  // Status in words and the pay action.
  has('Invoice from Northwind Studio 1,701.00 USDC Due February 1, 2030', 'status');
  has('1,701.00 USDC due February 1, 2030', 'amount line');
  t.true(html.includes(`id="pay" href="/invoices/${draft.id}/pay"`), 'pay action');
  t.true(html.includes(`id="download-pdf" href="/invoices/${draft.id}/pdf"`), 'PDF link');
  t.false(/<script>|<style>|style="/.test(html), 'no inline script or style');

  // The print stylesheet is served as hosted.css is.
  const css = await fetch(`${app.url}/assets/invoice.css`);
  t.is(css.status, 200);
  t.is(css.headers.get('content-type'), 'text/css; charset=utf-8');
  t.regex(await css.text(), /@media print[\s\S]*\.invoice-summary[\s\S]*display: none/);

  // The PDF: the same document.
  const pdf = await fetch(`${app.url}/invoices/${draft.id}/pdf`);
  t.is(pdf.status, 200);
  t.is(pdf.headers.get('content-type'), 'application/pdf');
  t.is(pdf.headers.get('content-disposition'), `attachment; filename="${finalized.number}.pdf"`);
  const bytes = Buffer.from(await pdf.arrayBuffer());
  t.is(bytes.subarray(0, 5).toString('latin1'), '%PDF-');
  t.true(bytes.subarray(-8).toString('latin1').includes('%%EOF'));
  const pdfLines = pdfText(bytes);
  const inPdf = (part: string) => t.true(pdfLines.includes(part), `"${part}" in the PDF: ${JSON.stringify(pdfLines)}`);
  inPdf('Invoice');
  inPdf(finalized.number);
  inPdf('February 1, 2030');
  inPdf('Ada Lovelace');
  inPdf('Design retainer');
  inPdf('Up to 20 hours of design work in the month');
  inPdf('Illustration');
  inPdf('450.00 USDC');
  inPdf('1,701.00 USDC');
  inPdf('1,701.00 USDC due February 1, 2030');
  inPdf('Thank you for your business <3');
  inPdf('Payment in USDC only. Late payments accrue no interest.');
  inPdf('Northwind Studio');
  t.true(
    pdfLines.some((l) => l.includes('VAT-DE123456789')),
    'tax number in the PDF',
  );

  // The pay action opens a checkout session for what is due.
  const pay = await fetch(`${app.url}/invoices/${draft.id}/pay`, { redirect: 'manual' });
  t.is(pay.status, 302);
  t.regex(pay.headers.get('location') ?? '', /\/checkout\/[0-9a-f-]{36}$/);
  // The checkout's line is the invoice itself, named without a quantity.
  const checkoutHtml = await (await fetch(new URL(pay.headers.get('location') ?? '', app.url))).text();
  t.regex(checkoutHtml, /<span class="item-name">Invoice [^<]+<\/span>/);
  t.notRegex(checkoutHtml, /Invoice [^<]* × 1/);
  // The session's price and product for what is due are its own: the merchant's catalog lists none of them.
  const payerSession = (
    await api.get<{ lineItems: { data: { price: { id: string; productId: string } }[] } }>(
      `/api/v1/checkout/sessions/${/[0-9a-f-]{36}$/.exec(pay.headers.get('location') ?? '')?.[0]}`,
    )
  ).body.lineItems.data[0]!.price;
  const listed = async (path: string) =>
    (await api.get<{ data: { id: string }[] }>(path)).body.data.map((record) => record.id);
  t.false((await listed('/api/v1/products')).includes(payerSession.productId), 'no product for the invoice listed');
  t.false((await listed('/api/v1/prices')).includes(payerSession.id), 'no price for the invoice listed');
  t.is((await api.get(`/api/v1/products/${payerSession.productId}`)).status, 200, 'the session keeps its product');
  t.deepEqual(
    await listed(`/api/v1/products?ids=${payerSession.productId}`),
    [payerSession.productId],
    'a product asked for by id is listed, ad hoc or not',
  );

  // Paid out of band: the page says so, offers no pay action, and its pay link shows the document.
  await ok(api.post(`/api/v1/invoices/${draft.id}/pay`), 'mark paid');
  const paidHtml = await (await fetch(`${app.url}/invoices/${draft.id}`)).text();
  const paidText = textOf(paidHtml);
  t.regex(
    paidText,
    /Paid [A-Z][a-z]+ \d{1,2}, \d{4} This invoice was paid on [A-Z][a-z]+ \d{1,2}, \d{4}\. Thank you\./,
  );
  t.regex(paidText, /Amount paid 1,701\.00 USDC Amount remaining 0\.00 USDC/);
  t.false(paidHtml.includes('id="pay"'), 'no pay action once paid');
  const payLink = await fetch(`${app.url}/invoices/${draft.id}/pay`, { redirect: 'manual' });
  t.is(payLink.status, 200);
  t.true(textOf(await payLink.text()).includes('Invoice number INV-000001'));
  t.true(
    pdfText(Buffer.from(await (await fetch(`${app.url}/invoices/${draft.id}/pdf`)).arrayBuffer())).includes('Paid'),
  );
});

test("a voided invoice is shown as void, its pay link answers 410; unknown and malformed ids are the 404 page for the page and the PDF (the PDF's was the JSON error), the API's 404 stays JSON", async (t) => {
  const app = await startInvoiceTestApp(t);
  const { api, customerId, ok } = await merchantWithInvoiceParts(app.url);
  const invoice = await ok(
    api.post<Invoice>('/api/v1/invoices', {
      customerId,
      number: 'ACME/7#2',
      lineItems: {
        data: [{ priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Hour' } } }],
      },
    }),
    'invoice',
  );
  await ok(api.post(`/api/v1/invoices/${invoice.id}/finalize`), 'finalize');
  // A number with characters a filename cannot carry safely is downloaded under a tame name.
  const pdf = await fetch(`${app.url}/invoices/${invoice.id}/pdf`);
  t.is(pdf.headers.get('content-disposition'), 'attachment; filename="ACME_7_2.pdf"');
  await ok(api.post(`/api/v1/invoices/${invoice.id}/void`), 'void');

  const page = await fetch(`${app.url}/invoices/${invoice.id}`);
  t.is(page.status, 200);
  const html = await page.text();
  t.true(textOf(html).includes('Void This invoice was voided and can no longer be paid.'));
  t.false(html.includes('id="pay"'));
  const payLink = await fetch(`${app.url}/invoices/${invoice.id}/pay`, { redirect: 'manual' });
  t.is(payLink.status, 410);
  t.regex(await payLink.text(), /voided and can no longer be paid/);

  for (const id of [randomUUID(), 'not-an-id']) {
    for (const path of [`/invoices/${id}`, `/invoices/${id}/pdf`]) {
      const answer = await fetch(`${app.url}${path}`);
      t.is(answer.status, 404, path);
      t.regex(answer.headers.get('content-type') ?? '', /^text\/html/, path);
      t.is(answer.headers.get('content-disposition'), null, `${path}: a page, not a download`);
      const notFound = await answer.text();
      t.true(notFound.includes('<h1>Invoice not found</h1>'), path);
      t.regex(notFound, /This invoice does not exist or is no longer available\./, path);
    }
    const json = await api.get<{ code: string }>(`/api/v1/invoices/${id}`);
    t.is(json.status, 404, id);
    t.is(json.body.code, 'resource_missing', id);
  }
});

/** A finalized invoice of `api`'s merchant, in its test environment. */
async function finalizedInvoice(url: string): Promise<{ api: Api; invoice: Invoice }> {
  const { api, customerId, priceId, ok } = await merchantWithInvoiceParts(url);
  const draft = await ok(
    api.post<Invoice>('/api/v1/invoices', { customerId, lineItems: { data: [{ priceId }] } }),
    'invoice',
  );
  return { api, invoice: await ok(api.post<Invoice>(`/api/v1/invoices/${draft.id}/finalize`), 'finalize') };
}
const INVOICE_BACK = (invoice: Invoice) => `<a id="back" href="/invoices/${invoice.id}">Back to the invoice</a>`;

test('a rate limit on the invoice page, its PDF link and its pay link is a 429 page with Retry-After, in the invoice\'s frame with its Test mode badge and a way back (was the API\'s JSON); its words say when to try again as Retry-After does (were "Wait a minute" whatever it said)', async (t) => {
  const clock = createManualClock();
  // A token each minute: Retry-After says 60.
  const weir = await startTestWeir(t, { rateLimitHosted: { perSecond: 1 / 60, burst: 2 } }, { clock });
  const { invoice } = await finalizedInvoice(weir.url);
  t.is((await fetch(`${weir.url}/invoices/${invoice.id}`)).status, 200);
  t.is((await fetch(`${weir.url}/invoices/${invoice.id}/pdf`)).status, 200);
  const tooMany = {
    status: 429,
    heading: 'Too many requests',
    says: /Too many requests came from your connection in a short time\. Try again in about a minute\./,
    testMode: true,
    back: INVOICE_BACK(invoice),
  };
  for (const path of ['', '/pdf', '/pay']) {
    const answer = await pageAnswer(await fetch(`${weir.url}/invoices/${invoice.id}${path}`, { redirect: 'manual' }));
    assertNoticePage(t, answer, tooMany);
    t.is(answer.headers.get('retry-after'), '60', path);
    t.is(answer.headers.get('content-disposition'), null, `${path}: a page, not a download`);
    t.regex(answer.html, /<strong>Northwind Studio<\/strong>/);
  }
  assertNoticePage(t, await pageAnswer(await fetch(`${weir.url}/invoices/${randomUUID()}`)), {
    ...tooMany,
    testMode: false,
    back: null,
  });
  clock.advanceBy(60_000);
  t.is((await fetch(`${weir.url}/invoices/${invoice.id}`)).status, 200, 'once Retry-After has passed');
});

test('a passing failure on the invoice page is a 503 page and an unexpected error on it or its PDF a 500 page saying it was ours, without its words (were JSON)', async (t) => {
  const fault: { error: Error | null } = { error: null };
  const weir = await startTestWeir(
    t,
    {},
    { wrapReadStore: (store) => faultyReadStore(store, { get: (name) => (name === CUSTOMERS ? fault.error : null) }) },
  );
  const { invoice } = await finalizedInvoice(weir.url);
  fault.error = new ReadModelsBehindError('read models behind at position 42');
  assertNoticePage(t, await pageAnswer(await fetch(`${weir.url}/invoices/${invoice.id}`)), {
    status: 503,
    heading: 'Invoice not available just now',
    says: /This invoice cannot be shown or paid just now\. Nothing has been charged\. Please try again in a moment\./,
    testMode: true,
    back: INVOICE_BACK(invoice),
  });
  fault.error = new TypeError("Cannot read properties of undefined (reading 'address')");
  for (const path of ['', '/pdf']) {
    const failed = await pageAnswer(await fetch(`${weir.url}/invoices/${invoice.id}${path}`));
    assertNoticePage(t, failed, {
      status: 500,
      heading: 'Something went wrong',
      says: /Something went wrong on our side\. Please try again later\./,
      testMode: true,
      back: INVOICE_BACK(invoice),
    });
    t.notRegex(failed.html, /address'|TypeError/, path);
    t.is(failed.headers.get('content-disposition'), null, path);
  }
});
