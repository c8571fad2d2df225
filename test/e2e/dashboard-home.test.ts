import { join } from 'node:path';
import test from 'ava';
import { COLLECTIONS, type WebhookDeliveryDoc } from '../../src/projections/collections.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { payInFull, type Session } from '../api/helpers.ts';
import { sessionRequest } from '../support/weir-harness.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import {
  chromiumPerFile,
  expectAccessible,
  SCREENSHOTS,
  screenshot,
  startDashboard,
  watchPage,
} from '../support/dashboard.ts';

const browser = chromiumPerFile(test);

test('Home: a session paid while the page is open shows in recent payments, the 30-day figures and the failed webhook it caused, without a reload', async (t) => {
  // Noon UTC, not the real time: the payments below span 16 minutes, all on one day's bar at any hour the test runs.
  const dash = await startDashboard(t, { clock: createManualClock(Date.parse('2026-11-30T12:00:00Z')) });
  const merchant = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  // Two payments before the page is opened, 4 and 10 minutes after their sessions were created,
  // and a session never paid: the charts and the list have something to show.
  for (const [amount, minutes] of [
    ['1250000000', 4],
    ['480000000', 10],
  ] as const) {
    const created = (await merchant.api.post<Session>('/api/v1/checkout/sessions', sessionRequest(amount, 1))).body;
    dash.clock.advanceBy(minutes * 60_000);
    await payInFull(dash.weir, merchant.api, created);
  }
  await merchant.api.post<Session>('/api/v1/checkout/sessions', sessionRequest('990000000', 1));
  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  await page.reload();
  await page.locator('body[data-live="on"]').waitFor();
  const recent = page.locator('#recent-payments');
  t.is(await recent.locator('tbody tr').count(), 2);
  t.regex((await page.locator('#volume .stat-value').textContent()) ?? '', /^17\.30 USDC$/);
  // Conversion: 2 of the 3 sessions were completed; time to pay: 4 and 10 minutes, so a median of 7 (the mean of the two middle times).
  t.is(await page.locator('#conversion .stat-value').textContent(), '66.7%');
  t.is(
    await page.locator('#conversion .stat-note').textContent(),
    '2 of 3 checkout sessions created were completed: paid in full, or with the amount received',
  );
  t.is(await page.locator('#time-to-pay .stat-value').textContent(), '7 min');
  t.is(
    await page.locator('#time-to-pay .stat-note').textContent(),
    'Median from creation to completion; p95 10 min, over 2 completed sessions',
  );
  // Each chart is an image named for what it shows, with today's bar and a table of the days' figures.
  const today = new Date(dash.clock.now()).toISOString().slice(0, 10);
  const todayShort = new Date(`${today}T00:00:00Z`).toLocaleDateString('en-GB', {
    day: 'numeric',
    month: 'short',
    timeZone: 'UTC',
  });
  t.is(
    await page.locator('#volume svg[role="img"]').getAttribute('aria-label'),
    'Gross volume per day over the last 30 days, in USDC',
  );
  t.is(await page.locator('#volume svg rect').count(), 30);
  t.is(await page.locator('#volume svg rect.bar title').textContent(), `${todayShort}: 17.30 USDC`);
  t.is(await page.locator('#payments-count svg rect.bar title').textContent(), `${todayShort}: 2 payments`);
  t.is(await page.locator('#conversion svg rect.bar title').textContent(), `${todayShort}: 2 of 3 completed (66.7%)`);
  t.is(await page.locator('#time-to-pay svg rect.bar title').textContent(), `${todayShort}: median 7 min, p95 10 min`);
  await page.locator('#volume .chart-figures summary').click();
  t.deepEqual(await page.locator('#volume .chart-figures tbody td').allTextContents(), [todayShort, '17.30 USDC']);

  // A receiver that is down: the completion's webhook fails, and is retried.
  const receiver = await startWebhookReceiver(() => 503);
  t.teardown(() => receiver.close());
  const endpoint = await merchant.api.post('/api/v1/webhook-endpoints', {
    description: 'order system',
    url: receiver.url,
    enabledEvents: { events: ['checkout_session.completed'] },
  });
  t.is(endpoint.status, 200, JSON.stringify(endpoint.body));
  const created = (await merchant.api.post<Session>('/api/v1/checkout/sessions', sessionRequest('150000000', 2))).body;
  dash.clock.advanceBy(2 * 60_000);
  await payInFull(dash.weir, merchant.api, created);
  await recent.getByText('3.00 USDC').waitFor();
  await page.locator('#volume .stat-value', { hasText: '20.30 USDC' }).waitFor();
  t.is(await page.locator('#payments-count .stat-value').textContent(), '3');
  await page.locator('#conversion .stat-value', { hasText: '75.0%' }).waitFor();
  t.is(await page.locator('#time-to-pay .stat-value').textContent(), '4 min');
  t.is(
    await page.locator('#time-to-pay .stat-note').textContent(),
    'Median from creation to completion; p95 10 min, over 3 completed sessions',
  );
  t.is(await recent.locator('tbody tr').count(), 3);
  const failures = page.locator('#webhook-failures');
  await failures.getByText('HTTP 503').waitFor();
  t.is(await failures.locator('tbody tr td code').textContent(), 'checkout_session.completed');
  t.is(await failures.locator('tbody tr td:first-child .muted').textContent(), receiver.url);
  // Labelled as the endpoint's and the session's pages label a delivery: retrying, and when next.
  t.is(await failures.locator('.badge').textContent(), 'Retrying');
  t.regex((await failures.locator('.delivery-status').textContent()) ?? '', /^Retrying next try \d/);
  t.deepEqual(problems(), [], 'no console error or CSP violation, live updates included');

  // The figures behind one chart open (the live refresh closed them), as the screenshots show them.
  await page.locator('#time-to-pay .chart-figures summary').click();
  await page.locator('#time-to-pay .chart-figures table').waitFor();
  await expectAccessible(t, page, 'home');
  await screenshot(t, page, 'home');
});

