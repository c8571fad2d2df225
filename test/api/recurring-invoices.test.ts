import test, { type ExecutionContext } from 'ava';
import { subscriptionAggregate } from '../../machines/subscription.aggregate.ts';
import { createCommandHandler } from '../../src/actors/command-handler.ts';
import { subscriptionIdOfInvoice } from '../../src/actors/subscription-items.ts';
import { openStores, type Weir } from '../../src/app/start-weir.ts';
import { COLLECTIONS, type TimerDoc } from '../../src/projections/collections.ts';
import { SUBSCRIPTION_TIMERS } from '../../src/projections/subscriptions.projection.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { startInvoiceTestApp } from '../support/invoice-test-app.ts';
import { recordingMailer } from '../support/recording-mailer.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { createMerchant } from '../support/weir-harness.ts';
import { assertError, payInFull, restartableWeir, settled, type Api, type Session } from './helpers.ts';

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

/** The customer the tests bill, and a recurring product billed every `intervalCount` months. */
async function customerAndPlan(api: Api, name: string, unitAmount: string, intervalCount: number) {
  const customer = (await api.post<{ id: string }>('/api/v1/customers', { email: 'billing@client.example', name: 'Client Ltd' })).body;
  const product = (await api.post<{ id: string; defaultPrice: { id: string } }>('/api/v1/products', {
    name, defaultPriceData: { currency: 'usdc', unitAmount, type: 'recurring', interval: 'month', intervalCount },
  })).body;
  return { customer, product };
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
  const { customer, product } = await customerAndPlan(api, 'Retainer', '25000000000', 3);

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

const SERIES_START = Date.parse('2026-03-15T09:00:00.000Z');

/** The first invoice of a monthly series (10 USDC, due in 10 days), finalized: its subscription is incomplete. */
async function finalizedSeries(api: Api) {
  const { customer, product } = await customerAndPlan(api, 'Hosting', '1000000000', 1);
  const draft = await api.post<Invoice>('/api/v1/invoices', {
    customerId: customer.id, invoiceType: 'recurring', interval: 'month', collectionMethod: 'charge_automatically', daysUntilDue: 10,
    lineItems: { data: [{ priceId: product.defaultPrice.id, quantity: 1 }] },
  });
  if (draft.status !== 200) throw new Error(JSON.stringify(draft.body));
  const invoice = (await api.post<Invoice>(`/api/v1/invoices/${draft.body.id}/finalize`)).body;
  const subscription = await untilSubscription(api, subscriptionIdOfInvoice(invoice.id), 'incomplete');
  return { invoice, subscription, customerId: customer.id };
}

async function untilSubscription(api: Api, id: string, status: string): Promise<Subscription> {
  return eventually(async () => {
    const response = await api.get<Subscription>(`/api/v1/subscriptions/${id}`);
    return response.status === 200 && response.body.status === status ? response.body : undefined;
  }, `subscription ${id} to be ${status}`);
}

/** The invoice's InvoiceVoided log events, with who recorded them and why. */
async function voidsOf(weir: Pick<Weir, 'eventStore'>, invoiceId: string) {
  return (await weir.eventStore.readStream(`invoice-${invoiceId}`)).filter((e) => e.type === 'InvoiceVoided')
    .map((e) => ({ actor: e.metadata.actor, causationId: e.metadata.causationId }));
}

/**
 * The first invoice was voided once, by the billing process because of its subscription, and takes
 * no payment: its hosted page says so, and it cannot be marked paid.
 */
async function assertVoidedOnce(t: ExecutionContext, weir: Pick<Weir, 'url' | 'eventStore'>, api: Api, invoiceId: string, subscriptionId: string): Promise<void> {
  t.deepEqual(await voidsOf(weir, invoiceId), [{ actor: 'system:subscription-billing', causationId: subscriptionId }], 'voided once, by the billing process, because of the subscription');
  const page = await fetch(`${weir.url}/invoices/${invoiceId}/pay`, { redirect: 'manual' });
  t.is(page.status, 410, 'the hosted page opens no checkout session');
  t.regex(await page.text(), /voided and can no longer be paid/);
  assertError(t, await api.post(`/api/v1/invoices/${invoiceId}/pay`), 400, { message: /invoice is void/ });
}

test('the first invoice of a series left unpaid past its due date is voided when its subscription becomes incomplete_expired, once, across a restart', async (t) => {
  const clock = createManualClock(SERIES_START);
  const weir = await restartableWeir(t, clock);
  const first = await weir.start();
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const { api, testSecretKey } = await createMerchant(first.url);
  t.is((await api.post('/api/v1/webhook-endpoints', { description: 'all', url: receiver.url, enabledEvents: { events: ['*'] } })).status, 200);
  const { invoice, subscription, customerId } = await finalizedSeries(api);
  t.like(subscription, { latestInvoiceId: invoice.id });
  await receiver.waitFor((all) => all.length >= 2);

  clock.advanceTo(Date.parse(invoice.dueDate));
  const expired = await untilSubscription(api, subscription.id, 'incomplete_expired');
  t.like(expired, { endedAt: invoice.dueDate, latestInvoiceId: invoice.id });
  await settled(first);
  t.truthy(invoice.nextInvoice, 'open, it announced the next invoice of the series');
  const voided = (await api.get<Invoice & { voidedAt: string | null }>(`/api/v1/invoices/${invoice.id}`)).body;
  // Nothing will be issued after it: it no longer announces a next invoice.
  t.like(voided, { status: 'void', voidedAt: invoice.dueDate, nextInvoice: null });
  await assertVoidedOnce(t, first, api, invoice.id, subscription.id);
  await first.stop();

  // Restarted a day later on the same log: the read models are rebuilt, and nothing is done twice.
  clock.advanceBy(DAY);
  const second = await weir.start();
  const again = apiClient(second.url, testSecretKey);
  await settled(second);
  await assertVoidedOnce(t, second, again, invoice.id, subscription.id);
  t.like((await again.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`)).body, { status: 'incomplete_expired' });
  // A later webhook marks the point by which a repeat of the earlier ones would have been sent.
  const marker = (await again.post<Invoice>('/api/v1/invoices', {
    customerId, lineItems: { data: [{ priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Setup' } }, quantity: 1 }] },
  })).body;
  t.is((await again.post(`/api/v1/invoices/${marker.id}/finalize`)).status, 200);
  await receiver.waitFor((all) => all.some((r) => r.body.includes(marker.id)));
  const types = receiver.received.map((r) => (JSON.parse(r.body) as { type: string }).type);
  // Weir announces no invoice.voided (the reference API has no such event): the merchant learns it from the subscription's.
  t.deepEqual(types.slice(2), ['customer.subscription.incomplete_expired', 'invoice.finalized']);
  t.deepEqual(types.slice(0, 2).sort(), ['customer.subscription.created', 'invoice.finalized']);
});

test('a crash after the subscription expired and before its first invoice was voided: the restart voids it', async (t) => {
  const clock = createManualClock(SERIES_START);
  const weir = await restartableWeir(t, clock);
  const first = await weir.start();
  const { api, testSecretKey, organizationId } = await createMerchant(first.url);
  const { invoice, subscription } = await finalizedSeries(api);
  await first.stop();

  // What a crash leaves: the expiry is in the log, the void is not.
  clock.set(Date.parse(invoice.dueDate));
  const stores = await openStores({ dataDir: weir.dataDir });
  const expiry = await createCommandHandler({ eventStore: stores.eventStore, clock }).handle(
    subscriptionAggregate, subscription.id, { type: 'ExpireFirstPayment' }, { organizationId, environment: 'test', actor: 'test' },
  );
  t.deepEqual(expiry.events.map((e) => e.type), ['SubscriptionIncompleteExpired']);
  t.deepEqual(await voidsOf(stores, invoice.id), []);
  await stores.eventStore.close();

  const second = await weir.start();
  const again = apiClient(second.url, testSecretKey);
  await settled(second);
  t.like((await again.get<Invoice>(`/api/v1/invoices/${invoice.id}`)).body, { status: 'void' });
  await assertVoidedOnce(t, second, again, invoice.id, subscription.id);
});

test('a first invoice paid just before its due date stays paid: the subscription starts, and nothing is voided', async (t) => {
  const clock = createManualClock(SERIES_START);
  const app = await startInvoiceTestApp(t, { clock });
  const { api } = await createMerchant(app.url);
  const { invoice, subscription } = await finalizedSeries(api);
  clock.advanceTo(Date.parse(invoice.dueDate) - 60_000);
  await payInvoice(app, api, invoice.id);
  await untilSubscription(api, subscription.id, 'active');
  const timers = app.readStore.collection<TimerDoc>(COLLECTIONS.timers);
  t.deepEqual(await timers.find({ recordId: subscription.id, kind: SUBSCRIPTION_TIMERS.expireFirst }), [], 'no expiry is waiting any more');

  clock.advanceTo(Date.parse(invoice.dueDate) + DAY);
  await settled(app);
  t.like((await api.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`)).body, { status: 'active', latestInvoiceId: invoice.id });
  t.like((await api.get<Invoice>(`/api/v1/invoices/${invoice.id}`)).body, { status: 'paid' });
  t.deepEqual(await voidsOf(app, invoice.id), []);
});

