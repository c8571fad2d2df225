import test from 'ava';
import { subscriptionIdOfInvoice } from '../../machines/subscription.decide.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { eventually } from '../support/api-client.ts';
import {
  chromiumPerFile,
  expectAccessible,
  paidSubscription,
  screenshot,
  startDashboard,
  watchPage,
} from '../support/dashboard.ts';
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

test('Enter in a reason never ends a subscription: on its page it cancels at period end (the safe action); once canceling, "End now" asks first, and Enter in the reason there is a new line', async (t) => {
  const dash = await startDashboard(t);
  const { api } = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const { id } = await paidSubscription(t, dash.weir, api, {
    name: 'Tea club',
    unitAmount: '1900000000',
    email: 'member@harbour.example',
  });
  type Read = { status: string; cancelAtPeriodEnd: boolean; cancellationComment: string | null };
  const read = async () => (await api.get<Read>(`/api/v1/subscriptions/${id}`)).body;

  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  const enter = async (label: string) => {
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByLabel(label).press('Enter'),
    ]);
    await page.waitForLoadState('load');
    return response.status();
  };
  await page.goto(`${dash.url}/dashboard/subscriptions/${id}`);
  await page.getByLabel('Reason (optional)').fill('moving abroad');
  t.is(await enter('Reason (optional)'), 303);
  await page.getByText('The subscription will end at the end of its period.').waitFor();
  t.like(await read(), { status: 'active', cancelAtPeriodEnd: true, cancellationComment: 'moving abroad' });

  // Canceling: Enter in any reason left on the page (there is none now) does not end it; ending it now is asked first.
  for (const field of await page.getByLabel('Reason (optional)').all()) {
    await field.fill('changed my mind');
    await Promise.all([page.waitForEvent('load'), field.press('Enter')]);
  }
  t.like(await read(), { status: 'active', cancelAtPeriodEnd: true });
  t.is(await page.getByLabel('Reason (optional)').count(), 0);
  // A link styled as a danger button reads as a button, like the others: not underlined as a text link is.
  const endNow = page.getByRole('link', { name: 'End now', exact: true });
  type Styled = { getComputedStyle: (e: unknown) => { textDecorationLine: string } };
  t.is(await endNow.evaluate((a) => (globalThis as unknown as Styled).getComputedStyle(a).textDecorationLine), 'none');
  await screenshot(t, page, 'subscription-canceling');
  await endNow.click();
  await page.getByRole('heading', { level: 1, name: 'End subscription' }).waitFor();
  await page.getByLabel('Reason (optional)').fill('changed my mind');
  await page.getByLabel('Reason (optional)').press('Enter');
  t.is(await page.getByLabel('Reason (optional)').inputValue(), 'changed my mind\n');
  t.like(await read(), { status: 'active', cancelAtPeriodEnd: true });
  await expectAccessible(t, page, 'subscription-end');
  await screenshot(t, page, 'subscription-end');
  await page.getByRole('link', { name: 'Keep it', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Tea club' }).waitFor();
  t.like(await read(), { status: 'active', cancelAtPeriodEnd: true });

  await page.getByRole('link', { name: 'End now', exact: true }).click();
  await page.getByLabel('Reason (optional)').fill('changed my mind');
  await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    page.getByRole('button', { name: 'End subscription', exact: true }).click(),
  ]);
  await page.getByText('The subscription was ended.').waitFor();
  t.like(await read(), { status: 'canceled', cancellationComment: 'changed my mind' });
  t.deepEqual(problems(), []);
});
