import test, { type ExecutionContext } from 'ava';
import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import { nextInvoiceIdOf } from '../../machines/invoice.decide.ts';
import { subscriptionAggregate } from '../../machines/subscription.aggregate.ts';
import { createCommandHandler, type CommandHandler } from '../../src/actors/command-handler.ts';
import { subscriptionIdOfInvoice } from '../../machines/subscription.decide.ts';
import { dueEndOfDay } from '../../machines/invoice.due.ts';
import { openStores } from '../../src/app/open-stores.ts';
import type { Weir } from '../../src/app/start-weir.ts';
import { ALL_PROJECTIONS } from '../../src/projections/all-projections.ts';
import { COLLECTIONS, type TimerDoc } from '../../src/projections/collections.ts';
import { REMINDER_TIMER } from '../../src/projections/invoice-reminder-timers.ts';
import { PENDING_MAILS } from '../../src/projections/mails.projection.ts';
import { createProjectionRunner } from '../../src/projections/projection-runner.ts';
import { SUBSCRIPTION_TIMERS } from '../../src/projections/subscriptions.projection.ts';
import { subscriptionBilling } from '../../src/workflows/subscription-billing.ts';
import { subscriptionBillingEffects } from '../../src/workflows/subscription-billing.effects.ts';
import { createTestRail } from '../../src/chain-ingest/test-rail.ts';
import { createWorkflowRunner } from '../../src/workflows/workflow-runner.ts';
import { createManualClock, type ManualClock } from '../../src/shared/clock.ts';
import type { MailMessage } from '../../src/mail/mailer.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { startInvoiceTestApp } from '../support/invoice-test-app.ts';
import { recordingMailer } from '../support/recording-mailer.ts';
import { checkWebhookBody } from '../support/response-check.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { createMerchant, MERCHANT_WALLET, startTestWeir } from '../support/weir-harness.ts';
import {
  assertError,
  assertRejectedWithoutWrite,
  getSession,
  payInFull,
  restartableWeir,
  reveal,
  forgetWorkflows,
  settled,
  type Api,
  type Session,
} from './helpers.ts';

const DAY = 24 * 60 * 60 * 1000;

type Invoice = {
  id: string;
  status: string;
  number: string;
  subscriptionId: string | null;
  billingReason: string;
  invoiceType: string;
  amountDue: string;
  dueDate: string;
  issueDate: string | null;
  memo: string | null;
  footer: string | null;
  url: string | null;
  recurring: { interval: string; intervalCount: number } | null;
  nextInvoice: { id: string; issueDate: string } | null;
  lineItems: { data: { priceId: string | null; quantity: number; unitAmount: string }[] };
};
type Subscription = {
  id: string;
  status: string;
  latestInvoiceId: string | null;
  latestInvoice: { status: string } | null;
  currentPeriodStart: string;
  currentPeriodEnd: string;
  interval: string;
  intervalCount: number;
  customerId: string;
};

/** The payer opens the invoice's pay link: the checkout session it redirects to. */
async function openPayPage(weir: Pick<Weir, 'url'>, invoiceId: string): Promise<string> {
  const page = await fetch(`${weir.url}/invoices/${invoiceId}/pay`, { redirect: 'manual' });
  if (page.status !== 302) throw new Error(`the pay page answered ${page.status}`);
  return page.headers.get('location')!.split('/').pop()!;
}

async function payInvoice(weir: Parameters<typeof payInFull>[0], api: Api, invoiceId: string): Promise<void> {
  const session = (await api.get<Session>(`/api/v1/checkout/sessions/${await openPayPage(weir, invoiceId)}`)).body;
  await payInFull(weir, api, session);
  await eventually(
    async () => ((await api.get<Invoice>(`/api/v1/invoices/${invoiceId}`)).body.status === 'paid' ? true : undefined),
    `invoice ${invoiceId} paid`,
  );
}

/** The customer the tests bill, and a recurring product billed every `intervalCount` months. */
async function customerAndPlan(api: Api, name: string, unitAmount: string, intervalCount: number) {
  const customer = (
    await api.post<{ id: string }>('/api/v1/customers', { email: 'billing@client.example', name: 'Client Ltd' })
  ).body;
  const product = (
    await api.post<{ id: string; defaultPrice: { id: string } }>('/api/v1/products', {
      name,
      defaultPriceData: { currency: 'usdc', unitAmount, type: 'recurring', interval: 'month', intervalCount },
    })
  ).body;
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
    customerId: customer.id,
    invoiceType: 'recurring',
    interval: 'quarter',
    collectionMethod: 'charge_automatically',
    daysUntilDue: 10,
    memo: 'Quarterly retainer',
    footer: 'Thank you for your business',
    lineItems: { data: [{ priceId: product.defaultPrice.id, quantity: 2 }] },
  });
  t.is(draft.status, 200, JSON.stringify(draft.body));
  const first = await api.post<Invoice>(`/api/v1/invoices/${draft.body.id}/finalize`);
  t.like(first.body, {
    status: 'open',
    issueDate: '2026-03-15T09:00:00.000Z',
    nextInvoice: { issueDate: '2026-06-15T09:00:00.000Z' },
  });

  // Finalizing the first invoice of the series created its subscription, billed by that invoice.
  const created = await eventually(async () => {
    const list = (await api.get<{ data: Subscription[] }>(`/api/v1/subscriptions?customerId=${customer.id}`)).body.data;
    return list[0];
  }, 'the subscription of the series');
  t.like(created, {
    status: 'incomplete',
    latestInvoiceId: first.body.id,
    interval: 'month',
    intervalCount: 3,
    currentPeriodEnd: '2026-06-15T09:00:00.000Z',
  });
  const byProduct = (await api.get<{ data: Subscription[] }>(`/api/v1/subscriptions?productId=${product.id}`)).body
    .data;
  t.deepEqual(
    byProduct.map((s) => s.id),
    [created.id],
    'its items name the price and its product',
  );
  await payInvoice(app, api, first.body.id);
  await eventually(
    async () =>
      (await api.get<Subscription>(`/api/v1/subscriptions/${created.id}`)).body.status === 'active' ? true : undefined,
    'active',
  );

  // At the next issue date the second invoice is generated (the one the first announced), finalized and mailed.
  let previous = first.body;
  const numbers = [first.body.number];
  for (const [i, issueDate] of ['2026-06-15T09:00:00.000Z', '2026-09-15T09:00:00.000Z'].entries()) {
    t.is(previous.nextInvoice!.issueDate, issueDate);
    clock.advanceTo(Date.parse(issueDate));
    const next = await openInvoice(api, previous.nextInvoice!.id);
    t.like(next, {
      subscriptionId: created.id,
      billingReason: 'subscription_cycle',
      invoiceType: 'recurring',
      recurring: { interval: 'month', intervalCount: 3 },
      amountDue: '50000000000',
      issueDate,
      dueDate: new Date(Date.parse(issueDate) + 10 * DAY).toISOString(),
      memo: 'Quarterly retainer',
      footer: 'Thank you for your business',
    });
    t.deepEqual(
      next.lineItems.data.map((l) => [l.priceId, l.quantity, l.unitAmount]),
      [[product.defaultPrice.id, 2, '25000000000']],
    );
    t.truthy(next.nextInvoice, 'it announces the one after it');
    t.false(numbers.includes(next.number));
    numbers.push(next.number);
    const sent = await eventually(
      async () => mail.sent.find((m) => m.subject.startsWith(`Invoice ${next.number} `)),
      `the mail of invoice ${next.number}`,
    );
    t.is(sent.to, 'billing@client.example');
    t.true(sent.text.includes(`/invoices/${next.id}`), sent.text);
    if (i === 0) await payInvoice(app, api, next.id);
    previous = next;
  }

  // The third invoice goes unpaid past its due date: the subscription is past due, and no fourth is issued yet.
  clock.advanceTo(Date.parse(previous.dueDate));
  await eventually(
    async () =>
      (await api.get<Subscription>(`/api/v1/subscriptions/${created.id}`)).body.status === 'past_due'
        ? true
        : undefined,
    'past_due',
  );
  clock.advanceTo(Date.parse('2026-12-15T09:00:00.000Z'));
  t.is((await api.get(`/api/v1/invoices/${previous.nextInvoice!.id}`)).status, 404);
  const all = (await api.get<{ data: Invoice[] }>(`/api/v1/invoices?customerId=${customer.id}`)).body.data;
  t.is(all.length, 3);
});

const SERIES_START = Date.parse('2026-03-15T09:00:00.000Z');

