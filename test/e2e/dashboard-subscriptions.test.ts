import test from 'ava';
import { subscriptionIdOfInvoice } from '../../machines/subscription.decide.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { eventually } from '../support/api-client.ts';
import { chromiumPerFile, expectAccessible, screenshot, startDashboard, watchPage } from '../support/dashboard.ts';
import { payInFull, type Session } from '../api/helpers.ts';

const browser = chromiumPerFile(test);

type Invoice = { id: string; status: string; nextInvoice: { id: string; issueDate: string } | null };

test("a subscription whose renewal Weir could not finalize reads 'Bill not finalized' by its status, listed and on its page, its period 'Not finalized', not past due after the draft's due date", async (t) => {
  const dash = await startDashboard(t, { clock: createManualClock(Date.parse('2026-03-15T09:00:00.000Z')) });
  const { api } = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const customer = (
    await api.post<{ id: string }>('/api/v1/customers', { email: 'billing@client.example', name: 'Client Ltd' })
  ).body;
  const product = (
    await api.post<{ defaultPrice: { id: string } }>('/api/v1/products', {
      name: 'Hosting',
      defaultPriceData: { currency: 'usdc', unitAmount: '1000000000', type: 'recurring', interval: 'month' },
    })
  ).body;
  const draft = await api.post<Invoice>('/api/v1/invoices', {
    customerId: customer.id,
    invoiceType: 'recurring',
    interval: 'month',
    daysUntilDue: 10,
    paymentMethods: { chainIds: [7357], assetIds: [] },
    lineItems: { data: [{ priceId: product.defaultPrice.id, quantity: 1 }] },
  });
  t.is(draft.status, 200, JSON.stringify(draft.body));
  const first = (await api.post<Invoice>(`/api/v1/invoices/${draft.body.id}/finalize`)).body;
  const pay = await fetch(`${dash.url}/invoices/${first.id}/pay`, { redirect: 'manual' });
  const sessionId = pay.headers.get('location')!.split('/').pop()!;
  await payInFull(dash.weir, api, (await api.get<Session>(`/api/v1/checkout/sessions/${sessionId}`)).body);
  const subscriptionId = subscriptionIdOfInvoice(first.id);
  const active = async () => (await api.get<{ status: string }>(`/api/v1/subscriptions/${subscriptionId}`)).body;
  await eventually(async () => ((await active()).status === 'active' ? true : undefined), 'the subscription active');
  for (const wallet of (await api.get<{ id: string }[]>('/api/v1/organization/withdrawal-addresses')).body)
    await api.delete(`/api/v1/organization/withdrawal-addresses/${wallet.id}`);
  dash.clock.advanceTo(Date.parse(first.nextInvoice!.issueDate));
  await eventually(async () => {
    const s = (await api.get<{ latestInvoice: { status: string } }>(`/api/v1/subscriptions/${subscriptionId}`)).body;
    return s.latestInvoice.status === 'draft' ? true : undefined;
  }, 'the bill a draft');
  dash.clock.advanceTo(Date.parse(first.nextInvoice!.issueDate) + 14 * 24 * 60 * 60 * 1000);

  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  await page.goto(`${dash.url}/dashboard/subscriptions`);
  const row = page.locator('tbody tr', { hasText: 'Bill not finalized' });
  t.is(await row.count(), 1);
  t.regex((await row.textContent()) ?? '', /Active/);
  // Named by the product it sells (a recurring invoice's subscription), not "Plan".
  t.regex((await row.locator('td').first().textContent()) ?? '', /^\s*Hosting\s*$/);
  await screenshot(t, page, 'subscriptions-bill-not-finalized');
  await page.goto(`${dash.url}/dashboard/subscriptions/${subscriptionId}`);
  t.is(await page.getByRole('heading', { level: 1, name: 'Hosting' }).count(), 1);
  t.is(await page.getByText('Bill not finalized').count(), 1);
  t.true((await page.getByText('Not finalized', { exact: true }).count()) >= 1);
  t.is(await page.getByText('Past due').count(), 0);
  await expectAccessible(t, page, 'subscription-bill-not-finalized');
  await screenshot(t, page, 'subscription-bill-not-finalized');
  t.deepEqual(problems(), []);
});
