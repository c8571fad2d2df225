import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import type { Browser, Page } from 'playwright-core';
import { DEFAULT_SESSION_LIFETIME_MS } from '../../src/actors/create-checkout-session.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { chainPublisher, randomHash } from './chain-publisher.ts';
import { axeOf, launchChromium, screenshotFolder } from './chromium.ts';
import { SUPPORT_LINK } from './hosted-pages.ts';
import { createMerchant, startTestWeir } from './weir-harness.ts';

/** The shop the payer comes from and returns to, and where its product image lives, on loopback. */
async function startShop(t: ExecutionContext) {
  const shop = createServer((req, res) => {
    if (req.url === '/mug.svg') {
      res.writeHead(200, { 'content-type': 'image/svg+xml' });
      res.end(
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 56 56"><rect width="56" height="56" fill="#e8d5b7"/><rect x="14" y="16" width="22" height="26" rx="3" fill="#6b4423"/><path d="M36 22h4a5 5 0 0 1 0 10h-4" fill="none" stroke="#6b4423" stroke-width="3"/></svg>',
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><title>Shop</title><p>back at the shop: ${req.url}</p>`);
  });
  await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    shop.closeAllConnections();
    shop.close();
  });
  return `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
}

type DocWindow = { document: { getElementById(id: string): { dataset: Record<string, string> } | null } };
const stateIs = (page: Page, state: string) =>
  page.waitForFunction(
    (s) => (globalThis as unknown as DocWindow).document.getElementById('status')?.dataset.state === s,
    state,
    { timeout: 15_000 },
  );

/** The test's title at `width`, saying all it checks. */
export const everyStateTitle = (width: number) =>
  `the hosted checkout in every state at ${width} px: names and icons, due/paid/remaining, the request follows the remaining amount, copy, countdown, wallet link, confirmation before cancel, final states without controls, HTML error pages, favicon; axe finds no serious or critical violation`;

/**
 * The hosted checkout in every state at one width (as `everyStateTitle` says), with screenshots.
 * One file per width runs it, so each finishes well inside ava's inactivity timeout.
 */
export async function checkoutInEveryState(t: ExecutionContext, width: number): Promise<void> {
  const shop = await startShop(t);
  const clock = createManualClock(Date.now());
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const ok = async <T>(p: Promise<{ status: number; body: T }>, what: string): Promise<T> => {
    const r = await p;
    if (r.status !== 200) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  await ok(api.put('/api/v1/organization/brand', { brandColor: '#2f5d62' }), 'brand');
  await ok(
    api.put('/api/v1/organization', {
      supportEmail: 'help@corner.example',
      supportPhone: '+44 20 7946 0000',
      websiteUrl: 'https://corner.example',
      termsUrl: 'https://corner.example/terms',
      privacyUrl: 'https://corner.example/privacy',
      addressDetails: { line1: '1 Bean Street', city: 'London', postalCode: 'E1 6AN', country: 'GB' },
    }),
    'business details',
  );
  const newSession = (extra: Record<string, unknown> = {}) =>
    ok(
      api.post<{ id: string; url: string; addresses: { paymentAddress: string; asset: { symbol: string } }[] }>(
        '/api/v1/checkout/sessions',
        {
          mode: 'payment',
          successUrl: `${shop}/thanks?session={CHECKOUT_SESSION_ID}`,
          cancelUrl: `${shop}/cart`,
          allowPromotionCodes: true,
          lineItems: {
            data: [
              {
                priceData: {
                  currency: 'usdc',
                  unitAmount: '100000000',
                  productData: {
                    name: 'Flat white',
                    description: 'Double shot, whole milk, 8 oz.',
                    images: [`${shop}/mug.svg`],
                  },
                },
                quantity: 2,
              },
              {
                priceData: { currency: 'usdc', unitAmount: '50000000', productData: { name: 'Croissant' } },
                quantity: 1,
              },
            ],
          },
          ...extra,
        },
      ),
      'session',
    );

  // The other hosted pages: a payment link (and one deactivated), an invoice's page once paid.
  const link = await ok(api.post<{ url: string }>('/api/v1/payment-links', SUPPORT_LINK), 'payment link');
  const inactive = await ok(
    api.post<{ id: string; url: string }>('/api/v1/payment-links', {
      title: 'Sold out',
      amount: '100000000',
      currency: 'usdc',
    }),
    'payment link',
  );
  await ok(api.put(`/api/v1/payment-links/${inactive.id}/deactivate`, {}), 'deactivate');
  const customer = await ok(api.post<{ id: string }>('/api/v1/customers', { email: 'payer@example.com' }), 'customer');
  const invoice = await ok(
    api.post<{ id: string }>('/api/v1/invoices', {
      customerId: customer.id,
      lineItems: {
        data: [{ priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Hour' } } }],
      },
    }),
    'invoice',
  );
  await ok(api.post(`/api/v1/invoices/${invoice.id}/finalize`), 'finalize');
  await ok(api.post(`/api/v1/invoices/${invoice.id}/pay`), 'pay');
  await ok(
    api.post('/api/v1/coupons', { name: 'Ten off', percentOff: 10, promotionCodeData: { data: [{ code: 'TENOFF' }] } }),
    'coupon',
  );
  const unknown = '00000000-0000-4000-8000-000000000000';
  const otherPages = [
    { name: 'payment-link', url: link.url, status: 200 },
    { name: 'payment-link-inactive', url: inactive.url, status: 410 },
    { name: 'payment-link-not-found', url: `${weir.url}/pay/${unknown}`, status: 404 },
    { name: 'invoice-paid', url: `${weir.url}/invoices/${invoice.id}/pay`, status: 200 },
    { name: 'invoice-not-found', url: `${weir.url}/invoices/${unknown}/pay`, status: 404 },
  ];

  const shots = await screenshotFolder(t, 'weir-hosted-states-');
  const browser: Browser = await launchChromium(t);
  const chain = chainPublisher(weir.bus);
  let block = 100;

  /** A screenshot of the whole page, and axe's serious and critical findings on it (none allowed). */
  const check = async (page: Page, name: string) => {
    await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
    const results = await axeOf(page);
    const bad = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    t.deepEqual(
      bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
      [],
      `${name}: axe`,
    );
    t.is(
      await page
        .locator('link[rel="icon"]')
        .getAttribute('href')
        .then((h) => h?.startsWith('/assets/icon-favicon.svg')),
      true,
      `${name}: favicon`,
    );
  };
  const noControls = async (page: Page, name: string) => {
    for (const selector of ['#assets', '#cancel', '#promo', '#reveal', '#countdown', 'button'])
      t.is(await page.locator(selector).count(), 0, `${name}: no ${selector}`);
  };

  const context = await browser.newContext({ viewport: { width, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: weir.url });
  const page = await context.newPage();
  const at = (state: string) => `${width}-${state}`;
  // The pages' own scripts never fail; a 4xx page's status is all Chromium may log.
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource: the server responded'))
      problems.push(`console: ${message.text()}`);
  });

  // Open, choosing an asset: names from the registry, bundled icons, due/paid/remaining, a countdown.
  const session = await newSession();
  await page.goto(session.url);
  t.is(await page.locator('#amount').textContent(), '2.50');
  const usdc = page.getByRole('button', { name: /USD Coin/ });
  t.regex((await usdc.textContent()) ?? '', /USD Coin\s+USDC\s+on Weir Testnet/);
  t.regex((await usdc.locator('img').first().getAttribute('src')) ?? '', /^\/assets\/icon-usdc\.svg\?v=/);
  t.is(await page.locator('#remaining').textContent(), '2.50');
  t.is(await page.locator('#paid').textContent(), '0.00');
  t.is(await page.locator('#status-title').textContent(), 'Waiting for payment');
  await page.waitForFunction(() =>
    /^\d\d:\d\d$|^\d+:\d\d:\d\d$/.test(
      (
        globalThis as unknown as { document: { getElementById(id: string): { textContent: string } } }
      ).document.getElementById('expires').textContent,
    ),
  );
  t.regex((await page.locator('main').textContent()) ?? '', /Double shot, whole milk/);
  t.regex((await page.locator('.item-image').first().getAttribute('src')) ?? '', /mug\.svg$/);
  t.regex((await page.locator('footer').textContent()) ?? '', /help@corner\.example[\s\S]*\+44 20 7946 0000/);
  t.is(await page.getByRole('link', { name: 'Terms' }).getAttribute('href'), 'https://corner.example/terms');
  await check(page, at('1-open'));

  // Chosen with the keyboard: the address, amount, QR, wallet link and the wallet helper's container.
  await usdc.focus();
  await page.keyboard.press('Enter');
  await page.locator('#reveal').waitFor({ state: 'visible' });
  t.is(await page.locator('#address').textContent(), session.addresses[0]!.paymentAddress);
  t.is(await page.locator('#due').textContent(), '2.5');
  t.is(await page.locator('#network').textContent(), 'Weir Testnet');
  t.is(await page.locator('#qr svg').count(), 1);
  // EIP-681 with both addresses in their EIP-55 checksum, as the API and the page show them.
  t.is(
    await page.locator('#open-wallet').getAttribute('href'),
    `ethereum:0x00000000000000000000000000000000000A11cE@7357/transfer?address=${session.addresses[0]!.paymentAddress}&uint256=2500000`,
  );
  t.is(await page.locator('#reveal #wallet-actions').count(), 1);
  await page.getByRole('button', { name: 'Copy address' }).click();
  t.is(
    await page.evaluate(() =>
      (
        globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
      ).navigator.clipboard.readText(),
    ),
    session.addresses[0]!.paymentAddress,
  );
  await page.getByRole('button', { name: 'Copy amount' }).click();
  t.is(
    await page.evaluate(() =>
      (
        globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
      ).navigator.clipboard.readText(),
    ),
    '2.5',
  );
  await check(page, at('2-revealed'));

  // A first payment of 1 USDC seen on chain: confirming.
  const first = `0x${randomHash().slice(2)}`;
  block += 1;
  await chain.transfer({
    to: session.addresses[0]!.paymentAddress,
    amount: '1000000',
    blockNumber: block,
    blockHash: first,
  });
  await stateIs(page, 'confirming');
  t.regex(
    (await page.locator('#status-detail').textContent()) ?? '',
    /1\.00 USDC seen on the network.*Send the remaining 1\.50 USDC/,
  );
  // What is seen is not asked for twice: the request is for the rest already.
  await page.waitForFunction(
    () =>
      (
        globalThis as unknown as { document: { getElementById(id: string): { textContent: string } } }
      ).document.getElementById('due').textContent === '1.5',
  );
  t.regex((await page.locator('#open-wallet').getAttribute('href')) ?? '', /uint256=1500000$/);
  // Paid, Confirming and Remaining make the total: what is seen is shown apart, not asked for again.
  t.is(await page.locator('#paid').textContent(), '0.00');
  t.is(await page.locator('#confirming').textContent(), '1.00');
  t.true(await page.locator('#confirming-row').isVisible());
  t.is(await page.locator('#remaining').textContent(), '1.50');
  await check(page, at('3-confirming'));

  // Confirmed: partly paid, and the request follows the remaining 1.5 USDC.
  await chain.final(block, first);
  await stateIs(page, 'partly_paid');
  await page.waitForFunction(
    () =>
      (
        globalThis as unknown as { document: { getElementById(id: string): { textContent: string } } }
      ).document.getElementById('due').textContent === '1.5',
  );
  t.is(await page.locator('#paid').textContent(), '1.00');
  t.false(await page.locator('#confirming-row').isVisible(), 'nothing confirming');
  t.is(await page.locator('#remaining').textContent(), '1.50');
  t.regex((await page.locator('#open-wallet').getAttribute('href')) ?? '', /uint256=1500000$/);
  const status = (await (await fetch(`${session.url}/status`)).json()) as { payment: { amountDueRaw: string } };
  t.is(status.payment.amountDueRaw, '1500000');
  await check(page, at('4-partly-paid'));

  // The rest: complete. The live page goes back to the shop; the page itself then shows it paid.
  block += 1;
  const second = randomHash();
  await chain.transfer({
    to: session.addresses[0]!.paymentAddress,
    amount: '1500000',
    blockNumber: block,
    blockHash: second,
  });
  // The rest seen, not yet confirmed: received, and nothing invites a second payment.
  await page.locator('#pay-controls').waitFor({ state: 'hidden', timeout: 15_000 });
  t.is(await page.locator('#status-title').textContent(), 'Payment received');
  t.regex((await page.locator('#status-detail').textContent()) ?? '', /^1\.50 USDC received, waiting for the network/);
  t.is(await page.locator('#confirming').textContent(), '1.50');
  t.is(await page.locator('#remaining').textContent(), '0.00', 'nothing left to send');
  for (const selector of ['#reveal', '#qr', '#open-wallet', '#assets', '#cancel', '#countdown'])
    t.false(await page.locator(selector).isVisible(), `received: ${selector} hidden`);
  const received = (await (await fetch(`${session.url}/status`)).json()) as {
    amountToSend: string;
    payment: unknown;
  };
  t.like(received, { amountToSend: '0', payment: null }, 'no request to send 0');
  await check(page, at('4b-received'));
  await chain.final(block, second);
  // Paid, in the moment before the page goes back to the shop: still no request to pay.
  await page.waitForFunction(() => {
    const d = (
      globalThis as unknown as {
        document: { getElementById(id: string): { dataset: Record<string, string>; hidden: boolean } };
      }
    ).document;
    return d.getElementById('status').dataset.status === 'complete' && d.getElementById('pay-controls').hidden;
  });
  await page.waitForURL(`${shop}/thanks?session=${session.id}`, { timeout: 15_000 });
  await page.goto(session.url);
  t.is(await page.locator('#status').getAttribute('data-state'), 'paid');
  t.is(await page.locator('#remaining').textContent(), '0.00');
  t.is(await page.locator('#return-link').getAttribute('href'), `${shop}/thanks?session=${session.id}`);
  await noControls(page, at('complete'));
  await check(page, at('5-complete'));

  // Canceled, after confirming in an accessible dialog (Escape keeps paying).
  const canceled = await newSession();
  await page.goto(canceled.url);
  await page.getByRole('button', { name: 'Cancel payment' }).click();
  const dialog = page.getByRole('dialog', { name: 'Cancel this payment?' });
  await dialog.waitFor();
  await check(page, at('6-cancel-dialog'));
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
  t.is(await page.locator('#status').getAttribute('data-status'), 'open');
  await page.getByRole('button', { name: 'Cancel payment' }).click();
  await dialog.getByRole('button', { name: 'Cancel payment' }).click();
  await page.waitForURL(`${shop}/cart`);
  await page.goto(canceled.url);
  t.is(await page.locator('#status').getAttribute('data-state'), 'canceled');
  t.is(await page.locator('#return-link').getAttribute('href'), `${shop}/cart`);
  await noControls(page, at('canceled'));
  await check(page, at('7-canceled'));

  // Expired: the open page follows it live and shows it without controls.
  const expiring = await newSession();
  await page.goto(expiring.url);
  await page.locator('#assets').waitFor();
  clock.advanceBy(DEFAULT_SESSION_LIFETIME_MS + 60_000);
  await page.locator('#status[data-state="expired"]').waitFor({ timeout: 15_000 });
  t.is(await page.locator('#status-title').textContent(), 'Expired');
  await noControls(page, at('expired'));
  await check(page, at('8-expired'));

  // A promotion code: the page is drawn again with the discount, the chosen asset kept.
  const discounted = await newSession();
  await page.goto(discounted.url);
  await page.getByRole('button', { name: /USD Coin/ }).click();
  await page.locator('#reveal').waitFor({ state: 'visible' });
  await page.getByLabel('Promotion code').fill('TENOFF');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForFunction(
    () =>
      (
        globalThis as unknown as { document: { getElementById(id: string): { textContent: string } | null } }
      ).document.getElementById('total-due')?.textContent === '2.25',
  );
  await page.locator('#reveal').waitFor({ state: 'visible' });
  await page.waitForFunction(
    () =>
      (
        globalThis as unknown as { document: { getElementById(id: string): { textContent: string } } }
      ).document.getElementById('due').textContent === '2.25',
  );
  t.regex((await page.locator('#totals').textContent()) ?? '', /Discount \(TENOFF\)\s*−0\.25 USDC/);
  await check(page, at('promo-applied'));

  // An unknown session: an HTML page, not JSON.
  const missing = await page.goto(`${weir.url}/checkout/00000000-0000-4000-8000-000000000000`);
  t.is(missing?.status(), 404);
  t.regex(missing?.headers()['content-type'] ?? '', /^text\/html/);
  t.is(await page.locator('h1').textContent(), 'Checkout not found');
  await check(page, at('9-not-found'));

  for (const other of otherPages) {
    const answer = await page.goto(other.url);
    t.is(answer?.status(), other.status, other.name);
    t.regex(answer?.headers()['content-type'] ?? '', /^text\/html/, other.name);
    await check(page, at(other.name));
  }
  // The payment link's form refused, as a payer posts it.
  await page.goto(link.url);
  await page.getByLabel(/Amount/).fill('250');
  await page.getByRole('button', { name: 'Pay' }).click();
  await page.locator('#problems').waitFor();
  await check(page, at('payment-link-refused'));
  t.deepEqual(problems, [], `${width}: script errors`);
  await context.close();

  const favicon = await fetch(`${weir.url}/favicon.ico`);
  t.is(favicon.status, 200);
  t.is(favicon.headers.get('content-type'), 'image/svg+xml');
}
