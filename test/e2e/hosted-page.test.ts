import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import test from 'ava';
import type { Weir } from '../../src/app/start-weir.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { eventually } from '../support/api-client.ts';
import { launchChromium, screenshotFolder, screenshotsWithAxe } from '../support/chromium.ts';
import { createMerchant, sessionRequest, startTestWeir, promotionSession } from '../support/weir-harness.ts';

/** 2.5 USDC reaches `address` in block 1, which becomes final. */
async function payFinal(weir: Pick<Weir, 'bus'>, address: string) {
  const chain = chainPublisher(weir.bus);
  const block = randomHash();
  await chain.transfer({ to: address, amount: '2500000', blockNumber: 1, blockHash: block });
  await chain.final(1, block);
}

test('the hosted page shows the order, reveals the address and QR for the chosen asset, follows the status live and redirects on completion', async (t) => {
  // The shop the payer returns to, on loopback.
  const shop = createServer((req, res) => res.end(`thanks ${req.url}`));
  await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    shop.closeAllConnections();
    shop.close();
  });
  const shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;

  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  t.is((await api.put('/api/v1/organization/brand', { brandColor: '#8a2be2' })).status, 200);
  const session = (
    await api.post<{ id: string; url: string; addresses: { paymentAddress: string }[] }>('/api/v1/checkout/sessions', {
      ...sessionRequest('250000000', 1),
      successUrl: `${shopUrl}/thanks?session={CHECKOUT_SESSION_ID}`,
      paymentSetting: { preferredChainId: 7357 },
    })
  ).body;

  const browser = await launchChromium(t);
  const page = await browser.newPage();
  await page.goto(session.url);
  t.is(await page.locator('header strong').textContent(), 'Corner Coffee');
  t.is(await page.locator('#amount').textContent(), '2.50');
  t.regex((await page.locator('main').textContent()) ?? '', /Weir T-shirt × 1/);
  t.is(
    await page
      .locator('header')
      .evaluate(
        (el) =>
          (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(el)
            .backgroundColor,
      ),
    'rgb(138, 43, 226)',
  );

  // The merchant's preferred network is said in the button's name, and not chosen for the payer.
  t.is(await page.getByRole('button', { name: /USDC.*Preferred network/ }).getAttribute('aria-pressed'), 'false');
  await page.getByRole('button', { name: /USDC/ }).click();
  await page.locator('#reveal').waitFor({ state: 'visible' });
  t.is(await page.locator('#address').textContent(), session.addresses[0]!.paymentAddress);
  t.is(await page.locator('#due').textContent(), '2.5');
  t.is(await page.locator('#qr svg').count(), 1);
  await page.screenshot({ path: join(await screenshotFolder(t, 'weir-hosted-checkout-'), 'checkout.png') });

  await payFinal(weir, session.addresses[0]!.paymentAddress);
  await page.waitForURL(`${shopUrl}/thanks?session=${session.id}`, { timeout: 15_000 });
  t.regex((await page.textContent('body')) ?? '', new RegExp(session.id));
});

test('a cancel confirmed while the page’s status poll already sees the session canceled still returns the payer to the cancel URL', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  // The shop's page, answered by the browser's router: nothing leaves loopback.
  const cancelUrl = 'https://shop.example/cart';
  const session = (
    await api.post<{ id: string; url: string }>('/api/v1/checkout/sessions', {
      ...sessionRequest('250000000', 1),
      cancelUrl,
    })
  ).body;
  const browser = await launchChromium(t);
  const page = await browser.newPage();
  await page.route('https://shop.example/**', (route) => route.fulfill({ body: 'the cart' }));
  await page.goto(session.url);
  // The race, made certain: the cancel's answer is held until status polls have answered "canceled"
  // twice, the second from whichever page polls then (a page reloaded under the cancel would be a new one).
  let canceledPolls = 0;
  const pollSawIt = page.waitForResponse(
    async (r) =>
      r.url().endsWith(`/checkout/${session.id}/status`) &&
      ((await r.json()) as { status?: string }).status === 'canceled' &&
      ++canceledPolls === 2,
  );
  await page.route(`**/checkout/${session.id}/cancel`, async (route) => {
    const answer = await route.fetch();
    await pollSawIt;
    await route.fulfill({ response: answer });
  });
  await page.getByRole('button', { name: 'Cancel payment' }).click();
  await page
    .getByRole('dialog', { name: 'Cancel this payment?' })
    .getByRole('button', { name: 'Cancel payment' })
    .click();
  await page.waitForURL(cancelUrl, { timeout: 15_000 });
  t.is((await api.get<{ status: string }>(`/api/v1/checkout/sessions/${session.id}`)).body.status, 'canceled');
});

