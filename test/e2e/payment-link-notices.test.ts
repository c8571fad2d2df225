import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import test from 'ava';
import type { Page } from 'playwright-core';
import { appendAsEarlierWeir, teaLink } from '../api/helpers.ts';
import { axeOf, launchChromium, screenshotFolder } from '../support/chromium.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';

type Link = { id: string; url: string };

/**
 * Every notice a payer can meet on a payment link in a browser, in the test and the live environment:
 * what it says, its Test mode badge (test links only), a way back where trying again helps, and no
 * serious or critical axe-core violation at 1280 and 390 px (screenshots of each: LINK_NOTICE_SCREENSHOTS
 * keeps them where asked, otherwise only a failing run keeps them).
 */
test('the payment link notices in Chromium: plain words, the Test mode badge on test links only, a way back to retry, and accessible at 1280 and 390 px', async (t) => {
  const weir = await startTestWeir(t, { rateLimitHostedCreates: { perSecond: 1 / 3600, burst: 3 } });
  const { api, live, organizationId } = await createMerchant(weir.url, 'Corner Coffee');
  t.is((await api.put('/api/v1/organization', { websiteUrl: 'https://corner.example' })).status, 200);
  t.is((await api.put('/api/v1/organization/brand', { brandColor: '#4f46e5' })).status, 200);
  const link = async (client: typeof api, body: object): Promise<Link> => {
    const created = await client.post<Link>('/api/v1/payment-links', body);
    if (created.status !== 200) throw new Error(JSON.stringify(created.body));
    return created.body;
  };
  const tea = { title: 'Tea', amount: '100000000', currency: 'usdc' };
  const inactive = await link(api, tea);
  t.is((await api.put(`/api/v1/payment-links/${inactive.id}/deactivate`, {})).status, 200);
  const stale = await link(api, tea);
  await appendAsEarlierWeir(weir, organizationId, `payment_link-${stale.id}`, 'PaymentLinkUpdated', {
    changes: { afterCompletion: 'redirect', afterCompletionRedirectUrl: 'ftp://corner.example/thanks' },
  });
  const limited = await link(api, tea);
  // Live: no live wallet, so a price the payer enters (a fixed one is refused), and no way to take it.
  const liveTip = await link(live, { title: 'Tip', currency: 'usdc' });
  const liveInactive = await link(live, { title: 'Tip', currency: 'usdc' });
  t.is((await live.put(`/api/v1/payment-links/${liveInactive.id}/deactivate`, {})).status, 200);

  const shots = process.env.LINK_NOTICE_SCREENSHOTS ?? (await screenshotFolder(t, 'weir-link-notices-'));
  const browser = await launchChromium(t);
  const page = await browser.newPage();
  const pay = async (url: string, amount?: string) => {
    await page.goto(url);
    if (amount) await page.getByLabel('Amount (USDC)').fill(amount);
    const [response] = await Promise.all([
      page.waitForNavigation(),
      page.getByRole('button', { name: /^Pay/ }).click(),
    ]);
    return response?.status();
  };
  const look = (name: string, status: number | undefined, expected: Expected) =>
    lookAt(t, page, shots, name, status, expected);

  await look('not-found', (await page.goto(`${weir.url}/pay/00000000-0000-4000-8000-000000000000`))?.status(), {
    status: 404,
    heading: 'Payment link not found',
    says: /does not exist/,
    testMode: false,
    back: false,
  });
  await look('inactive-test', (await page.goto(inactive.url))?.status(), {
    status: 410,
    heading: 'Payment link inactive',
    says: /not active/,
    testMode: true,
    back: false,
  });
  await look('inactive-live', (await page.goto(liveInactive.url))?.status(), {
    status: 410,
    heading: 'Payment link inactive',
    says: /not active/,
    testMode: false,
    back: false,
  });
  const settings = {
    status: 409,
    heading: 'Payment link cannot be paid right now',
    says: /^This payment link cannot be paid right now: the seller's settings for it do not allow a payment/,
    testMode: true,
    back: false,
  };
  await look('settings-test', await pay(stale.url), settings);
  await look('no-payment-method-live', await pay(liveTip.url, '5'), {
    ...settings,
    says: /^This payment link cannot be paid online right now: the seller has no way set up/,
    testMode: false,
  });
  // The creates' bucket is spent by the two payments above and this one: the next is refused.
  t.is(await pay(limited.url), 200, 'the checkout page');
  const tooMany = { status: 429, heading: 'Too many attempts', says: /Too many payments were started/, back: true };
  await look('too-many-test', await pay(limited.url), { ...tooMany, testMode: true });
  await page.locator('#back').click();
  await page.waitForURL(limited.url);
  t.is(await page.locator('h1').textContent(), 'Tea', 'the way back leads to the form');
  await look('too-many-live', await pay(liveTip.url, '5'), { ...tooMany, testMode: false });
});

