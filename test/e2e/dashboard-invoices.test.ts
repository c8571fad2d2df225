import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import type { Page } from 'playwright-core';
import { apiClient, eventually } from '../support/api-client.ts';
import {
  type ActiveSubscription,
  chromiumPerFile,
  expectAccessible,
  newInvoiceForNewCustomer,
  paidSubscription,
  screenshot,
  startDashboard,
  watchPage,
} from '../support/dashboard.ts';

const browser = chromiumPerFile(test);

type Invoice = {
  id: string;
  number: string;
  status: string;
  customerId: string;
  customer: { email: string } | null;
  amountDue: string;
  memo: string | null;
  footer: string | null;
  sentAt: string | null;
  recurring: { intervalCount: number } | null;
  paymentMethods: { chainIds: number[] };
  lineItems: { data: { description: string | null; quantity: number; unitAmount: string; priceId?: string | null }[] };
};
type List<T> = { count: number; data: T[] };
type Subscription = { id: string; status: string; cancelAtPeriodEnd: boolean; cancellationComment: string | null };

/** Submits the page's form with the button named `name` and answers the POST's status, once the page it leads to is loaded. */
async function submit(page: Page, name: string): Promise<number> {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    page.getByRole('button', { name, exact: true }).click(),
  ]);
  await page.waitForLoadState('load');
  return response.status();
}

