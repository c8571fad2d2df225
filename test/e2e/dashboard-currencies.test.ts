import test from 'ava';
import type { Page } from 'playwright-core';
import { chromiumPerFile, expectAccessible, screenshot, startDashboard, watchPage } from '../support/dashboard.ts';

const browser = chromiumPerFile(test);

type Invoice = { id: string; number: string; currency: string; status: string };

/** The choices of the select labelled `label`: value and text, and which one is selected. */
async function choicesOf(page: Page, label: string) {
  const select = page.getByLabel(label, { exact: true });
  const options = await select
    .locator('option')
    .evaluateAll((all) => all.map((o) => [o.getAttribute('value') ?? '', (o.textContent ?? '').trim()]));
  return { options, selected: await select.inputValue() };
}

test('Product, payment link, invoice and coupon forms offer only the currencies a network takes; a draft in one no network takes keeps it', async (t) => {
  const dash = await startDashboard(t);
  const { api } = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);

  // The test network takes USDC, DAI and ETH: what GET /assets lists, and all checkout accepts.
  const assets = (await api.get<{ data: { currency: string }[] }>('/api/v1/assets')).body.data;
  t.deepEqual([...new Set(assets.map((a) => a.currency))].sort(), ['dai', 'eth', 'usdc']);
  const offered = {
    options: [
      ['usdc', 'USDC'],
      ['dai', 'DAI'],
      ['eth', 'ETH'],
    ],
    selected: 'usdc',
  };
  for (const [path, label] of [
    ['products/new', 'Currency'],
    ['payment-links/new', 'Currency'],
    ['invoices/new', 'Currency'],
    ['promo-codes/new', 'Currency of the amount'],
  ] as const) {
    await page.goto(`${dash.url}/dashboard/${path}`);
    t.deepEqual(await choicesOf(page, label), offered, path);
    await screenshot(t, page, `currencies-${path.replace('/', '-')}`);
  }
  await expectAccessible(t, page, 'currencies-promo-codes-new');

  // A draft in USDT, which the API takes but no network here does (as after a network is removed):
  // its editor shows USDT, said to be taken by none, and saving it keeps it rather than switching.
  const customer = (await api.post<{ id: string }>('/api/v1/customers', { email: 'ada@harbour.example' })).body;
  const made = await api.post<Invoice>('/api/v1/invoices', {
    customerId: customer.id,
    lineItems: {
      data: [
        { priceData: { currency: 'usdt', unitAmount: '2500000000', productData: { name: 'Roast' } }, quantity: 1 },
      ],
    },
    dueDate: new Date(dash.clock.now() + 30 * 86_400_000).toISOString().slice(0, 10),
  });
  t.is(made.status, 200, JSON.stringify(made.body));
  await page.goto(`${dash.url}/dashboard/invoices/${made.body.id}/edit`);
  await page.getByRole('heading', { name: `Edit invoice ${made.body.number}` }).waitFor();
  t.deepEqual(await choicesOf(page, 'Currency'), {
    options: [...offered.options, ['usdt', 'USDT (no network takes it)']],
    selected: 'usdt',
  });
  await expectAccessible(t, page, 'currencies-invoice-kept');
  await screenshot(t, page, 'currencies-invoice-kept');
  await page.getByLabel('Memo').fill('Roasted to order');
  await Promise.all([
    page.waitForURL(`${dash.url}/dashboard/invoices/${made.body.id}?done=saved`),
    page.getByRole('button', { name: 'Save draft', exact: true }).click(),
  ]);
  t.like((await api.get<Invoice>(`/api/v1/invoices/${made.body.id}`)).body, { currency: 'usdt', status: 'draft' });

  t.deepEqual(problems(), []);
});