test('Home: a day paid in two currencies lists both in the volume figures, and time to pay counts sessions, not transfers', async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const usdc = (await merchant.api.post<Session>('/api/v1/checkout/sessions', sessionRequest('300000000', 1))).body;
  await payInFull(dash.weir, merchant.api, usdc);
  const daiRequest = {
    ...sessionRequest('250000000', 2),
    lineItems: {
      data: [{ priceData: { currency: 'dai', unitAmount: '250000000', productData: { name: 'Mug' } }, quantity: 2 }],
    },
  };
  const dai = await merchant.api.post<Session>('/api/v1/checkout/sessions', daiRequest);
  t.is(dai.status, 200, JSON.stringify(dai.body));
  await payInFull(dash.weir, merchant.api, dai.body, 'dai');
  const page = await dash.signedIn(browser(), owner);
  t.is(await page.locator('#volume .stat-value').textContent(), '5.00 DAI');
  t.is(await page.locator('#volume .stat-note').textContent(), 'Also 3.00 USDC');
  // The bar is of the main currency; its title and the day's figures name the other one too, never dropped.
  await page.locator('#volume .chart-figures summary').click();
  const today = (await page.locator('#volume .chart-figures tbody td').first().textContent()) ?? '';
  t.deepEqual(await page.locator('#volume .chart-figures tbody td').allTextContents(), [
    today,
    '5.00 DAI, also 3.00 USDC',
  ]);
  t.is(await page.locator('#payments-count .stat-value').textContent(), '2');
  t.is(
    await page.locator('#time-to-pay .stat-note').textContent(),
    'Median from creation to completion; p95 0 s, over 2 completed sessions',
  );
});

test('Home at 390 px: a webhook failure with a long error wraps inside its card, the full text kept in its title', async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  // A failure as the dispatcher records one for a host that does not resolve: one long word, no status.
  const error = `request failed: getaddrinfo ENOTFOUND ${'orders-backend-eu-central-1.'.repeat(6)}harbour.example`;
  const at = new Date(dash.clock.now()).toISOString();
  const failed: WebhookDeliveryDoc = {
    _id: 'delivery-long-error',
    id: 'delivery-long-error',
    organizationId: merchant.organizationId,
    environment: 'test',
    endpointId: 'endpoint-gone',
    eventId: 'evt-long-error',
    eventType: 'checkout_session.completed',
    eventObject: 'checkout_session',
    source: { streamId: 'checkout_session-x', revision: 0 },
    createdAt: at,
    firstDueAt: dash.clock.now(),
    status: 'failed',
    attempts: 1,
    nextAttemptAt: null,
    log: [{ attempt: 1, at, statusCode: null, error, durationMs: 12 }],
  };
  await dash.weir.readStore.collection<WebhookDeliveryDoc>(COLLECTIONS.webhookDeliveries).put(failed);
  const page = await dash.signedIn(browser(), owner, 390);
  const card = page.locator('#webhook-failures');
  await card.locator('.badge', { hasText: 'Failed' }).waitFor();
  // Every box in the card ends inside it, the badge above all; the table does not scroll sideways either.
  const past = await card.evaluate((el) => {
    type Box = { left: number; right: number };
    type El = {
      getBoundingClientRect(): Box;
      querySelectorAll(s: string): Iterable<El>;
      className: string;
      tagName: string;
      scrollWidth: number;
      clientWidth: number;
    };
    const root = el as unknown as El;
    const edge = root.getBoundingClientRect();
    const wrap = root.querySelectorAll('.table-wrap');
    return [
      ...[...root.querySelectorAll('*')]
        .filter((child) => {
          const box = child.getBoundingClientRect();
          return box.right > edge.right + 0.5 || box.left < edge.left - 0.5;
        })
        .map((child) => `${child.tagName.toLowerCase()}.${child.className}`),
      ...[...wrap].filter((w) => w.scrollWidth > w.clientWidth).map(() => 'the table scrolls sideways'),
    ];
  });
  t.deepEqual(past, []);
  t.is(
    await card
      .locator('tbody td [title]')
      .getAttribute('title', { timeout: 2_000 })
      .catch(() => null),
    error,
    'the full error in its title',
  );
  await page.screenshot({ path: join(SCREENSHOTS, 'home-webhook-failure-390.png'), fullPage: true });
});

