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
  // Waited for, not read after: a status poll answered in between may redraw the status (the server is back).
  const exactly = (text: string) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
  await page.locator('#status-title', { hasText: exactly(HEADING) }).waitFor();
  await page.locator('#status-detail', { hasText: exactly(WORDS) }).waitFor();
  t.pass();
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

/** A request the page made, held until the test answers it, and when the test saw it. */
type Held = { route: Route; at: number };

/** Every request to `url` from now on, in order, each held until the test answers it. */
async function holdRequests(page: Page, url: string) {
  const arrived: Held[] = [];
  const waiting: ((held: Held) => void)[] = [];
  await page.route(url, (route) => {
    const held = { route, at: Date.now() };
    const taker = waiting.shift();
    if (taker) taker(held);
    else arrived.push(held);
  });
  return {
    next: () =>
      arrived.length > 0 ? Promise.resolve(arrived.shift()!) : new Promise<Held>((resolve) => waiting.push(resolve)),
  };
}

test('a status poll answered by an HTML 502 page or by no connection: one is a blip and says nothing, the second in a row says so; the polls back off while they fail and the page follows the payment once the server answers again', async (t) => {
  const { weir, session, page, thrown } = await openPage(t);
  const status = `**/checkout/${session.id}/status`;
  await page.addInitScript(injectedWallet('0x00000000000000000000000000000000000000aa'));
  await page.goto(session.url);
  // The choice, once answered, sends one status read of its own beside the polls: let it be answered
  // before the polls are held, or it is taken for the first of them (and the next poll comes too soon).
  const choice = page.waitForRequest((r) => r.url().endsWith('/payment-method') && r.method() === 'POST');
  await page.getByRole('button', { name: /USDC/ }).click();
  await (await choice).response();
  await (await page.waitForRequest((r) => r.url().endsWith(`/checkout/${session.id}/status`))).response();
  const title = page.locator('#status-title');
  await title.filter({ hasText: 'Waiting for payment' }).waitFor();

  // The first poll gets a proxy's page; asked again a second later, the page still says what it did.
  const polls = await holdRequests(page, status);
  const first = await polls.next();
  await badGateway(first.route);
  const second = await polls.next();
  t.is(await title.textContent(), 'Waiting for payment', 'one failed poll says nothing');
  t.true(second.at - first.at >= 990, `${second.at - first.at} ms`);
  // The second in a row gets no connection: said. A poll is only sent once the one before is answered,
  // and each interval is timed from when that answer came, so each gap seen here is at least it.
  await refused(second.route);
  await saysUnreachable(t, page);
  const third = await polls.next();
  t.true(third.at - second.at >= 1990, `backs off to 2 s: ${third.at - second.at} ms`);
  await refused(third.route);
  const fourth = await polls.next();
  t.true(fourth.at - third.at >= 3990, `then 4 s: ${fourth.at - third.at} ms`);
  // Answered again: the notice gives way, and the polls come every second again (8 s without the reset).
  await fourth.route.continue();
  await title.filter({ hasText: 'Waiting for payment' }).waitFor();
  const fifth = await polls.next();
  t.true(fifth.at - fourth.at < 4000, `every second again: ${fifth.at - fourth.at} ms`);
  await fifth.route.continue();
  await page.unroute(status);

  // No connection for a while: the wallet reads the status before paying, says the same, and its buttons come back.
  await page.route(status, refused);
  await page.getByRole('button', { name: 'Connect wallet' }).click();
  await page.locator('.wallet-message', { hasText: WORDS }).waitFor();
  t.true(await page.getByRole('button', { name: 'Connect wallet' }).isEnabled());

  await page.unroute(status);
  await title.filter({ hasText: 'Waiting for payment' }).waitFor();
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
