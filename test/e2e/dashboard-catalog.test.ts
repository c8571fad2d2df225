import test, { type ExecutionContext } from 'ava';
import type { Page } from 'playwright-core';
import { chromiumPerFile, expectAccessible, screenshot, startDashboard, watchPage } from '../support/dashboard.ts';
import { eventually } from '../support/api-client.ts';

const browser = chromiumPerFile(test);

type Price = { unitAmount: string; interval: string | null; intervalCount: number | null };
type Product = { id: string; name: string; unitLabel: string | null; isActive: boolean; defaultPrice: Price | null };
type Customer = { id: string; email: string; name: string | null; address: { country: string | null } | null };
type Coupon = {
  id: string;
  name: string;
  percentOff: number | null;
  maxRedemptions: number | null;
  redeemBy: string | null;
  status: string;
  promotionCodes: { code: string; maxRedemptions: number | null; expiredAt: string | null }[];
};

/** Submits the form and waits for the page it answers with. */
async function submit(page: Page, button: string) {
  const [response] = await Promise.all([
    page.waitForNavigation(),
    page.getByRole('button', { name: button, exact: true }).click(),
  ]);
  return response;
}

/** Both widths and axe at both, for a screen as it is now: on a phone a table scrolls in its card, by keyboard too. */
async function record(t: ExecutionContext, page: Page, name: string) {
  await expectAccessible(t, page, name);
  const size = page.viewportSize();
  await page.setViewportSize({ width: 390, height: 900 });
  await expectAccessible(t, page, `${name} at 390 px`);
  if (size) await page.setViewportSize(size);
  await screenshot(t, page, name);
}

