import test from 'ava';
import type { Page } from 'playwright-core';
import type { Rail, RailNetwork } from '../../src/chain-ingest/rail.ts';
import { createTestRail, TEST_NETWORK } from '../../src/chain-ingest/test-rail.ts';
import { chromiumPerFile, expectAccessible, screenshot, startDashboard, watchPage } from '../support/dashboard.ts';
import { apiClient } from '../support/api-client.ts';
import { ADMIN_TOKEN, MERCHANT_WALLET, sessionRequest } from '../support/weir-harness.ts';

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

test('Product, payment link, invoice and coupon forms offer only the currencies a network takes; a draft in one no wallet receives keeps it', async (t) => {
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
    options: [...offered.options, ['usdt', 'USDT (no wallet)']],
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

/** A second test network, which takes USDT alone. */
const TETHER_NETWORK: RailNetwork = {
  ...TEST_NETWORK,
  network: 'weir-testnet-tether',
  chainId: 7358,
  name: 'Weir Tether Testnet',
  assets: [
    {
      ...TEST_NETWORK.assets[0]!,
      id: 'weir-testnet-tether:usdt',
      name: 'Tether USD',
      symbol: 'USDT',
      currency: 'usdt',
      chainId: 7358,
    },
  ],
};
const tetherRail = (): Rail => ({
  ...createTestRail(),
  name: 'tether',
  networks: (environment) => (environment === 'test' ? [TETHER_NETWORK] : []),
});

const FORMS = [
  ['products/new', 'Currency'],
  ['payment-links/new', 'Currency'],
  ['invoices/new', 'Currency'],
  ['promo-codes/new', 'Currency of the amount'],
] as const;

test("The currency forms offer what the merchant's wallets can be paid in: with a wallet on one network, only what that network takes; a wallet on another adds its currencies", async (t) => {
  const dash = await startDashboard(t, { extraRails: [tetherRail()] });
  // Its one wallet is on Weir Testnet (USDC, DAI, ETH); the Tether network is offered too.
  const { api } = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  const assets = (await api.get<{ data: { currency: string }[] }>('/api/v1/assets')).body.data;
  t.deepEqual([...new Set(assets.map((a) => a.currency))].sort(), ['dai', 'eth', 'usdc', 'usdt']);
  // A session in USDT is refused: no wallet of the merchant's is on a network that takes it.
  const usdt = sessionRequest();
  usdt.lineItems.data[0]!.priceData.currency = 'usdt';
  t.true((await api.post('/api/v1/checkout/sessions', usdt)).status >= 400);

  const choices = (currencies: string[]) => ({
    options: currencies.map((c) => [c, c.toUpperCase()]),
    selected: 'usdc',
  });
  for (const [path, label] of FORMS) {
    await page.goto(`${dash.url}/dashboard/${path}`);
    t.deepEqual(await choicesOf(page, label), choices(['usdc', 'dai', 'eth']), path);
  }
  await page.goto(`${dash.url}/dashboard/settings/payments`);
  t.deepEqual(
    (await choicesOf(page, 'Default currency')).options.map(([value]) => value),
    ['', 'usdc', 'dai', 'eth'],
  );
  t.deepEqual((await choicesOf(page, 'Default network')).options, [
    ['', 'No preference'],
    ['7357', 'Weir Testnet (chain 7357)'],
  ]);
  // The invoice's accepted networks: only one a wallet is on; an invoice naming another keeps it, marked.
  const networksOf = async () => (await page.locator('#field-chainId label').allTextContents()).map((l) => l.trim());
  await page.goto(`${dash.url}/dashboard/invoices/new`);
  t.deepEqual(await networksOf(), ['Weir Testnet']);
  const customer = await api.post<{ id: string }>('/api/v1/customers', { email: 'nets@example.com' });
  // An invoice names only networks with a wallet: this one's is removed after it is written.
  const gone = await api.post<{ id: string }>('/api/v1/organization/withdrawal-addresses', {
    chainId: TETHER_NETWORK.chainId,
    address: MERCHANT_WALLET,
  });
  const named = await api.post<Invoice>('/api/v1/invoices', {
    customerId: customer.body.id,
    lineItems: {
      data: [{ priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Tea' } }, quantity: 1 }],
    },
    dueDate: new Date(dash.clock.now() + 30 * 86_400_000).toISOString().slice(0, 10),
    paymentMethods: { chainIds: [TETHER_NETWORK.chainId] },
  });
  t.is(named.status, 200, JSON.stringify(named.body));
  t.is((await api.delete(`/api/v1/organization/withdrawal-addresses/${gone.body.id}`)).status, 200);
  await page.goto(`${dash.url}/dashboard/invoices/${named.body.id}/edit`);
  t.deepEqual(await networksOf(), ['Weir Testnet', 'Weir Tether Testnet (no wallet)']);
  t.true(await page.getByLabel('Weir Tether Testnet (no wallet)').isChecked());

  // A wallet on the Tether network: USDT is offered, and a session in it is made.
  const wallet = await api.post('/api/v1/organization/withdrawal-addresses', {
    chainId: TETHER_NETWORK.chainId,
    address: MERCHANT_WALLET,
    name: 'tether',
  });
  t.is(wallet.status, 200, JSON.stringify(wallet.body));
  t.is((await api.post('/api/v1/checkout/sessions', usdt)).status, 200);
  for (const [path, label] of FORMS) {
    await page.goto(`${dash.url}/dashboard/${path}`);
    t.deepEqual(await choicesOf(page, label), choices(['usdc', 'usdt', 'dai', 'eth']), path);
  }
  await screenshot(t, page, 'currencies-two-wallets');
  await page.goto(`${dash.url}/dashboard/invoices/new`);
  t.deepEqual(await networksOf(), ['Weir Testnet', 'Weir Tether Testnet']);
  await page.goto(`${dash.url}/dashboard/settings/payments`);
  t.deepEqual(
    (await choicesOf(page, 'Default currency')).options.map(([value]) => value),
    ['', 'usdc', 'usdt', 'dai', 'eth'],
  );
  t.deepEqual(
    (await choicesOf(page, 'Default network')).options.map(([value]) => value),
    ['', '7357', '7358'],
  );

  // A shop with no wallet yet: nothing to offer, and the field says what to do.
  const empty = await apiClient(dash.url, ADMIN_TOKEN).post<{ organizationId: string }>('/admin/organizations', {
    name: 'Empty Shelf',
  });
  const newcomer = await dash.signedIn(browser(), await dash.user({ organizationId: empty.body.organizationId }));
  await newcomer.goto(`${dash.url}/dashboard/products/new`);
  t.deepEqual(await choicesOf(newcomer, 'Currency'), {
    options: [['usdc', 'USDC (no wallet)']],
    selected: 'usdc',
  });
  t.regex(
    (await newcomer.locator('#field-currency-hint').textContent()) ?? '',
    /add a wallet under Settings → Payment methods/,
  );
  await screenshot(t, newcomer, 'currencies-no-wallet');
  t.deepEqual(problems(), []);
});
