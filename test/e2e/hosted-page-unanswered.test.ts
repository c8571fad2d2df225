import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { Page, Route } from 'playwright-core';
import { CHECKOUT_NOTICES } from '../../src/hosted/page-notices.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { launchChromium, screenshotFolder } from '../support/chromium.ts';
import { injectedWallet } from '../support/injected-wallet.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';

const HEADING = CHECKOUT_NOTICES.unavailable.heading;
const WORDS = CHECKOUT_NOTICES.unavailable.message;

/** What a reverse proxy answers when Weir behind it does not: an HTML page, not the route's JSON. */
const badGateway = (route: Route) =>
  route.fulfill({
    status: 502,
    contentType: 'text/html',
    body: '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>',
  });
const refused = (route: Route) => route.abort('connectionrefused');

/** A test session taking promotion codes, paid in place (no redirect), and its page in Chromium at 390 px, every error it throws kept. */
async function openPage(t: ExecutionContext) {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const session = (
    await api.post<{ id: string; url: string; addresses: { paymentAddress: string }[] }>('/api/v1/checkout/sessions', {
      ...sessionRequest('250000000', 1),
      allowPromotionCodes: true,
      paymentSetting: { preferredChainId: 7357 },
      afterCompletion: 'hosted_confirmation',
    })
  ).body;
  const browser = await launchChromium(t);
  const page = await browser.newPage({ viewport: { width: 390, height: 900 } });
  const thrown: string[] = [];
  page.on('pageerror', (error) => thrown.push(error.message));
  return { weir, session, page, thrown };
}

/** The page's status says the checkout cannot be reached, in the words the server's own notice uses. */
async function saysUnreachable(t: ExecutionContext, page: Page) {
  await page.locator('#status-title', { hasText: HEADING }).waitFor();
  t.is(await page.locator('#status-detail').textContent(), WORDS);
}

test('a choice of asset or a promotion code answered by an HTML 502 page or by no connection is said in the payer’s words; the buttons still work and nothing is thrown', async (t) => {
  const { session, page, thrown } = await openPage(t);
  const paymentMethod = `**/checkout/${session.id}/payment-method`;
  const promotionCode = `**/checkout/${session.id}/promotion-code`;
  await page.goto(session.url);
  const usdc = page.getByRole('button', { name: /USDC/ });

  await page.route(paymentMethod, badGateway);
  await usdc.click();
  await saysUnreachable(t, page);
  t.true(await page.locator('#reveal').isHidden(), 'no request to pay shown for a choice with no answer');
  await page.screenshot({
    path: join(
      process.env.CHECKOUT_UNANSWERED_SCREENSHOTS ?? (await screenshotFolder(t, 'weir-checkout-unanswered-')),
      'payment-method-502-390.png',
    ),
  });

  // The same button, once the route answers again: the request to pay shows.
  await page.unroute(paymentMethod);
  await usdc.click();
  await page.locator('#reveal').waitFor({ state: 'visible' });
  await page.route(paymentMethod, refused);
  await usdc.click();
  await saysUnreachable(t, page);
  t.true(await page.locator('#reveal').isHidden());
  await page.unroute(paymentMethod);

  const code = page.getByLabel('Promotion code');
  const apply = page.getByRole('button', { name: 'Apply' });
  await page.route(promotionCode, badGateway);
  await code.fill('LAUNCH');
  await apply.click();
  await page.locator('#promo-result', { hasText: WORDS }).waitFor();
  // The form still sends: the server's own refusal, then no connection at all.
  await page.unroute(promotionCode);
  await apply.click();
  await page.locator('#promo-result', { hasText: 'This is not a valid promotion code' }).waitFor();
  await page.route(promotionCode, refused);
  await apply.click();
  await page.locator('#promo-result', { hasText: WORDS }).waitFor();
  t.true(await apply.isEnabled());
  t.deepEqual(thrown, []);
});

test('a status poll answered by an HTML 502 page or by no connection says so and polls on: the page follows the payment once the server answers again', async (t) => {
  const { weir, session, page, thrown } = await openPage(t);
  const status = `**/checkout/${session.id}/status`;
  await page.addInitScript(injectedWallet('0x00000000000000000000000000000000000000aa'));
  await page.goto(session.url);
  await page.getByRole('button', { name: /USDC/ }).click();
  await page.getByText('Waiting for payment').waitFor();

  // The first poll gets a proxy's page, the next ones no connection: the poll keeps asking through both.
  let failed = 0;
  let pollsFailed: () => void = () => undefined;
  const threeFailed = new Promise<void>((resolve) => {
    pollsFailed = resolve;
  });
  await page.route(status, async (route) => {
    await (++failed === 1 ? badGateway(route) : refused(route));
    if (failed === 3) pollsFailed();
  });
  await saysUnreachable(t, page);
  await threeFailed;
  // The wallet reads the status before paying: it says the same, and its buttons come back.
  await page.getByRole('button', { name: 'Connect wallet' }).click();
  await page.locator('.wallet-message', { hasText: WORDS }).waitFor();
  t.true(await page.getByRole('button', { name: 'Connect wallet' }).isEnabled());

  await page.unroute(status);
  await page.getByText('Waiting for payment').waitFor();
  const chain = chainPublisher(weir.bus);
  const block = randomHash();
  await chain.transfer({
    to: session.addresses[0]!.paymentAddress,
    amount: '2500000',
    blockNumber: 1,
    blockHash: block,
  });
  await chain.final(1, block);
  await page.locator('#status-title', { hasText: 'Paid' }).waitFor({ timeout: 15_000 });
  t.deepEqual(thrown, []);
});
