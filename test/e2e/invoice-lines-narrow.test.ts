import test from 'ava';
import type { Page } from 'playwright-core';
import { chromiumPerFile, expectAccessible, newPage, screenshot, startDashboard } from '../support/dashboard.ts';

const browser = chromiumPerFile(test);

/**
 * Each cell of the table `selector` whose text runs past what can be seen without scrolling: past
 * its own box, past the region it scrolls in, or past the window.
 */
async function clippedCells(page: Page, selector: string): Promise<string[]> {
  return page.evaluate((selector) => {
    type Box = { left: number; right: number };
    type El = {
      textContent: string | null;
      scrollWidth: number;
      clientWidth: number;
      closest(s: string): El | null;
      getBoundingClientRect(): Box;
      getClientRects(): { length: number };
      querySelectorAll(s: string): El[];
    };
    const doc = globalThis as unknown as {
      document: {
        querySelector(s: string): El | null;
        createRange(): { selectNodeContents(e: El): void; getBoundingClientRect(): Box };
      };
      innerWidth: number;
    };
    const table = doc.document.querySelector(selector);
    if (!table) return [`no ${selector}`];
    const region = table.closest('.table-wrap') ?? table;
    const seen = region.getBoundingClientRect();
    const clipped: string[] = [];
    // Past the region it scrolls in: the rest is a sideways scroll away.
    if (region.scrollWidth > region.clientWidth)
      clipped.push(`the table scrolls sideways: ${region.scrollWidth} px in ${region.clientWidth}`);
    for (const cell of table.querySelectorAll('td')) {
      const text = (cell.textContent ?? '').trim();
      // Empty, or not shown at this width (a column kept for wider windows).
      if (!text || cell.getClientRects().length === 0) continue;
      const range = doc.document.createRange();
      range.selectNodeContents(cell);
      const box = range.getBoundingClientRect();
      if (
        cell.scrollWidth > cell.clientWidth + 1 ||
        box.right > Math.min(seen.right, doc.innerWidth) + 1 ||
        box.left < Math.max(seen.left, 0) - 1
      )
        clipped.push(
          `${text} (${Math.round(box.left)}–${Math.round(box.right)} in ${Math.round(seen.left)}–${Math.round(seen.right)})`,
        );
    }
    return clipped;
  }, selector);
}

/**
 * How the number of the hosted page's heading amount (`#amount-due`, "370,370,367.370368 USDC") is laid
 * out: on how many lines, and whether it runs past the summary's edge.
 */
async function headingNumber(page: Page): Promise<{ number: string; lines: number; past: boolean }> {
  return page.evaluate(() => {
    type Box = { left: number; right: number; top: number };
    type Node_ = { textContent: string | null };
    type El = { firstChild: Node_ | null; closest(s: string): El | null; getBoundingClientRect(): Box };
    const doc = (
      globalThis as unknown as {
        document: {
          querySelector(s: string): El | null;
          createRange(): {
            setStart(n: Node_, o: number): void;
            setEnd(n: Node_, o: number): void;
            getClientRects(): Iterable<Box>;
          };
        };
      }
    ).document;
    const heading = doc.querySelector('#amount-due')!;
    const text = heading.firstChild!;
    const number = (text.textContent ?? '').split(' ')[0]!;
    const range = doc.createRange();
    range.setStart(text, 0);
    range.setEnd(text, number.length);
    const rects = [...range.getClientRects()];
    const edge = heading.closest('.invoice-summary')!.getBoundingClientRect();
    return {
      number,
      lines: new Set(rects.map((r) => Math.round(r.top))).size,
      past: rects.some((r) => r.right > edge.right + 0.5),
    };
  });
}

const LONG_NAME = 'Quarterly infrastructure retainer including monitoring, incident response and capacity planning';

test('an invoice of long amounts and a long product name reads whole at 390 px: on the dashboard and on the hosted invoice page, nothing cut off or scrolled sideways', async (t) => {
  const dash = await startDashboard(t);
  const { api } = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const customer = await api.post<{ id: string }>('/api/v1/customers', { email: 'ops@harbour.example', name: 'Ops' });
  const invoice = await api.post<{ id: string }>('/api/v1/invoices', {
    customerId: customer.body.id,
    dueDate: '2030-02-01',
    lineItems: {
      data: [
        // 123,456,789.123456 USDC, and twice that on the next line.
        {
          priceData: { currency: 'usdc', unitAmount: '12345678912345600', productData: { name: LONG_NAME } },
          quantity: 1,
        },
        {
          priceData: { currency: 'usdc', unitAmount: '12345678912345600', productData: { name: 'Support' } },
          quantity: 2,
        },
      ],
    },
  });
  t.is(invoice.status, 200, JSON.stringify(invoice.body));
  t.is((await api.post(`/api/v1/invoices/${invoice.body.id}/finalize`)).status, 200);

  const page = await dash.signedIn(browser(), owner);
  await page.goto(`${dash.url}/dashboard/invoices/${invoice.body.id}`);
  await page.locator('#invoice-lines table').waitFor();
  await screenshot(t, page, 'invoice-long-lines');
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    t.deepEqual(await clippedCells(page, '#invoice-lines table'), [], `dashboard at ${width} px`);
    t.true(await page.getByText('370,370,367.370368 USDC').first().isVisible(), `the line total at ${width} px`);
    await expectAccessible(t, page, `invoice with long lines at ${width} px`);
  }

  const hosted = await newPage(t, browser(), 390);
  t.is((await hosted.goto(`${dash.url}/invoices/${invoice.body.id}`))?.status(), 200);
  for (const width of [390, 1280]) {
    await hosted.setViewportSize({ width, height: 900 });
    t.deepEqual(await clippedCells(hosted, '#line-items'), [], `hosted at ${width} px`);
    t.deepEqual(await clippedCells(hosted, '#totals'), [], `hosted totals at ${width} px`);
    // The heading amount never breaks inside its number (only before its currency), nor runs past the summary.
    t.deepEqual(
      await headingNumber(hosted),
      { number: '370,370,367.370368', lines: 1, past: false },
      `heading at ${width} px`,
    );
    await expectAccessible(t, hosted, `hosted invoice with long lines at ${width} px`);
  }
  await screenshot(t, hosted, 'hosted-invoice-long-lines');
});