test('a refused asset choice stays said through the status polls until the payer chooses again; choosing again that succeeds replaces it', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const session = (
    await api.post<{ id: string; url: string }>('/api/v1/checkout/sessions', sessionRequest('250000000', 1))
  ).body;
  const browser = await launchChromium(t);
  const page = await browser.newPage();
  // The first choice is refused as the route refuses an asset the session does not offer; the next goes through.
  let refused = false;
  await page.route(`**/checkout/${session.id}/payment-method`, async (route) => {
    if (refused) return route.fallback();
    refused = true;
    await route.fulfill({
      status: 400,
      contentType: 'application/json',
      body: JSON.stringify({
        statusCode: 400,
        error: 'Bad Request',
        code: 'parameter_invalid',
        message: 'It is not offered by this checkout: choose one of those below.',
      }),
    });
  });
  await page.goto(session.url);
  await page.getByRole('button', { name: /USDC/ }).click();
  await page.getByText('This asset cannot be used').waitFor();

  // Two polls answered after it: the first has been applied to the page before the second was asked for.
  let polls = 0;
  await page.waitForResponse((r) => r.url().endsWith(`/checkout/${session.id}/status`) && ++polls === 2);
  t.is(await page.locator('#status-title').textContent(), 'This asset cannot be used');
  // The route's words for the payer, as they are.
  t.is(
    await page.locator('#status-detail').textContent(),
    'It is not offered by this checkout: choose one of those below.',
  );
  t.true(await page.locator('#reveal').isHidden(), 'no request to pay in the refused asset');

  await page.getByRole('button', { name: /USDC/ }).click();
  await page.locator('#reveal').waitFor({ state: 'visible' });
  await page.getByText('Waiting for payment').waitFor();
  t.is(await page.locator('#status-detail').textContent(), 'Send the amount below; this page updates by itself.');
});

test("a subscription checkout that names no customer asks the payer's email first (labelled, accessible at 1280 and 390 px, a bad one said beside it); given, the assets follow, the payment completes it and the subscription's customer has that email", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const product = (await api.post<{ id: string }>('/api/v1/products', { name: 'Pro plan' })).body;
  // The spec's subscription flow: a line whose priceData carries currency, unitAmount, interval and productId; no customer.
  const session = (
    await api.post<{ id: string; url: string; subscriptionId: string; addresses: { paymentAddress: string }[] }>(
      '/api/v1/checkout/sessions',
      {
        mode: 'subscription',
        successUrl: 'https://shop.example/welcome',
        cancelUrl: 'https://shop.example/plans',
        // Paid, the page says so in place: the test's browser goes nowhere off this machine.
        afterCompletion: 'hosted_confirmation',
        lineItems: {
          data: [
            { priceData: { currency: 'usdc', unitAmount: '250000000', interval: 'month', productId: product.id } },
          ],
        },
      },
    )
  ).body;

  const browser = await launchChromium(t);
  const page = await browser.newPage();
  await page.goto(session.url);
  const email = page.getByLabel('Email');
  t.true(await email.isVisible());
  t.is(await page.getByRole('button', { name: /USDC/ }).count(), 0, 'no asset before the email');
  await screenshotsWithAxe(t, page, 'checkout-email-step');

  // The browser's own check aside (type=email), the server's refusal is said beside the input.
  await page.locator('#email-step').evaluate((form) => {
    (form as unknown as { noValidate: boolean }).noValidate = true;
  });
  await email.fill('pat');
  await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Continue' }).click()]);
  t.is(
    await page.locator('#customer-email-error').textContent(),
    'The email must be an email address, such as payer@example.com.',
  );
  t.is(await page.getByLabel('Email').getAttribute('aria-invalid'), 'true');
  await screenshotsWithAxe(t, page, 'checkout-email-refused');

  await page.getByLabel('Email').fill('pat@example.com');
  await Promise.all([page.waitForURL(session.url), page.getByRole('button', { name: 'Continue' }).click()]);
  await page.getByRole('button', { name: /USDC/ }).click();
  await page.locator('#reveal').waitFor({ state: 'visible' });
  t.is(await page.locator('#due').textContent(), '2.5');

  await payFinal(weir, session.addresses[0]!.paymentAddress);
  await page.locator('#status-title', { hasText: 'Paid' }).waitFor({ timeout: 15_000 });
  const subscription = await eventually(async () => {
    const s = (await api.get<{ status: string; customerId: string }>(`/api/v1/subscriptions/${session.subscriptionId}`))
      .body;
    return s.status === 'active' ? s : undefined;
  }, 'the subscription active');
  t.is(
    (await api.get<{ email: string }>(`/api/v1/customers/${subscription.customerId}`)).body.email,
    'pat@example.com',
  );
});