test('Home in a time zone the analyst picks: the 30 days are days there, kept through a live refresh; an unknown zone is named at its field, the figures in the zone chosen before', async (t) => {
  // A payment at 20:00Z on 30 November: the 30th in UTC, already 1 December (05:00) in Tokyo.
  const dash = await startDashboard(t, { clock: createManualClock(Date.parse('2026-11-30T19:55:00Z')) });
  const merchant = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const pay = async (amount: string) => {
    const created = (await merchant.api.post<Session>('/api/v1/checkout/sessions', sessionRequest(amount, 1))).body;
    dash.clock.advanceBy(5 * 60_000);
    await payInFull(dash.weir, merchant.api, created);
  };
  await pay('1250000000');
  dash.clock.set(Date.parse('2026-12-01T02:00:00Z'));
  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  const figures = async () => {
    await page.locator('#volume .chart-figures summary').click();
    return page.locator('#volume .chart-figures tbody td').allTextContents();
  };
  // UTC unless picked: the payment was yesterday there.
  t.is(await page.locator('#field-timezone').inputValue(), 'UTC');
  t.deepEqual(await figures(), ['30 Nov', '12.50 USDC']);

  await page.getByLabel('Time zone').selectOption('Asia/Tokyo');
  await Promise.all([
    page.waitForURL((u) => u.searchParams.get('timezone') === 'Asia/Tokyo'),
    page.getByRole('button', { name: 'Apply' }).click(),
  ]);
  await page.locator('body[data-live="on"]').waitFor();
  t.is(await page.locator('#field-timezone').inputValue(), 'Asia/Tokyo');
  t.deepEqual(await figures(), ['1 Dec', '12.50 USDC'], 'today in Tokyo');
  t.is(await page.locator('#volume svg rect.bar title').textContent(), '1 Dec: 12.50 USDC');
  // Recent payments' times are Tokyo's too (about 05:00 on 1 December there), named by its short name.
  const times = () => page.locator('#recent-payments tbody time').allTextContents();
  t.deepEqual(await times(), ['1 Dec, 05:00 GMT+9']);

  // Paid while the page is open: the live refresh counts it in Tokyo's days too (one day, not 30 Nov and 1 Dec).
  await pay('480000000');
  await page.locator('#volume .stat-value', { hasText: '17.30 USDC' }).waitFor();
  t.deepEqual(await figures(), ['1 Dec', '17.30 USDC']);
  // Its own live refresh keeps the zone: the new payment (02:05Z) is 11:05 in Tokyo.
  await page.locator('#recent-payments tbody tr').nth(1).waitFor();
  t.deepEqual(await times(), ['1 Dec, 11:05 GMT+9', '1 Dec, 05:00 GMT+9']);
  t.deepEqual(problems(), [], 'no console error or CSP violation');
  await expectAccessible(t, page, 'home in a time zone');
  await screenshot(t, page, 'home-time-zone');

  // A zone typed into the address that is none: a 400 that says so at the field, never a 5xx; the
  // figures stay in the zone chosen before (Tokyo, the dashboard's now).
  const answer = await page.goto(`${dash.url}/dashboard?timezone=${encodeURIComponent('Mars/Olympus')}`);
  t.is(answer?.status(), 400);
  t.is(await page.locator('#field-timezone').getAttribute('aria-invalid'), 'true');
  t.regex(
    (await page.locator('#report-time-zone .field.has-error').textContent()) ?? '',
    /Mars\/Olympus is not a time zone: pick one from the list .* Shown in Asia\/Tokyo\./,
  );
  t.deepEqual(await figures(), ['1 Dec', '17.30 USDC']);
  await expectAccessible(t, page, 'home with an unknown time zone');
  await screenshot(t, page, 'home-time-zone-unknown');
});