test('Invoices: create a draft of two lines (a bad amount first), edit, finalize, send, mark paid; duplicate, mark uncollectible and void another; a third with its number, due date and currency set by hand; the audit trail has each change; a viewer is refused', async (t) => {
  const dash = await startDashboard(t);
  const { api } = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const product = await api.post<{ id: string; defaultPrice: { id: string } }>('/api/v1/products', {
    name: 'Espresso beans 1 kg',
    defaultPriceData: { currency: 'usdc', unitAmount: '2400000000' },
  });
  t.is(product.status, 200);
  const existing = await api.post<{ id: string }>('/api/v1/customers', {
    email: 'existing@harbour.example',
    name: 'Existing Café',
  });
  const customersBefore = (await api.get<List<unknown>>('/api/v1/customers')).body.count;

  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  await page.goto(`${dash.url}/dashboard/invoices`);
  await page.getByText('No invoices yet.').waitFor();
  await page.getByRole('link', { name: 'New invoice' }).click();
  await page.getByRole('heading', { name: 'New invoice' }).waitFor();
  // The amounts' hint sits in the card's padding, at 1280 and 390 px (it ran into the card's edge).
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    const hint = await page.locator('#line-amount-hint').boundingBox();
    const lines = await page.locator('#editor-lines').boundingBox();
    t.true(hint!.x - lines!.x >= 15, `the hint ${hint!.x - lines!.x} px in at ${width} px`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });

  // Two lines: a catalog price and an ad hoc line with an amount no decimal reading can take.
  await page.getByLabel("Or a new customer's email").fill('ada@lovelace.example');
  await page.getByLabel('Line 1 product or price').selectOption(product.body.defaultPrice.id);
  await page.getByLabel('Line 1 quantity').fill('2');
  await page.getByLabel('Line 2 name').fill('Grinder service');
  await page.getByLabel('Line 2 amount').fill('12,50');
  await page.getByLabel('Memo').fill('Thank you for your order');
  t.is(await submit(page, 'Add line'), 200);
  t.is(await page.locator('.line-editor tbody tr').count(), 4, 'one more row');
  t.is(await page.getByLabel('Line 2 name').inputValue(), 'Grinder service', 'kept while adding a row');
  t.is(await submit(page, 'Save draft'), 400);
  await page
    .getByText('Line 2: must be written with a dot for decimals and no separators, such as 1500 or 1.5')
    .waitFor();
  t.is(await page.getByLabel('Line 2 amount').getAttribute('aria-invalid'), 'true');
  t.is(await page.getByLabel('Line 2 amount').inputValue(), '12,50', 'the form is kept as typed');
  t.is(await page.getByLabel("Or a new customer's email").inputValue(), 'ada@lovelace.example');
  t.is(await page.getByLabel('Memo').inputValue(), 'Thank you for your order');
  t.is((await api.get<List<unknown>>('/api/v1/invoices')).body.count, 0, 'no invoice written');
  t.is((await api.get<List<unknown>>('/api/v1/customers')).body.count, customersBefore, 'no customer written');
  await expectAccessible(t, page, 'invoice editor with an error');
  await screenshot(t, page, 'invoices-editor-error');

  // A fault only the API finds: its field path lands on the row's input; the new customer is not made either.
  await page.getByLabel('Line 2 amount').fill('12.50');
  await page.getByLabel('Line 1 quantity').fill('0');
  t.is(await submit(page, 'Save draft'), 400);
  await page.locator('.line-editor .error', { hasText: /^Line 1: / }).waitFor();
  t.is(await page.getByLabel('Line 1 quantity').getAttribute('aria-invalid'), 'true');
  t.is((await api.get<List<unknown>>('/api/v1/invoices')).body.count, 0, 'no invoice written');
  t.is((await api.get<List<unknown>>('/api/v1/customers')).body.count, customersBefore, 'no customer written');
  await page.getByLabel('Line 1 quantity').fill('2');
  t.is(await submit(page, 'Save draft'), 303);
  await page.getByText('Draft saved.').waitFor();
  const id = new URL(page.url()).pathname.split('/').at(-1)!;
  let invoice = (await api.get<Invoice>(`/api/v1/invoices/${id}`)).body;
  t.like(invoice, { status: 'draft', amountDue: '6050000000', memo: 'Thank you for your order' });
  t.is(invoice.customer?.email, 'ada@lovelace.example', 'the customer was made from the email');
  t.deepEqual(
    invoice.lineItems.data.map((l) => [l.description, l.quantity, l.unitAmount]),
    [
      ['Espresso beans 1 kg', 2, '2400000000'],
      ['Grinder service', 1, '1250000000'],
    ],
  );

  // Edit: a footer, a quarterly repeat, the test network only.
  await page.getByRole('link', { name: 'Edit' }).click();
  await page.getByRole('heading', { name: `Edit invoice ${invoice.number}` }).waitFor();
  t.is(await page.getByLabel('Line 1 quantity').inputValue(), '2');
  await page.getByLabel('Footer').fill('Harbour Coffee Roasters · VAT 123');
  await page.getByLabel('Repeats').selectOption('quarter');
  await page.getByLabel('Weir Testnet').check();
  await page.getByLabel('Line 1 quantity').fill('3');
  await expectAccessible(t, page, 'invoice editor');
  await screenshot(t, page, 'invoices-editor');
  t.is(await submit(page, 'Save draft'), 303);
  invoice = (await api.get<Invoice>(`/api/v1/invoices/${id}`)).body;
  t.like(invoice, {
    amountDue: '8450000000',
    footer: 'Harbour Coffee Roasters · VAT 123',
    recurring: { intervalCount: 3 },
    paymentMethods: { chainIds: [7357] },
  });

  t.is(await submit(page, 'Finalize'), 303);
  await page.getByText('Invoice finalized').waitFor();
  t.is((await api.get<Invoice>(`/api/v1/invoices/${id}`)).body.status, 'open');
  const pdf = await page.request.get((await page.getByRole('link', { name: 'Download PDF' }).getAttribute('href'))!);
  t.is(pdf.headers()['content-type'], 'application/pdf');
  const document = await page.request.get(
    (await page.getByRole('link', { name: 'Invoice page' }).getAttribute('href'))!,
  );
  t.is(document.status(), 200);

  t.is(await submit(page, 'Send'), 303);
  await page.getByText('Invoice sent.').waitFor();
  t.truthy((await api.get<Invoice>(`/api/v1/invoices/${id}`)).body.sentAt);
  t.true((await readdir(join(dash.weir.dataDir, 'outbox'))).length > 0, 'mailed to the outbox');
  await expectAccessible(t, page, 'invoice detail');
  await screenshot(t, page, 'invoices-detail');

  t.is(await submit(page, 'Mark paid'), 303);
  await page.getByText('Invoice marked paid.').waitFor();
  t.is((await api.get<Invoice>(`/api/v1/invoices/${id}`)).body.status, 'paid');

  // Duplicate: a new draft with a new number; that one is finalized, then voided.
  t.is(await submit(page, 'Duplicate'), 303);
  await page.getByText('A new draft was made from the invoice.').waitFor();
  const copyId = new URL(page.url()).pathname.split('/').at(-1)!;
  t.not(copyId, id);
  const copy = (await api.get<Invoice>(`/api/v1/invoices/${copyId}`)).body;
  t.like(copy, { status: 'draft', amountDue: '8450000000' });
  t.not(copy.number, invoice.number);
  t.is(await submit(page, 'Finalize'), 303);
  t.is(await submit(page, 'Mark uncollectible'), 303);
  t.is((await api.get<Invoice>(`/api/v1/invoices/${copyId}`)).body.status, 'uncollectible');
  t.is(await submit(page, 'Void'), 303);
  await page.getByText('Invoice voided.').waitFor();
  t.is((await api.get<Invoice>(`/api/v1/invoices/${copyId}`)).body.status, 'void');

  // A third, for a customer already known: an ad hoc line in DAI, its number typed, due in 14 days.
  await page.goto(`${dash.url}/dashboard/invoices/new`);
  await page.getByLabel('Customer', { exact: true }).selectOption(existing.body.id);
  await page.getByLabel('Line 1 name').fill('Cupping session');
  await page.getByLabel('Line 1 amount').fill('30');
  await page.getByLabel('Invoice number').fill('HC-CUSTOM-7');
  await page.getByLabel('Due in (days)').fill('14');
  await page.getByLabel('Currency').selectOption('dai');
  t.is(await submit(page, 'Save draft'), 303);
  const thirdId = new URL(page.url()).pathname.split('/').at(-1)!;
  const third = (
    await api.get<Invoice & { currency: string; dueDate: string; createdAt: string }>(`/api/v1/invoices/${thirdId}`)
  ).body;
  t.like(third, { number: 'HC-CUSTOM-7', currency: 'dai', customerId: existing.body.id, amountDue: '3000000000' });
  t.is(Math.round((Date.parse(third.dueDate) - dash.clock.now()) / 86_400_000), 14, 'due in 14 days');

  await page.goto(`${dash.url}/dashboard/invoices?status=paid`);
  t.is(await page.locator('#invoices tbody tr').count(), 1);
  await page.goto(`${dash.url}/dashboard/invoices`);
  t.is(await page.locator('#invoices tbody tr').count(), 3);
  await expectAccessible(t, page, 'invoices');
  await screenshot(t, page, 'invoices');

  // The audit trail has each of the first invoice's changes, made by the owner from their address.
  await page.goto(`${dash.url}/dashboard/audit-trail?recordType=invoice&recordId=${id}`);
  const changes = page.locator('#audit-trail tbody tr');
  const titles = await changes.locator('td:nth-child(3) strong').allTextContents();
  t.deepEqual(titles, [
    'Invoice marked as paid',
    'Invoice sent',
    'Next recurring invoice scheduled',
    'Invoice finalized',
    'Invoice updated',
    'Invoice created',
  ]);
  const edit = changes.filter({ hasText: 'Invoice updated' });
  t.true(
    (await edit.locator('ins').allTextContents()).some((v) => v.includes('Harbour Coffee Roasters · VAT 123')),
    'what the edit changed: the footer as typed',
  );
  for (const text of await changes.allTextContents()) {
    t.true(text.includes(owner.email), `by the owner: ${text}`);
    t.true(text.includes('from 127.0.0.1'), `from their address: ${text}`);
  }
  t.deepEqual(problems(), [], 'no console error or CSP violation');

  // A viewer reads, but creates and changes nothing.
  const viewer = await dash.signedIn(browser(), await dash.user({ role: 'viewer' }));
  await viewer.goto(`${dash.url}/dashboard/invoices/${copyId}`);
  t.is(await viewer.getByRole('button', { name: 'Duplicate' }).count(), 0);
  t.is((await viewer.goto(`${dash.url}/dashboard/invoices/new`))?.status(), 403);
  const csrf = await viewer.locator('input[name=_csrf]').first().inputValue();
  const refused = await viewer.request.post(`${dash.url}/dashboard/invoices/${id}/void`, { form: { _csrf: csrf } });
  t.is(refused.status(), 403);
  t.is((await api.get<Invoice>(`/api/v1/invoices/${id}`)).body.status, 'paid');
  t.is((await api.get<List<unknown>>('/api/v1/invoices')).body.count, 3);
});

