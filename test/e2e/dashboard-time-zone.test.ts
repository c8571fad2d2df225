import test, { type ExecutionContext } from 'ava';
import type { Page } from 'playwright-core';
import { createManualClock } from '../../src/shared/clock.ts';
import type { Session } from '../api/helpers.ts';
import { sessionRequest } from '../support/weir-harness.ts';
import { chromiumPerFile, expectAccessible, screenshot, startDashboard, watchPage } from '../support/dashboard.ts';

const browser = chromiumPerFile(test);

/** The records the pages show, made over the API at 23:30Z on 30 November: already 00:30 on 1 December in Paris. */
async function records(t: ExecutionContext) {
  const dash = await startDashboard(t, { clock: createManualClock(Date.parse('2026-11-30T23:30:00Z')) });
  const { api } = await dash.organization();
  const ok = async <T>(answer: Promise<{ status: number; body: T }>): Promise<T> => {
    const { status, body } = await answer;
    t.is(status, 200, JSON.stringify(body));
    return body;
  };
  const session = await ok(api.post<Session>('/api/v1/checkout/sessions', sessionRequest('1250000000', 1)));
  const customer = await ok(api.post<{ id: string }>('/api/v1/customers', { email: 'ada@example.com' }));
  const invoice = await ok(
    api.post<{ id: string }>('/api/v1/invoices', {
      customerId: customer.id,
      lineItems: {
        data: [
          { priceData: { currency: 'usdc', unitAmount: '2400000000', productData: { name: 'Beans' } }, quantity: 1 },
        ],
      },
    }),
  );
  // Last days of use at 22:30Z on 30 June and 23:30Z on 31 December: the next day in Paris.
  const coupon = await ok(
    api.post<{ id: string }>('/api/v1/coupons', {
      name: 'Summer',
      percentOff: 10,
      redeemBy: '2027-06-30T22:30:00Z',
      promotionCodes: [{ code: 'SUMMER10', expiredAt: '2026-12-31T23:30:00Z' }],
    }),
  );
  const owner = await dash.user({ role: 'owner' });
  return { dash, api, session, invoice, coupon, owner };
}

const text = async (page: Page, selector: string) => (await page.locator(selector).first().textContent())?.trim();

/** Picks `zone` in Home's field and applies it, as a merchant does. */
async function chooseOnHome(page: Page, url: string, zone: string): Promise<void> {
  await page.goto(`${url}/dashboard`);
  await page.getByLabel('Time zone').selectOption(zone);
  await Promise.all([
    page.waitForURL((u) => u.searchParams.get('timezone') === zone),
    page.getByRole('button', { name: 'Apply' }).click(),
  ]);
}

