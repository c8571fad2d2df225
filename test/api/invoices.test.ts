import test from 'ava';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { apiClient, eventually } from '../support/api-client.ts';
import { startInvoiceTestApp } from '../support/invoice-test-app.ts';
import { recordingMailer } from '../support/recording-mailer.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { createMerchant, MERCHANT_WALLET, startTestWeir } from '../support/weir-harness.ts';
import { createEmbeddedReadStore } from '../../src/read-store/embedded-read-store.ts';
import { invoicePayments } from '../../src/workflows/invoice-payments.ts';
import { createWorkflowRunner } from '../../src/workflows/workflow-runner.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import {
  assertError,
  assertRejectedWithoutWrite,
  BSC_TESTNET,
  createCustomer,
  logLength,
  payInFull,
  type Page,
  type Session,
  startWeirWithEvmNetwork,
} from './helpers.ts';

type Invoice = {
  id: string;
  object: string;
  number: string;
  invoiceNumber: string;
  status: string;
  customerId: string;
  currency: string;
  amountDue: string;
  amountPaid: string;
  amountRemaining: string;
  total: string;
  dueDate: string;
  memo: string | null;
  footer: string | null;
  invoiceType: string;
  recurring: { interval: string; intervalCount: number } | null;
  url: string | null;
  paid: boolean;
  paidOutOfBand: boolean;
  sentAt: string | null;
  checkoutSessionId: string | null;
  livemode: boolean;
  lineItems: {
    object: string;
    data: {
      description: string | null;
      priceId: string | null;
      quantity: number;
      unitAmount: string;
      amountTotal: string;
    }[];
  };
};

const lines = (unitAmount = '150000000', quantity = 2) => ({
  data: [{ priceData: { currency: 'usdc', unitAmount, productData: { name: 'Consulting hour' } }, quantity }],
});

