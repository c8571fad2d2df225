import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import type { Page } from 'playwright-core';
import { launchChromium } from '../support/chromium.ts';
import { everyHostedPage } from '../support/hosted-pages.ts';
import { startTestWeir } from '../support/weir-harness.ts';

/** Another site: the merchant's logo, and a page that tries to put a Weir page in a frame. */
async function startOtherSite() {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/logo.svg') {
      res.writeHead(200, { 'content-type': 'image/svg+xml' });
      res.end('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><iframe id="framed" src="${url.searchParams.get('src') ?? ''}"></iframe>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

type Window = { __violations: string[]; __ran?: boolean; __clicked?: boolean };

/** Every CSP violation the page reports, console error and uncaught error, from before its first script. */
async function watch(page: Page) {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()} ${message.location().url}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  await page.addInitScript({
    content: `window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));`,
  });
  const violations = () => page.evaluate(() => (globalThis as unknown as Window).__violations);
  return { problems, violations };
}

/**
 * What an injected script would try: an inline <script> and an inline event handler. Both must be
 * refused (each reported once as a violation) and neither may run.
 */
async function probeInlineScript(page: Page): Promise<{ ran: boolean; clicked: boolean }> {
  return page.evaluate(async () => {
    type Doc = {
      createElement(tag: string): { textContent: string; setAttribute(n: string, v: string): void; click(): void };
      head: { appendChild(node: unknown): void };
      body: { appendChild(node: unknown): void };
    };
    const w = globalThis as unknown as Window & { document: Doc };
    const script = w.document.createElement('script');
    script.textContent = 'window.__ran = true';
    w.document.head.appendChild(script);
    const button = w.document.createElement('button');
    button.setAttribute('onclick', 'window.__clicked = true');
    w.document.body.appendChild(button);
    button.click();
    await new Promise((resolve) => setTimeout(resolve, 0));
    return { ran: w.__ran === true, clicked: w.__clicked === true };
  });
}

test('hosted pages in Chromium: no CSP violation or console error on any page while its scripts work; an inline script or handler is refused; no page can be framed', async (t) => {
  const other = await startOtherSite();
  t.teardown(() => other.close());
  const weir = await startTestWeir(t);
  const { pages } = await everyHostedPage(weir.url, `${other.origin}/logo.svg`);
  const browser = await launchChromium(t);

  for (const hosted of pages.filter((p) => p.html)) {
    const page = await browser.newPage();
    const { problems, violations } = await watch(page);
    if (hosted.form) {
      // The form refused: filled in and posted as a payer does.
      await page.goto(hosted.url);
      await page.getByLabel(/Amount/).fill(hosted.form.amount!);
      await page.getByRole('button', { name: 'Pay' }).click();
      await page.locator('#problems').waitFor();
    } else {
      const response = await page.goto(hosted.url);
      t.is(response?.status(), hosted.status, hosted.name);
    }
    // The page's own script at work.
    if (hosted.name === 'checkout page') {
      await page.getByRole('button', { name: /USDC/ }).click();
      await page.locator('#reveal').waitFor({ state: 'visible' });
      t.is(await page.locator('#qr svg').count(), 1);
      await page.waitForFunction(() => {
        const d = (
          globalThis as unknown as { document: { getElementById(id: string): { dataset: { status?: string } } } }
        ).document;
        return d.getElementById('status').dataset.status === 'open';
      });
    }
    if (hosted.name === 'payment link page') {
      // With its script a suggested amount only fills the amount in: the form is not sent (without, it is).
      const posted: string[] = [];
      page.on('request', (request) => {
        if (request.method() === 'POST') posted.push(request.url());
      });
      await page.getByRole('button', { name: '15.00 USDC' }).click();
      t.is(await page.getByLabel(/Amount/).inputValue(), '15', 'a suggested amount fills the amount');
      t.deepEqual(posted, [], 'a suggested amount does not submit the form');
    }
    if (hosted.branded !== false)
      t.is(
        await page
          .locator('header')
          .evaluate(
            (el) =>
              (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(
                el,
              ).backgroundColor,
          ),
        'rgb(138, 43, 226)',
        `${hosted.name}: the brand colour from its stylesheet`,
      );
    // A 4xx page's own status is logged by Chromium as a failed resource; nothing else may be.
    const unexpected = problems.filter(
      (p) =>
        !(
          hosted.status >= 400 &&
          p.startsWith('console: Failed to load resource: the server responded with a status of')
        ),
    );
    t.deepEqual(unexpected, [], hosted.name);
    t.deepEqual(await violations(), [], hosted.name);

    t.deepEqual(await probeInlineScript(page), { ran: false, clicked: false }, `${hosted.name}: inline script refused`);
    t.deepEqual(
      (await violations()).map((v) => v.split(' ')[0]),
      ['script-src-elem', 'script-src-attr'],
      hosted.name,
    );
    await page.close();
  }

  // Framed by another site: Chromium refuses to show the page in the frame.
  const checkout = pages.find((p) => p.name === 'checkout page')!;
  const framing = await browser.newPage();
  const refused = framing.waitForEvent('console', {
    predicate: (message) => message.text().includes('frame-ancestors'),
    timeout: 15_000,
  });
  await framing.goto(`${other.origin}/frame?src=${encodeURIComponent(checkout.url)}`);
  t.regex((await refused).text(), /"frame-ancestors 'none'"\. The request has been blocked/);
  const frame = await (await framing.$('#framed'))!.contentFrame();
  t.not(frame?.url(), checkout.url, 'the checkout page is not shown in the frame');
});