/** The first invoice of a monthly series (10 USDC, due in 10 days, with `extra` fields), finalized: its subscription is incomplete. */
async function finalizedSeries(api: Api, extra: Record<string, unknown> = {}) {
  const { customer, product } = await customerAndPlan(api, 'Hosting', '1000000000', 1);
  const draft = await api.post<Invoice>('/api/v1/invoices', {
    customerId: customer.id,
    invoiceType: 'recurring',
    interval: 'month',
    collectionMethod: 'charge_automatically',
    daysUntilDue: 10,
    lineItems: { data: [{ priceId: product.defaultPrice.id, quantity: 1 }] },
    ...extra,
  });
  if (draft.status !== 200) throw new Error(JSON.stringify(draft.body));
  const invoice = (await api.post<Invoice>(`/api/v1/invoices/${draft.body.id}/finalize`)).body;
  const subscription = await untilSubscription(api, subscriptionIdOfInvoice(invoice.id), 'incomplete');
  return { invoice, subscription, customerId: customer.id };
}

/** The series' first invoice paid, its subscription active, then a month on: its renewal, open. */
async function renewedOncePaid(
  app: Parameters<typeof payInvoice>[0],
  api: Api,
  clock: ManualClock,
  invoiceId: string,
  subscriptionId: string,
): Promise<Invoice> {
  await payInvoice(app, api, invoiceId);
  await untilSubscription(api, subscriptionId, 'active');
  clock.advanceTo(Date.parse('2026-04-15T09:00:00.000Z'));
  return openInvoice(api, nextInvoiceIdOf(invoiceId));
}

async function untilSubscription(api: Api, id: string, status: string): Promise<Subscription> {
  return eventually(async () => {
    const response = await api.get<Subscription>(`/api/v1/subscriptions/${id}`);
    return response.status === 200 && response.body.status === status ? response.body : undefined;
  }, `subscription ${id} to be ${status}`);
}

/** The invoice's InvoiceVoided log events, with who recorded them and why. */
async function voidsOf(weir: Pick<Weir, 'eventStore'>, invoiceId: string) {
  return (await weir.eventStore.readStream(`invoice-${invoiceId}`))
    .filter((e) => e.type === 'InvoiceVoided')
    .map((e) => ({ actor: e.metadata.actor, causationId: e.metadata.causationId }));
}

/**
 * The first invoice was voided once, by the billing process because of its subscription, and takes
 * no payment: its hosted page says so, and it cannot be marked paid.
 */
async function assertVoidedOnce(
  t: ExecutionContext,
  weir: Pick<Weir, 'url' | 'eventStore'>,
  api: Api,
  invoiceId: string,
  subscriptionId: string,
): Promise<void> {
  t.deepEqual(
    await voidsOf(weir, invoiceId),
    [{ actor: 'system:subscription-billing', causationId: subscriptionId }],
    'voided once, by the billing process, because of the subscription',
  );
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
  t.is(
    (
      await api.post('/api/v1/webhook-endpoints', {
        description: 'all',
        url: receiver.url,
        enabledEvents: { events: ['*'] },
      })
    ).status,
    200,
  );
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
  t.like((await again.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`)).body, {
    status: 'incomplete_expired',
  });
  // A later webhook marks the point by which a repeat of the earlier ones would have been sent.
  const marker = (
    await again.post<Invoice>('/api/v1/invoices', {
      customerId,
      lineItems: {
        data: [
          { priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Setup' } }, quantity: 1 },
        ],
      },
    })
  ).body;
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
    subscriptionAggregate,
    subscription.id,
    { type: 'ExpireFirstPayment' },
    { organizationId, environment: 'test', actor: 'test' },
  );
  t.deepEqual(
    expiry.events.map((e) => e.type),
    ['SubscriptionIncompleteExpired'],
  );
  t.deepEqual(await voidsOf(stores, invoice.id), []);
  await stores.readStore.close();
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
  t.deepEqual(
    await timers.find({ recordId: subscription.id, kind: SUBSCRIPTION_TIMERS.expireFirst }),
    [],
    'no expiry is waiting any more',
  );

  clock.advanceTo(Date.parse(invoice.dueDate) + DAY);
  await settled(app);
  t.like((await api.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`)).body, {
    status: 'active',
    latestInvoiceId: invoice.id,
  });
  t.like((await api.get<Invoice>(`/api/v1/invoices/${invoice.id}`)).body, { status: 'paid' });
  t.deepEqual(await voidsOf(app, invoice.id), []);
});

test("a taxed series: each period's bill on the subscription asks what its invoice asks, tax included; the subscription's amount stays the price's", async (t) => {
  const clock = createManualClock(SERIES_START);
  const app = await startInvoiceTestApp(t, { clock });
  const { api } = await createMerchant(app.url);
  const vat = (await api.post<{ id: string }>('/api/v1/tax-rates', { name: 'VAT', percentage: '20' })).body;
  const { invoice, subscription } = await finalizedSeries(api, { taxRateIds: [vat.id] });
  t.is(invoice.amountDue, '1200000000', '10 USDC and 20 % VAT');
  const billOf = async () =>
    (
      await api.get<Subscription & { amountTotal: string; latestInvoice: { id: string; amountDue: string } }>(
        `/api/v1/subscriptions/${subscription.id}`,
      )
    ).body;
  t.like(await billOf(), { amountTotal: '1000000000', latestInvoice: { id: invoice.id, amountDue: '1200000000' } });

  const renewal = await renewedOncePaid(app, api, clock, invoice.id, subscription.id);
  t.is(renewal.amountDue, '1200000000');
  t.like(await billOf(), { amountTotal: '1000000000', latestInvoice: { id: renewal.id, amountDue: '1200000000' } });
});