test('invoices: create, number, list, update, finalize, illegal transitions, void, uncollectible, pay, duplicate, delete', async (t) => {
  const app = await startInvoiceTestApp(t);
  const { api } = await createMerchant(app.url);
  const customerId = await createCustomer(api);

  const created = await api.post<Invoice>('/api/v1/invoices', {
    customerId,
    lineItems: lines(),
    dueDate: '2030-02-01',
    memo: 'Thanks',
    footer: 'Bank-free',
    invoiceType: 'one_time',
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  const draft = created.body;
  t.is(draft.status, 'draft');
  t.is(draft.number, 'INV-000001');
  t.is(draft.invoiceNumber, 'INV-000001');
  t.is(draft.amountDue, '300000000');
  t.is(draft.total, '300000000');
  t.is(draft.dueDate, '2030-02-01T23:59:59.999Z', 'a due date: its last instant');
  t.is(draft.lineItems.data[0]!.description, 'Consulting hour');
  t.truthy(draft.lineItems.data[0]!.priceId);
  t.false(draft.livemode);

  const recurring = await api.post<Invoice>('/api/v1/invoices', {
    customerId,
    lineItems: { data: [{ priceId: draft.lineItems.data[0]!.priceId, quantity: 1 }] },
    daysUntilDue: 7,
    invoiceType: 'recurring',
    interval: 'quarter',
    collectionMethod: 'charge_automatically',
  });
  t.is(recurring.status, 200, JSON.stringify(recurring.body));
  t.is(recurring.body.number, 'INV-000002');
  t.deepEqual(recurring.body.recurring, { interval: 'month', intervalCount: 3 });

  const manual = await api.post<Invoice>('/api/v1/invoices', {
    customerId,
    lineItems: lines('100000000', 1),
    number: 'ACME-7',
  });
  t.is(manual.body.number, 'ACME-7');
  assertError(t, await api.post('/api/v1/invoices', { customerId, lineItems: lines(), number: 'ACME-7' }), 409, {
    code: 'invoice_number_in_use',
  });
  assertError(t, await api.post('/api/v1/invoices', { customerId, lineItems: lines(), dueDate: '2030-02-31' }), 400, {
    field: 'dueDate',
  });
  assertError(
    t,
    await api.post('/api/v1/invoices', {
      customerId,
      lineItems: lines(),
      invoiceType: 'recurring',
      interval: 'fortnight',
    }),
    400,
    { field: 'interval' },
  );
  assertError(t, await api.post('/api/v1/invoices', { lineItems: lines() }), 400, { field: 'customerId' });

  const list = await api.get<Page<Invoice>>('/api/v1/invoices?invoiceType=recurring');
  t.deepEqual(
    list.body.data.map((i) => i.id),
    [recurring.body.id],
  );
  t.is((await api.get<Page<Invoice>>(`/api/v1/invoices?status=draft&customerId=${customerId}`)).body.count, 3);

  const updated = await api.put<Invoice>(`/api/v1/invoices/${draft.id}`, {
    memo: 'Thank you!',
    lineItems: lines('150000000', 3),
  });
  t.is(updated.status, 200, JSON.stringify(updated.body));
  t.is(updated.body.memo, 'Thank you!');
  t.is(updated.body.amountDue, '450000000');

  const finalized = await api.post<Invoice>(`/api/v1/invoices/${draft.id}/finalize`);
  t.is(finalized.status, 200, JSON.stringify(finalized.body));
  t.is(finalized.body.status, 'open');
  t.is(finalized.body.url, `${app.url}/invoices/${draft.id}`);
  assertError(t, await api.put(`/api/v1/invoices/${draft.id}`, { memo: 'late edit' }), 400, {
    code: 'status_transition_invalid',
    message: /invoice is open/,
  });
  assertError(t, await api.delete(`/api/v1/invoices/${draft.id}`), 400, { message: /invoice is open/ });
  assertError(t, await api.post(`/api/v1/invoices/${recurring.body.id}/void`), 400, { message: /invoice is draft/ });

  const uncollectible = await api.post<Invoice>(`/api/v1/invoices/${draft.id}/mark-uncollectible`);
  t.is(uncollectible.body.status, 'uncollectible');
  const voided = await api.post<Invoice>(`/api/v1/invoices/${draft.id}/void`);
  t.is(voided.body.status, 'void');
  assertError(t, await api.post(`/api/v1/invoices/${draft.id}/pay`), 400, { message: /invoice is void/ });
  assertError(t, await api.post(`/api/v1/invoices/${draft.id}/mark-uncollectible`), 400, {
    message: /invoice is void/,
  });

  await api.post(`/api/v1/invoices/${manual.body.id}/finalize`);
  const paid = await api.post<Invoice>(`/api/v1/invoices/${manual.body.id}/pay`);
  t.is(paid.body.status, 'paid');
  t.true(paid.body.paidOutOfBand);
  t.is(paid.body.amountRemaining, '0');
  assertError(t, await api.post(`/api/v1/invoices/${manual.body.id}/void`), 400, { message: /invoice is paid/ });

  const copy = await api.post<Invoice>(`/api/v1/invoices/${draft.id}/duplicate`);
  t.is(copy.status, 200, JSON.stringify(copy.body));
  t.is(copy.body.status, 'draft');
  t.not(copy.body.id, draft.id);
  t.is(copy.body.number, 'INV-000004');
  t.deepEqual(copy.body.lineItems, updated.body.lineItems);
  t.is(copy.body.memo, 'Thank you!');

  const removed = await api.delete<{ message: string; statusCode: number }>(`/api/v1/invoices/${copy.body.id}`);
  t.deepEqual(removed.body, { message: `invoice ${copy.body.id} deleted`, statusCode: 200 });
  assertError(t, await api.get(`/api/v1/invoices/${copy.body.id}`), 404);

  // Another tenant's invoice is a 404.
  const other = await createMerchant(app.url, 'Other Shop');
  assertError(t, await other.api.get(`/api/v1/invoices/${manual.body.id}`), 404);
});

test('a due date before the issue date, or in the past, is refused naming it at create, update and finalize, writing nothing; due today is fine', async (t) => {
  const clock = createManualClock(Date.parse('2026-05-10T12:00:00.000Z'));
  const app = await startInvoiceTestApp(t, { clock });
  const { api } = await createMerchant(app.url);
  const customerId = await createCustomer(api);
  const create = (body: Record<string, unknown>) => () =>
    api.post('/api/v1/invoices', { customerId, lineItems: lines(), ...body });

  await assertRejectedWithoutWrite(t, app, create({ dueDate: '2020-01-01' }), {
    field: 'dueDate',
    message: /2020-01-01, in the past \(today is 2026-05-10\)/,
  });
  await assertRejectedWithoutWrite(t, app, create({ issueDate: '2026-12-20', dueDate: '2026-12-01' }), {
    field: 'dueDate',
    message: /2026-12-01, before the issue date 2026-12-20/,
  });
  // daysUntilDue counts from the issue date: back-dated so far that its due date passed, it names itself.
  await assertRejectedWithoutWrite(t, app, create({ issueDate: '2026-04-01', daysUntilDue: 7 }), {
    field: 'daysUntilDue',
    message: /2026-04-08, in the past/,
  });
  const dueToday = await api.post<Invoice>('/api/v1/invoices', {
    customerId,
    lineItems: lines(),
    dueDate: '2026-05-10',
  });
  t.is(dueToday.status, 200, JSON.stringify(dueToday.body));
  const sameDay = await create({ issueDate: '2026-12-20', dueDate: '2026-12-20' })();
  t.is(sameDay.status, 200, JSON.stringify(sameDay.body));

  const draft = (await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems: lines(), dueDate: '2026-05-20' }))
    .body;
  for (const body of [{ dueDate: '2020-01-01' }, { issueDate: '2026-06-01' }])
    await assertRejectedWithoutWrite(t, app, () => api.put(`/api/v1/invoices/${draft.id}`, body), { field: 'dueDate' });
  t.is((await api.put(`/api/v1/invoices/${draft.id}`, { memo: 'unchanged dates' })).status, 200);

  // Left until its due date passed: finalize and send refuse it, until the due date moves.
  clock.set(Date.parse('2026-05-21T08:00:00.000Z'));
  for (const op of ['finalize', 'send'])
    await assertRejectedWithoutWrite(t, app, () => api.post(`/api/v1/invoices/${draft.id}/${op}`), {
      field: 'dueDate',
      message: /in the past \(today is 2026-05-21\)/,
    });
  t.is((await api.put(`/api/v1/invoices/${draft.id}`, { dueDate: '2026-05-31' })).status, 200);
  t.like((await api.post<Invoice>(`/api/v1/invoices/${draft.id}/finalize`)).body, { status: 'open' });
});