test('Products, customers and promo codes: create, refuse bad input without writing, edit, archive, delete', async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  const list = async <T>(path: string) => (await merchant.api.get<{ data: T[] }>(path)).body.data;
  // What a page says once a save went through, as the settings pages do.
  const notice = async () => (await page.locator('.alert-success').textContent())?.trim();

  // Products: no name is refused at the name, the price kept as typed, nothing made.
  await page.goto(`${dash.url}/dashboard/products/new`);
  await page.getByLabel('Price', { exact: true }).fill('25');
  t.is((await submit(page, 'Create product'))?.status(), 400);
  t.is(await page.locator('#field-name-error').textContent(), 'must not be empty');
  t.is(await page.getByLabel('Price', { exact: true }).inputValue(), '25');
  t.deepEqual(await list('/api/v1/products'), []);
  await record(t, page, 'product-new');
  await page.getByLabel('Name').fill('House blend');
  await submit(page, 'Create product');
  t.is(await notice(), 'Product created.');
  const [made] = await list<Product>('/api/v1/products');
  t.like(made, { name: 'House blend', isActive: true, defaultPrice: { unitAmount: '2500000000', interval: null } });
  await page.getByLabel('Name').fill('House blend, 1 kg');
  await page.getByLabel('Unit label').fill('bag');
  await submit(page, 'Save');
  t.is(await notice(), 'Product saved.');
  // A price that is no number: named at its field, the rest kept as typed, no price added.
  await page.getByLabel('Price', { exact: true }).fill('twenty');
  await page.getByLabel('Billing').selectOption('month');
  await page.getByLabel('Intervals per period').fill('3');
  t.is((await submit(page, 'Add price'))?.status(), 400);
  t.truthy(await page.locator('#field-unitAmount-error').textContent());
  t.is(await page.getByLabel('Intervals per period').inputValue(), '3');
  t.is((await list(`/api/v1/prices?productId=${made!.id}`)).length, 1, 'no price added');
  // A price with more decimals than its currency carries (USDC has 6): named at its field with the decimals allowed.
  t.regex((await page.locator('#field-unitAmount-hint').textContent()) ?? '', /Decimals at most: USDC 6\b/);
  await page.getByLabel('Price', { exact: true }).fill('1.1234567');
  t.is((await submit(page, 'Add price'))?.status(), 400);
  t.is(
    await page.locator('#field-unitAmount-error').textContent(),
    'must have at most 6 decimals in USDC: no USDC asset carries more',
  );
  t.is((await list(`/api/v1/prices?productId=${made!.id}`)).length, 1, 'no price added');
  await page.getByLabel('Price', { exact: true }).fill('20');
  await submit(page, 'Add price');
  t.is(await notice(), 'Price added.');
  t.is(await page.locator('#prices tbody tr').count(), 2);
  await record(t, page, 'product-detail');
  await submit(page, 'Archive');
  const product = (await merchant.api.get<Product>(`/api/v1/products/${made!.id}`)).body;
  t.like(product, { name: 'House blend, 1 kg', unitLabel: 'bag', isActive: false });
  const prices = await list<Price>(`/api/v1/prices?productId=${made!.id}`);
  t.deepEqual(prices.map((p) => [p.unitAmount, p.interval, p.intervalCount]).sort(), [
    ['2000000000', 'month', 3],
    ['2500000000', null, null],
  ]);
  await page.goto(`${dash.url}/dashboard/products`);
  await record(t, page, 'products');

  // Customers: a bad email is named and nothing made; then create, edit, find, delete.
  await page.goto(`${dash.url}/dashboard/customers/new`);
  await page.getByLabel('Email').fill('ada-at-example');
  await page.getByLabel('Name').fill('Ada Lovelace');
  t.is((await submit(page, 'Create customer'))?.status(), 400);
  t.regex((await page.locator('#field-email-error').textContent()) ?? '', /email address/);
  t.is(await page.getByLabel('Name').inputValue(), 'Ada Lovelace');
  t.deepEqual(await list('/api/v1/customers'), []);
  await record(t, page, 'customer-new');
  await page.getByLabel('Email').fill('ada@example.com');
  await submit(page, 'Create customer');
  t.is(await notice(), 'Customer created.');
  await page.getByLabel('Name').fill('Ada King');
  await page.getByLabel('Country (two letters)').fill('gb');
  await submit(page, 'Save');
  t.is(await notice(), 'Customer saved.');
  const [customer] = await list<Customer>('/api/v1/customers');
  t.like(customer, { email: 'ada@example.com', name: 'Ada King', address: { country: 'GB' } });
  await record(t, page, 'customer-detail');
  await page.goto(`${dash.url}/dashboard/customers?email=ADA%40example.com`);
  t.is(await page.locator('#customers tbody tr').count(), 1);
  await record(t, page, 'customers');
  await page.getByRole('link', { name: 'ada@example.com' }).click();
  await submit(page, 'Delete customer');
  t.is(await notice(), 'Customer deleted.');
  t.deepEqual(await list('/api/v1/customers'), []);

  // Promo codes: a code too short is named; then a coupon with limits and expiry, deactivated.
  const inAYear = new Date(dash.clock.now() + 365 * 86_400_000).toISOString().slice(0, 10);
  await page.goto(`${dash.url}/dashboard/promo-codes/new`);
  await page.getByLabel('Name').fill('Launch');
  await page.getByLabel('Percent off').fill('20');
  await page.getByLabel('Most redemptions').fill('100');
  await page.getByLabel('Redeem by').fill(inAYear);
  await page.getByLabel('Code 1', { exact: true }).fill('L');
  await page.getByLabel('Code 1 most uses').fill('10');
  await page.getByLabel('Code 1 expires').fill(inAYear);
  t.is((await submit(page, 'Create coupon'))?.status(), 400);
  t.truthy(await page.locator('#field-pc0_code-error').textContent());
  t.is(await page.getByLabel('Code 1 most uses').inputValue(), '10');
  t.deepEqual(await list('/api/v1/coupons'), []);
  await expectAccessible(t, page, 'coupon-new');
  await screenshot(t, page, 'coupon-new');
  await page.getByLabel('Code 1', { exact: true }).fill('LAUNCH20');
  await submit(page, 'Create coupon');
  const [coupon] = await list<Coupon>('/api/v1/coupons');
  t.like(coupon, {
    name: 'Launch',
    percentOff: 20,
    maxRedemptions: 100,
    redeemBy: `${inAYear}T23:59:59.000Z`,
    status: 'active',
  });
  t.deepEqual(
    coupon!.promotionCodes.map((p) => [p.code, p.maxRedemptions, p.expiredAt]),
    [['LAUNCH20', 10, `${inAYear}T23:59:59.000Z`]],
  );
  await submit(page, 'Deactivate');
  await page.getByRole('button', { name: 'Activate', exact: true }).waitFor();
  t.is((await merchant.api.get<Coupon>(`/api/v1/coupons/${coupon!.id}`)).body.status, 'disabled');
  await record(t, page, 'coupon-detail');
  await page.goto(`${dash.url}/dashboard/promo-codes`);
  await record(t, page, 'promo-codes');
  t.deepEqual(problems(), [], 'no console error or CSP violation');
});