test('a renewal the merchant voids while its subscription goes on bills nothing for that period: a past due subscription is active again, and the next period is billed at its end', async (t) => {
  const clock = createManualClock(SERIES_START);
  const app = await startInvoiceTestApp(t, { clock });
  const { api } = await createMerchant(app.url);
  const { invoice, subscription } = await finalizedSeries(api);
  const renewal = await renewedOncePaid(app, api, clock, invoice.id, subscription.id);
  clock.advanceTo(Date.parse(renewal.dueDate));
  await untilSubscription(api, subscription.id, 'past_due');

  t.like((await api.post<Invoice>(`/api/v1/invoices/${renewal.id}/void`)).body, { status: 'void' });
  const active = await untilSubscription(api, subscription.id, 'active');
  t.like(active, { latestInvoiceId: renewal.id, latestInvoice: { status: 'void' } });
  clock.advanceTo(Date.parse('2026-05-15T09:00:00.000Z'));
  const next = await openInvoice(api, nextInvoiceIdOf(renewal.id));
  t.like(next, { issueDate: '2026-05-15T09:00:00.000Z', subscriptionId: subscription.id });
  t.like((await api.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`)).body, {
    status: 'active',
    latestInvoiceId: next.id,
    currentPeriodEnd: '2026-06-15T09:00:00.000Z',
  });
});

test("a duplicate of a subscription's renewal is a one-time re-bill of its lines: finalized and paid, it starts no second subscription (it did, billing the customer twice each period); a duplicate of a series' first invoice is still a new series", async (t) => {
  const clock = createManualClock(SERIES_START);
  const app = await startInvoiceTestApp(t, { clock });
  const { api } = await createMerchant(app.url);
  const { invoice, subscription } = await finalizedSeries(api);
  const renewal = await renewedOncePaid(app, api, clock, invoice.id, subscription.id);

  const copy = (await api.post<Invoice>(`/api/v1/invoices/${renewal.id}/duplicate`)).body;
  t.like(copy, { status: 'draft', invoiceType: 'one_time', recurring: null, subscriptionId: null });
  t.deepEqual(copy.lineItems.data, renewal.lineItems.data);
  const finalized = (await api.post<Invoice>(`/api/v1/invoices/${copy.id}/finalize`)).body;
  t.like(finalized, { status: 'open', invoiceType: 'one_time', subscriptionId: null, amountDue: renewal.amountDue });
  await payInvoice(app, api, copy.id);
  await settled(app);
  assertError(t, await api.get(`/api/v1/subscriptions/${subscriptionIdOfInvoice(copy.id)}`), 404);
  const listed = await api.get<{ data: Subscription[] }>(`/api/v1/subscriptions?customerId=${subscription.customerId}`);
  t.deepEqual(
    listed.body.data.map((s) => s.id),
    [subscription.id],
  );

  const series = (await api.post<Invoice>(`/api/v1/invoices/${invoice.id}/duplicate`)).body;
  t.like(series, { invoiceType: 'recurring', recurring: invoice.recurring });
});

test('a series with terms longer than its period (Net-45, monthly) bills each period at its end while the earlier renewal is open within its terms; paying that one is recorded (the next period was not billed until it was paid, and the one in between never)', async (t) => {
  const clock = createManualClock(SERIES_START);
  const app = await startInvoiceTestApp(t, { clock });
  const { api } = await createMerchant(app.url);
  const { invoice, subscription } = await finalizedSeries(api, { daysUntilDue: 45 });
  const april = await renewedOncePaid(app, api, clock, invoice.id, subscription.id);
  t.is(april.dueDate, '2026-05-30T09:00:00.000Z');

  clock.advanceTo(Date.parse('2026-05-15T09:00:00.000Z'));
  const may = await openInvoice(api, nextInvoiceIdOf(april.id));
  t.like(may, { issueDate: '2026-05-15T09:00:00.000Z', subscriptionId: subscription.id });
  t.like((await api.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`)).body, {
    status: 'active',
    latestInvoiceId: may.id,
    currentPeriodStart: '2026-05-15T09:00:00.000Z',
  });
  await payInvoice(app, api, april.id);
  await settled(app);
  const after = (await api.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`)).body;
  t.like(after, { status: 'active', latestInvoiceId: may.id, latestInvoice: { status: 'open' } });
  const events = (await app.eventStore.readStream(`subscription-${subscription.id}`)).map((e) => e.type);
  t.is(events.filter((type) => type === 'RenewalPaid').length, 1, "April's payment recorded on the subscription");
});

test("the invoice list filters by the reference's subscriptionId and dueDate bounds, where it answered every invoice", async (t) => {
  const clock = createManualClock(SERIES_START);
  const app = await startInvoiceTestApp(t, { clock });
  const { api } = await createMerchant(app.url);
  const { invoice, subscription } = await finalizedSeries(api);
  const other = await finalizedSeries(api);
  const renewal = await renewedOncePaid(app, api, clock, invoice.id, subscription.id);
  const listed = async (query: string) => {
    const answer = await api.get<{ count: number; data: Invoice[] }>(`/api/v1/invoices?${query}`);
    t.is(answer.status, 200, JSON.stringify(answer.body));
    return answer.body.data.map((i) => i.id);
  };
  t.deepEqual(await listed(`subscriptionId=${subscription.id}`), [renewal.id, invoice.id]);
  t.deepEqual(await listed(`subscriptionId=${other.subscription.id}`), [other.invoice.id]);
  t.deepEqual(await listed(`dueDate[gt]=${encodeURIComponent(invoice.dueDate)}`), [renewal.id]);
  t.deepEqual(
    (await listed(`dueDate[lte]=${encodeURIComponent(invoice.dueDate)}`)).sort(),
    [invoice.id, other.invoice.id].sort(),
  );
  assertError(t, await api.get('/api/v1/invoices?dueDate[gt]=soon'), 400, { message: /dueDate\[gt\]/ });
});

test('the first invoice of a series names its subscription from its finalize on (as its renewals do), where it said subscriptionId null; only renewals auto-advance', async (t) => {
  const clock = createManualClock(SERIES_START);
  const app = await startInvoiceTestApp(t, { clock });
  const { api } = await createMerchant(app.url);
  const { invoice, subscription } = await finalizedSeries(api);
  t.is(invoice.subscriptionId, subscription.id, 'the finalize answers with it, as invoice.finalized does');
  const first = (await api.get<Invoice & { autoAdvance: boolean }>(`/api/v1/invoices/${invoice.id}`)).body;
  t.like(first, { subscriptionId: subscription.id, billingReason: 'manual', autoAdvance: false });
  const renewal = await renewedOncePaid(app, api, clock, invoice.id, subscription.id);
  t.like((await api.get(`/api/v1/invoices/${renewal.id}`)).body, {
    subscriptionId: subscription.id,
    autoAdvance: true,
  });
  // Paid and renewed, it still names its subscription (later events of its own fold keep it).
  t.like((await api.get(`/api/v1/invoices/${invoice.id}`)).body, { status: 'paid', subscriptionId: subscription.id });
});

test("an ended subscription's latestInvoice says its invoice's own status once its billing voided it (read and listed), where it said open for ever", async (t) => {
  const clock = createManualClock(SERIES_START);
  const app = await startInvoiceTestApp(t, { clock });
  const { api } = await createMerchant(app.url);
  const { invoice, subscription } = await finalizedSeries(api);
  const renewal = await renewedOncePaid(app, api, clock, invoice.id, subscription.id);
  // Ended as the renewal's period starts (none of it served): its billing voids the renewal.
  await api.post(`/api/v1/subscriptions/${subscription.id}/end`);
  await settled(app);
  t.like((await api.get(`/api/v1/invoices/${renewal.id}`)).body, { status: 'void' });
  const bill = { latestInvoiceId: renewal.id, latestInvoice: { id: renewal.id, status: 'void' } };
  t.like((await api.get(`/api/v1/subscriptions/${subscription.id}`)).body, { status: 'canceled', ...bill });
  const listed = await api.get<{ data: Subscription[] }>(`/api/v1/subscriptions?ids=${subscription.id}`);
  t.like(listed.body.data[0], bill);
});

test("a recurring price on another schedule than its recurring invoice's is refused naming the field, writing nothing (create, update; a draft that fits still finalizes), where the subscription billed it monthly and showed it as month", async (t) => {
  const clock = createManualClock(SERIES_START);
  const app = await startInvoiceTestApp(t, { clock });
  const { api } = await createMerchant(app.url);
  const { customer, product: monthly } = await customerAndPlan(api, 'Hosting', '1000000000', 1);
  const biennial = (
    await api.post<{ id: string; defaultPrice: { id: string } }>('/api/v1/products', {
      name: 'Support plan',
      defaultPriceData: {
        currency: 'usdc',
        unitAmount: '5000000000',
        type: 'recurring',
        interval: 'year',
        intervalCount: 2,
      },
    })
  ).body;
  const series = (priceId: string, interval: string) => ({
    customerId: customer.id,
    invoiceType: 'recurring',
    interval,
    daysUntilDue: 10,
    lineItems: { data: [{ priceId, quantity: 1 }] },
  });
  await assertRejectedWithoutWrite(
    t,
    app,
    () => api.post('/api/v1/invoices', series(biennial.defaultPrice.id, 'month')),
    {
      field: 'lineItems',
      message: /every 24 months.*every month/,
    },
  );
  // The same schedule in other words is consistent: a yearly price on a yearly invoice.
  const yearly = (
    await api.post<{ id: string }>('/api/v1/prices', {
      productId: biennial.id,
      currency: 'usdc',
      unitAmount: '3000000000',
      type: 'recurring',
      interval: 'year',
      intervalCount: 1,
    })
  ).body;
  t.is((await api.post('/api/v1/invoices', series(yearly.id, 'year'))).status, 200);
  const draft = (await api.post<Invoice>('/api/v1/invoices', series(monthly.defaultPrice.id, 'month'))).body;
  await assertRejectedWithoutWrite(t, app, () => api.put(`/api/v1/invoices/${draft.id}`, { interval: 'quarter' }), {
    field: 'interval',
  });
  await assertRejectedWithoutWrite(
    t,
    app,
    () =>
      api.put(`/api/v1/invoices/${draft.id}`, {
        lineItems: { data: [{ priceId: biennial.defaultPrice.id, quantity: 1 }] },
      }),
    { field: 'lineItems' },
  );
  t.like((await api.post<Invoice>(`/api/v1/invoices/${draft.id}/finalize`)).body, { status: 'open' });
});

test("the spec's recurring flow: an invoice sent without an interval bills on its recurring prices' schedule; a sent interval must match them", async (t) => {
  const clock = createManualClock(SERIES_START);
  const app = await startInvoiceTestApp(t, { clock });
  const { api } = await createMerchant(app.url);
  const { customer, product: monthly } = await customerAndPlan(api, 'Hosting', '900000000', 1);
  const quarterly = (await customerAndPlan(api, 'Retainer', '2500000000', 3)).product;
  const weekly = (
    await api.post<{ defaultPrice: { id: string } }>('/api/v1/products', {
      name: 'Weekly box',
      defaultPriceData: { currency: 'usdc', unitAmount: '100000000', type: 'recurring', interval: 'week' },
    })
  ).body;
  const series = (priceId: string, extra: Record<string, unknown> = {}) => ({
    customerId: customer.id,
    invoiceType: 'recurring',
    collectionMethod: 'charge_automatically',
    lineItems: { data: [{ priceId }] },
    ...extra,
  });

  const draft = await api.post<Invoice>('/api/v1/invoices', series(monthly.defaultPrice.id));
  t.is(draft.status, 200, JSON.stringify(draft.body));
  t.deepEqual(draft.body.recurring, { interval: 'month', intervalCount: 1 });
  const first = (await api.post<Invoice>(`/api/v1/invoices/${draft.body.id}/finalize`)).body;
  t.like(first, { status: 'open', nextInvoice: { issueDate: '2026-04-15T09:00:00.000Z' } });
  const quarter = (await api.post<Invoice>('/api/v1/invoices', series(quarterly.defaultPrice.id))).body;
  t.deepEqual(quarter.recurring, { interval: 'month', intervalCount: 3 });

  // A sent interval is held to the prices', as before.
  await assertRejectedWithoutWrite(
    t,
    app,
    () => api.post('/api/v1/invoices', series(monthly.defaultPrice.id, { interval: 'year' })),
    {
      field: 'lineItems',
      message: /bills every month, but this recurring invoice bills every 12 months/,
    },
  );
  // No schedule to take: a weekly price, or only one-time lines.
  await assertRejectedWithoutWrite(t, app, () => api.post('/api/v1/invoices', series(weekly.defaultPrice.id)), {
    field: 'lineItems',
    message: /bills every 1 week\(s\), but a recurring invoice bills monthly, quarterly, half-yearly or yearly/,
  });
  const oneTime = {
    customerId: customer.id,
    invoiceType: 'recurring',
    lineItems: { data: [{ priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Setup' } } }] },
  };
  await assertRejectedWithoutWrite(t, app, () => api.post('/api/v1/invoices', oneTime), {
    field: 'interval',
    code: 'parameter_missing',
  });
  // A one-time draft made recurring takes its lines' schedule too.
  const plain = (
    await api.post<Invoice>('/api/v1/invoices', {
      customerId: customer.id,
      lineItems: { data: [{ priceId: quarterly.defaultPrice.id }] },
    })
  ).body;
  t.is(plain.recurring, null);
  const made = await api.put<Invoice>(`/api/v1/invoices/${plain.id}`, { invoiceType: 'recurring' });
  t.is(made.status, 200, JSON.stringify(made.body));
  t.deepEqual(made.body.recurring, { interval: 'month', intervalCount: 3 });
});

test('a recurring invoice overdue already is refused at finalize and at send, naming dueDate and writing nothing, where its subscription expired and the invoice was voided seconds after it opened; one due today opens', async (t) => {
  const clock = createManualClock(SERIES_START);
  const app = await startInvoiceTestApp(t, { clock });
  const { api } = await createMerchant(app.url);
  const { customer, product } = await customerAndPlan(api, 'Hosting', '1000000000', 1);
  const draft = await api.post<Invoice>('/api/v1/invoices', {
    customerId: customer.id,
    invoiceType: 'recurring',
    interval: 'month',
    // Today at 08:00, an hour before now: overdue from that instant (a due date before today is refused when set).
    dueDate: '2026-03-15T08:00:00Z',
    lineItems: { data: [{ priceId: product.defaultPrice.id, quantity: 1 }] },
  });
  t.is(draft.status, 200, JSON.stringify(draft.body));
  for (const op of ['finalize', 'send'])
    await assertRejectedWithoutWrite(t, app, () => api.post(`/api/v1/invoices/${draft.body.id}/${op}`), {
      field: 'dueDate',
      message: /subscription/,
    });
  // Today as a date: payable to the end of the day, so it opens and its subscription waits for the payment.
  t.is((await api.put(`/api/v1/invoices/${draft.body.id}`, { dueDate: '2026-03-15' })).status, 200);
  t.like((await api.post<Invoice>(`/api/v1/invoices/${draft.body.id}/finalize`)).body, { status: 'open' });
  await untilSubscription(api, subscriptionIdOfInvoice(draft.body.id), 'incomplete');
});

test('a series with nothing to pay (a price of 0): its first invoice is paid when finalized and starts the subscription; each renewal is paid when issued, mailed as a receipt only', async (t) => {
  const clock = createManualClock(SERIES_START);
  const mail = recordingMailer();
  const app = await startInvoiceTestApp(t, { clock, mailer: mail.mailer });
  const { api } = await createMerchant(app.url);
  const { customer, product } = await customerAndPlan(api, 'Free tier', '0', 1);
  const draft = await api.post<Invoice>('/api/v1/invoices', {
    customerId: customer.id,
    invoiceType: 'recurring',
    interval: 'month',
    daysUntilDue: 10,
    lineItems: { data: [{ priceId: product.defaultPrice.id, quantity: 1 }] },
  });
  t.is(draft.status, 200, JSON.stringify(draft.body));
  const first = (await api.post<Invoice>(`/api/v1/invoices/${draft.body.id}/finalize`)).body;
  t.like(first, { status: 'paid', amountDue: '0' });
  const subscription = await untilSubscription(api, subscriptionIdOfInvoice(first.id), 'active');
  t.is(subscription.latestInvoiceId, first.id);

  // The next period's invoice is issued, paid at once, and the subscription goes on.
  clock.advanceTo(Date.parse(first.nextInvoice!.issueDate));
  const renewal = await eventually(async () => {
    const response = await api.get<Invoice>(`/api/v1/invoices/${first.nextInvoice!.id}`);
    return response.status === 200 && response.body.status === 'paid' ? response.body : undefined;
  }, 'the renewal to be issued and paid');
  t.like(renewal, { subscriptionId: subscription.id, billingReason: 'subscription_cycle', amountDue: '0' });
  await eventually(async () => {
    const s = (await api.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`)).body;
    return s.status === 'active' && s.latestInvoiceId === renewal.id && s.latestInvoice?.status === 'paid'
      ? s
      : undefined;
  }, 'the renewal recorded as paid');
  await settled(app);
  await eventually(async () => (mail.sent.length >= 2 ? true : undefined), 'two receipts');
  t.deepEqual(
    mail.sent.map((m) => m.subject.split(' ')[0]),
    ['Receipt', 'Receipt'],
    'a receipt for each, and no invoice to pay',
  );
  t.deepEqual(await app.readStore.collection(PENDING_MAILS).find({}), []);
});