test('the first invoice of a series whose subscription the merchant ends while incomplete is voided, once, across a restart', async (t) => {
  const clock = createManualClock(SERIES_START);
  const weir = await restartableWeir(t, clock);
  const first = await weir.start();
  const { api, testSecretKey } = await createMerchant(first.url);
  const { invoice, subscription } = await finalizedSeries(api);

  clock.advanceBy(DAY);
  const endedAt = new Date(clock.now()).toISOString();
  const end = await api.post<Subscription>(`/api/v1/subscriptions/${subscription.id}/end`, { cancellationComment: 'signed up by mistake' });
  t.is(end.status, 200);
  t.like(end.body, { status: 'canceled', endedAt, latestInvoiceId: invoice.id });
  await settled(first);
  t.like((await api.get<Invoice & { voidedAt: string | null }>(`/api/v1/invoices/${invoice.id}`)).body, { status: 'void', voidedAt: endedAt, nextInvoice: null });
  await assertVoidedOnce(t, first, api, invoice.id, subscription.id);
  // Its former due date passes: the ended subscription does not expire on top of it.
  clock.advanceTo(Date.parse(invoice.dueDate) + DAY);
  await settled(first);
  await first.stop();

  const second = await weir.start();
  const again = apiClient(second.url, testSecretKey);
  await settled(second);
  await assertVoidedOnce(t, second, again, invoice.id, subscription.id);
  t.deepEqual((await second.eventStore.readStream(`subscription-${subscription.id}`)).map((e) => e.type), ['SubscriptionCreated', 'SubscriptionCanceled']);
  t.like((await again.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`)).body, { status: 'canceled', endedAt });
});
