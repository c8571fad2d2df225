import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { Browser, Page } from 'playwright-core';
import { eventually } from '../support/api-client.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { launchChromium, screenshotFolder } from '../support/chromium.ts';
import { expectAccessible } from '../support/dashboard.ts';
import { SUPPORT_LINK } from '../support/hosted-pages.ts';
import { createMerchant, sessionRequest, startTestWeir, promotionSession } from '../support/weir-harness.ts';

/** A page of `browser` with JavaScript off, as a payer who disabled it (or whose browser has none). */
async function noScriptPage(t: ExecutionContext, browser: Browser): Promise<Page> {
  const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 390, height: 900 } });
  t.teardown(() => context.close());
  return context.newPage();
}

/**
 * axe on the page as drawn without JavaScript. axe needs timers, which never fire in a page whose
 * script is off: it runs on a copy of this page's DOM (noscript contents in place, no script),
 * served at the same address to a page with script on, so the same stylesheets apply.
 */
async function expectAccessibleWithoutScript(t: ExecutionContext, page: Page, name: string) {
  const html = (await page.content()).replace(/<\/?noscript>/g, '').replace(/<script\b[^>]*>[\s\S]*?<\/script>/g, '');
  const copy = await page.context().browser()!.newPage({ viewport: page.viewportSize() });
  try {
    await copy.route(page.url(), (route) => route.fulfill({ contentType: 'text/html', body: html }));
    await copy.goto(page.url());
    t.true((await copy.locator('link[href^="/assets/no-script.css"]').count()) === 1, `${name}: no-script.css applies`);
    await expectAccessible(t, copy, name, { anyImpact: true });
  } finally {
    await copy.close();
  }
}

/** The status line as the payer sees it (rendered text: what no-script.css hides is not in it). */
const statusDetail = async (page: Page) => (await page.locator('#status-detail').innerText()).trim();

/** Controls only the page's script works are not offered without it: none is visible. */
async function noScriptOnlyControls(t: ExecutionContext, page: Page, when: string) {
  for (const name of [/^Copy /, 'Connect wallet', /^Pay with /])
    t.is(await page.getByRole('button', { name }).count(), 0, `${when}: no ${String(name)} button`);
  t.is(await page.locator('#cancel').isVisible(), false, `${when}: no button opening the cancel dialog`);
}