test('the first invoice of a series whose subscription the merchant ends while incomplete is voided, once, across a restart', async (t) => {
  const clock = createManualClock(SERIES_START);
  const weir = await restartableWeir(t, clock);
  const first = await weir.start();
  const { api, testSecretKey } = await createMerchant(first.url);
  const { invoice, subscription } = await finalizedSeries(api);

  clock.advanceBy(DAY);
  const endedAt = new Date(clock.now()).toISOString();
  const end = await api.post<Subscription>(`/api/v1/subscriptions/${subscription.id}/end`, {
    cancellationComment: 'signed up by mistake',
  });
  t.is(end.status, 200);
  t.like(end.body, { status: 'canceled', endedAt, latestInvoiceId: invoice.id });
  await settled(first);
  t.like((await api.get<Invoice & { voidedAt: string | null }>(`/api/v1/invoices/${invoice.id}`)).body, {
    status: 'void',
    voidedAt: endedAt,
    nextInvoice: null,
  });
  await assertVoidedOnce(t, first, api, invoice.id, subscription.id);
  // Its former due date passes: the ended subscription does not expire on top of it.
  clock.advanceTo(Date.parse(invoice.dueDate) + DAY);
  await settled(first);
  await first.stop();

  const second = await weir.start();
  const again = apiClient(second.url, testSecretKey);
  await settled(second);
  await assertVoidedOnce(t, second, again, invoice.id, subscription.id);
  t.deepEqual(
    (await second.eventStore.readStream(`subscription-${subscription.id}`)).map((e) => e.type),
    ['SubscriptionCreated', 'SubscriptionCanceled'],
  );
  t.like((await again.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`)).body, {
    status: 'canceled',
    endedAt,
  });
});

/** A Weir that can be restarted on the same log, mailing to a recording mailer: every mail it sent, and every line it logged. */
async function restartableWeirWithMail(t: ExecutionContext, clock: ManualClock) {
  const { mailer, sent } = recordingMailer();
  const weir = await restartableWeir(t, clock, mailer);
  const logged: string[] = [];
  return {
    ...weir,
    sent,
    logged,
    start: () => startTestWeir(t, { dataDir: weir.dataDir }, { clock, mailer, log: (line) => logged.push(line) }),
  };
}

/** Reminders a day before and a day after the due date, copied onto each renewal of the series. */
const REMINDING = { reminders: { enabled: true, daysBeforeDue: [1], daysAfterDue: [1] } };

/** A series started now whose first invoice was paid: its subscription is active, its renewal due a month later. */
async function activeSeries(weir: Parameters<typeof payInFull>[0], api: Api) {
  const { invoice, subscription } = await finalizedSeries(api, REMINDING);
  await payInvoice(weir, api, invoice.id);
  await untilSubscription(api, subscription.id, 'active');
  return { first: invoice, subscriptionId: subscription.id };
}

/** The subjects of the mails that offer `invoice`'s pay page: its invoice mail and its reminders. */
const mailsOf = (sent: MailMessage[], invoice: Pick<Invoice, 'id'>) =>
  sent.filter((m) => m.text.includes(`/invoices/${invoice.id}`)).map((m) => m.subject);

/** The renewal `invoice` opened and was mailed, once. */
async function mailedRenewal(t: ExecutionContext, sent: MailMessage[], api: Api, invoiceId: string): Promise<Invoice> {
  const invoice = await openInvoice(api, invoiceId);
  await eventually(
    async () => (mailsOf(sent, invoice).length > 0 ? true : undefined),
    `the mail of renewal ${invoiceId}`,
  );
  t.deepEqual(
    mailsOf(sent, invoice).map((subject) => subject.split(' ').slice(0, 2).join(' ')),
    [`Invoice ${invoice.number}`],
  );
  return invoice;
}

/**
 * Past the renewal's due date and both its reminder times, everything projected and dispatched:
 * no reminder is waiting for it, and no mail is pending.
 */
async function pastItsReminders(
  t: ExecutionContext,
  weir: Parameters<typeof settled>[0],
  clock: ManualClock,
  invoice: Invoice,
): Promise<void> {
  clock.advanceTo(Date.parse(invoice.dueDate) + 2 * DAY);
  await settled(weir);
  t.deepEqual(
    await weir.readStore.collection<TimerDoc>(COLLECTIONS.timers).find({ kind: REMINDER_TIMER, recordId: invoice.id }),
    [],
    'no reminder is waiting',
  );
  await eventually(
    async () => ((await weir.readStore.collection(PENDING_MAILS).count({})) === 0 ? true : undefined),
    'no mail to be pending',
  );
}

test('the open renewal invoice of an active subscription the merchant ends bills a period it served: it stays owed and payable across a restart, its reminders still come, and paying it is recorded on the invoice while the subscription stays canceled', async (t) => {
  const clock = createManualClock(SERIES_START);
  const weir = await restartableWeirWithMail(t, clock);
  const first = await weir.start();
  const { api, testSecretKey } = await createMerchant(first.url);
  const { first: firstInvoice, subscriptionId } = await activeSeries(first, api);

  clock.advanceTo(Date.parse(firstInvoice.nextInvoice!.issueDate));
  const renewal = await mailedRenewal(t, weir.sent, api, firstInvoice.nextInvoice!.id);
  t.like(renewal, { subscriptionId, billingReason: 'subscription_cycle' });
  // A day into the period the payer opens its pay page; the merchant ends the subscription.
  clock.advanceBy(DAY);
  const session = await openPayPage(first, renewal.id);
  const endedAt = new Date(clock.now()).toISOString();
  const end = await api.post<Subscription & { endedAt: string }>(`/api/v1/subscriptions/${subscriptionId}/end`, {
    cancellationComment: 'closing the account',
  });
  t.like(end.body, { status: 'canceled', endedAt, latestInvoiceId: renewal.id });
  await settled(first);
  t.like((await api.get<Invoice & { voidedAt: string | null }>(`/api/v1/invoices/${renewal.id}`)).body, {
    status: 'open',
    voidedAt: null,
  });
  t.deepEqual(await voidsOf(first, renewal.id), [], 'as Stripe leaves a canceled subscription’s invoices');
  t.is((await getSession(api, session)).status, 'open', 'its pay page still takes the payment');
  await first.stop();

  const second = await weir.start();
  const again = apiClient(second.url, testSecretKey);
  await settled(second);
  t.deepEqual(await voidsOf(second, renewal.id), [], 'nor voided by a restart');
  // Owed, it is reminded of as any open invoice: the day before its due date, and the day after.
  for (const [at, mails] of [
    [Date.parse(renewal.dueDate) - DAY, 2],
    [Date.parse(renewal.dueDate) + DAY, 3],
  ] as const) {
    clock.advanceTo(at);
    await eventually(
      async () => (mailsOf(weir.sent, renewal).length === mails ? true : undefined),
      `${mails - 1} reminder(s) of the renewal`,
    );
  }
  // Paid after the end: the invoice is paid; the ended subscription records nothing and stays canceled.
  await payInvoice(second, again, renewal.id);
  await settled(second);
  t.like((await again.get<Subscription & { endedAt: string }>(`/api/v1/subscriptions/${subscriptionId}`)).body, {
    status: 'canceled',
    endedAt,
    latestInvoice: { status: 'paid' },
  });
  t.deepEqual((await second.eventStore.readStream(`subscription-${subscriptionId}`)).map((e) => e.type).slice(-2), [
    'RenewalInvoiceIssued',
    'SubscriptionCanceled',
  ]);
  t.is(mailsOf(weir.sent, renewal).length, 3, 'nothing more mailed about it once paid but its receipt, if any');
});

test('a crash between the end and the void: the restart voids the open renewal of a period not served once; a renewal issued just before the end is never issued nor mailed', async (t) => {
  const clock = createManualClock(SERIES_START);
  const weir = await restartableWeirWithMail(t, clock);
  const first = await weir.start();
  const { api, testSecretKey, organizationId } = await createMerchant(first.url);
  const open = await activeSeries(first, api);
  clock.advanceBy(DAY);
  const later = await activeSeries(first, api);
  clock.advanceTo(Date.parse(open.first.nextInvoice!.issueDate));
  const renewal = await mailedRenewal(t, weir.sent, api, open.first.nextInvoice!.id);
  await settled(first);
  await first.stop();

  // While Weir is down, the first subscription is ended at the instant its renewal's period starts (so
  // it serves none of it), and the second renewed and ended right after: the ends are in the log, no
  // void and no issue of the second renewal is.
  const stores = await openStores({ dataDir: weir.dataDir });
  const commands = createCommandHandler({ eventStore: stores.eventStore, clock });
  const ctx = { organizationId, environment: 'test' as const, actor: 'test' };
  const ended = await commands.handle(
    subscriptionAggregate,
    open.subscriptionId,
    { type: 'EndSubscription', comment: null },
    ctx,
  );
  t.deepEqual(
    ended.events.map((e) => e.type),
    ['SubscriptionCanceled'],
  );
  clock.set(Date.parse(later.first.nextInvoice!.issueDate));
  const renewed = await commands.handle(
    subscriptionAggregate,
    later.subscriptionId,
    { type: 'RenewSubscription', invoiceId: later.first.nextInvoice!.id },
    ctx,
  );
  t.deepEqual(
    renewed.events.map((e) => e.type),
    ['RenewalInvoiceIssued'],
  );
  await commands.handle(subscriptionAggregate, later.subscriptionId, { type: 'EndSubscription', comment: null }, ctx);
  t.deepEqual(await voidsOf(stores, renewal.id), []);
  await stores.readStore.close();
  await stores.eventStore.close();

  const second = await weir.start();
  const again = apiClient(second.url, testSecretKey);
  await settled(second);
  t.like((await again.get<Invoice>(`/api/v1/invoices/${renewal.id}`)).body, { status: 'void' });
  await assertVoidedOnce(t, second, again, renewal.id, open.subscriptionId);
  t.is(
    (await again.get(`/api/v1/invoices/${later.first.nextInvoice!.id}`)).status,
    404,
    'the renewal of a subscription that has ended is not issued',
  );
  t.like((await again.get<Subscription>(`/api/v1/subscriptions/${later.subscriptionId}`)).body, {
    status: 'canceled',
    latestInvoiceId: later.first.nextInvoice!.id,
  });
  await pastItsReminders(t, second, clock, renewal);
  t.is(mailsOf(weir.sent, renewal).length, 1, 'only the invoice mail sent before the end');
  t.deepEqual(mailsOf(weir.sent, { id: later.first.nextInvoice!.id }), [], 'the second renewal was never mailed');
});

test('of two subscriptions ended together as their renewals’ period starts (not served), the renewal partly paid on its pay page stays open with that money; the unpaid one is voided', async (t) => {
  const clock = createManualClock(SERIES_START);
  const { mailer } = recordingMailer();
  const weir = await startTestWeir(t, {}, { clock, mailer });
  const { api } = await createMerchant(weir.url);
  const unpaid = await activeSeries(weir, api);
  const partly = await activeSeries(weir, api);
  clock.advanceTo(Date.parse(unpaid.first.nextInvoice!.issueDate));
  const unpaidRenewal = await openInvoice(api, unpaid.first.nextInvoice!.id);
  const partlyRenewal = await openInvoice(api, partly.first.nextInvoice!.id);

  // A third of the renewal reaches its pay page's deposit address.
  const session = await openPayPage(weir, partlyRenewal.id);
  const shown = await reveal(weir, api, session);
  const part = (BigInt(shown.amountDueRaw) / 3n).toString();
  const chain = chainPublisher(weir.bus);
  const blockHash = randomHash();
  await chain.transfer({ to: shown.address, amount: part, blockNumber: 900_000, blockHash });
  await chain.final(900_000, blockHash);
  await eventually(
    async () => ((await getSession(api, session)).status === 'incomplete' ? true : undefined),
    'the part payment',
  );

  for (const { subscriptionId } of [unpaid, partly])
    t.is((await api.post(`/api/v1/subscriptions/${subscriptionId}/end`)).status, 200);
  await settled(weir);
  await assertVoidedOnce(t, weir, api, unpaidRenewal.id, unpaid.subscriptionId);
  t.deepEqual(await voidsOf(weir, partlyRenewal.id), [], 'partly paid: not voided');
  const payPage = await getSession(api, session);
  t.is(payPage.status, 'incomplete');
  t.true(BigInt(payPage.amountReceived) > 0n, 'the part payment stays recorded on the pay page');
  // The invoice shows it as paid so far, and still open for the rest.
  t.like((await api.get<Invoice & { amountPaid: string }>(`/api/v1/invoices/${partlyRenewal.id}`)).body, {
    status: 'open',
    amountPaid: payPage.amountReceived,
  });
});

/**
 * An active series on a restartable Weir, then, while Weir is down at the renewal's issue date: the
 * renewal timer renews the subscription, and the billing process (the real one, over the log)
 * creates the renewal invoice as a draft and crashes before sending it (its send fails). Then the
 * merchant ends the subscription, deletes the draft (`DELETE /invoices/:id`), or does nothing, as
 * `then` says. Weir is left stopped.
 */
async function crashBetweenCreateAndSend(t: ExecutionContext, then: 'nothing' | 'end' | 'delete the draft') {
  const clock = createManualClock(SERIES_START);
  const weir = await restartableWeirWithMail(t, clock);
  const first = await weir.start();
  const { api, testSecretKey, organizationId } = await createMerchant(first.url);
  const series = await activeSeries(first, api);
  await settled(first);
  await first.stop();

  const renewalId = series.first.nextInvoice!.id;
  clock.set(Date.parse(series.first.nextInvoice!.issueDate));
  const stores = await openStores({ dataDir: weir.dataDir });
  const commands = createCommandHandler({ eventStore: stores.eventStore, clock });
  const ctx = { organizationId, environment: 'test' as const, actor: 'test' };
  await commands.handle(
    subscriptionAggregate,
    series.subscriptionId,
    { type: 'RenewSubscription', invoiceId: renewalId },
    ctx,
  );
  const projections = createProjectionRunner({
    eventStore: stores.eventStore,
    readStore: stores.readStore,
    projections: ALL_PROJECTIONS,
  });
  const crashing: CommandHandler = {
    ...commands,
    async handle(aggregate, id, command, commandCtx) {
      if ((command as { type?: string }).type === 'SendInvoice') throw new Error('the process died');
      return commands.handle(aggregate, id, command, commandCtx);
    },
  };
  const billing = createWorkflowRunner({
    workflow: subscriptionBilling,
    eventStore: stores.eventStore,
    readStore: stores.readStore,
    commands: crashing,
    clock,
    log: () => {},
    effects: subscriptionBillingEffects({
      commands: crashing,
      readStore: stores.readStore,
      publicUrl: 'http://weir.test',
      rail: createTestRail(),
    }),
  });
  await projections.start();
  await billing.runOnce();
  await billing.stop();
  await projections.stop();
  // The restart comes once the issue's retry is due (its first, a second after the failure).
  clock.advanceBy(1000);
  t.deepEqual(
    (await stores.eventStore.readStream(`invoice-${renewalId}`)).map((e) => e.type),
    ['InvoiceCreated'],
    'a draft, never sent',
  );
  if (then === 'end')
    await commands.handle(
      subscriptionAggregate,
      series.subscriptionId,
      { type: 'EndSubscription', comment: null },
      ctx,
    );
  if (then === 'delete the draft') await commands.handle(invoiceAggregate, renewalId, { type: 'DeleteInvoice' }, ctx);
  // Both: the read models are a file in the data dir, and one left open holds its lock against the restart.
  await stores.readStore.close();
  await stores.eventStore.close();
  return { weir, clock, testSecretKey, series, renewalId };
}

test('a crash between creating a renewal invoice and sending it: the restart finalizes and mails the draft, once, and a replay of the whole log by the billing workflow changes nothing', async (t) => {
  const { weir, testSecretKey, series } = await crashBetweenCreateAndSend(t, 'nothing');
  const second = await weir.start();
  const again = apiClient(second.url, testSecretKey);
  const renewal = await mailedRenewal(t, weir.sent, again, series.first.nextInvoice!.id);
  t.like(renewal, {
    subscriptionId: series.subscriptionId,
    billingReason: 'subscription_cycle',
    url: `${second.url}/invoices/${renewal.id}`,
  });
  await settled(second);
  t.deepEqual(
    (await second.eventStore.readStream(`invoice-${renewal.id}`)).map((e) => e.type),
    ['InvoiceCreated', 'InvoiceFinalized', 'NextRecurringInvoiceScheduled', 'InvoiceSent'],
  );
  t.like((await again.get<Subscription>(`/api/v1/subscriptions/${series.subscriptionId}`)).body, {
    status: 'active',
    latestInvoiceId: renewal.id,
  });
  await second.stop();

  const logged = await forgetWorkflows(weir.dataDir);
  const third = await weir.start();
  await settled(third);
  t.is((await third.eventStore.readStream(`invoice-${renewal.id}`)).length, 4, 'nothing more after another restart');
  t.is((await third.eventStore.readAll(null, 100_000)).length, logged, 'the replayed log decided nothing new');
  t.deepEqual(
    mailsOf(weir.sent, renewal).map((subject) => subject.split(' ').slice(0, 2).join(' ')),
    [`Invoice ${renewal.number}`],
    'mailed once',
  );
});

test('a renewal draft left by a crash before its send, of a period its subscription began before it ended, is still issued: finalized and mailed once across restarts and a replay of the whole log, and owed', async (t) => {
  // The subscription ended a second into the period the draft bills: that period was served, so it stays owed.
  const { weir, testSecretKey, series, renewalId } = await crashBetweenCreateAndSend(t, 'end');
  const second = await weir.start();
  const issued = async (weirNow: Pick<Weir, 'url' | 'eventStore'>) => {
    const types = (await weirNow.eventStore.readStream(`invoice-${renewalId}`)).map((e) => e.type);
    t.is(types.filter((type) => type === 'InvoiceFinalized').length, 1, 'finalized once');
    t.is(types.filter((type) => type === 'InvoiceSent').length, 1, 'sent once');
    t.false(types.includes('InvoiceDeleted') || types.includes('InvoiceVoided'), 'neither deleted nor voided');
    const api = apiClient(weirNow.url, testSecretKey);
    t.like((await api.get<Invoice>(`/api/v1/invoices/${renewalId}`)).body, { status: 'open' });
    t.like((await api.get<Subscription>(`/api/v1/subscriptions/${series.subscriptionId}`)).body, {
      status: 'canceled',
      latestInvoiceId: renewalId,
    });
  };
  await eventually(async () => {
    const types = (await second.eventStore.readStream(`invoice-${renewalId}`)).map((e) => e.type);
    return types.includes('InvoiceSent') ? true : undefined;
  }, 'the renewal sent');
  await settled(second);
  await issued(second);
  await second.stop();

  const logged = await forgetWorkflows(weir.dataDir);
  const third = await weir.start();
  await settled(third);
  await issued(third);
  t.is((await third.eventStore.readAll(null, 100_000)).length, logged, 'the replayed log decided nothing new');
  t.is(mailsOf(weir.sent, { id: renewalId }).length, 1, 'mailed once');
});

test('a renewal draft left by a crash before its send and deleted by the merchant while the subscription goes on: that period is not billed, nothing is retried or logged across restarts and a replay of the whole log, and the next period is', async (t) => {
  const { weir, clock, testSecretKey, series, renewalId } = await crashBetweenCreateAndSend(t, 'delete the draft');
  // The billing workflow's lines.
  const billingLines = () =>
    weir.logged.filter(
      (line) => (JSON.parse(line) as { component?: string }).component === 'workflow subscription-billing',
    );
  const renewedAt = new Date(clock.now()).toISOString();
  const notBilled = async (weirNow: Pick<Weir, 'url' | 'eventStore' | 'projections' | 'readStore' | 'workflows'>) => {
    await settled(weirNow);
    t.deepEqual(billingLines(), [], 'the billing process logged nothing');
    t.deepEqual(
      (await weirNow.eventStore.readStream(`invoice-${renewalId}`)).map((e) => e.type),
      ['InvoiceCreated', 'InvoiceDeleted'],
      'never issued again',
    );
    const deletions = (await weirNow.eventStore.readStream(`subscription-${series.subscriptionId}`)).filter(
      (e) => e.type === 'RenewalInvoiceDeleted',
    );
    t.deepEqual(
      deletions.map((e) => [e.data, e.metadata.actor, e.metadata.causationId]),
      [[{ invoiceId: renewalId, at: renewedAt }, 'system:subscriptions', renewalId]],
      'recorded once',
    );
    const api = apiClient(weirNow.url, testSecretKey);
    t.is((await api.get(`/api/v1/invoices/${renewalId}`)).status, 404);
    t.like((await api.get<Subscription>(`/api/v1/subscriptions/${series.subscriptionId}`)).body, {
      status: 'active',
      latestInvoiceId: renewalId,
      latestInvoice: { status: 'deleted' },
    });
  };
  const second = await weir.start();
  await notBilled(second);
  await second.stop();
  const logged = await forgetWorkflows(weir.dataDir);
  const third = await weir.start();
  await notBilled(third);
  t.is((await third.eventStore.readAll(null, 100_000)).length, logged, 'the replayed log decided nothing new');

  // Past the deleted renewal's due date: nothing is past due. At its period's end the next period is billed.
  const api = apiClient(third.url, testSecretKey);
  const periodEnd = (await api.get<Subscription>(`/api/v1/subscriptions/${series.subscriptionId}`)).body
    .currentPeriodEnd;
  clock.advanceTo(Date.parse(series.first.nextInvoice!.issueDate) + 11 * DAY);
  await settled(third);
  t.like((await api.get<Subscription>(`/api/v1/subscriptions/${series.subscriptionId}`)).body, {
    status: 'active',
    latestInvoiceId: renewalId,
  });
  clock.advanceTo(Date.parse(periodEnd));
  const next = await mailedRenewal(t, weir.sent, api, nextInvoiceIdOf(renewalId));
  t.is(next.issueDate, periodEnd, 'the next period, not the deleted one again');
  await settled(third);
  t.like((await api.get<Subscription>(`/api/v1/subscriptions/${series.subscriptionId}`)).body, {
    status: 'active',
    latestInvoiceId: next.id,
    currentPeriodStart: periodEnd,
  });
  t.deepEqual(mailsOf(weir.sent, { id: renewalId }), [], 'the deleted draft was never mailed');
  t.deepEqual(billingLines(), []);
});

test("a renewal whose network's wallet the merchant removed is not finalized nor mailed: a draft showing why (lastFinalizationError, InvoiceFinalizationFailed in the log); once the wallet is back, finalizing it opens and mails it", async (t) => {
  const { weir, first, api, renewalId } = await renewalNotFinalized(t);
  type Failed = Invoice & { lastFinalizationError: { code: string; field: string | null; message: string } | null };
  const draft = await eventually(async () => {
    const got = await api.get<Failed>(`/api/v1/invoices/${renewalId}`);
    return got.status === 200 && got.body.lastFinalizationError ? got.body : undefined;
  }, 'the renewal to record why it was not finalized');
  await settled(first);
  t.like(draft, {
    status: 'draft',
    url: null,
    lastFinalizationError: { code: 'payment_method_not_available', field: 'paymentMethods.chainIds[0]' },
  });
  t.regex(draft.lastFinalizationError!.message, /chain 7357 has no payment method of this organization/);
  const failures = (await first.eventStore.readStream(`invoice-${renewalId}`)).filter(
    (e) => e.type === 'InvoiceFinalizationFailed',
  );
  t.is(failures.length, 1, 'recorded once: not retried in a loop');
  t.deepEqual(mailsOf(weir.sent, draft), [], 'never mailed as a draft');

  const added = await api.post('/api/v1/organization/withdrawal-addresses', {
    chainId: 7357,
    address: MERCHANT_WALLET,
    name: 'treasury',
  });
  t.is(added.status, 200, JSON.stringify(added.body));
  const finalized = await api.post<Failed>(`/api/v1/invoices/${renewalId}/finalize`);
  t.is(finalized.status, 200, JSON.stringify(finalized.body));
  t.like(finalized.body, { status: 'open', lastFinalizationError: null });
  await mailedRenewal(t, weir.sent, api, renewalId);
});

/**
 * An active series whose renewal Weir could not finalize: the merchant removed the wallet of the
 * network it is restricted to. Webhooks of every type go to `receiver`.
 */
async function renewalNotFinalized(t: ExecutionContext, terms: Record<string, unknown> = {}) {
  const clock = createManualClock(SERIES_START);
  const weir = await restartableWeirWithMail(t, clock);
  const first = await weir.start();
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const { api, testSecretKey } = await createMerchant(first.url);
  const hook = { description: 'all', url: receiver.url, enabledEvents: { events: ['*'] } };
  t.is((await api.post('/api/v1/webhook-endpoints', hook)).status, 200);
  const { invoice, subscription } = await finalizedSeries(api, {
    paymentMethods: { chainIds: [7357], assetIds: [] },
    ...terms,
  });
  await payInvoice(first, api, invoice.id);
  await untilSubscription(api, subscription.id, 'active');
  const wallets = (await api.get<{ id: string }[]>('/api/v1/organization/withdrawal-addresses')).body;
  for (const wallet of wallets)
    t.is((await api.delete(`/api/v1/organization/withdrawal-addresses/${wallet.id}`)).status, 200);

  const renewalId = invoice.nextInvoice!.id;
  clock.advanceTo(Date.parse(invoice.nextInvoice!.issueDate));
  return { clock, weir, first, receiver, api, testSecretKey, invoice, subscription, renewalId };
}

/** The subscription once its latest bill is `status`: `draft` once it learnt Weir could not finalize its renewal. */
const untilBill = (api: Api, id: string, status: 'draft' | 'open') =>
  eventually(async () => {
    const got = await api.get<Subscription & { latestInvoice: { dueAt: string } | null }>(
      `/api/v1/subscriptions/${id}`,
    );
    return got.body.latestInvoice?.status === status ? got.body : undefined;
  }, `the subscription's bill to be ${status}`);

/** The merchant adds back the wallet of the network the series is restricted to. */
async function walletBack(t: ExecutionContext, api: Api): Promise<void> {
  const wallet = { chainId: 7357, address: MERCHANT_WALLET, name: 'treasury' };
  t.is((await api.post('/api/v1/organization/withdrawal-addresses', wallet)).status, 200);
}

test("a renewal Weir could not finalize leaves its subscription active with a draft bill: no past_due (nor its webhook) at the draft's due date; finalized weeks later, the bill opens due the subscription's days from then, and is past due only after that", async (t) => {
  const { clock, first, receiver, api, subscription, renewalId } = await renewalNotFinalized(t);
  const stuck = await untilBill(api, subscription.id, 'draft');
  t.like(stuck, { status: 'active', latestInvoiceId: renewalId });
  const draft = (await api.get<Invoice>(`/api/v1/invoices/${renewalId}`)).body;
  t.is(draft.status, 'draft');
  await settled(first);
  const timers = first.readStore.collection<TimerDoc>(COLLECTIONS.timers);
  const pastDueTimers = () => timers.find({ recordId: subscription.id, kind: SUBSCRIPTION_TIMERS.pastDue });
  t.deepEqual(await pastDueTimers(), [], 'nothing lapses: the customer was sent no bill');

  // Past the draft's due date: still active with its draft bill.
  clock.advanceTo(Date.parse(draft.dueDate) + 4 * DAY);
  await settled(first);
  t.like((await api.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`)).body, {
    status: 'active',
    latestInvoice: { status: 'draft' },
  });
  const listed = (await api.get<{ data: Subscription[] }>('/api/v1/subscriptions')).body.data;
  t.like(
    listed.find((s) => s.id === subscription.id),
    { status: 'active', latestInvoice: { status: 'draft' } },
  );

  // The merchant adds the wallet back and finalizes: due 10 days (the series' days) from now, not refused on its past due date.
  await walletBack(t, api);
  const finalizedAt = clock.now();
  const finalized = await api.post<Invoice>(`/api/v1/invoices/${renewalId}/finalize`);
  t.is(finalized.status, 200, JSON.stringify(finalized.body));
  const newDue = new Date(finalizedAt + 10 * DAY).toISOString();
  t.like(finalized.body, { status: 'open', dueDate: newDue });
  t.is(finalized.body.nextInvoice?.issueDate, stuck.currentPeriodEnd, "its successor on the subscription's calendar");
  t.like(await untilBill(api, subscription.id, 'open'), { status: 'active', latestInvoice: { dueAt: newDue } });
  // Its invoice.finalized webhook marks the point by which a past_due webhook at the draft's due date would have been sent.
  const types = () => receiver.received.map((r) => (JSON.parse(r.body) as { type: string }).type);
  await receiver.waitFor((all) => all.some((r) => r.body.includes('invoice.finalized') && r.body.includes(renewalId)));
  t.false(types().includes('customer.subscription.past_due'), 'no past_due webhook for a bill never sent');
  await settled(first);
  t.deepEqual(
    (await pastDueTimers()).map((timer) => timer.fireAt),
    [Date.parse(newDue)],
    'it lapses at its new due date',
  );

  // Unpaid: just before its new due date still active, at it past due (with its webhook).
  clock.advanceTo(Date.parse(newDue) - 1);
  await settled(first);
  t.is((await api.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`)).body.status, 'active');
  clock.advanceTo(Date.parse(newDue));
  await untilSubscription(api, subscription.id, 'past_due');
  await receiver.waitFor((all) => all.some((r) => r.body.includes('customer.subscription.past_due')));
  t.is(types().filter((type) => type === 'customer.subscription.past_due').length, 1);
});

test("a renewal draft Weir could not finalize, sent by the merchant (POST …/send) after its due date: it opens on its subscription's calendar, due the subscription's days from then, and its bill reopens", async (t) => {
  const { clock, first, api, subscription, renewalId } = await renewalNotFinalized(t);
  const stuck = await untilBill(api, subscription.id, 'draft');
  const draft = (await api.get<Invoice>(`/api/v1/invoices/${renewalId}`)).body;
  clock.advanceTo(Date.parse(draft.dueDate) + DAY);
  await walletBack(t, api);
  const sent = await api.post<Invoice>(`/api/v1/invoices/${renewalId}/send`);
  t.is(sent.status, 200, JSON.stringify(sent.body));
  const newDue = new Date(clock.now() + 10 * DAY).toISOString();
  t.like(sent.body, { status: 'open', dueDate: newDue, nextInvoice: { issueDate: stuck.currentPeriodEnd } });
  t.like(await untilBill(api, subscription.id, 'open'), { status: 'active', latestInvoice: { dueAt: newDue } });
  await settled(first);
});

test('a renewal draft Weir could not finalize does not stop the calendar: at the period end the next renewal is issued (a draft too while the cause stays, sent once it is fixed), each period its own invoice, the newest the latest', async (t) => {
  const { clock, first, api, subscription, renewalId } = await renewalNotFinalized(t);
  const stuck = await untilBill(api, subscription.id, 'draft');
  await settled(first);
  const timers = first.readStore.collection<TimerDoc>(COLLECTIONS.timers);
  const renewTimers = () => timers.find({ recordId: subscription.id, kind: SUBSCRIPTION_TIMERS.renew });
  t.deepEqual(
    (await renewTimers()).map((timer) => timer.fireAt),
    [Date.parse(stuck.currentPeriodEnd)],
    'the next renewal is due at the period end',
  );

  // The next period: issued at its start, and not finalized either (the wallet is still missing).
  clock.advanceTo(Date.parse(stuck.currentPeriodEnd));
  const secondId = nextInvoiceIdOf(renewalId);
  const second = await eventually(async () => {
    const got = await api.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`);
    return got.body.latestInvoiceId === secondId && got.body.latestInvoice?.status === 'draft' ? got.body : undefined;
  }, 'the second renewal to be the latest bill, a draft');
  t.like(second, { status: 'active', currentPeriodStart: stuck.currentPeriodEnd });
  for (const id of [renewalId, secondId])
    t.is((await api.get<Invoice>(`/api/v1/invoices/${id}`)).body.status, 'draft', `${id} stays a draft`);

  // The merchant fixes the cause: the third period's renewal is finalized and sent; the drafts stay theirs to finalize.
  await walletBack(t, api);
  await settled(first);
  clock.advanceTo(Date.parse(second.currentPeriodEnd));
  const thirdId = nextInvoiceIdOf(secondId);
  await eventually(async () => {
    const got = await api.get<Invoice>(`/api/v1/invoices/${thirdId}`);
    return got.status === 200 && got.body.status === 'open' ? got.body : undefined;
  }, 'the third renewal to be finalized and sent');
  await settled(first);
  const third = await untilBill(api, subscription.id, 'open');
  t.like(third, { status: 'active', latestInvoiceId: thirdId, currentPeriodStart: second.currentPeriodEnd });
  const drafts = (await api.get<{ data: Invoice[] }>('/api/v1/invoices?status=draft')).body.data.map((i) => i.id);
  t.true(drafts.includes(renewalId) && drafts.includes(secondId), 'both drafts are listed');
  await settled(first);
  t.deepEqual(
    (await timers.find({ recordId: subscription.id, kind: SUBSCRIPTION_TIMERS.pastDue })).map((timer) => timer.fireAt),
    [Date.parse(third.latestInvoice!.dueAt)],
    'the sent bill lapses at its due date',
  );
  // The first draft, finalized now (past its due date): due the series' days from now, its successor
  // already issued; the subscription's bill is still the newest.
  const late = await api.post<Invoice>(`/api/v1/invoices/${renewalId}/finalize`);
  t.is(late.status, 200, JSON.stringify(late.body));
  t.like(late.body, { status: 'open', dueDate: new Date(clock.now() + 10 * DAY).toISOString() });
  await settled(first);
  t.like((await api.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`)).body, {
    status: 'active',
    latestInvoiceId: thirdId,
  });
});

test('a renewal Weir could not finalize is told to an API-only merchant: one invoice.finalization_failed webhook carrying the draft and its lastFinalizationError, as documented; not sent again by a restart that rebuilds the read models', async (t) => {
  const { clock, weir, first, receiver, testSecretKey, subscription, renewalId } = await renewalNotFinalized(t);
  type Received = { type: string; data: { object: { id: string } } };
  const failedHooks = () =>
    receiver.received.filter((r) => {
      const hook = JSON.parse(r.body) as Received;
      return hook.type === 'invoice.finalization_failed' && hook.data.object.id === renewalId;
    });
  await receiver.waitFor(() => failedHooks().length > 0);
  const body = failedHooks()[0]!.body;
  t.notThrows(() => checkWebhookBody(body), 'as the OpenAPI webhooks section documents it');
  t.like((JSON.parse(body) as { data: { object: object } }).data.object, {
    id: renewalId,
    status: 'draft',
    subscriptionId: subscription.id,
    lastFinalizationError: { code: 'payment_method_not_available', field: 'paymentMethods.chainIds[0]' },
  });
  await settled(first);
  await first.stop();

  // Restarted on the same log: the read models and the billing workflow fold it again.
  clock.advanceBy(DAY);
  const second = await weir.start();
  const again = apiClient(second.url, testSecretKey);
  await settled(second);
  // A later webhook marks the point by which a repeat would have been sent.
  const created = () => receiver.received.filter((r) => r.body.includes('withdrawal_address.created')).length;
  const before = created();
  await walletBack(t, again);
  await receiver.waitFor(() => created() > before);
  await settled(second);
  t.is(failedHooks().length, 1, 'sent once');
  const failures = (await second.eventStore.readStream(`invoice-${renewalId}`)).filter(
    (e) => e.type === 'InvoiceFinalizationFailed',
  );
  t.is(failures.length, 1, 'recorded once');
});

test('a renewal draft of a subscription due the day it is issued (daysUntilDue 0), finalized after that day, is due at the end of the finalize day, not at that instant: not past due alongside its mail', async (t) => {
  // Due the day it is finalized: the series, and so its subscription, bills with 0 days until due.
  const { clock, first, api, subscription, renewalId } = await renewalNotFinalized(t, {
    daysUntilDue: undefined,
    dueDate: '2026-03-15',
  });
  await untilBill(api, subscription.id, 'draft');
  const { daysUntilDue } = (await api.get<{ daysUntilDue: number }>(`/api/v1/subscriptions/${subscription.id}`)).body;
  t.is(daysUntilDue, 0);
  const draft = (await api.get<Invoice>(`/api/v1/invoices/${renewalId}`)).body;
  clock.advanceTo(Date.parse(draft.dueDate) + 2 * DAY);
  await walletBack(t, api);
  const finalizedAt = clock.now();
  const finalized = await api.post<Invoice>(`/api/v1/invoices/${renewalId}/finalize`);
  t.is(finalized.status, 200, JSON.stringify(finalized.body));
  const endOfDay = dueEndOfDay(finalizedAt);
  t.like(finalized.body, { status: 'open', dueDate: endOfDay });
  t.like(await untilBill(api, subscription.id, 'open'), { status: 'active', latestInvoice: { dueAt: endOfDay } });
  await settled(first);
  t.is((await api.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`)).body.status, 'active');
  const timers = first.readStore.collection<TimerDoc>(COLLECTIONS.timers);
  t.deepEqual(
    (await timers.find({ recordId: subscription.id, kind: SUBSCRIPTION_TIMERS.pastDue })).map((timer) => timer.fireAt),
    [Date.parse(endOfDay) + 1],
    'it lapses at the midnight that ends its due day',
  );
});

test('a series due the day it is issued (daysUntilDue 0): its first invoice and each renewal are due the end of their issue day, so a renewal is not past due a minute after its issue, only once that day has ended', async (t) => {
  const clock = createManualClock(SERIES_START);
  const app = await startInvoiceTestApp(t, { clock });
  const { api } = await createMerchant(app.url);
  // Due at the instant it was created, the first invoice was refused at its own finalize as overdue already.
  const { invoice, subscription } = await finalizedSeries(api, { daysUntilDue: 0 });
  t.like(invoice, { status: 'open', dueDate: '2026-03-15T23:59:59.999Z' });
  const { daysUntilDue } = (await api.get<{ daysUntilDue: number }>(`/api/v1/subscriptions/${subscription.id}`)).body;
  t.is(daysUntilDue, 0);

  const renewal = await renewedOncePaid(app, api, clock, invoice.id, subscription.id);
  t.like(renewal, { issueDate: '2026-04-15T09:00:00.000Z', dueDate: '2026-04-15T23:59:59.999Z' });
  await settled(app);
  const timers = app.readStore.collection<TimerDoc>(COLLECTIONS.timers);
  t.deepEqual(
    (await timers.find({ recordId: subscription.id, kind: SUBSCRIPTION_TIMERS.pastDue })).map((timer) => timer.fireAt),
    [Date.parse('2026-04-16T00:00:00.000Z')],
    'it lapses at the midnight that ends its due day, not at its issue',
  );
  clock.advanceTo(Date.parse('2026-04-15T09:01:00.000Z'));
  await settled(app);
  t.like((await api.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`)).body, {
    status: 'active',
    latestInvoiceId: renewal.id,
  });
  clock.advanceTo(Date.parse('2026-04-16T00:00:00.000Z'));
  t.like(await untilSubscription(api, subscription.id, 'past_due'), { latestInvoiceId: renewal.id });
});