test("The time zone chosen on Home is the dashboard's: a session's page, an invoice's, a coupon's dates and the sessions' CSV show it after navigation and a reload; a shared link's ?timezone= wins for its page only", async (t) => {
  const { dash, api, session, invoice, coupon, owner } = await records(t);
  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  const sessionPage = `${dash.url}/dashboard/checkout-sessions/${session.id}`;
  await page.goto(sessionPage);
  t.is(await text(page, '#session-summary time'), '30 Nov, 23:30 UTC', 'UTC until a zone is chosen');

  await chooseOnHome(page, dash.url, 'Europe/Paris');

  // Another page, no ?timezone= in its address: Paris's time, named by its short name.
  await page.goto(sessionPage);
  t.is(await text(page, '#session-summary time'), '1 Dec, 00:30 CET');
  t.is(await page.locator('#session-summary time').first().getAttribute('datetime'), session.createdAt);
  t.regex((await text(page, '#timeline time')) ?? '', /^1 Dec, 00:30 CET$/);
  await page.reload();
  t.is(await text(page, '#session-summary time'), '1 Dec, 00:30 CET', 'kept through a reload');
  await page.locator('body[data-live="on"]').waitFor();
  await expectAccessible(t, page, 'session detail in Paris');
  await screenshot(t, page, 'checkout-session-time-zone');

  await page.goto(`${dash.url}/dashboard/invoices/${invoice.id}`);
  t.is(await text(page, '#invoice-dates time'), '1 Dec, 00:30 CET');

  // A coupon's days are Paris's: its last day of use, its code's expiry, and the day its edit form offers.
  await page.goto(`${dash.url}/dashboard/promo-codes/${coupon.id}`);
  t.is(await text(page, '#coupon time'), '1 Jul 2027');
  t.is(await text(page, '#promotion-codes td time'), '1 Jan 2027');
  t.is(await page.locator('#edit-coupon').getByLabel('Redeem by').inputValue(), '2027-07-01');
  // Saved with its day as offered (a new name only), the expiry stays the instant it was, not Paris's end of that day.
  await page.locator('#edit-coupon').getByLabel('Name').fill('Renamed');
  await Promise.all([
    page.waitForURL(/promo-codes\/[^/?]+\?done=saved$/),
    page.getByRole('button', { name: 'Save' }).click(),
  ]);
  const kept = (await api.get<{ name: string; redeemBy: string }>(`/api/v1/coupons/${coupon.id}`)).body;
  t.is(kept.name, 'Renamed');
  t.is(Date.parse(kept.redeemBy), Date.parse('2027-06-30T22:30:00Z'));
  // Saved as typed, a day is Paris's to its last second (21:59:59Z in summer), the day the page shows again.
  await page.locator('#edit-coupon').getByLabel('Redeem by').fill('2027-07-02');
  await Promise.all([
    page.waitForURL(/promo-codes\/[^/?]+\?done=saved$/),
    page.getByRole('button', { name: 'Save' }).click(),
  ]);
  t.is(await text(page, '#coupon time'), '2 Jul 2027');
  t.is((await api.get<{ redeemBy: string }>(`/api/v1/coupons/${coupon.id}`)).body.redeemBy, '2027-07-02T21:59:59.000Z');

  // The sessions' list and its download, no zone in the address: Paris's days (1 December there).
  await page.goto(`${dash.url}/dashboard/checkout-sessions`);
  t.is(await page.locator('#field-timezone').inputValue(), 'Europe/Paris');
  t.is(await text(page, '#sessions tbody time'), '1 Dec, 00:30 CET');
  const csv = await page.request.get(`${dash.url}/dashboard/checkout-sessions/export`);
  t.is(csv.status(), 200);
  t.is(csv.headers()['content-disposition'], 'attachment; filename="checkout-sessions-2026-12-01.csv"');

  // A link someone shared with its own zone: that page in it; the zone chosen stays for the next.
  await page.goto(`${sessionPage}?timezone=America%2FNew_York`);
  t.is(await text(page, '#session-summary time'), '30 Nov, 18:30 GMT-5');
  await page.goto(sessionPage);
  t.is(await text(page, '#session-summary time'), '1 Dec, 00:30 CET');
  await page.goto(`${dash.url}/dashboard`);
  t.is(await page.locator('#field-timezone').inputValue(), 'Europe/Paris', 'the field shows the zone chosen');

  // UTC chosen again: the cookie is dropped, every page back in UTC.
  await chooseOnHome(page, dash.url, 'UTC');
  await page.goto(sessionPage);
  t.is(await text(page, '#session-summary time'), '30 Nov, 23:30 UTC');
  t.deepEqual(problems(), [], 'no console error or CSP violation');
});

test('The zone chosen is a cookie scoped to the dashboard, kept a year; one that names no zone is ignored (UTC), never a 5xx', async (t) => {
  const { dash, session, owner } = await records(t);
  const page = await dash.signedIn(browser(), owner);
  const answer = await page.goto(`${dash.url}/dashboard/checkout-sessions?timezone=Europe%2FParis`);
  const cookie = (await answer?.headerValue('set-cookie')) ?? '';
  t.regex(cookie, /weir_tz=Europe\/Paris; Path=\/dashboard; HttpOnly; SameSite=Strict; Max-Age=31536000/);
  const kept = (await page.context().cookies()).find((c) => c.name === 'weir_tz');
  t.like(kept, { value: 'Europe/Paris', path: '/dashboard', httpOnly: true });

  const host = new URL(dash.url).hostname;
  for (const value of ['Mars/Olympus', 'GMT+1', '..%2F..', 'Europe/Paris%3Bx', 'a'.repeat(300)]) {
    await page.context().addCookies([{ name: 'weir_tz', value, domain: host, path: '/dashboard' }]);
    const shown = await page.goto(`${dash.url}/dashboard/checkout-sessions/${session.id}`);
    t.is(shown?.status(), 200, value);
    t.is(await text(page, '#session-summary time'), '30 Nov, 23:30 UTC', value);
    const home = await page.goto(`${dash.url}/dashboard`);
    t.is(home?.status(), 200, value);
    t.is(await page.locator('#field-timezone').inputValue(), 'UTC', value);
  }
});
