import { readFile } from 'node:fs/promises';
import test from 'ava';
import { sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSession } from '../../machines/checkout-session.types.ts';
import { renderCheckoutPage } from '../../src/hosted/checkout-page.ts';
import { payerStatus } from '../../src/hosted/checkout-status.ts';
import { names, NOW, pay, payment, withUsdcChosen } from '../../src/hosted/payer-status.fixture.ts';
import { launchChromium } from '../support/chromium.ts';

const ORIGIN = 'http://weir.test';
const SCRIPT = new URL('../../src/hosted/assets/checkout.js', import.meta.url);

const render = (session: CheckoutSession) => {
  const status = payerStatus(session, names, NOW, undefined, pay);
  return { status, html: renderCheckoutPage({ session, org: null, status, names, products: new Map() }) };
};

test('the hosted page turned Paid by its own status poll shows what the server renders: "Paid on" and the way back, though the redirect does not happen', async (t) => {
  const open = withUsdcChosen(sessionFixture({ successUrl: `${ORIGIN}/shop/thanks` }));
  const paid: CheckoutSession = {
    ...open,
    status: 'complete',
    paymentStatus: 'paid',
    amountReceived: open.amountTotal,
    payments: [payment('300000000', 'confirmed')],
    completedAt: '2026-01-01T00:12:00.000Z',
  };
  let current = open;
  const browser = await launchChromium(t);
  const page = await browser.newPage({ viewport: { width: 390, height: 900 } });
  const script = await readFile(SCRIPT, 'utf8');
  await page.route(`${ORIGIN}/**`, async (route) => {
    const path = new URL(route.request().url()).pathname;
    if (path === `/checkout/${open.id}`) return route.fulfill({ contentType: 'text/html', body: render(current).html });
    if (path === `/checkout/${open.id}/status`)
      return route.fulfill({ contentType: 'application/json', body: JSON.stringify(render(current).status) });
    if (path === '/assets/checkout.js') return route.fulfill({ contentType: 'text/javascript', body: script });
    // The shop does not answer with a page: the redirect leaves the payer where they are.
    if (path === '/shop/thanks') return route.fulfill({ status: 204 });
    return route.fulfill({ status: 404, body: '' });
  });
  await page.goto(`${ORIGIN}/checkout/${open.id}`);
  await page.locator('#status[data-status="open"]').waitFor();
  t.is(await page.locator('#final-panel').count(), 0);
  current = paid;
  await page.locator('#final-panel').waitFor({ timeout: 15_000 });
  t.regex((await page.locator('#final-panel').textContent()) ?? '', /Paid on 2026-01-01\./);
  t.is(await page.locator('#return-link').getAttribute('href'), `${ORIGIN}/shop/thanks`);
  t.false(await page.locator('#pay-controls').isVisible());
  t.is(
    await page.locator('#final-panel').evaluate((el) => el.outerHTML),
    /<div id="final-panel">[\s\S]*?<\/div>/.exec(render(paid).html)?.[0],
    'the same block as the server render',
  );
});
