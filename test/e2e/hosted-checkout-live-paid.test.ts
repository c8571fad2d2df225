import { readFile } from 'node:fs/promises';
import test, { type ExecutionContext } from 'ava';
import { sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSession } from '../../machines/checkout-session.types.ts';
import { renderCheckoutPage } from '../../src/hosted/checkout-page.ts';
import { payerStatus } from '../../src/hosted/checkout-status.ts';
import { names, NOW, pay, payment, withUsdcChosen } from '../../src/hosted/payer-status.fixture.ts';
import { launchChromium } from '../support/chromium.ts';

const ORIGIN = 'http://weir.test';
const ASSETS = new URL('../../src/hosted/assets/', import.meta.url);

const render = (session: CheckoutSession) => {
  const status = payerStatus(session, names, NOW, undefined, pay);
  return { status, html: renderCheckoutPage({ session, org: null, status, names, products: new Map() }) };
};

/**
 * Chromium on the hosted page of `first.id`, its page and status answered from the session `set` last
 * gave (the page rendered as Weir renders it), its scripts from the package; the shop's redirect target answers nothing.
 */
async function livePage(t: ExecutionContext, first: CheckoutSession) {
  let current = first;
  const browser = await launchChromium(t);
  const page = await browser.newPage({ viewport: { width: 390, height: 900 } });
  const scripts = new Map<string, string>(
    await Promise.all(
      ['checkout.js', 'hosted-fetch.js'].map(
        async (name) => [`/assets/${name}`, await readFile(new URL(name, ASSETS), 'utf8')] as const,
      ),
    ),
  );
  await page.route(`${ORIGIN}/**`, async (route) => {
    const path = new URL(route.request().url()).pathname;
    if (path === `/checkout/${first.id}`)
      return route.fulfill({ contentType: 'text/html', body: render(current).html });
    if (path === `/checkout/${first.id}/status`)
      return route.fulfill({ contentType: 'application/json', body: JSON.stringify(render(current).status) });
    const script = scripts.get(path);
    if (script !== undefined) return route.fulfill({ contentType: 'text/javascript', body: script });
    // The shop does not answer with a page: the redirect leaves the payer where they are.
    if (path === '/shop/thanks') return route.fulfill({ status: 204 });
    return route.fulfill({ status: 404, body: '' });
  });
  return {
    page,
    set: (session: CheckoutSession) => {
      current = session;
    },
  };
}

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
  const { page, set } = await livePage(t, open);
  await page.goto(`${ORIGIN}/checkout/${open.id}`);
  await page.locator('#status[data-status="open"]').waitFor();
  t.is(await page.locator('#final-panel').count(), 0);
  set(paid);
  await page.locator('#final-panel').waitFor({ timeout: 15_000 });
  t.regex((await page.locator('#final-panel').textContent()) ?? '', /Paid on 1 January 2026, 00:12 UTC\./);
  // The heading no longer asks to pay.
  t.regex((await page.locator('#summary-title').textContent()) ?? '', /^Paid to /);
  t.is(await page.locator('#return-link').getAttribute('href'), `${ORIGIN}/shop/thanks`);
  t.false(await page.locator('#pay-controls').isVisible());
  t.is(
    await page.locator('#final-panel').evaluate((el) => el.outerHTML),
    /<div id="final-panel">[\s\S]*?<\/div>/.exec(render(paid).html)?.[0],
    'the same block as the server render',
  );
});

test('an open page whose session expires and receives late money between two polls never shows the late money in Paid', async (t) => {
  const open = withUsdcChosen(sessionFixture({ successUrl: `${ORIGIN}/shop/thanks` }));
  const late = { ...payment('300000000', 'confirmed'), transferId: 't-late', late: true };
  const expired: CheckoutSession = { ...open, status: 'expired', amountReceived: '300000000', payments: [late] };
  t.is(render(expired).status.amountReceivedFormatted, '3.00', 'the status JSON adds the late money in');
  const { page, set } = await livePage(t, open);
  // Every text #paid has, on every page load (the reload included), told to the test as it is written.
  const seen: string[] = [];
  await page.exposeFunction('paidWas', (text: string) => seen.push(text));
  await page.addInitScript(() => {
    const w = globalThis as unknown as {
      paidWas(text: string): void;
      document: { addEventListener(e: string, f: () => void): void; getElementById(id: string): unknown };
      MutationObserver: new (
        f: () => void,
      ) => { observe(n: unknown, o: { childList: boolean; characterData: boolean; subtree: boolean }): void };
    };
    w.document.addEventListener('DOMContentLoaded', () => {
      const paid = w.document.getElementById('paid') as { textContent: string } | null;
      if (!paid) return;
      w.paidWas(paid.textContent);
      new w.MutationObserver(() => w.paidWas(paid.textContent)).observe(paid, {
        childList: true,
        characterData: true,
        subtree: true,
      });
    });
  });
  await page.goto(`${ORIGIN}/checkout/${open.id}`);
  await page.locator('#status[data-status="open"]').waitFor();
  let polls = 0;
  await page.waitForResponse((r) => r.url().endsWith('/status') && ++polls === 2);
  t.true(seen.length >= 2, 'the observer saw the polls write #paid');
  // The close and the late confirmation, both between two polls.
  set(expired);
  await page.locator('#paid-late').waitFor({ timeout: 15_000 });
  t.is(await page.locator('#paid').textContent(), '0.00');
  t.is(await page.locator('#paid-late').textContent(), '3.00');
  t.false(seen.includes('3.00'), `#paid was: ${seen.join(', ')}`);
});