test('daysUntilDue and the 30-day default count from the issue date when one is sent, from now without one; 0 is the end of that day', async (t) => {
  const clock = createManualClock(Date.parse('2026-05-10T12:00:00.000Z'));
  const app = await startInvoiceTestApp(t, { clock });
  const { api } = await createMerchant(app.url);
  const customerId = await createCustomer(api);
  const create = (body: Record<string, unknown>) =>
    api.post<Invoice>('/api/v1/invoices', { customerId, lineItems: lines(), ...body });

  const later = await create({ issueDate: '2026-12-20', daysUntilDue: 7 });
  t.is(later.status, 200, JSON.stringify(later.body));
  t.is(later.body.dueDate, '2026-12-27T23:59:59.999Z', 'from an issue date, a due date: payable all that day');
  const earlier = await create({ issueDate: '2026-05-05', daysUntilDue: 7 });
  t.is(earlier.body.dueDate, '2026-05-12T23:59:59.999Z', 'net 7 from a back-dated issue date');
  t.is((await create({ issueDate: '2026-12-20' })).body.dueDate, '2027-01-19T23:59:59.999Z');
  t.is((await create({ daysUntilDue: 7 })).body.dueDate, '2026-05-17T12:00:00.000Z');
  t.is((await create({})).body.dueDate, '2026-06-09T12:00:00.000Z');
  // 0 days is due on the day, payable all of it (Stripe's `days_until_due: 0`), not at this instant.
  t.is((await create({ daysUntilDue: 0 })).body.dueDate, '2026-05-10T23:59:59.999Z');
  t.is((await create({ issueDate: '2026-05-20T08:00:00Z', daysUntilDue: 0 })).body.dueDate, '2026-05-20T23:59:59.999Z');

  // On update: from the issue date sent, else the draft's, else now.
  const draft = (await create({ dueDate: '2026-06-01' })).body;
  const put = (body: Record<string, unknown>) => api.put<Invoice>(`/api/v1/invoices/${draft.id}`, body);
  t.is((await put({ issueDate: '2026-07-01', daysUntilDue: 14 })).body.dueDate, '2026-07-15T23:59:59.999Z');
  t.is((await put({ daysUntilDue: 3 })).body.dueDate, '2026-07-04T23:59:59.999Z');
  t.is((await put({ issueDate: null, daysUntilDue: 3 })).body.dueDate, '2026-05-13T12:00:00.000Z');
  t.is((await put({ daysUntilDue: 0 })).body.dueDate, '2026-05-10T23:59:59.999Z');
});