test("the invoice editor says a line's own tax under its product and saves a draft whose rate, price and customer are off its lists", async (t) => {
  const dash = await startDashboard(t);
  const { api } = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const customer = (await api.post<{ id: string }>('/api/v1/customers', { email: 'tax@harbour.example' })).body;
  const vat = (await api.post<{ id: string }>('/api/v1/tax-rates', { name: 'VAT', percentage: 20 })).body;
  const reduced = (await api.post<{ id: string }>('/api/v1/tax-rates', { name: 'Reduced', percentage: 5 })).body;
  const item = (name: string, unitAmount: string, taxRateIds?: string[]) => ({
    priceData: { currency: 'usdc', unitAmount, productData: { name } },
    quantity: 1,
    ...(taxRateIds ? { taxRateIds } : {}),
  });
  const binding = (
    await api.post<{ defaultPriceId: string }>('/api/v1/products', {
      name: 'Binding',
      defaultPriceData: { currency: 'usdc', unitAmount: '500000000' },
    })
  ).body;
  const draft = await api.post<Invoice>('/api/v1/invoices', {
    customerId: customer.id,
    taxRateIds: [vat.id],
    lineItems: {
      data: [
        item('Exempt service', '1000000000', []),
        item('Books', '2000000000', [reduced.id]),
        item('Goods', '3000000000'),
        { priceId: binding.defaultPriceId, quantity: 1 },
      ],
    },
  });
  t.is(draft.status, 200, JSON.stringify(draft.body));
  t.is((await api.put(`/api/v1/tax-rates/${reduced.id}`, { isActive: false })).status, 200);
  // A price deactivated since and a customer past the editor's first 200 had no option: the line was
  // drawn "Ad hoc" and dropped on save, and the customer asked for again.
  t.is((await api.put(`/api/v1/prices/${binding.defaultPriceId}`, { isActive: false })).status, 200);
  dash.clock.advanceBy(60_000); // so the 200 later customers fill the list, newest first
  for (let i = 0; i < 200; i += 1) await api.post('/api/v1/customers', { email: `later-${i}@harbour.example` });

  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  await page.goto(`${dash.url}/dashboard/invoices/${draft.body.id}/edit`);
  t.deepEqual(await page.locator('.line-editor .line-tax').allTextContents(), [
    'Tax: exempt',
    'Tax: Reduced 5% (inactive)',
  ]);
  t.is(
    await page.locator('select[name="line-3-price"] option:checked').textContent(),
    'Binding · 5.00 USDC (inactive)',
  );
  t.is(await page.locator('select[name="customerId"] option:checked').textContent(), 'tax@harbour.example');
  await expectAccessible(t, page, 'invoice editor with lines taxed their own way');
  await screenshot(t, page, 'invoices-editor-line-tax');
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.getByLabel('Memo').fill('Thanks');
  t.is(await submit(page, 'Save draft'), 303);
  const saved = (await api.get<Invoice>(`/api/v1/invoices/${draft.body.id}`)).body;
  t.like(saved, { memo: 'Thanks', amountDue: '7300000000', customerId: customer.id });
  t.is(saved.lineItems.data[3]?.priceId, binding.defaultPriceId);
  t.deepEqual(problems(), [], 'no console error or CSP violation');
});

