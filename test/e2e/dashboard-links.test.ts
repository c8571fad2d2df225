import test from 'ava';
import type { Page } from 'playwright-core';
import { chromiumPerFile, expectAccessible, screenshot, startDashboard, watchPage } from '../support/dashboard.ts';

const browser = chromiumPerFile(test);

type Link = {
  id: string;
  title: string;
  pricing: string;
  amount: string | null;
  isActive: boolean;
  nameCollection: boolean;
  emailCollection: boolean;
  phoneNumberCollection: boolean;
  billingAddressCollection: boolean;
  shippingAddressCollection: boolean;
  customFields: { fields: { key: string; type: string; optional: boolean; dropdown?: { options: unknown[] } }[] };
  afterCompletion: string;
  afterCompletionRedirectUrl: string | null;
  afterCompletionConfirmMsg: string | null;
  allowPromotionCodes: boolean;
  minimumAmount: string | null;
  maximumAmount: string | null;
  suggestedAmounts: string[];
  priceId: string | null;
};

/** Submits the form and waits for the page it answers with. */
async function submit(page: Page, button: string) {
  const [response] = await Promise.all([
    page.waitForNavigation(),
    page.getByRole('button', { name: button, exact: true }).click(),
  ]);
  return response;
}

test('Payment links: fixed, customer-chosen and subscription links with custom fields; a bad URL keeps the form; copy and QR; deactivate and activate again', async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const plan = await merchant.api.post<{ defaultPriceId: string }>('/api/v1/products', {
    name: 'Roaster club',
    defaultPriceData: { currency: 'usdc', unitAmount: '1500000000', interval: 'month' },
  });
  t.is(plan.status, 200);
  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  const links = async () => (await merchant.api.get<{ data: Link[] }>('/api/v1/payment-links')).body.data;

  // A fixed-price link asking for everything, with one field of each type, and a redirect URL that is no URL.
  await page.goto(`${dash.url}/dashboard/payment-links/new`);
  await page.getByLabel('Title').fill('Espresso tasting');
  await page.getByLabel('Amount', { exact: true }).fill('12.50');
  for (const label of ['Name', 'Email address', 'Phone number', 'Billing address', 'Shipping address'])
    await page.getByLabel(label, { exact: true }).check();
  const fields = [
    ['company', 'Company', 'text', ''],
    ['cups', 'Cups a day', 'numeric', ''],
    ['grind', 'Grind', 'dropdown', 'Fine=fine, Coarse=coarse'],
  ];
  for (const [i, [key, label, type, options]] of fields.entries()) {
    await page.getByLabel(`Field ${i + 1} key`).fill(key!);
    await page.getByLabel(`Field ${i + 1} label`).fill(label!);
    await page.getByLabel(`Field ${i + 1} type`).selectOption(type!);
    if (options) await page.getByLabel(`Field ${i + 1} options`).fill(options);
  }
  await page.getByLabel('Optional').nth(1).check();
  await page.getByLabel('Send the payer to your site').check();
  await page.getByLabel('Redirect URL').fill('not a url');
  await page.getByLabel('Allow promotion codes').check();
  const refused = await submit(page, 'Create payment link');
  t.is(refused?.status(), 400);
  t.regex((await page.locator('#field-redirectUrl-error').textContent()) ?? '', /URL/i);
  t.is(await page.getByLabel('Title').inputValue(), 'Espresso tasting', 'the form is kept as typed');
  t.is(await page.getByLabel('Field 3 options').inputValue(), 'Fine=fine, Coarse=coarse');
  t.true(await page.getByLabel('Shipping address').isChecked());
  t.deepEqual(await links(), [], 'nothing written');
  await expectAccessible(t, page, 'payment-link-new');
  await screenshot(t, page, 'payment-link-new-refused');

  await page.getByLabel('Redirect URL').fill('https://harbour.example/thanks');
  await submit(page, 'Create payment link');
  t.regex(page.url(), /\/dashboard\/payment-links\/[0-9a-f-]{36}\?done=created$/);
  t.is((await page.locator('.alert-success').textContent())?.trim(), 'Payment link created.');
  const url = await page.locator('#link-url').inputValue();
  t.regex(url, /\/pay\/[0-9a-f-]{36}$/);
  t.true(await page.locator('img.qr').isVisible());
  await page.getByRole('button', { name: 'Copy' }).click();
  await page.locator('[data-copy-status="link-url"]:not(:empty)').waitFor({ state: 'attached' });
  const [fixed] = await links();
  t.like(fixed, {
    pricing: 'fixed',
    amount: '1250000000',
    nameCollection: true,
    emailCollection: true,
    phoneNumberCollection: true,
    billingAddressCollection: true,
    shippingAddressCollection: true,
    afterCompletion: 'redirect',
    afterCompletionRedirectUrl: 'https://harbour.example/thanks',
    allowPromotionCodes: true,
    isActive: true,
  });
  t.deepEqual(
    fixed!.customFields.fields.map((f) => [f.key, f.type, f.optional, f.dropdown?.options.length ?? 0]),
    [
      ['company', 'text', false, 0],
      ['cups', 'numeric', true, 0],
      ['grind', 'dropdown', false, 2],
    ],
  );
  await expectAccessible(t, page, 'payment-link-detail');
  await screenshot(t, page, 'payment-link-detail');

  // Deactivate, from the detail.
  await submit(page, 'Deactivate');
  await page.getByRole('button', { name: 'Activate', exact: true }).waitFor();
  t.is((await page.locator('.alert-success').textContent())?.trim(), 'Payment link deactivated.');
  t.false((await links()).find((l) => l.id === fixed!.id)?.isActive);
  await submit(page, 'Activate');
  await page.getByRole('button', { name: 'Deactivate', exact: true }).waitFor();
  t.true((await links()).find((l) => l.id === fixed!.id)?.isActive);

  // The payer chooses the amount, within limits, with a confirmation message.
  await page.goto(`${dash.url}/dashboard/payment-links/new`);
  await page.getByLabel('Title').fill('Tip jar');
  await page.getByLabel('Customer chooses').check();
  await page.getByLabel('Minimum amount').fill('1');
  await page.getByLabel('Maximum amount').fill('100');
  // An amount with more decimals than USDC carries (6) is refused at its input, as the price form refuses it.
  t.regex((await page.locator('form.stack-form').textContent()) ?? '', /Decimals at most: USDC 6\b/);
  await page.getByLabel('Suggested amounts').fill('2 5.0000001');
  t.is((await submit(page, 'Create payment link'))?.status(), 400);
  t.is(
    await page.locator('#field-suggestedAmounts-error').textContent(),
    '5.0000001: must have at most 6 decimals in USDC: no USDC asset carries more',
  );
  await page.getByLabel('Suggested amounts').fill('2 5 10');
  await page.getByLabel('Field 1 key').fill('note');
  await page.getByLabel('Field 1 label').fill('A note for the baristas');
  await page.getByLabel('Confirmation message', { exact: true }).fill('Thank you!');
  await submit(page, 'Create payment link');
  // A subscription to a recurring price of the catalog.
  await page.goto(`${dash.url}/dashboard/payment-links/new`);
  await page.getByLabel('Title').fill('Roaster club');
  await page.getByLabel('Subscription').check();
  await page.getByLabel('Recurring price', { exact: true }).selectOption(plan.body.defaultPriceId);
  await submit(page, 'Create payment link');
  const all = await links();
  t.like(
    all.find((l) => l.title === 'Tip jar'),
    {
      pricing: 'variable',
      minimumAmount: '100000000',
      maximumAmount: '10000000000',
      suggestedAmounts: ['200000000', '500000000', '1000000000'],
      afterCompletion: 'hosted_confirmation',
      afterCompletionConfirmMsg: 'Thank you!',
    },
  );
  t.like(
    all.find((l) => l.title === 'Roaster club'),
    { pricing: 'subscription', priceId: plan.body.defaultPriceId },
  );

  await page.goto(`${dash.url}/dashboard/payment-links`);
  t.is(await page.locator('#payment-links tbody tr').count(), 3);
  await expectAccessible(t, page, 'payment-links');
  await screenshot(t, page, 'payment-links');
  t.deepEqual(problems(), [], 'no console error or CSP violation');
});