/**
 * The checkout and invoice pages' refusals are pages too (hosted-error-pages.ts): a rate limit on
 * each, in its frame with the Test mode badge and a way back, accessible at 1280 and 390 px.
 */
test('the checkout and invoice pages rate limited in Chromium: a 429 page in plain words with the Test mode badge and a way back, accessible at 1280 and 390 px', async (t) => {
  const clock = createManualClock();
  const weir = await startTestWeir(t, { rateLimitHosted: { perSecond: 1, burst: 1 } }, { clock });
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  t.is((await api.put('/api/v1/organization/brand', { brandColor: '#4f46e5' })).status, 200);
  const session = (await api.post<{ id: string; url: string }>('/api/v1/checkout/sessions', sessionRequest())).body;
  const customer = (await api.post<{ id: string }>('/api/v1/customers', { email: 'ada@example.com' })).body;
  const draft = await api.post<{ id: string }>('/api/v1/invoices', {
    customerId: customer.id,
    lineItems: { data: [{ priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Hour' } } }] },
  });
  t.is((await api.post(`/api/v1/invoices/${draft.body.id}/finalize`)).status, 200);
  const invoiceUrl = `${weir.url}/invoices/${draft.body.id}`;

  const shots = process.env.LINK_NOTICE_SCREENSHOTS ?? (await screenshotFolder(t, 'weir-page-notices-'));
  const browser = await launchChromium(t);
  const page = await browser.newPage();
  // The one request of the burst: the checkout page (its script's polls are refused as JSON, as before).
  t.is((await page.goto(session.url))?.status(), 200);
  const tooMany = {
    status: 429,
    heading: 'Too many requests',
    says: /^Too many requests came from your connection in a short time\. Try again in 1 second\.$/,
  };
  for (const [name, url, back] of [
    ['checkout-429', session.url, 'Back to the checkout'],
    ['invoice-429', invoiceUrl, 'Back to the invoice'],
  ] as const) {
    const answer = await page.goto(url);
    t.is(answer?.headers()['retry-after'], '1', name);
    t.is(await page.locator('#back').textContent(), back, name);
    await lookAt(t, page, shots, name, answer?.status(), { ...tooMany, testMode: true, back: true });
  }
  clock.advanceBy(1000);
  await Promise.all([page.waitForURL(invoiceUrl), page.locator('#back').click()]);
  t.regex((await page.locator('h1').textContent()) ?? '', /^Invoice/, 'the way back leads to the invoice');
});

test("an unknown invoice's PDF and a method a hosted page does not take are pages in Chromium (were JSON): in the frame, the 405 with its Allow and a way back, accessible at 1280 and 390 px", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const session = (await api.post<{ id: string; url: string }>('/api/v1/checkout/sessions', sessionRequest())).body;
  const shots = process.env.LINK_NOTICE_SCREENSHOTS ?? (await screenshotFolder(t, 'weir-page-notices-'));
  const browser = await launchChromium(t);
  const page = await browser.newPage();

  const pdf = await page.goto(`${weir.url}/invoices/00000000-0000-4000-8000-000000000000/pdf`);
  await lookAt(t, page, shots, 'invoice-pdf-404', pdf?.status(), {
    status: 404,
    heading: 'Invoice not found',
    says: /^This invoice does not exist or is no longer available\./,
    testMode: false,
    back: false,
  });

  // The browser sends the page's request as a PUT, as a hand-made or stray request would.
  await page.route(session.url, (route) => route.continue({ method: 'PUT' }));
  const put = await page.goto(session.url);
  t.is(put?.headers().allow?.split(', ').sort().join(', '), 'GET, HEAD, POST');
  await lookAt(t, page, shots, 'checkout-405', put?.status(), {
    status: 405,
    heading: 'This page cannot be used this way',
    says: /^This page only opens as a link in your browser and through its own buttons and forms\.$/,
    testMode: true,
    back: true,
  });
  await page.unroute(session.url);
  await Promise.all([page.waitForURL(session.url), page.locator('#back').click()]);
  t.regex((await page.locator('h1').textContent()) ?? '', /^Pay Corner Coffee/, 'the way back leads to the checkout');
});

test("a form something between the browser and Weir sent compressed is a 415 page in Chromium (was the API's JSON): on the payment link and the checkout page, in the frame with a way back, accessible at 1280 and 390 px", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  t.is((await api.put('/api/v1/organization/brand', { brandColor: '#4f46e5' })).status, 200);
  const link = await teaLink(api);
  const session = (await api.post<{ id: string; url: string }>('/api/v1/checkout/sessions', sessionRequest())).body;
  const shots = process.env.LINK_NOTICE_SCREENSHOTS ?? (await screenshotFolder(t, 'weir-page-notices-'));
  const browser = await launchChromium(t);
  const page = await browser.newPage();
  // The form's POST leaves the browser compressed, as a proxy or an extension might send it.
  await page.route(
    (url) => url.pathname === `/pay/${link.id}` || url.pathname === `/checkout/${session.id}`,
    (route) =>
      route.request().method() === 'POST'
        ? route.continue({
            headers: { ...route.request().headers(), 'content-encoding': 'gzip' },
            postData: gzipSync(route.request().postDataBuffer() ?? Buffer.alloc(0)),
          })
        : route.continue(),
  );

  await page.goto(link.url);
  const [paid] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: /^Pay/ }).click()]);
  await lookAt(t, page, shots, 'link-415', paid?.status(), {
    status: 415,
    heading: 'Your answers could not be read',
    says: /^They were not sent the way this page sends its form\. Go back to the form and press the button again\.$/,
    testMode: true,
    back: true,
  });

  await page.goto(session.url);
  // The asset buttons' form as posted without the page script (which would send its JSON instead).
  const [chosen] = await Promise.all([
    page.waitForNavigation(),
    page.locator('#assets').evaluate((assets) => assets.closest('form')?.submit()),
  ]);
  await lookAt(t, page, shots, 'checkout-415', chosen?.status(), {
    status: 415,
    heading: 'What was sent could not be read',
    says: /^It was not sent the way this page sends it\. Go back to the page and try again from there\.$/,
    testMode: true,
    back: true,
  });
});

type Expected = { status: number; heading: string; says: RegExp; testMode: boolean; back: boolean };

/** A notice page as expected: its status, heading, words, Test mode badge, way back; then `checked`. */
async function lookAt(
  t: import('ava').ExecutionContext,
  page: Page,
  shots: string,
  name: string,
  status: number | undefined,
  expected: Expected,
): Promise<void> {
  t.is(status, expected.status, name);
  t.is(await page.locator('h1').textContent(), expected.heading, name);
  t.regex((await page.locator('#notice').textContent()) ?? '', expected.says, name);
  t.is(await page.locator('header .badge').count(), expected.testMode ? 1 : 0, `${name}: Test mode badge`);
  t.is(await page.locator('#back').count(), expected.back ? 1 : 0, `${name}: a way back`);
  await checked(t, page, shots, name);
}

/** A screenshot at 1280 and 390 px, and no serious or critical axe-core violation at either. */
async function checked(t: import('ava').ExecutionContext, page: Page, shots: string, name: string): Promise<void> {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 800 });
    await page.screenshot({ path: join(shots, `${name}-${width}.png`), fullPage: true });
    const { violations } = await axeOf(page);
    t.deepEqual(
      violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`),
      [],
      `${name}: axe at ${width} px`,
    );
  }
}