test('Subscriptions: a paid subscription is listed with its period and invoices; a reason too long is named and kept; cancel at period end, resume, end now', async (t) => {
  const dash = await startDashboard(t);
  const { api } = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const { id, session } = await paidSubscription(t, dash.weir, api, {
    name: 'Coffee club',
    unitAmount: '1900000000',
    email: 'member@harbour.example',
    allowPromotionCodes: true,
    // A 10% code on the first payment: its period shows the discounted amount, said to be the first payment's only.
    beforePaying: async (open) => {
      await api.post('/api/v1/coupons', {
        name: 'Welcome',
        percentOff: 10,
        promotionCodeData: { data: [{ code: 'HELLO' }] },
      });
      const applied = await apiClient(dash.url).post(`/checkout/${open.id}/promotion-code`, { code: 'HELLO' });
      t.is(applied.status, 200, JSON.stringify(applied.body));
    },
  });
  const read = () => api.get<Subscription>(`/api/v1/subscriptions/${id}`).then((r) => r.body);

  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  await page.goto(`${dash.url}/dashboard/subscriptions?status=active`);
  await page.getByRole('link', { name: 'Coffee club' }).waitFor();
  await expectAccessible(t, page, 'subscriptions');
  await screenshot(t, page, 'subscriptions');

  await page.getByRole('link', { name: 'Coffee club' }).click();
  const periods = page.locator('#subscription-periods tbody tr');
  t.is(await periods.count(), 1);
  t.regex(
    (await periods.textContent()) ?? '',
    /Checkout session.*Paid.*17\.10 USDC.*1\.90 USDC promotion code, first payment only/s,
  );
  t.regex((await page.locator('#subscription-summary').textContent()) ?? '', /Amount19\.00 USDC per month/);
  t.is(
    await periods.getByRole('link', { name: 'Checkout session' }).getAttribute('href'),
    `/dashboard/checkout-sessions/${session.id}`,
    'the period links the session that billed it, as an invoice period links its invoice',
  );

  // A reason over the API's 500 characters (past the field's own limit, as a script could send it): named, kept, nothing written.
  const tooLong = 'x'.repeat(501);
  await page.getByLabel('Reason (optional)').evaluate((input) => input.removeAttribute('maxlength'));
  await page.getByLabel('Reason (optional)').fill(tooLong);
  t.is(await submit(page, 'Cancel at period end'), 400);
  t.regex((await page.locator('#field-comment-error').textContent()) ?? '', /the reason/);
  t.is(await page.getByLabel('Reason (optional)').inputValue(), tooLong);
  t.like(await read(), { status: 'active', cancelAtPeriodEnd: false, cancellationComment: null });

  await page.getByLabel('Reason (optional)').fill('moving abroad');
  t.is(await submit(page, 'Cancel at period end'), 303);
  await page.getByText('The subscription will end at the end of its period.').waitFor();
  t.like(await read(), { status: 'active', cancelAtPeriodEnd: true, cancellationComment: 'moving abroad' });
  await expectAccessible(t, page, 'subscription detail');
  await screenshot(t, page, 'subscriptions-detail');

  t.is(await submit(page, 'Resume'), 303);
  await page.getByText('The subscription was resumed.').waitFor();
  t.like(await read(), { status: 'active', cancelAtPeriodEnd: false });

  await page.getByRole('link', { name: 'End now', exact: true }).click();
  t.is(await submit(page, 'End subscription'), 303);
  await page.getByText('The subscription was ended.').waitFor();
  t.is((await read()).status, 'canceled');
  await page.getByText('The subscription has ended: nothing more can change.').waitFor();
  t.deepEqual(problems(), [], 'no console error or CSP violation');
});