test('Payment links: a viewer sees the list and the sessions opened through a link, but cannot create one', async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const viewer = await dash.user({ role: 'viewer' });
  const page = await dash.signedIn(browser(), viewer);
  await page.goto(`${dash.url}/dashboard/payment-links`);
  t.is(await page.getByRole('link', { name: 'New payment link' }).count(), 0);
  const token = JSON.parse((await page.locator('body').getAttribute('hx-headers')) ?? '{}')['X-CSRF-Token'] as string;
  const status = await page.evaluate(
    async (csrf) =>
      (
        await fetch('/dashboard/payment-links', {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ _csrf: csrf, title: 'Sneaky', amount: '1' }),
        })
      ).status,
    token,
  );
  t.is(status, 403);
  const refused = await page.goto(`${dash.url}/dashboard/payment-links/new`);
  t.is(refused?.status(), 403);
  t.is((await merchant.api.get<{ data: unknown[] }>('/api/v1/payment-links')).body.data.length, 0);

  // A link a payer opened: its page lists the session, linked, with its status.
  const link = (
    await merchant.api.post<Link & { url: string }>('/api/v1/payment-links', {
      title: 'Tea',
      amount: '500000000',
      currency: 'usdc',
    })
  ).body;
  const opened = await fetch(link.url, { method: 'POST', redirect: 'manual', body: new URLSearchParams() });
  const sessionId = /\/checkout\/([0-9a-f-]{36})$/.exec(opened.headers.get('location') ?? '')?.[1];
  t.truthy(sessionId, `a session opened (${opened.status})`);
  await page.goto(`${dash.url}/dashboard/payment-links/${link.id}`);
  const sold = page.locator('#link-sessions tbody tr');
  t.is(await sold.count(), 1);
  t.is(await sold.getByRole('link').getAttribute('href'), `/dashboard/checkout-sessions/${sessionId}`);
  t.regex((await sold.textContent()) ?? '', /5\.00 USDC.*Open/s);
});

