import test from 'ava';
import { eventually } from '../support/api-client.ts';
import { startInvoiceTestApp } from '../support/invoice-test-app.ts';
import { createMerchant } from '../support/weir-harness.ts';
import { assertRejectedWithoutWrite, createCustomer, getSession, payPart } from './helpers.ts';

type Invoice = {
  id: string;
  status: string;
  amountDue: string;
  amountPaid: string;
  amountRemaining: string;
  paid: boolean;
  paidOutOfBand: boolean;
  paymentAttempts: { checkoutSessionId: string; status: string; amountReceived: string }[];
};

test('an invoice whose pay page received part of its amount cannot be voided (400 invoice_partially_paid, nothing written); it shows what was received, and is marked uncollectible or paid instead', async (t) => {
  const app = await startInvoiceTestApp(t);
  const { api } = await createMerchant(app.url);
  const customerId = await createCustomer(api);
  const lineItems = {
    data: [{ priceData: { currency: 'usdc', unitAmount: '300000000', productData: { name: 'Audit' } }, quantity: 1 }],
  };
  const draft = (await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems })).body;
  await api.post(`/api/v1/invoices/${draft.id}/finalize`);
  const pay = await fetch(`${app.url}/invoices/${draft.id}/pay`, { redirect: 'manual' });
  t.is(pay.status, 302);
  const sessionId = pay.headers.get('location')!.split('/').pop()!;

  // A third of it reaches the pay page's deposit address: the session waits for the rest.
  await payPart(app, api, sessionId);
  const partly = await eventually(async () => {
    const invoice = (await api.get<Invoice>(`/api/v1/invoices/${draft.id}`)).body;
    return invoice.amountPaid !== '0' ? invoice : undefined;
  }, 'the part payment to reach the invoice');
  t.is((await getSession(api, sessionId)).status, 'incomplete');
  // Back on the pay link, the payer is sent to the partly paid session, which asks for the rest, not to a new one for it.
  const again = await fetch(`${app.url}/invoices/${draft.id}/pay`, { redirect: 'manual' });
  t.is(again.status, 302);
  t.is(again.headers.get('location')!.split('/').pop(), sessionId);
  t.like(partly, {
    status: 'open',
    paid: false,
    amountDue: '300000000',
    amountPaid: '100000000',
    amountRemaining: '200000000',
  });
  t.like(partly.paymentAttempts[0], { checkoutSessionId: sessionId, status: 'pending', amountReceived: '100000000' });

  const refused = await assertRejectedWithoutWrite(t, app, () => api.post(`/api/v1/invoices/${draft.id}/void`), {
    code: 'invoice_partially_paid',
    message: /has received 100000000 of its 300000000.*cannot be voided: mark it paid or uncollectible instead/,
  });
  t.regex(refused.message, /^invoice is open/);
  t.like((await api.get<Invoice>(`/api/v1/invoices/${draft.id}`)).body, { status: 'open', amountPaid: '100000000' });
  t.is((await getSession(api, sessionId)).status, 'incomplete', 'its session keeps waiting for the rest');

  // Written off, it still cannot be voided; marked paid, the rest is what is recorded as paid out of band.
  t.like((await api.post<Invoice>(`/api/v1/invoices/${draft.id}/mark-uncollectible`)).body, {
    status: 'uncollectible',
  });
  await assertRejectedWithoutWrite(t, app, () => api.post(`/api/v1/invoices/${draft.id}/void`), {
    code: 'invoice_partially_paid',
    message: /^invoice is uncollectible and has received/,
  });
  t.like((await api.post<Invoice>(`/api/v1/invoices/${draft.id}/pay`)).body, {
    status: 'paid',
    paidOutOfBand: true,
    amountPaid: '300000000',
    amountRemaining: '0',
  });
});