test('Subscriptions: the list and the detail name the customer; a quarterly plan reads "every 3 months" there and on the customer; a paused one offers no cancel at period end; a renewal voided by the end reads Void', async (t) => {
  const dash = await startDashboard(t);
  const { api } = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const { id, active } = await paidSubscription(t, dash.weir, api, {
    name: 'Roast of the quarter',
    unitAmount: '3000000000',
    intervalCount: 3,
    email: 'quarterly@harbour.example',
  });
  const read = () => api.get<ActiveSubscription>(`/api/v1/subscriptions/${id}`).then((r) => r.body);
  dash.clock.advanceTo(Date.parse(active.currentPeriodEnd));
  const renewalId = await eventually(async () => (await read()).latestInvoiceId ?? undefined, 'the renewal invoice');

  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  await page.goto(`${dash.url}/dashboard/subscriptions`);
  const row = page.locator('#subscriptions tbody tr');
  t.regex((await row.textContent()) ?? '', /quarterly@harbour\.example.*30\.00 USDC every 3 months/s);
  await page.goto(`${dash.url}/dashboard/customers/${active.customerId}`);
  t.regex((await page.locator('#customer-subscriptions tbody tr').textContent()) ?? '', /30\.00 USDC every 3 months/);
  // Each of the customer's records leads to its page, its status named as there; the tables fit, or scroll by keyboard.
  for (const [card, href, status] of [
    ['customer-invoices', `/dashboard/invoices/${renewalId}`, 'Open'],
    ['customer-subscriptions', `/dashboard/subscriptions/${id}`, 'Active'],
  ] as const) {
    const record = page.locator(`#${card} tbody tr`).filter({ has: page.locator(`a[href="${href}"]`) });
    t.is(await record.count(), 1, href);
    t.is(await record.locator('.badge').textContent(), status, card);
  }
  await expectAccessible(t, page, 'customer');
  await page.setViewportSize({ width: 390, height: 900 });
  await expectAccessible(t, page, 'customer-390');
  await page.setViewportSize({ width: 1280, height: 900 });

  t.is((await api.post(`/api/v1/subscriptions/${id}/pause`)).status, 200);
  await page.goto(`${dash.url}/dashboard/subscriptions/${id}`);
  t.regex((await page.locator('#subscription-summary').textContent()) ?? '', /Customer\s*quarterly@harbour\.example/);
  await page.getByRole('button', { name: 'Resume', exact: true }).waitFor();
  t.is(await page.getByRole('button', { name: 'Cancel at period end', exact: true }).count(), 0, 'the API refuses it');

  await page.getByRole('link', { name: 'End now', exact: true }).click();
  t.is(await submit(page, 'End subscription'), 303);
  await eventually(
    async () => ((await api.get<Invoice>(`/api/v1/invoices/${renewalId}`)).body.status === 'void' ? true : undefined),
    'the renewal voided',
  );
  await page.reload();
  const periods = page.locator('#subscription-periods tbody tr');
  t.is(await periods.count(), 2);
  t.regex((await periods.nth(1).textContent()) ?? '', /Invoice.*Void.*30\.00 USDC/s);
  // A deleted customer is named, not linked to a page that is gone.
  t.is((await api.delete(`/api/v1/customers/${active.customerId}`)).status, 200);
  await page.reload();
  const summary = page.locator('#subscription-summary');
  t.regex((await summary.textContent()) ?? '', /Customer\s*quarterly@harbour\.example \(deleted\)/);
  t.is(await summary.getByRole('link').count(), 0);
  t.deepEqual(problems(), [], 'no console error or CSP violation');
});

