import test from 'ava';
import { createManualClock } from '../../src/shared/clock.ts';
import { eventually } from '../support/api-client.ts';
import { startInvoiceTestApp } from '../support/invoice-test-app.ts';
import { recordingMailer } from '../support/recording-mailer.ts';
import { createMerchant } from '../support/weir-harness.ts';
import { payInFull, type Api, type Session } from './helpers.ts';

const DAY = 24 * 60 * 60 * 1000;

type Invoice = {
  id: string; status: string; number: string; subscriptionId: string | null; billingReason: string; invoiceType: string; amountDue: string;
  dueDate: string; issueDate: string | null; memo: string | null; footer: string | null; url: string | null;
  recurring: { interval: string; intervalCount: number } | null; nextInvoice: { id: string; issueDate: string } | null;
  lineItems: { data: { priceId: string | null; quantity: number; unitAmount: string }[] };
};
type Subscription = { id: string; status: string; latestInvoiceId: string | null; currentPeriodStart: string; currentPeriodEnd: string; interval: string; intervalCount: number; customerId: string };

async function payInvoice(weir: Parameters<typeof payInFull>[0], api: Api, invoiceId: string): Promise<void> {
  const redirect = await fetch(`${weir.url}/invoices/${invoiceId}/pay`, { redirect: 'manual' });
  const session = (await api.get<Session>(`/api/v1/checkout/sessions/${redirect.headers.get('location')!.split('/').pop()!}`)).body;
  await payInFull(weir, api, session);
  await eventually(async () => ((await api.get<Invoice>(`/api/v1/invoices/${invoiceId}`)).body.status === 'paid' ? true : undefined), `invoice ${invoiceId} paid`);
}

async function openInvoice(api: Api, id: string): Promise<Invoice> {
  return eventually(async () => {
    const response = await api.get<Invoice>(`/api/v1/invoices/${id}`);
    return response.status === 200 && response.body.status === 'open' ? response.body : undefined;
  }, `invoice ${id} to be generated and open`);
}

test('a finalized recurring invoice starts a subscription and generates its next invoices at each interval', async (t) => {
  const clock = createManualClock(Date.parse('2026-03-15T09:00:00.000Z'));
  const mail = recordingMailer();
  const app = await startInvoiceTestApp(t, { clock, mailer: mail.mailer });
  const { api } = await createMerchant(app.url);
  const customer = (await api.post<{ id: string }>('/api/v1/customers', { email: 'billing@client.example', name: 'Client Ltd' })).body;
  const product = (await api.post<{ id: string; defaultPrice: { id: string } }>('/api/v1/products', {
    name: 'Retainer', defaultPriceData: { currency: 'usdc', unitAmount: '25000000000', type: 'recurring', interval: 'month', intervalCount: 3 },
  })).body;

  const draft = await api.post<Invoice>('/api/v1/invoices', {
    customerId: customer.id, invoiceType: 'recurring', interval: 'quarter', collectionMethod: 'charge_automatically', daysUntilDue: 10,
    memo: 'Quarterly retainer', footer: 'Thank you for your business',
    lineItems: { data: [{ priceId: product.defaultPrice.id, quantity: 2 }] },
  });
  t.is(draft.status, 200, JSON.stringify(draft.body));
  const first = await api.post<Invoice>(`/api/v1/invoices/${draft.body.id}/finalize`);
  t.like(first.body, { status: 'open', issueDate: '2026-03-15T09:00:00.000Z', nextInvoice: { issueDate: '2026-06-15T09:00:00.000Z' } });

  // Finalizing the first invoice of the series created its subscription, billed by that invoice.
  const created = await eventually(async () => {
    const list = (await api.get<{ data: Subscription[] }>(`/api/v1/subscriptions?customerId=${customer.id}`)).body.data;
    return list[0];
  }, 'the subscription of the series');
  t.like(created, { status: 'incomplete', latestInvoiceId: first.body.id, interval: 'month', intervalCount: 3, currentPeriodEnd: '2026-06-15T09:00:00.000Z' });
  const byProduct = (await api.get<{ data: Subscription[] }>(`/api/v1/subscriptions?productId=${product.id}`)).body.data;
  t.deepEqual(byProduct.map((s) => s.id), [created.id], 'its items name the price and its product');
  await payInvoice(app, api, first.body.id);
  await eventually(async () => ((await api.get<Subscription>(`/api/v1/subscriptions/${created.id}`)).body.status === 'active' ? true : undefined), 'active');

  // At the next issue date the second invoice is generated (the one the first announced), finalized and mailed.
  let previous = first.body;
  const numbers = [first.body.number];
  for (const [i, issueDate] of ['2026-06-15T09:00:00.000Z', '2026-09-15T09:00:00.000Z'].entries()) {
    t.is(previous.nextInvoice!.issueDate, issueDate);
    clock.advanceTo(Date.parse(issueDate));
    const next = await openInvoice(api, previous.nextInvoice!.id);
    t.like(next, {
      subscriptionId: created.id, billingReason: 'subscription_cycle', invoiceType: 'recurring', recurring: { interval: 'month', intervalCount: 3 },
      amountDue: '50000000000', issueDate, dueDate: new Date(Date.parse(issueDate) + 10 * DAY).toISOString(),
      memo: 'Quarterly retainer', footer: 'Thank you for your business',
    });
    t.deepEqual(next.lineItems.data.map((l) => [l.priceId, l.quantity, l.unitAmount]), [[product.defaultPrice.id, 2, '25000000000']]);
    t.truthy(next.nextInvoice, 'it announces the one after it');
    t.false(numbers.includes(next.number));
    numbers.push(next.number);
    const sent = await eventually(async () => mail.sent.find((m) => m.subject.startsWith(`Invoice ${next.number} `)), `the mail of invoice ${next.number}`);
    t.is(sent.to, 'billing@client.example');
    t.true(sent.text.includes(`/invoices/${next.id}/pay`), sent.text);
    if (i === 0) await payInvoice(app, api, next.id);
    previous = next;
  }

  // The third invoice goes unpaid past its due date: the subscription is past due, and no fourth is issued yet.
  clock.advanceTo(Date.parse(previous.dueDate));
  await eventually(async () => ((await api.get<Subscription>(`/api/v1/subscriptions/${created.id}`)).body.status === 'past_due' ? true : undefined), 'past_due');
  clock.advanceTo(Date.parse('2026-12-15T09:00:00.000Z'));
  t.is((await api.get(`/api/v1/invoices/${previous.nextInvoice!.id}`)).status, 404);
  const all = (await api.get<{ data: Invoice[] }>(`/api/v1/invoices?customerId=${customer.id}`)).body.data;
  t.is(all.length, 3);
});