test('a due date sent as a timestamp at midnight UTC is that instant: overdue from it, not a day later; one sent as a date is due all that day', async (t) => {
  const clock = createManualClock(Date.parse('2026-12-01T12:00:00.000Z'));
  const app = await startInvoiceTestApp(t, { clock });
  const { api } = await createMerchant(app.url);
  const customerId = await createCustomer(api);
  const open = async (dueDate: string) => {
    const draft = (await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems: lines(), dueDate })).body;
    return (await api.post<Invoice>(`/api/v1/invoices/${draft.id}/finalize`)).body;
  };
  const atMidnight = await open('2026-12-10T00:00:00Z');
  const onTheDay = await open('2026-12-10');
  t.is(atMidnight.dueDate, '2026-12-10T00:00:00.000Z', 'the instant sent');
  t.is(onTheDay.dueDate, '2026-12-10T23:59:59.999Z', "the day's last instant");
  const badge = async (invoice: Invoice) =>
    /id="status"><span class="badge">([^<]+)<\/span>/.exec(await (await fetch(invoice.url!)).text())?.[1];

  clock.set(Date.parse('2026-12-09T23:59:59.999Z'));
  t.is(await badge(atMidnight), 'Due');
  clock.set(Date.parse('2026-12-10T00:00:00.000Z'));
  t.is(await badge(atMidnight), 'Overdue', 'from the instant it was due');
  t.is(await badge(onTheDay), 'Due', 'payable all of its due day');
  clock.set(Date.parse('2026-12-11T00:00:00.000Z'));
  t.is(await badge(onTheDay), 'Overdue');
});

test("a duplicate keeps the original's days until due, counted from now (the copy is issued later): not what was left of them, nor a day more for a due day", async (t) => {
  const clock = createManualClock(Date.parse('2026-05-10T12:00:00.000Z'));
  const app = await startInvoiceTestApp(t, { clock });
  const { api } = await createMerchant(app.url);
  const customerId = await createCustomer(api);
  const create = async (body: Record<string, unknown>) =>
    (await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems: lines(), ...body })).body;
  const duplicate = async (invoice: Invoice) =>
    (await api.post<Invoice>(`/api/v1/invoices/${invoice.id}/duplicate`)).body.dueDate;

  // Net 30, finalized 10 days later (its issue date then): the copy is net 30 again, not net 20.
  const net30 = await create({ daysUntilDue: 30 });
  clock.set(Date.parse('2026-05-20T12:00:00.000Z'));
  t.is((await api.post<Invoice>(`/api/v1/invoices/${net30.id}/finalize`)).status, 200);
  t.is(await duplicate(net30), '2026-06-19T12:00:00.000Z');
  // Issued on a day and due 7 days later (a due day): net 7 from now.
  const net7 = await create({ issueDate: '2026-06-01', dueDate: '2026-06-08' });
  t.is(await duplicate(net7), '2026-05-27T12:00:00.000Z');
});

