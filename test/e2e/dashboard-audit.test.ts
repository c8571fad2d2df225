import test from 'ava';
import type { Session } from '../api/helpers.ts';
import { sessionRequest } from '../support/weir-harness.ts';
import { chromiumPerFile, expectAccessible, screenshot, startDashboard, watchPage } from '../support/dashboard.ts';

const browser = chromiumPerFile(test);

test("Audit trail: the API key's change and the dashboard user's, each with its address and the fields it changed; filters; secrets hidden", async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const created = await merchant.api.post<{ id: string }>('/api/v1/customers', {
    email: 'pat@example.com',
    name: 'Pat',
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  const customerId = created.body.id;
  t.is((await merchant.api.put(`/api/v1/customers/${customerId}`, { name: 'Patricia' })).status, 200);
  const endpoint = await merchant.api.post('/api/v1/webhook-endpoints', {
    description: 'orders',
    url: 'https://shop.example/hooks',
    enabledEvents: { events: ['checkout_session.completed'] },
  });
  t.is(endpoint.status, 200, JSON.stringify(endpoint.body));
  const session = (await merchant.api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;

  // The dashboard user's change: a session canceled from its page.
  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  await page.goto(`${dash.url}/dashboard/checkout-sessions/${session.id}`);
  await Promise.all([page.waitForURL(/done=canceled/), page.getByRole('button', { name: 'Cancel session' }).click()]);

  await page.goto(`${dash.url}/dashboard/audit-trail`);
  const rows = page.locator('#audit-trail tbody tr');
  const row = (what: string) => rows.filter({ hasText: what });

  const canceled = row('Checkout session canceled');
  t.is(await canceled.count(), 1);
  const canceledText = (await canceled.textContent()) ?? '';
  t.true(canceledText.includes(owner.email), 'the user, by email');
  t.true(canceledText.includes(`user:${owner.userId}`), 'and by id');
  t.true(canceledText.includes('from 127.0.0.1'), 'from their address');
  t.regex(canceledText, /reason\s*canceled by the merchant/);

  const updated = row('Customer updated');
  const updatedText = (await updated.textContent()) ?? '';
  t.regex(updatedText, /api_key:[0-9a-f-]{36}/, 'the API key, by id');
  t.true(updatedText.includes('from 127.0.0.1'));
  t.is(await updated.locator('del').textContent(), 'Pat', 'the name before');
  t.is(await updated.locator('ins').textContent(), 'Patricia', 'and after');

  const hook = (await row('Webhook endpoint created').textContent()) ?? '';
  t.true(hook.includes('•••• hidden'), 'the sealed secret is hidden');
  t.false(/sealedSecret\s*(?!••••)\S/.test(hook), 'its value never shown');
  await expectAccessible(t, page, 'audit-trail');
  await screenshot(t, page, 'audit-trail');

  // Only the user's changes, then only customers; a bad date is named at its field.
  t.is(
    await page.locator('#field-actor-hint').textContent(),
    'Exactly as the log names it: user:<id>, api_key:<id>, system:<part> (such as system:sweeper), cli, payer or setup. Select a name in the table to filter by it.',
    'the actor filter names every form it matches, not an ellipsis',
  );
  await page.getByLabel('Actor').fill(`user:${owner.userId}`);
  await Promise.all([page.waitForURL(/actor=user/), page.getByRole('button', { name: 'Apply' }).click()]);
  const actors = await rows.locator('.who .muted').allTextContents();
  t.true(actors.length > 0);
  t.true(actors.every((text) => text.includes(`user:${owner.userId}`)));
  await page.goto(`${dash.url}/dashboard/audit-trail?recordType=customer&recordId=${customerId}`);
  t.deepEqual(await rows.locator('td:nth-child(3) strong').allTextContents(), ['Customer updated', 'Customer created']);
  const bad = await page.goto(`${dash.url}/dashboard/audit-trail?from=yesterday`);
  t.is(bad?.status(), 400);
  t.is(await page.locator('#field-from-error').textContent(), 'Enter a date as YYYY-MM-DD.');
  t.deepEqual(problems(), []);
});
