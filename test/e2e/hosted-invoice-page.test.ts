import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import test from 'ava';
import type { Page } from 'playwright-core';
import { axeOf, launchChromium, screenshotFolder } from '../support/chromium.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';

type Window = { __violations: string[] };

/** CSP violations and console errors of a page, from before its first script. */
async function watch(page: Page): Promise<string[]> {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  await page.addInitScript({
    content: `window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));`,
  });
  return problems;
}

const visible = (page: Page, selector: string) => page.locator(selector).isVisible();

/** The merchant's logo, served from another origin as a merchant's own site would. */
async function startLogoSite(): Promise<{ url: string; close: () => void }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'image/svg+xml' });
    res.end(
      '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="32" viewBox="0 0 120 32"><rect width="32" height="32" rx="8" fill="#4f46e5"/><path d="M8 22 L16 10 L24 22 Z" fill="#fff"/><text x="40" y="22" font-family="sans-serif" font-size="15" font-weight="700" fill="#1d2327">Northwind</text></svg>',
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/logo.svg`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** Serious and critical accessibility violations axe-core finds on the page as it is now. */
async function seriousViolations(page: Page): Promise<string[]> {
  const results = await axeOf(page);
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

test('the invoice page in Chromium: a document at 390 px and 1280 px without sideways scrolling, and printed without the pay action or the page chrome', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Northwind Studio');
  await api.put('/api/v1/organization', {
    supportEmail: 'billing@northwind.example',
    supportPhone: '+1 555 0100',
    websiteUrl: 'https://northwind.example',
    termsUrl: 'https://northwind.example/terms',
    privacyUrl: 'https://northwind.example/privacy',
    companyIdentificationNumber: 'NW-778899',
    taxIdentificationNumber: 'VAT-DE123456789',
    addressDetails: { line1: '1 Harbour Road', city: 'Hamburg', postalCode: '20457', country: 'Germany' },
  });
  const logo = await startLogoSite();
  t.teardown(logo.close);
  t.is((await api.put('/api/v1/organization/brand', { brandColor: '#4f46e5', brandLogo: logo.url })).status, 200);
  const customer = await api.post<{ id: string }>('/api/v1/customers', {
    email: 'ada@lovelace.example',
    name: 'Ada Lovelace',
    organizationName: 'Analytical Engines Ltd',
    address: { line1: '12 St James Square', city: 'London', postalCode: 'SW1Y 4JH', country: 'GB' },
  });
  const product = await api.post<{ defaultPrice: { id: string } }>('/api/v1/products', {
    name: 'Design retainer',
    description: 'Up to 20 hours of design work in the month',
    defaultPriceData: { currency: 'usdc', unitAmount: '120000000000' },
  });
  const item = (name: string, unitAmount: string, quantity: number) => ({
    priceData: { currency: 'usdc', unitAmount, productData: { name } },
    quantity,
  });
  const invoice = await api.post<{ id: string }>('/api/v1/invoices', {
    customerId: customer.body.id,
    description: 'Studio work for March',
    dueDate: '2030-02-01',
    memo: 'Thank you for your business. Questions about this invoice? Write to billing@northwind.example.',
    footer: 'Northwind Studio GmbH · Registered in Hamburg · Payment in USDC on the network of your choice.',
    lineItems: {
      data: [
        { priceId: product.body.defaultPrice.id, quantity: 1 },
        item('Illustration, full page, for the annual report cover and two chapter openers', '15000000000', 3),
        item('Stock photo licence', '2550000000', 2),
      ],
    },
  });
  t.is(invoice.status, 200, JSON.stringify(invoice.body));
  t.is((await api.post(`/api/v1/invoices/${invoice.body.id}/finalize`)).status, 200);
  const url = `${weir.url}/invoices/${invoice.body.id}`;

  // INVOICE_SCREENSHOTS keeps them where asked; otherwise only a failing run keeps them.
  const shots = process.env.INVOICE_SCREENSHOTS ?? (await screenshotFolder(t, 'weir-invoice-shots-'));
  const browser = await launchChromium(t);
  for (const width of [390, 1280]) {
    const page = await (await browser.newContext({ viewport: { width, height: 900 } })).newPage();
    const problems = await watch(page);
    t.is((await page.goto(url))?.status(), 200);
    t.true(await visible(page, '#pay'), `${width}: pay action shown`);
    t.true(await visible(page, '#print'), `${width}: the print button, shown by invoice.js`);
    t.true(await visible(page, '#download-pdf'), `${width}: PDF link shown`);
    t.true(await visible(page, '#line-items'), `${width}: line items shown`);
    const overflow = await page.evaluate(() => {
      const doc = (
        globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }
      ).document.documentElement;
      return doc.scrollWidth - doc.clientWidth;
    });
    t.true(overflow <= 0, `${width}: no sideways scrolling (${overflow} px too wide)`);
    // Phones read each line's quantity and unit price under its name; wider screens in their columns.
    t.is(await visible(page, '#line-items td.unit >> nth=0'), width > 600, `${width}: unit price column`);
    await page.screenshot({ path: join(shots, `invoice-${width}.png`), fullPage: true });

    await page.emulateMedia({ media: 'print' });
    t.false(await visible(page, '#pay'), `${width}: no pay action in print`);
    t.false(await visible(page, 'body > header'), `${width}: no page header in print`);
    t.false(await visible(page, '.invoice-summary'), `${width}: no summary in print`);
    t.true(await visible(page, '#invoice'), `${width}: the document in print`);
    t.true(await visible(page, '#totals'), `${width}: totals in print`);
    await page.screenshot({ path: join(shots, `invoice-${width}-print.png`), fullPage: true });
    if (width === 1280) await page.pdf({ path: join(shots, 'invoice-printed.pdf'), format: 'A4' });
    await page.emulateMedia({ media: 'screen' });

    t.deepEqual(await page.evaluate(() => (globalThis as unknown as Window).__violations), [], `${width}: CSP`);
    t.deepEqual(problems, [], `${width}: console`);
    t.deepEqual(await seriousViolations(page), [], `${width}: axe-core`);
    await page.context().close();
  }

  const pdf = await fetch(`${url}/pdf`);
  t.is(pdf.headers.get('content-type'), 'application/pdf');
  await writeFile(join(shots, 'invoice-weir.pdf'), Buffer.from(await pdf.arrayBuffer()));

  // Paid: the same document, with no pay action.
  t.is((await api.post(`/api/v1/invoices/${invoice.body.id}/pay`)).status, 200);
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await page.goto(url);
  t.false(await visible(page, '#pay'));
  t.is(await page.locator('#status .badge').textContent(), 'Paid');
  t.deepEqual(await seriousViolations(page), [], 'paid: axe-core');
  await page.screenshot({ path: join(shots, 'invoice-1280-paid.png'), fullPage: true });
  await writeFile(join(shots, 'invoice-weir-paid.pdf'), Buffer.from(await (await fetch(`${url}/pdf`)).arrayBuffer()));
});