test('a status filter naming no status (an old link, a typo) is said, with the statuses there are, on a 400 page listing every invoice, not read as a filter; the subscriptions list does the same', async (t) => {
  const dash = await startDashboard(t);
  const page = await dash.signedIn(browser(), await dash.user({ role: 'owner' }));
  for (const [path, records, statuses] of [
    ['invoices', 'invoices', 'draft, open, paid, void, uncollectible'],
    ['subscriptions', 'subscriptions', null],
  ] as const) {
    for (const asked of ['overdue', 'constructor']) {
      const response = await page.goto(`${dash.url}/dashboard/${path}?status=${asked}`);
      t.is(response?.status(), 400, `${path}?status=${asked}`);
      const alert = (await page.getByRole('alert').textContent()) ?? '';
      t.regex(alert, new RegExp(`There is no status "${asked}"\\. Pick a status: .*\\. Showing all ${records}\\.`));
      if (statuses) t.true(alert.includes(`Pick a status: ${statuses}.`), alert);
      // "All" is the filter in force, as shown.
      t.is(await page.getByRole('link', { name: 'All', exact: true }).getAttribute('aria-current'), 'page');
      t.true(await page.getByText(`No ${records} yet.`).isVisible());
    }
  }
  // A known status filters and says nothing.
  t.is((await page.goto(`${dash.url}/dashboard/invoices?status=paid`))?.status(), 200);
  t.is(await page.getByRole('alert').count(), 0);
});

