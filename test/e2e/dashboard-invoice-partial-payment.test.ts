import test from 'ava';
import { payPart } from '../api/helpers.ts';
import { eventually } from '../support/api-client.ts';
import { chromiumPerFile, expectAccessible, startDashboard, watchPage } from '../support/dashboard.ts';

const browser = chromiumPerFile(test);

type Invoice = { id: string; status: string; amountPaid: string };

test('Invoices: one partly paid on its pay page offers no Void and says why; a void posted anyway is refused, naming the partial payment, and it stays open', async (t) => {
  const dash = await startDashboard(t);
  const { api } = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const customer = await api.post<{ id: string }>('/api/v1/customers', { email: 'ada@lovelace.example' });
  const lineItems = {
    data: [
      { priceData: { currency: 'usdc', unitAmount: '300000000', productData: { name: 'Roasting' } }, quantity: 1 },
    ],
  };
  const { id } = (await api.post<Invoice>('/api/v1/invoices', { customerId: customer.body.id, lineItems })).body;
  await api.post(`/api/v1/invoices/${id}/finalize`);
  const pay = await fetch(`${dash.url}/invoices/${id}/pay`, { redirect: 'manual' });
  const sessionId = pay.headers.get('location')!.split('/').pop()!;
  await payPart(dash.weir, api, sessionId);
  await eventually(async () => {
    const invoice = (await api.get<Invoice>(`/api/v1/invoices/${id}`)).body;
    return invoice.amountPaid === '100000000' ? invoice : undefined;
  }, 'the part payment to reach the invoice');

  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  await page.goto(`${dash.url}/dashboard/invoices/${id}`);
  const actions = page.locator('#invoice-actions');
  await actions.getByRole('button', { name: 'Mark paid', exact: true }).waitFor();
  t.is(await actions.getByRole('button', { name: 'Void', exact: true }).count(), 0, 'no Void offered');
  t.true(await actions.getByRole('button', { name: 'Mark uncollectible', exact: true }).isVisible());
  t.regex(
    await page.locator('#void-refused').innerText(),
    /^1(\.00)? USDC of it has been paid, so it cannot be voided: mark it paid or uncollectible instead\.$/,
  );
  await expectAccessible(t, page, 'partly paid invoice');
  // What is left to pay, and the session the part came through, where it can be completed as is.
  const summary = page.locator('#invoice-summary');
  t.is(await summary.locator('dt:text-is("Remaining") + dd').textContent(), '2.00 USDC');
  t.is(
    await summary.getByRole('link', { name: `Checkout session ${sessionId}` }).getAttribute('href'),
    `/dashboard/checkout-sessions/${sessionId}`,
  );

  // A void posted anyway (an old tab, a crafted form): the page says why, and nothing changes.
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    page.evaluate(
      `(() => { const form = document.querySelector('form[action$="/pay"]'); form.action = form.action.replace(/\\/pay$/, '/void'); form.submit(); })()`,
    ),
  ]);
  await page.waitForLoadState('load');
  t.is(response.status(), 400);
  await page.getByText(/has received 100000000 of its 300000000.*cannot be voided/).waitFor();
  t.is((await api.get<Invoice>(`/api/v1/invoices/${id}`)).body.status, 'open');
  t.deepEqual(problems(), []);
});