test('invoices: concurrent creates get distinct auto numbers', async (t) => {
  const app = await startInvoiceTestApp(t);
  const { api } = await createMerchant(app.url);
  const customerId = await createCustomer(api);
  const results = await Promise.all(
    Array.from({ length: 6 }, () => api.post<Invoice>('/api/v1/invoices', { customerId, lineItems: lines() })),
  );
  for (const r of results) t.is(r.status, 200, JSON.stringify(r.body));
  t.is(new Set(results.map((r) => r.body.number)).size, 6);
});

test('invoices: send finalizes a draft and mails the customer an .eml with the business details', async (t) => {
  const app = await startInvoiceTestApp(t);
  const { api } = await createMerchant(app.url);
  const customerId = await createCustomer(api);
  const draft = (await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems: lines(), memo: 'Due soon' }))
    .body;
  // Its customer deleted since, the invoice has no address on record: `to` is required.
  await api.delete(`/api/v1/customers/${customerId}`);
  assertError(t, await api.post(`/api/v1/invoices/${draft.id}/send`, {}), 400, { field: 'to' });
  const sent = await api.post<Invoice>(`/api/v1/invoices/${draft.id}/send`, { to: 'payer@example.com' });
  t.is(sent.status, 200, JSON.stringify(sent.body));
  t.is(sent.body.status, 'open');
  t.truthy(sent.body.sentAt);
  const files = await readdir(app.outboxDir);
  t.is(files.length, 1);
  const eml = await readFile(join(app.outboxDir, files[0]!), 'utf8');
  t.regex(eml, /^To: payer@example\.com/m);
  t.regex(eml, /multipart\/alternative/);
  t.true(eml.includes('Acme Test Shop'));
  t.true(eml.includes(draft.number));
  t.true(eml.includes(`/invoices/${draft.id}`));
});

test('invoices: paying on the hosted page through a checkout session on the test rail makes the invoice paid', async (t) => {
  const app = await startInvoiceTestApp(t);
  const { api } = await createMerchant(app.url);
  const customerId = await createCustomer(api);
  const draft = (await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems: lines() })).body;
  const payer = apiClient(app.url);
  t.is(
    (await fetch(`${app.url}/invoices/${draft.id}/pay`, { redirect: 'manual' })).status,
    404,
    'a draft has no pay page',
  );
  await api.post(`/api/v1/invoices/${draft.id}/finalize`);

  const first = await fetch(`${app.url}/invoices/${draft.id}/pay`, { redirect: 'manual' });
  t.is(first.status, 302);
  const location = first.headers.get('location')!;
  t.regex(location, new RegExp(`^${app.url}/checkout/[0-9a-f-]{36}$`));
  const sessionId = location.split('/').pop()!;
  // The open session is reused.
  t.is((await fetch(`${app.url}/invoices/${draft.id}/pay`, { redirect: 'manual' })).headers.get('location'), location);

  const session = (await api.get<Session & { invoiceId: string }>(`/api/v1/checkout/sessions/${sessionId}`)).body;
  t.is(session.invoiceId, draft.id);
  t.is(session.amountTotal, '300000000');
  const open = (
    await api.get<Invoice & { paymentAttempts: { checkoutSessionId: string; status: string }[] }>(
      `/api/v1/invoices/${draft.id}`,
    )
  ).body;
  t.deepEqual(
    open.paymentAttempts.map((a) => [a.checkoutSessionId, a.status]),
    [[sessionId, 'pending']],
  );

  await payInFull({ url: app.url, bus: app.bus }, api, session);
  const paid = await eventually(async () => {
    const invoice = (await api.get<Invoice & { transactionHash: string | null }>(`/api/v1/invoices/${draft.id}`)).body;
    return invoice.status === 'paid' ? invoice : undefined;
  }, 'the invoice to be paid');
  t.is(paid.amountPaid, '300000000');
  t.is(paid.amountRemaining, '0');
  t.is(paid.checkoutSessionId, sessionId);
  t.truthy(paid.transactionHash);
  t.false(paid.paidOutOfBand);

  const after = await payer.get<string>(`/invoices/${draft.id}/pay`);
  t.is(after.status, 200);
  t.true(after.body.includes('was paid'));
  // The invoice payments workflow run again over the whole log (a redelivery of everything) records nothing.
  const before = (await app.eventStore.readAll(null, 100_000)).length;
  await createWorkflowRunner({
    workflow: invoicePayments,
    eventStore: app.eventStore,
    readStore: createEmbeddedReadStore({}),
    commands: app.commands,
    clock: app.clock,
    log: () => {},
  }).runOnce();
  t.is((await app.eventStore.readAll(null, 100_000)).length, before);
});