test("an invoice the API refuses, for a new customer's email, writes nothing: no customer is made for it (a USDC product line on a DAI invoice)", async (t) => {
  const dash = await startDashboard(t);
  const { api } = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const product = await api.post<{ defaultPrice: { id: string } }>('/api/v1/products', {
    name: 'Espresso beans 1 kg',
    defaultPriceData: { currency: 'usdc', unitAmount: '2400000000' },
  });
  t.is(product.status, 200);

  const { page, problems, customersMade } = await newInvoiceForNewCustomer(dash, browser(), owner, api);
  await page.getByLabel('Line 1 product or price').selectOption(product.body.defaultPrice.id);
  t.is(await submit(page, 'Add line'), 200);
  await page.getByLabel('Line 2 name').fill('Grinder service');
  await page.getByLabel('Line 2 amount').fill('12.50');
  await page.getByLabel('Currency').selectOption('dai');
  t.is(await submit(page, 'Save draft'), 400);
  await page
    .getByText(/same currency/)
    .first()
    .waitFor();
  t.is(await customersMade(), 0, 'no customer made for a refused invoice');
  t.is((await api.get<List<unknown>>('/api/v1/invoices')).body.count, 0);
  t.deepEqual(problems(), []);
});

test("an amount with more decimals than the currency carries (1.1234567 USDC: USDC has 6) is refused at its line, naming the decimals allowed, which the amounts' hint says; no invoice and no customer is made", async (t) => {
  const dash = await startDashboard(t);
  const { api } = await dash.organization();
  const owner = await dash.user({ role: 'owner' });

  const { page, problems, customersMade } = await newInvoiceForNewCustomer(dash, browser(), owner, api);
  t.regex((await page.locator('#line-amount-hint').textContent()) ?? '', /Decimals at most: USDC 6\b/);
  await page.getByLabel('Line 1 name').fill('Grinder service');
  await page.getByLabel('Line 1 amount').fill('1.1234567');
  t.is(await submit(page, 'Save draft'), 400);
  await page.getByText('Line 1: must have at most 6 decimals in USDC: no USDC asset carries more').waitFor();
  t.is(await page.getByLabel('Line 1 amount').getAttribute('aria-invalid'), 'true');
  t.is(await page.getByLabel('Line 1 amount').inputValue(), '1.1234567', 'kept as typed');
  t.is(await customersMade(), 0, 'no customer made for a refused invoice');
  t.is((await api.get<List<unknown>>('/api/v1/invoices')).body.count, 0);

  // Six decimals are saved.
  await page.getByLabel('Line 1 amount').fill('1.123456');
  t.is(await submit(page, 'Save draft'), 303);
  const [draft] = (await api.get<List<Invoice>>('/api/v1/invoices')).body.data;
  t.is(draft!.lineItems.data[0]!.unitAmount, '112345600');
  t.deepEqual(problems(), []);
});

test("an invoice number already in use, for a new customer's email, is refused (409) at the number and makes no customer", async (t) => {
  const dash = await startDashboard(t);
  const { api } = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const existing = await api.post<{ id: string }>('/api/v1/customers', { email: 'existing@harbour.example' });
  const held = await api.post('/api/v1/invoices', {
    customerId: existing.body.id,
    number: 'ACME-7',
    lineItems: { data: [{ priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Hour' } } }] },
  });
  t.is(held.status, 200, JSON.stringify(held.body));

  const { page, problems, customersMade } = await newInvoiceForNewCustomer(dash, browser(), owner, api);
  await page.getByLabel('Line 1 name').fill('Grinder service');
  await page.getByLabel('Line 1 amount').fill('12.50');
  await page.getByLabel('Number').fill('ACME-7');
  t.is(await submit(page, 'Save draft'), 409);
  await page
    .getByText(/invoice number ACME-7 is already used/)
    .first()
    .waitFor();
  t.is(await customersMade(), 0, 'no customer made for a refused invoice');
  t.is((await api.get<List<unknown>>('/api/v1/invoices')).body.count, 1);
  t.deepEqual(problems(), []);
});