test('with JavaScript off the payer presses the one asset offered (its button says it is the one step), sees the amount, address, QR and time left without Copy or wallet buttons or a claim that the page updates by itself, pays, and a reload shows it paid', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const session = (
    await api.post<{ id: string; url: string; addresses: { paymentAddress: string }[] }>(
      '/api/v1/checkout/sessions',
      // The merchant prefers the test network: its asset says so, and is not chosen for the payer.
      { ...sessionRequest('250000000', 1), paymentSetting: { preferredChainId: 7357 } },
    )
  ).body;
  t.is(session.addresses.length, 1, 'one asset offered');
  const browser = await launchChromium(t);
  const page = await noScriptPage(t, browser);
  await page.goto(session.url);
  t.true(await page.locator('#reveal').isHidden());
  const only = page.getByRole('button', { name: /USDC.*Show the amount and address to pay/ });
  t.true(await only.isVisible(), 'the one asset is shown as the step to take');
  t.regex((await only.textContent()) ?? '', /Preferred network/);
  t.is(await page.locator('.asset[aria-pressed="true"]').count(), 0, 'nothing chosen by opening the page');
  await noScriptOnlyControls(t, page, 'before the choice');
  await expectAccessibleWithoutScript(t, page, 'no-script checkout, nothing chosen');
  const shots = await screenshotFolder(t, 'weir-hosted-no-script-');
  await page.screenshot({ path: join(shots, 'choose-390.png'), fullPage: true });
  await Promise.all([page.waitForURL(session.url), only.click()]);

  await page.locator('#reveal').waitFor({ state: 'visible' });
  t.is(await page.locator('#due').textContent(), '2.5');
  t.is(await page.locator('#symbol').textContent(), 'USDC');
  t.is(
    (await page.locator('#address').textContent())?.toLowerCase(),
    session.addresses[0]!.paymentAddress.toLowerCase(),
  );
  t.is(await page.locator('#qr svg').count(), 1);
  t.regex((await page.locator('#countdown').textContent()) ?? '', /^Expires in \d+ (h \d+ )?min \(at \d\d:\d\d UTC\)$/);
  // The status does not claim to follow the session; the reload hint says what to do instead.
  t.is(await statusDetail(page), 'Send the amount below.');
  t.true(await page.getByRole('link', { name: 'reload it' }).isVisible());
  t.is(await page.getByRole('button', { name: /Show the amount and address/ }).count(), 0, 'chosen: no step left');
  await noScriptOnlyControls(t, page, 'once chosen');
  await expectAccessibleWithoutScript(t, page, 'no-script checkout, asset chosen');
  await page.screenshot({ path: join(shots, '390.png'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.screenshot({ path: join(shots, '1280.png'), fullPage: true });

  const chain = chainPublisher(weir.bus);
  const block = randomHash();
  await chain.transfer({
    to: session.addresses[0]!.paymentAddress,
    amount: '2500000',
    blockNumber: 1,
    blockHash: block,
  });
  await chain.final(1, block);
  await eventually(
    async () =>
      (await api.get<{ status: string }>(`/api/v1/checkout/sessions/${session.id}`)).body.status === 'complete' ||
      undefined,
    'the session paid',
  );
  await page.reload();
  t.is(await page.locator('#status-title').textContent(), 'Paid');
});

test('with JavaScript off a promotion code is applied by a plain form: a refused code is said on the page (not a JSON error) and stays in its input, an accepted one shows the discount', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  await api.post('/api/v1/coupons', {
    name: 'Launch',
    percentOff: 10,
    maxRedemptions: 10,
    promotionCodeData: { data: [{ code: 'LAUNCH' }] },
  });
  const session = await promotionSession(api);
  const browser = await launchChromium(t);
  const page = await noScriptPage(t, browser);
  await page.goto(session.url);
  const apply = async (code: string) => {
    await page.getByLabel('Promotion code').fill(code);
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && r.url() === session.url),
      page.getByRole('button', { name: 'Apply' }).click(),
    ]);
    await page.waitForLoadState();
    return answer;
  };

  const refused = await apply('NOPE');
  t.is(refused.status(), 400);
  t.regex(refused.headers()['content-type'] ?? '', /text\/html/);
  t.is(await page.locator('#status-title').textContent(), 'This promotion code cannot be used');
  t.regex(await statusDetail(page), /^[A-Z][^{}]*[a-z]/, 'a sentence, not a JSON body');
  t.notRegex(await statusDetail(page), /^code: /);
  t.is(
    await page.getByLabel('Promotion code').inputValue(),
    'NOPE',
    'the refused code is kept for the payer to correct',
  );
  t.log(`refused: ${await statusDetail(page)}`);
  await expectAccessibleWithoutScript(t, page, 'no-script checkout, code refused');
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.screenshot({
    path: join(await screenshotFolder(t, 'weir-hosted-no-script-promo-'), '1280.png'),
    fullPage: true,
  });

  const applied = await apply('launch');
  t.is(applied.status(), 303);
  t.is(page.url(), session.url);
  t.regex(await page.locator('#totals').innerText(), /Discount \(LAUNCH\)\s+−0\.25 USDC/);
  t.is(await page.locator('#total-due').textContent(), '2.25');
  t.is(
    (await api.get<{ amountTotal: string }>(`/api/v1/checkout/sessions/${session.id}`)).body.amountTotal,
    '225000000',
  );
});

test('with JavaScript off the payer cancels by a plain form: "Cancel payment" opens what canceling does, its button cancels the session and returns the payer to the cancel URL', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  // The shop's cart on loopback (tests reach no other host): Weir answers it 404, the browser is seen asking for it.
  const cancelUrl = `${weir.url}/shop/cart`;
  const session = (
    await api.post<{ id: string; url: string }>('/api/v1/checkout/sessions', { ...sessionRequest(), cancelUrl })
  ).body;
  const page = await noScriptPage(t, await launchChromium(t));
  await page.goto(session.url);
  const confirm = page.locator('.cancel-confirm');
  await confirm.locator('summary', { hasText: 'Cancel payment' }).click();
  t.true(
    await confirm
      .getByText(`You will return to ${new URL(weir.url).host}. Do not send a payment after canceling.`)
      .isVisible(),
  );
  await expectAccessibleWithoutScript(t, page, 'no-script checkout, cancel opened');
  await page.screenshot({
    path: join(await screenshotFolder(t, 'weir-hosted-no-script-cancel-'), '390.png'),
    fullPage: true,
  });
  await Promise.all([
    page.waitForRequest(cancelUrl),
    confirm.locator('form').getByRole('button', { name: 'Cancel payment' }).click(),
  ]);
  t.is((await api.get<{ status: string }>(`/api/v1/checkout/sessions/${session.id}`)).body.status, 'canceled');
  await page.goto(session.url);
  t.is(await page.locator('#status-title').textContent(), 'Canceled');
});

/** On a checkout page reached without JavaScript: the one asset's button shows the amount and address to send. */
async function payableWithoutScript(t: ExecutionContext, page: Page, from: string, due: string) {
  await page.waitForURL(/\/checkout\/[0-9a-f-]{36}$/);
  const only = page.getByRole('button', { name: /Show the amount and address to pay/ });
  await Promise.all([page.waitForURL(page.url()), only.click()]);
  await page.locator('#reveal').waitFor({ state: 'visible' });
  t.is(await page.locator('#due').textContent(), due, `${from}: the amount to send`);
  t.is(await page.locator('#qr svg').count(), 1, `${from}: the QR code`);
}