test('an invoice with nothing to pay (a price of 0) is paid when finalized, as Stripe does: amountPaid 0, invoice.paid, the receipt mail, a pay page that says paid', async (t) => {
  const mail = recordingMailer();
  const app = await startInvoiceTestApp(t, { mailer: mail.mailer });
  const { api } = await createMerchant(app.url);
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const endpoint = await api.post('/api/v1/webhook-endpoints', {
    description: 'invoices',
    url: receiver.url,
    enabledEvents: { events: ['invoice.finalized', 'invoice.paid', 'invoice.marked_as_paid'] },
  });
  t.is(endpoint.status, 200, JSON.stringify(endpoint.body));
  const customerId = await createCustomer(api, 'free@example.com');
  const draft = (await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems: lines('0', 3) })).body;
  t.like(draft, { status: 'draft', amountDue: '0' });

  const finalized = await api.post<Invoice>(`/api/v1/invoices/${draft.id}/finalize`);
  t.is(finalized.status, 200, JSON.stringify(finalized.body));
  t.like(finalized.body, {
    status: 'paid',
    paid: true,
    paidOutOfBand: false,
    amountDue: '0',
    amountPaid: '0',
    amountRemaining: '0',
    checkoutSessionId: null,
  });
  const hooks = await receiver.waitFor((all) => all.length >= 2);
  const events = hooks.map((h) => JSON.parse(h.body) as { type: string; data: { object: Invoice } });
  t.deepEqual(
    events.map((e) => e.type),
    ['invoice.finalized', 'invoice.paid'],
  );
  t.like(events[1]!.data.object, { id: draft.id, status: 'paid', amountPaid: '0' });
  const receipt = await eventually(async () => mail.sent[0], 'the receipt');
  t.is(receipt.to, 'free@example.com');
  t.regex(receipt.subject, /^Receipt for invoice /);

  // Its pay page opens no checkout session: it says the invoice is paid.
  const page = await fetch(`${app.url}/invoices/${draft.id}/pay`, { redirect: 'manual' });
  t.is(page.status, 200);
  t.regex(await page.text(), /was paid/);
  t.is((await api.get<Page<Session>>('/api/v1/checkout/sessions')).body.count, 0);
  // Finalizing again changes nothing; it cannot be voided.
  t.is((await api.post<Invoice>(`/api/v1/invoices/${draft.id}/finalize`)).body.status, 'paid');
  assertError(t, await api.post(`/api/v1/invoices/${draft.id}/void`), 400, { message: /invoice is paid/ });

  // Sent while a draft, it is finalized (so paid) and no invoice is mailed: only its receipt.
  const other = (await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems: lines('0', 1) })).body;
  const sent = await api.post<Invoice>(`/api/v1/invoices/${other.id}/send`);
  t.is(sent.status, 200, JSON.stringify(sent.body));
  t.like(sent.body, { status: 'paid', amountPaid: '0', sentAt: null });
  await eventually(async () => (mail.sent.length >= 2 ? true : undefined), 'the second receipt');
  t.deepEqual(
    mail.sent.map((m) => m.subject.split(' ')[0]),
    ['Receipt', 'Receipt'],
  );
  const all = await receiver.waitFor((received) => received.length >= 4);
  t.deepEqual(
    all.slice(2).map((h) => (JSON.parse(h.body) as { type: string }).type),
    ['invoice.finalized', 'invoice.paid'],
  );
});