test("a refused email stays said in the status through the page's status polls, with its script running", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const product = (await api.post<{ id: string }>('/api/v1/products', { name: 'Pro plan' })).body;
  // A subscription that names neither a customer nor an email: the page asks the payer's email first.
  const session = (
    await api.post<{ id: string; url: string }>('/api/v1/checkout/sessions', {
      mode: 'subscription',
      successUrl: 'https://shop.example/welcome',
      lineItems: {
        data: [{ priceData: { currency: 'usdc', unitAmount: '250000000', interval: 'month', productId: product.id } }],
      },
    })
  ).body;
  const browser = await launchChromium(t);
  const page = await browser.newPage();
  await page.goto(session.url);
  await page.locator('#status[data-state]').waitFor();
  // The browser's own check aside (type=email): the server refuses it.
  await page.locator('#email-step').evaluate((form) => {
    (form as unknown as { noValidate: boolean }).noValidate = true;
  });
  await page.getByLabel('Email').fill('pat');
  await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith(`/checkout/${session.id}`)),
    page.getByRole('button', { name: 'Continue' }).click(),
  ]);
  await page.locator('#customer-email-error').waitFor();
  t.is(await page.locator('#status-title').textContent(), 'This email cannot be used');

  // Two polls answered after it: the first has been applied to the page before the second was asked for.
  let polls = 0;
  await page.waitForResponse((r) => r.url().endsWith(`/checkout/${session.id}/status`) && ++polls === 2);
  t.is(await page.locator('#status-title').textContent(), 'This email cannot be used');
  t.is(
    await page.locator('#status-detail').textContent(),
    'The email must be an email address, such as payer@example.com.',
  );
});

test("a refused promotion code the page's form posted before its script ran (marked by the server) stays said in the status through the status polls, until the payer acts again", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const session = await promotionSession(api);
  const browser = await launchChromium(t);
  const page = await browser.newPage();
  await page.goto(session.url);
  await page.getByLabel('Promotion code').fill('NOSUCHCODE');
  // Posted as the page without its script posts it (submit() skips the script's handler): the server draws the refusal.
  await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith(`/checkout/${session.id}`)),
    page.locator('#promo').evaluate((form) => (form as unknown as { submit(): void }).submit()),
  ]);
  await page.waitForLoadState('load');
  const detail = 'This is not a valid promotion code: check it and try again.';

  // Two polls answered after it: the first has been applied to the page before the second was asked for.
  let polls = 0;
  await page.waitForResponse((r) => r.url().endsWith(`/checkout/${session.id}/status`) && ++polls === 2);
  t.is(await page.locator('#status-title').textContent(), 'This promotion code cannot be used');
  t.is(await page.locator('#status-detail').textContent(), detail);

  // The payer chooses an asset: the refusal gives way to what to send.
  await page.getByRole('button', { name: /USDC/ }).click();
  await page.getByText('Waiting for payment').waitFor();
});

test("a promotion code the page's script sends is refused in the payer's words, the same as its form's (was the API's: the coupon's id and its limit)", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const coupon = await api.post('/api/v1/coupons', {
    name: 'Launch',
    percentOff: 10,
    maxRedemptions: 1,
    promotionCodeData: { data: [{ code: 'LAUNCH' }] },
  });
  t.is(coupon.status, 200);
  const first = await promotionSession(api);
  const used = await fetch(`${first.url}/promotion-code`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code: 'LAUNCH' }),
  });
  t.is(used.status, 200);
  const session = await promotionSession(api);
  const browser = await launchChromium(t);
  const page = await browser.newPage({ viewport: { width: 390, height: 900 } });
  await page.goto(session.url);
  await page.getByLabel('Promotion code').fill('LAUNCH');
  await page.getByRole('button', { name: 'Apply' }).click();
  const words = 'This promotion code has been used as many times as it can be.';
  await page.locator('#promo-result', { hasText: /\S/ }).waitFor();
  t.is(await page.locator('#promo-result').textContent(), words);
  const shots = process.env.CHECKOUT_REFUSAL_SCREENSHOTS ?? (await screenshotFolder(t, 'weir-checkout-refusal-'));
  await page.screenshot({ path: join(shots, 'promotion-code-refused-390.png'), fullPage: true });
});