test('with JavaScript off the invoice page offers no Print button (only its script prints), downloads the PDF by a link, and its pay link leads to a checkout the payer can pay', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Northwind Studio');
  const customer = await api.post<{ id: string }>('/api/v1/customers', { email: 'ada@example.com', name: 'Ada' });
  const invoice = await api.post<{ id: string }>('/api/v1/invoices', {
    customerId: customer.body.id,
    dueDate: '2030-02-01',
    lineItems: {
      data: [
        { priceData: { currency: 'usdc', unitAmount: '250000000', productData: { name: 'Sketch' } }, quantity: 1 },
      ],
    },
  });
  t.is(invoice.status, 200, JSON.stringify(invoice.body));
  t.is((await api.post(`/api/v1/invoices/${invoice.body.id}/finalize`)).status, 200);
  const page = await noScriptPage(t, await launchChromium(t));
  await page.goto(`${weir.url}/invoices/${invoice.body.id}`);
  t.is(await page.getByRole('button').count(), 0, 'no button: none works without the script');
  t.true(await page.getByRole('link', { name: 'Download PDF' }).isVisible());
  const pay = page.getByRole('link', { name: /^Pay / });
  t.true(await pay.isVisible());
  await expectAccessibleWithoutScript(t, page, 'no-script invoice page');
  await page.screenshot({
    path: join(await screenshotFolder(t, 'weir-hosted-no-script-invoice-'), '390.png'),
    fullPage: true,
  });
  await pay.click();
  await payableWithoutScript(t, page, 'invoice', '2.5');
});

test('with JavaScript off a suggested amount on the payment link page is a submit button named with its amount and currency: one press opens the checkout for that amount; Enter in an input submits the amount typed, not a suggested one', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const link = (await api.post<{ url: string }>('/api/v1/payment-links', SUPPORT_LINK)).body;
  const page = await noScriptPage(t, await launchChromium(t));
  await page.goto(link.url);
  const suggested = page.getByRole('group', { name: 'Suggested amounts' }).getByRole('button');
  t.deepEqual(
    await suggested.evaluateAll((buttons) => buttons.map((b) => b.getAttribute('type'))),
    ['submit', 'submit'],
    'without the script they submit the form',
  );
  for (const name of ['5.00 USDC', '15.00 USDC'])
    t.true(await page.getByRole('button', { name, exact: true }).isVisible(), `${name}: a button named so`);
  t.true(await page.locator('#bounds').isVisible(), 'the bounds say what may be typed');
  await expectAccessibleWithoutScript(t, page, 'no-script payment link page');
  const shots = await screenshotFolder(t, 'weir-hosted-no-script-link-');
  await page.screenshot({ path: join(shots, '390.png'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.screenshot({ path: join(shots, '1280.png'), fullPage: true });

  // A different amount typed first: the one pressed is the one paid.
  await page.getByLabel('Amount (USDC)').fill('7');
  await page.getByLabel('Name').fill('Grace Hopper');
  await page.getByRole('button', { name: '15.00 USDC' }).click();
  await payableWithoutScript(t, page, 'a suggested amount pressed', '15');

  await page.goto(link.url);
  await page.getByLabel('Amount (USDC)').fill('12');
  await page.getByLabel('Name').fill('Grace Hopper');
  await page.getByLabel('Name').press('Enter');
  await payableWithoutScript(t, page, 'Enter in the name input', '12');
});

test("with JavaScript off a subscription checkout that names no customer asks the payer's email first by a plain form, accessible; given, the assets follow", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const product = (await api.post<{ id: string }>('/api/v1/products', { name: 'Pro plan' })).body;
  const session = (
    await api.post<{ url: string }>('/api/v1/checkout/sessions', {
      mode: 'subscription',
      successUrl: 'https://shop.example/welcome',
      cancelUrl: 'https://shop.example/plans',
      lineItems: {
        data: [{ priceData: { currency: 'usdc', unitAmount: '250000000', interval: 'month', productId: product.id } }],
      },
    })
  ).body;
  const page = await noScriptPage(t, await launchChromium(t));
  await page.goto(session.url);
  t.is(await statusDetail(page), 'Give your email first: the renewal invoices of this subscription are sent to it.');
  t.is(await page.getByRole('button', { name: /USDC/ }).count(), 0, 'no asset before the email');
  await noScriptOnlyControls(t, page, 'at the email step');
  await expectAccessibleWithoutScript(t, page, 'no-script checkout, email step');
  await page.getByLabel('Email').fill('pat@example.com');
  await Promise.all([page.waitForURL(session.url), page.getByRole('button', { name: 'Continue' }).click()]);
  t.true(await page.getByRole('button', { name: /USDC/ }).isVisible());
  t.is(await statusDetail(page), 'Choose how you want to pay.');
});
