import test from 'ava';
import { payInFull, type Session } from '../api/helpers.ts';
import { sessionRequest } from '../support/weir-harness.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { chromiumPerFile, expectAccessible, screenshot, startDashboard, watchPage } from '../support/dashboard.ts';

const browser = chromiumPerFile(test);

test('Home: a session paid while the page is open shows in recent payments, the 30-day figures and the failed webhook it caused, without a reload', async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  // Two payments before the page is opened: the chart and the list have something to show.
  for (const amount of ['1250000000', '480000000']) {
    const created = (await merchant.api.post<Session>('/api/v1/checkout/sessions', sessionRequest(amount, 1))).body;
    await payInFull(dash.weir, merchant.api, created);
  }
  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  await page.reload();
  await page.locator('body[data-live="on"]').waitFor();
  const recent = page.locator('#recent-payments');
  t.is(await recent.locator('tbody tr').count(), 2);
  t.regex((await page.locator('#volume .stat-value').textContent()) ?? '', /^17\.30 USDC$/);

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
  await payInFull(dash.weir, merchant.api, created);
  await recent.getByText('3.00 USDC').waitFor();
  await page.locator('#volume .stat-value', { hasText: '20.30 USDC' }).waitFor();
  t.is(await page.locator('#payments-count .stat-value').textContent(), '3');
  t.is(await recent.locator('tbody tr').count(), 3);
  const failures = page.locator('#webhook-failures');
  await failures.getByText('HTTP 503').waitFor();
  t.is(await failures.locator('tbody tr td code').textContent(), 'checkout_session.completed');
  t.is(await failures.locator('tbody tr .muted').textContent(), receiver.url);
  t.is(await failures.locator('.badge').textContent(), 'Retrying (1 try)');
  t.deepEqual(problems(), [], 'no console error or CSP violation, live updates included');

  await expectAccessible(t, page, 'home');
  await screenshot(t, page, 'home');
});