test("an invoice whose total none of its payment methods' assets can take exactly (1e-8 USDC: only BNB Chain's 18-decimal USDC could, and the merchant has no wallet there) is refused at finalize and at send, writing nothing, so no pay page that can never be paid opens", async (t) => {
  // An amount no USDC asset carries is refused at create; one only a network without a wallet can take gets this far.
  const app = await startWeirWithEvmNetwork(t, BSC_TESTNET);
  const { api } = await createMerchant(app.url);
  const customerId = await createCustomer(api, 'fine@example.com');
  for (const [unitAmount, total] of [
    ['1', '0.00000001'],
    ['123456789', '1.23456789'],
  ]) {
    const draft = (await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems: lines(unitAmount, 1) })).body;
    const before = await logLength(app);
    const refused = await api.post(`/api/v1/invoices/${draft.id}/finalize`);
    assertError(t, refused, 400, { code: 'amount_not_payable', field: 'lineItems' });
    // The total said as an amount of USDC, as its lines were typed, not as the API's 10^8 integer.
    t.true(
      (refused.body as { message: string }).message.includes(
        `the total ${total} USDC cannot be paid exactly in USDC on Weir Testnet`,
      ),
      (refused.body as { message: string }).message,
    );
    assertError(t, await api.post(`/api/v1/invoices/${draft.id}/send`), 400, { code: 'amount_not_payable' });
    t.is(await logLength(app), before, 'nothing written');
    t.is((await api.get<Invoice>(`/api/v1/invoices/${draft.id}`)).body.status, 'draft');
    t.is((await fetch(`${app.url}/invoices/${draft.id}/pay`, { redirect: 'manual' })).status, 404);
  }
  // A total USDC can hold (a multiple of 100 in 10^-8 units) is finalized as before.
  const fine = (await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems: lines('123456700', 1) })).body;
  t.is((await api.post(`/api/v1/invoices/${fine.id}/finalize`)).status, 200);
});

test('an open invoice whose merchant has no payment method left gets a page saying it cannot be paid online now (409), not an error blaming the payer', async (t) => {
  const app = await startInvoiceTestApp(t);
  const { api } = await createMerchant(app.url);
  const customerId = await createCustomer(api, 'payer@example.com');
  const draft = (await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems: lines() })).body;
  t.is((await api.post(`/api/v1/invoices/${draft.id}/finalize`)).status, 200);
  const wallets = (await api.get<{ data: { id: string }[] }>('/api/v1/organization/withdrawal-addresses')).body;
  const list = Array.isArray(wallets) ? (wallets as { id: string }[]) : wallets.data;
  for (const wallet of list)
    t.is((await api.delete(`/api/v1/organization/withdrawal-addresses/${wallet.id}`)).status, 200);
  const page = await fetch(`${app.url}/invoices/${draft.id}/pay`, { redirect: 'manual' });
  t.is(page.status, 409);
  t.regex(page.headers.get('content-type') ?? '', /text\/html/);
  t.regex(await page.text(), /cannot be paid online right now/);
});

test("an invoice carries the reference's customer, autoAdvance, payment setting and each line's price", async (t) => {
  const app = await startTestWeir(t);
  const { api } = await createMerchant(app.url);
  const customerId = await createCustomer(api, 'payer@example.com');
  const product = (
    await api.post<{ id: string; defaultPrice: { id: string } }>('/api/v1/products', {
      name: 'Consulting',
      defaultPriceData: { currency: 'usdc', unitAmount: '2500000' },
    })
  ).body;
  const draft = await api.post<Record<string, unknown>>('/api/v1/invoices', {
    customerId,
    lineItems: { data: [{ priceId: product.defaultPrice.id, quantity: 2 }] },
  });
  t.is(draft.status, 200, JSON.stringify(draft.body));
  t.like(draft.body, {
    customer: { id: customerId, email: 'payer@example.com' },
    autoAdvance: false,
    url: null,
    lineItems: { data: [{ price: { id: product.defaultPrice.id, product: { id: product.id, name: 'Consulting' } } }] },
  });
  const setting = (await api.get<{ id: string }>('/api/v1/organization/payment-setting')).body;
  t.is(draft.body.paymentSettingId, setting.id);
  t.like(draft.body.paymentSetting, { id: setting.id });
  const id = draft.body.id as string;
  const listed = (await api.get<Page<Record<string, unknown>>>('/api/v1/invoices')).body.data.find((i) => i.id === id);
  t.deepEqual(listed, (await api.get(`/api/v1/invoices/${id}`)).body);
  const open = (await api.post<{ url: string }>(`/api/v1/invoices/${id}/finalize`)).body;
  t.true(open.url.startsWith(app.url), 'the hosted page once finalized');
});