test('Payment links: an active link in a currency no wallet receives is flagged on the list and its page, with the way to add a wallet; one a wallet takes is not', async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const made = await merchant.api.post<Link>('/api/v1/payment-links', {
    title: 'Tea',
    amount: '100000000',
    currency: 'usdc',
  });
  t.is(made.status, 200, JSON.stringify(made.body));
  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  const warning = page.locator('.alert-danger', { hasText: 'customers cannot pay' });
  await page.goto(`${dash.url}/dashboard/payment-links`);
  t.is(await warning.count(), 0, 'a wallet takes USDC');
  t.is(await page.getByText('No wallet', { exact: true }).count(), 0);

  for (const wallet of (await merchant.api.get<{ id: string }[]>('/api/v1/organization/withdrawal-addresses')).body)
    await merchant.api.delete(`/api/v1/organization/withdrawal-addresses/${wallet.id}`);
  await page.goto(`${dash.url}/dashboard/payment-links`);
  t.regex(
    (await warning.textContent()) ?? '',
    /This link sells in USDC, which no wallet of yours receives: customers cannot pay it until you add a wallet for USDC\./,
  );
  t.is(
    await warning.getByRole('link', { name: 'Add a wallet' }).getAttribute('href'),
    '/dashboard/settings/payment-methods',
  );
  t.is(await page.locator('#payment-links tbody tr').getByText('No wallet', { exact: true }).count(), 1);
  await expectAccessible(t, page, 'payment-links-no-wallet');
  await screenshot(t, page, 'payment-links-no-wallet');
  await page.goto(`${dash.url}/dashboard/payment-links/${made.body.id}`);
  t.regex((await warning.textContent()) ?? '', /customers cannot pay it until you add a wallet for USDC/);
  await expectAccessible(t, page, 'payment-link-no-wallet');
  await screenshot(t, page, 'payment-link-no-wallet');
  t.deepEqual(problems(), []);
});