test('Products, customers and promo codes: a viewer reads them but cannot create', async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const viewer = await dash.user({ role: 'viewer' });
  const page = await dash.signedIn(browser(), viewer);
  await page.goto(`${dash.url}/dashboard/customers`);
  t.is(await page.getByRole('link', { name: 'New customer' }).count(), 0);
  const token = JSON.parse((await page.locator('body').getAttribute('hx-headers')) ?? '{}')['X-CSRF-Token'] as string;
  const statuses = await page.evaluate(
    async (csrf) =>
      Promise.all(
        [
          ['/dashboard/products', { name: 'Sneaky', unitAmount: '1' }],
          ['/dashboard/customers', { email: 'sneaky@example.com' }],
          ['/dashboard/promo-codes', { name: 'Sneaky', percentOff: '50', pc0_code: 'SNEAKY' }],
        ].map(
          async ([path, fields]) =>
            (
              await fetch(path as string, {
                method: 'POST',
                headers: { 'content-type': 'application/x-www-form-urlencoded' },
                body: new URLSearchParams({ _csrf: csrf, ...(fields as Record<string, string>) }),
              })
            ).status,
        ),
      ),
    token,
  );
  t.deepEqual(statuses, [403, 403, 403]);
  for (const path of ['/api/v1/products', '/api/v1/customers', '/api/v1/coupons'])
    t.deepEqual((await merchant.api.get<{ data: unknown[] }>(path)).body.data, [], path);
});

test("Customers: a customer's page lists the sessions that are theirs, a subscription session given only customerData among them", async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const product = await merchant.api.post<{ defaultPrice: { id: string } }>('/api/v1/products', {
    name: 'Beans monthly',
    defaultPriceData: { currency: 'usdc', unitAmount: '1000000000', type: 'recurring', interval: 'month' },
  });
  // Only an email at checkout: the customer is made with the subscription, after the session.
  const session = await merchant.api.post<{ id: string; subscriptionId: string }>('/api/v1/checkout/sessions', {
    mode: 'subscription',
    successUrl: 'https://shop.example/welcome',
    lineItems: { data: [{ priceId: product.body.defaultPrice.id, quantity: 1 }] },
    customerData: { email: 'sam@example.com' },
  });
  t.is(session.status, 200);
  const customerId = await eventually(async () => {
    const s = (
      await merchant.api.get<{ customerId: string | null }>(`/api/v1/subscriptions/${session.body.subscriptionId}`)
    ).body;
    return s.customerId ?? undefined;
  }, 'the subscription and its customer');
  // The session read model names the customer once its projection has seen the subscription.
  await eventually(async () => {
    const read = await merchant.api.get<{ customerId: string | null }>(`/api/v1/checkout/sessions/${session.body.id}`);
    return read.body.customerId === customerId ? true : undefined;
  }, 'the session to name its customer');

  const page = await dash.signedIn(browser(), await dash.user({ role: 'viewer' }));
  await page.goto(`${dash.url}/dashboard/customers/${customerId}`);
  const sessions = page.locator('#customer-sessions');
  await sessions.getByRole('link', { name: `Session ${session.body.id}` }).waitFor();
  t.is(await sessions.locator('tbody tr').count(), 1);
  t.is(await page.locator('#customer-subscriptions tbody tr').count(), 1);
});

test('An edit form shows stored text with &, entities and quotes as stored, and saving it unchanged changes nothing (a raw & in value="" was decoded: Tom &amp; Jerry read Tom & Jerry)', async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const stored = {
    name: 'Tom &amp; Jerry',
    organizationName: 'R&D &copy; "Acme" <Labs>',
    customerReferenceId: 'crm?a=1&copy=2&lt',
  };
  const customer = await merchant.api.post<Customer>('/api/v1/customers', { email: 'tom@example.com', ...stored });
  t.is(customer.status, 200);
  const product = await merchant.api.post<Product>('/api/v1/products', {
    name: 'Tom &amp; Jerry',
    unitLabel: '&lt;bag&gt;',
    defaultPriceData: { currency: 'usdc', unitAmount: '1000000000' },
  });
  t.is(product.status, 200);
  const page = await dash.signedIn(browser(), await dash.user({ role: 'owner' }));
  const problems = await watchPage(page);

  await page.goto(`${dash.url}/dashboard/customers/${customer.body.id}`);
  await screenshot(t, page, 'customer-edit-entities');
  t.is(await page.getByLabel('Name').inputValue(), stored.name);
  t.is(await page.getByLabel('Company').inputValue(), stored.organizationName);
  t.is(await page.getByLabel('Your reference').inputValue(), stored.customerReferenceId);
  await submit(page, 'Save');
  t.like((await merchant.api.get<Customer>(`/api/v1/customers/${customer.body.id}`)).body, stored);

  await page.goto(`${dash.url}/dashboard/products/${product.body.id}`);
  t.is(await page.getByLabel('Name').inputValue(), 'Tom &amp; Jerry');
  t.is(await page.getByLabel('Unit label').inputValue(), '&lt;bag&gt;');
  await submit(page, 'Save');
  t.like((await merchant.api.get<Product>(`/api/v1/products/${product.body.id}`)).body, {
    name: 'Tom &amp; Jerry',
    unitLabel: '&lt;bag&gt;',
  });
  t.deepEqual(problems(), [], 'no console error or CSP violation');
});