test('an organization with no wallet at all cannot finalize or send an unrestricted invoice: a 400 naming the missing payment method, nothing written; with a wallet again it finalizes', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const customerId = await createCustomer(api, 'payer@example.com');
  const wallets = (await api.get<{ id: string }[]>('/api/v1/organization/withdrawal-addresses')).body;
  for (const wallet of wallets)
    t.is((await api.delete(`/api/v1/organization/withdrawal-addresses/${wallet.id}`)).status, 200);
  const draft = await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems: lines() });
  t.is(draft.status, 200, 'a draft may be written before the wallet is added');

  const refusal = {
    code: 'payment_method_not_available',
    message:
      /cannot be finalized: this organization has no payment method \(wallet address\) in the test environment.*POST \/api\/v1\/organization\/withdrawal-addresses/,
  };
  await assertRejectedWithoutWrite(t, weir, () => api.post(`/api/v1/invoices/${draft.body.id}/finalize`), refusal);
  await assertRejectedWithoutWrite(t, weir, () => api.post(`/api/v1/invoices/${draft.body.id}/send`), refusal);
  t.is((await api.get<Invoice>(`/api/v1/invoices/${draft.body.id}`)).body.status, 'draft');

  const added = await api.post('/api/v1/organization/withdrawal-addresses', {
    chainId: 7357,
    address: MERCHANT_WALLET,
    name: 'treasury',
  });
  t.is(added.status, 200, JSON.stringify(added.body));
  const finalized = await api.post<Invoice>(`/api/v1/invoices/${draft.body.id}/finalize`);
  t.is(finalized.status, 200, JSON.stringify(finalized.body));
  t.is(finalized.body.status, 'open');
});

test('an invoice number in use is refused (409) before its customer is looked at, on create and on update, writing nothing: a request refused only for its customer would take that number, so the dashboard makes a new customer only then', async (t) => {
  const app = await startInvoiceTestApp(t);
  const { api } = await createMerchant(app.url);
  const customerId = await createCustomer(api);
  const held = await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems: lines(), number: 'ACME-7' });
  t.is(held.status, 200, JSON.stringify(held.body));
  const draft = (await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems: lines() })).body;
  // The customer id the dashboard sends to have the rest checked before it makes a new customer.
  const unknown = '00000000-0000-4000-8000-000000000000';
  const inUse = {
    code: 'invoice_number_in_use',
    status: 409,
    message: /^number: invoice number ACME-7 is already used/,
  };
  await assertRejectedWithoutWrite(
    t,
    app,
    () => api.post('/api/v1/invoices', { customerId: unknown, lineItems: lines(), number: 'ACME-7' }),
    inUse,
  );
  await assertRejectedWithoutWrite(
    t,
    app,
    () => api.put(`/api/v1/invoices/${draft.id}`, { customerId: unknown, number: 'ACME-7' }),
    inUse,
  );
  // A free number with that customer is refused for the customer alone; the draft keeps its own number.
  assertError(
    t,
    await api.post('/api/v1/invoices', { customerId: unknown, lineItems: lines(), number: 'ACME-8' }),
    400,
    {
      field: 'customerId',
    },
  );
  const updated = await api.put<Invoice>(`/api/v1/invoices/${draft.id}`, { number: draft.number, memo: 'same number' });
  t.is(updated.status, 200, JSON.stringify(updated.body));
});
