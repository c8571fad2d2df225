import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { subscriptionAggregate } from '../../machines/subscription.aggregate.ts';
import { createCommandHandler } from '../../src/actors/command-handler.ts';
import type { Weir } from '../../src/app/start-weir.ts';
import { openEventStore } from '../../src/event-store/open-event-store.ts';
import { subscriptionBilling } from '../../src/workflows/subscription-billing.ts';
import { workflowInstances } from '../../src/workflows/workflow-runner.ts';
import { CUSTOMER_DELETED_COMMENT } from '../../src/read-api/routes/customers.ts';
import { createManualClock, type ManualClock } from '../../src/shared/clock.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { recordingMailer } from '../support/recording-mailer.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import {
  assertError,
  assertRejectedWithoutWrite,
  getSession,
  payInFull,
  payLate,
  payPart,
  receiveHooks,
  restartableWeir,
  reveal,
  sendPayment,
  sessionEvents,
  settled,
  untilCanceled,
  type Api,
  type Page,
  type Session,
} from './helpers.ts';

const HOUR = 60 * 60 * 1000;

type Subscription = {
  id: string;
  object: string;
  status: string;
  customerId: string | null;
  clientReferenceId: string | null;
  currency: string;
  interval: string;
  intervalCount: number;
  currentPeriodStart: string;
  currentPeriodEnd: string;
  cancelAtPeriodEnd: boolean;
  cancelAt: string | null;
  canceledAt: string | null;
  cancellationComment: string | null;
  endedAt: string | null;
  startDate: string;
  pausedAt: string | null;
  livemode: boolean;
  latestInvoice: { status: string; checkoutSessionId: string | null; amountToRefund?: string } | null;
  lineItems: {
    object: string;
    data: {
      quantity: number;
      price: { id: string; productId: string; interval: string; intervalCount: number; unitAmount: string };
    }[];
  };
};

async function plan(api: Api, name: string, interval: string, intervalCount: number, unitAmount = '1000000000') {
  const product = await api.post<{ id: string; defaultPrice: { id: string } }>('/api/v1/products', {
    name,
    defaultPriceData: { currency: 'usdc', unitAmount, type: 'recurring', interval, intervalCount },
  });
  if (product.status !== 200) throw new Error(JSON.stringify(product.body));
  return { productId: product.body.id, priceId: product.body.defaultPrice.id };
}

/** The customer a subscription session names when a test gives no `customerId`: a subscription needs someone to bill. */
const SUBSCRIBER = { customerData: { email: 'subscriber@example.com' } };

async function subscribe(api: Api, priceId: string, extra: Record<string, unknown> = SUBSCRIBER) {
  const session = await api.post<Session & { subscriptionId: string }>('/api/v1/checkout/sessions', {
    mode: 'subscription',
    successUrl: 'https://shop.example/welcome',
    lineItems: { data: [{ priceId, quantity: 1 }] },
    ...extra,
  });
  if (session.status !== 200) throw new Error(JSON.stringify(session.body));
  return { session: session.body, subscription: await subscriptionOf(api, session.body.subscriptionId) };
}

/** The subscription a session created, once the billing process has created it. */
function subscriptionOf(api: Api, id: string): Promise<Subscription> {
  return eventually(async () => {
    const response = await api.get<Subscription>(`/api/v1/subscriptions/${id}`);
    return response.status === 200 ? response.body : undefined;
  }, 'the subscription');
}

async function until(api: Api, id: string, status: string): Promise<Subscription> {
  return eventually(async () => {
    const s = (await api.get<Subscription>(`/api/v1/subscriptions/${id}`)).body;
    return s.status === status ? s : undefined;
  }, `subscription ${id} to be ${status}`);
}

/** The id of the subscription's latest renewal invoice, once the billing process has issued it. */
async function renewalOf(api: Api, id: string): Promise<string> {
  const renewed = await eventually(async () => {
    const s = (await api.get<Subscription & { latestInvoiceId: string | null }>(`/api/v1/subscriptions/${id}`)).body;
    return s.latestInvoiceId ? s : undefined;
  }, 'the renewal');
  return renewed.latestInvoiceId!;
}

/** The payer opens the invoice's pay link: the checkout session it redirects to. */
async function payPageOf(weir: Pick<Weir, 'url'>, api: Api, invoiceId: string): Promise<Session> {
  const page = await fetch(`${weir.url}/invoices/${invoiceId}/pay`, { redirect: 'manual' });
  if (page.status !== 302) throw new Error(`the pay page answered ${page.status}`);
  return getSession(api, page.headers.get('location')!.split('/').pop()!);
}

async function setup(
  t: Parameters<typeof startTestWeir>[0],
  clock: ManualClock = createManualClock(Date.parse('2026-05-10T12:00:00.000Z')),
  mailer = recordingMailer().mailer,
) {
  const weir = await startTestWeir(t, {}, { clock, mailer });
  const merchant = await createMerchant(weir.url);
  return { weir, clock, ...merchant };
}

test('a subscription session creates an incomplete subscription; paying it makes it active', async (t) => {
  const { weir, api } = await setup(t);
  const monthly = await plan(api, 'Pro', 'month', 1);
  const customer = (await api.post<{ id: string }>('/api/v1/customers', { email: 'c@example.com' })).body;
  const { session, subscription } = await subscribe(api, monthly.priceId, {
    customerId: customer.id,
    clientReferenceId: 'acct-7',
    metadata: { plan: 'pro' },
  });
  t.like(subscription, {
    object: 'subscription',
    status: 'incomplete',
    customerId: customer.id,
    clientReferenceId: 'acct-7',
    currency: 'usdc',
    interval: 'month',
    intervalCount: 1,
    startDate: '2026-05-10T12:00:00.000Z',
    currentPeriodStart: '2026-05-10T12:00:00.000Z',
    currentPeriodEnd: '2026-06-10T12:00:00.000Z',
    livemode: false,
  });
  t.deepEqual(
    subscription.lineItems.data.map((l) => [l.price.id, l.price.productId, l.quantity, l.price.unitAmount]),
    [[monthly.priceId, monthly.productId, 1, '1000000000']],
  );
  // The reference nests the product in each line's price.
  t.like((subscription.lineItems.data[0]!.price as unknown as { product: unknown }).product, {
    id: monthly.productId,
    name: 'Pro',
  });
  await payInFull(weir, api, session);
  t.like(await until(api, subscription.id, 'active'), { currentPeriodEnd: '2026-06-10T12:00:00.000Z' });
});

test('a subscription started at checkout names its first bill’s session as latestInvoice.checkoutSessionId, never as an invoice id; the renewal’s id is latestInvoiceId, which GET /invoices knows', async (t) => {
  const { weir, api, clock } = await setup(t);
  const monthly = await plan(api, 'Pro', 'month', 1);
  const { session, subscription } = await subscribe(api, monthly.priceId);
  type Bill = { id: string | null; checkoutSessionId: string | null; kind: string; status: string };
  type Billed = Subscription & { latestInvoiceId: string | null; latestInvoice: Bill };
  const first = (await api.get<Billed>(`/api/v1/subscriptions/${subscription.id}`)).body;
  t.like(first, {
    latestInvoiceId: null,
    latestInvoice: { id: null, checkoutSessionId: session.id, kind: 'checkout_session', status: 'open' },
  });
  await payInFull(weir, api, session);
  await until(api, subscription.id, 'active');
  clock.advanceTo(Date.parse('2026-06-10T12:00:00.000Z'));
  const renewed = await eventually(async () => {
    const s = (await api.get<Billed>(`/api/v1/subscriptions/${subscription.id}`)).body;
    return s.latestInvoiceId ? s : undefined;
  }, 'the renewal');
  t.like(renewed.latestInvoice, { id: renewed.latestInvoiceId, checkoutSessionId: null, kind: 'invoice' });
  t.is((await api.get(`/api/v1/invoices/${renewed.latestInvoice.id}`)).status, 200);
  // The list shows the same bills.
  const listed = await api.get<Page<Billed>>(`/api/v1/subscriptions?ids=${subscription.id}`);
  t.deepEqual(listed.body.data[0]!.latestInvoice, renewed.latestInvoice);
});

test('an unpaid first checkout session expires the subscription: incomplete_expired, nothing voided, and it can no longer be canceled', async (t) => {
  const { weir, api, clock } = await setup(t);
  const { session, subscription } = await subscribe(api, (await plan(api, 'Pro', 'month', 1)).priceId);
  clock.advanceBy(HOUR);
  const expired = await until(api, subscription.id, 'incomplete_expired');
  t.is(expired.endedAt, new Date(clock.now()).toISOString());
  // Only a first invoice is voided: the expired session takes no payment, so there is nothing to void.
  await settled(weir);
  t.like((await api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body, { status: 'expired' });
  t.is(
    await weir.readStore.collection(workflowInstances(subscriptionBilling.name)).count({ pending: true }),
    0,
    'no commands left for the billing workflow',
  );
  t.deepEqual(
    (await weir.eventStore.readAll(null, 100_000)).filter((e) => e.type.startsWith('Invoice')),
    [],
  );
  for (const op of ['cancel', 'end']) {
    assertError(t, await api.post(`/api/v1/subscriptions/${subscription.id}/${op}`, {}), 400, {
      message: /subscription is incomplete_expired/,
    });
  }
});

test('money a payer sends to an abandoned first session after it expired its subscription does not revive it: the subscription’s first bill names it as owed back (amountToRefund), the session as late money', async (t) => {
  const { weir, api, clock } = await setup(t);
  const { session, subscription } = await subscribe(api, (await plan(api, 'Pro', 'month', 1)).priceId);
  const shown = await reveal(weir, api, session.id);
  clock.advanceBy(HOUR);
  await until(api, subscription.id, 'incomplete_expired');
  await settled(weir);
  const expired = (await api.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`)).body;
  t.is(expired.latestInvoice?.amountToRefund, undefined);

  const late = await payLate(weir, api, session.id, shown);
  t.like(late, { status: 'expired', amountReceived: '1000000000' });
  await settled(weir);
  const after = (await api.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`)).body;
  t.like(after, {
    status: 'incomplete_expired',
    latestInvoice: { checkoutSessionId: session.id, status: 'expired', amountToRefund: '1000000000' },
  });
  t.false('lateTransferIds' in after.latestInvoice!, 'its bookkeeping is not shown');
  t.deepEqual(
    (await weir.eventStore.readStream(`subscription-${subscription.id}`)).map((e) => e.type),
    ['SubscriptionCreated', 'SubscriptionIncompleteExpired', 'FirstBillLatePaymentReceived'],
    'not revived',
  );
});

test('cancel at period end, resume, cancel again: it runs to the period end and is then canceled', async (t) => {
  const { weir, api, clock } = await setup(t);
  const { session, subscription } = await subscribe(api, (await plan(api, 'Pro', 'month', 1)).priceId);
  await payInFull(weir, api, session);
  await until(api, subscription.id, 'active');

  const scheduled = await api.post<Subscription>(`/api/v1/subscriptions/${subscription.id}/cancel`, {
    cancellationComment: 'too expensive',
  });
  t.is(scheduled.status, 200, JSON.stringify(scheduled.body));
  t.like(scheduled.body, {
    status: 'active',
    cancelAtPeriodEnd: true,
    cancelAt: '2026-06-10T12:00:00.000Z',
    cancellationComment: 'too expensive',
  });
  const resumed = await api.post<Subscription>(`/api/v1/subscriptions/${subscription.id}/resume`);
  t.like(resumed.body, { status: 'active', cancelAtPeriodEnd: false, cancelAt: null, canceledAt: null });
  t.like((await api.post<Subscription>(`/api/v1/subscriptions/${subscription.id}/cancel`)).body, {
    cancelAtPeriodEnd: true,
    cancellationComment: null,
  });

  clock.advanceTo(Date.parse('2026-06-10T12:00:00.000Z'));
  const canceled = await until(api, subscription.id, 'canceled');
  t.like(canceled, { endedAt: '2026-06-10T12:00:00.000Z', cancelAtPeriodEnd: true });
  // No renewal invoice was issued for the period after the cancellation.
  t.is((await api.get<Page<unknown>>('/api/v1/invoices')).body.count, 0);
  assertError(t, await api.post(`/api/v1/subscriptions/${subscription.id}/resume`), 400, {
    message: /subscription is canceled/,
  });
  t.like((await api.post<Subscription>(`/api/v1/subscriptions/${subscription.id}/end`)).body, {
    status: 'canceled',
    endedAt: '2026-06-10T12:00:00.000Z',
  });
});

test('end at once; pause and resume; operations the status forbids are 400s naming it', async (t) => {
  const { weir, api, clock } = await setup(t);
  const price = (await plan(api, 'Pro', 'month', 1)).priceId;
  const { subscription: incomplete } = await subscribe(api, price);
  assertError(t, await api.post(`/api/v1/subscriptions/${incomplete.id}/cancel`), 400, {
    message:
      /subscription is incomplete; only a trialing, active, past_due or unpaid subscription can be canceled at period end/,
  });
  assertError(t, await api.post(`/api/v1/subscriptions/${incomplete.id}/pause`), 400, {
    message: /subscription is incomplete; only an active subscription can be paused/,
  });
  assertError(t, await api.post(`/api/v1/subscriptions/${incomplete.id}/resume`), 400, {
    message: /subscription is incomplete/,
  });
  const ended = await api.post<Subscription>(`/api/v1/subscriptions/${incomplete.id}/end`, {
    cancellationComment: 'changed my mind',
  });
  t.like(ended.body, {
    status: 'canceled',
    endedAt: '2026-05-10T12:00:00.000Z',
    cancellationComment: 'changed my mind',
  });

  const { session, subscription } = await subscribe(api, price);
  await payInFull(weir, api, session);
  await until(api, subscription.id, 'active');
  clock.advanceBy(24 * HOUR);
  t.like((await api.post<Subscription>(`/api/v1/subscriptions/${subscription.id}/pause`)).body, {
    status: 'paused',
    pausedAt: '2026-05-11T12:00:00.000Z',
  });
  assertError(t, await api.post(`/api/v1/subscriptions/${subscription.id}/cancel`), 400, {
    message: /subscription is paused/,
  });
  t.like((await api.post<Subscription>(`/api/v1/subscriptions/${subscription.id}/resume`)).body, {
    status: 'active',
    pausedAt: null,
    currentPeriodEnd: '2026-06-10T12:00:00.000Z',
  });
  assertError(t, await api.post(`/api/v1/subscriptions/${subscription.id}/cancel`, { cancellationComment: 7 }), 400, {
    message: /cancellationComment/,
  });
});

test('list and filters; another organization or the live key sees nothing', async (t) => {
  const { weir, api, live } = await setup(t);
  const monthly = await plan(api, 'Monthly', 'month', 1);
  const annual = await plan(api, 'Annual', 'year', 1, '10000000000');
  const a = await subscribe(api, monthly.priceId, { ...SUBSCRIBER, clientReferenceId: 'a' });
  const b = await subscribe(api, annual.priceId, { ...SUBSCRIBER, clientReferenceId: 'b' });
  await payInFull(weir, api, b.session);
  await until(api, b.subscription.id, 'active');
  t.like(b.subscription, { interval: 'year', intervalCount: 1, currentPeriodEnd: '2027-05-10T12:00:00.000Z' });

  const ids = async (query: string) => {
    const response = await api.get<Page<Subscription>>(`/api/v1/subscriptions${query}`);
    t.is(response.status, 200, JSON.stringify(response.body));
    return response.body.data.map((s) => s.id).sort();
  };
  t.deepEqual(await ids(''), [a.subscription.id, b.subscription.id].sort());
  t.deepEqual(await ids('?status=active'), [b.subscription.id]);
  t.deepEqual(await ids('?status=incomplete'), [a.subscription.id]);
  t.deepEqual(await ids(`?priceId=${monthly.priceId}`), [a.subscription.id]);
  t.deepEqual(await ids(`?productId=${annual.productId}`), [b.subscription.id]);
  t.deepEqual(await ids('?clientReferenceId=b'), [b.subscription.id]);
  t.deepEqual(await ids('?currency=usdc'), [a.subscription.id, b.subscription.id].sort());
  t.deepEqual(await ids(`?ids=${a.subscription.id}`), [a.subscription.id]);
  t.deepEqual(await ids('?startDate[gte]=2026-05-11'), []);
  t.deepEqual(await ids('?startDate[lte]=2026-05-11'), [a.subscription.id, b.subscription.id].sort());
  assertError(t, await api.get('/api/v1/subscriptions?status=sleeping'), 400, { message: /status/ });
  assertError(t, await api.get('/api/v1/subscriptions?endedAt[gt]=yesterday'), 400, { message: /endedAt\[gt\]/ });

  const other = await createMerchant(weir.url, 'Other Shop');
  for (const client of [other.api, live]) {
    t.is((await client.get(`/api/v1/subscriptions/${a.subscription.id}`)).status, 404);
    t.is((await client.post(`/api/v1/subscriptions/${a.subscription.id}/end`)).status, 404);
    t.is((await client.get<Page<Subscription>>('/api/v1/subscriptions')).body.count, 0);
  }
  t.is((await api.get('/api/v1/subscriptions/not-a-uuid')).status, 404);
});

test('a subscription session is refused, with nothing written, for prices a subscription cannot bill', async (t) => {
  const { weir, api } = await setup(t);
  const monthly = await plan(api, 'Monthly', 'month', 1);
  const quarterly = await plan(api, 'Quarterly', 'month', 3);
  const weekly = await plan(api, 'Weekly', 'week', 1);
  const oneTime = (
    await api.post<{ defaultPrice: { id: string } }>('/api/v1/products', {
      name: 'Setup fee',
      defaultPriceData: { currency: 'usdc', unitAmount: '100000000' },
    })
  ).body.defaultPrice.id;
  const cases: [string, unknown[], RegExp][] = [
    [
      'a one-time price',
      [{ priceId: oneTime, quantity: 1 }],
      /lineItems\[0\]: a subscription bills recurring prices only/,
    ],
    [
      'a weekly price',
      [{ priceId: weekly.priceId, quantity: 1 }],
      /lineItems\[0\]: a subscription is billed monthly, quarterly, half-yearly or annually/,
    ],
    [
      'two intervals',
      [
        { priceId: monthly.priceId, quantity: 1 },
        { priceId: quarterly.priceId, quantity: 1 },
      ],
      /lineItems\[1\]: every price of a subscription must have the same billing interval/,
    ],
  ];
  for (const [what, data, message] of cases) {
    t.log(what);
    await assertRejectedWithoutWrite(
      t,
      weir,
      () =>
        api.post('/api/v1/checkout/sessions', {
          mode: 'subscription',
          successUrl: 'https://shop.example/ok',
          lineItems: { data },
          ...SUBSCRIBER,
        }),
      { message },
    );
  }
});

test('a recurring price in a payment session (mode payment, or no mode) is refused, naming its line, with nothing written', async (t) => {
  const { weir, api } = await setup(t);
  const monthly = await plan(api, 'Monthly', 'month', 1, '900000000');
  const recurring = { currency: 'usdc', unitAmount: '900000000', interval: 'month' };
  const cases: [string, Record<string, unknown>, string][] = [
    ['no mode, a recurring priceId', { priceId: monthly.priceId }, 'lineItems.data[0].priceId'],
    [
      'an inline priceData with interval',
      { priceData: { ...recurring, productData: { name: 'Monthly box' } } },
      'lineItems.data[0].priceData',
    ],
    [
      'an inline price of type recurring',
      { price: { ...recurring, type: 'recurring', productId: monthly.productId } },
      'lineItems.data[0].price',
    ],
  ];
  for (const [what, line, field] of cases) {
    t.log(what);
    await assertRejectedWithoutWrite(
      t,
      weir,
      () =>
        api.post('/api/v1/checkout/sessions', {
          ...(what.startsWith('no mode') ? {} : { mode: 'payment' }),
          successUrl: 'https://shop.example/ok',
          lineItems: { data: [{ quantity: 1, ...line }] },
        }),
      { field, message: /recurring price \(billed every month\).*use mode subscription/ },
    );
  }
  // The second line names its own index; the same price in a subscription session is taken.
  await assertRejectedWithoutWrite(
    t,
    weir,
    () =>
      api.post('/api/v1/checkout/sessions', {
        successUrl: 'https://shop.example/ok',
        lineItems: {
          data: [
            { priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Setup' } } },
            { priceId: monthly.priceId },
          ],
        },
      }),
    { field: 'lineItems.data[1].priceId' },
  );
  const { subscription } = await subscribe(api, monthly.priceId);
  t.is(subscription.interval, 'month');
});

/** A payer buys `productId` on a new subscription payment link: the session the link opened, and its subscription. */
async function buyOnLink(api: Api, productId: string) {
  const link = (
    await api.post<{ id: string; url: string }>('/api/v1/payment-links', {
      title: 'Pro monthly',
      productId,
      emailCollection: true,
      nameCollection: true,
    })
  ).body;
  const answer = await fetch(link.url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email: 'payer@example.com', name: 'Pat Payer' }).toString(),
  });
  if (answer.status !== 303) throw new Error(`the payment link answered ${answer.status}`);
  const sessionId = answer.headers.get('location')!.split('/').pop()!;
  const session = (
    await api.get<Session & { subscriptionId: string; paymentLinkId: string }>(`/api/v1/checkout/sessions/${sessionId}`)
  ).body;
  return { link, session, subscription: await subscriptionOf(api, session.subscriptionId) };
}

test("a subscription bought on a payment link gets a customer from the payer's email, so renewals reach them", async (t) => {
  const { weir, api } = await setup(t);
  const monthly = await plan(api, 'Pro', 'month', 1);
  const { link, session, subscription } = await buyOnLink(api, monthly.productId);
  t.is(session.paymentLinkId, link.id);
  const customer = (await api.get<{ email: string; name: string }>(`/api/v1/customers/${subscription.customerId}`))
    .body;
  t.like(customer, { email: 'payer@example.com', name: 'Pat Payer' });
  await payInFull(weir, api, session);
  await until(api, subscription.id, 'active');
});

test('a subscription session with customerData.email: its subscription gets that customer, and the first renewal invoice is mailed to it', async (t) => {
  const { mailer, sent } = recordingMailer();
  const { weir, api, clock } = await setup(t, undefined, mailer);
  const monthly = await plan(api, 'Pro', 'month', 1);
  const customerData = {
    email: 'Sam@Example.com',
    name: 'Sam Subscriber',
    phone: '+1 555 0100',
    organizationName: 'Sam & Co',
    address: { line1: '1 Main St', city: 'Springfield', postalCode: '12345', country: 'us' },
    taxIds: { object: 'list', data: [{ name: 'us_ein', value: '12-3456789', country: 'us' }] },
  };
  const taxIds = { object: 'list', data: [{ name: 'us_ein', value: '12-3456789', country: 'US' }] };
  const { session, subscription } = await subscribe(api, monthly.priceId, { customerData });
  // The session keeps the details as the reference's `customerDetails`; the customer is the subscription's.
  t.like(session, {
    customerId: null,
    customerCreation: 'if_required',
    customerDetails: {
      ...customerData,
      address: {
        line1: '1 Main St',
        line2: null,
        city: 'Springfield',
        state: null,
        postalCode: '12345',
        country: 'US',
      },
      taxIds,
    },
  });
  t.truthy(subscription.customerId);
  const customer = (
    await api.get<{
      email: string;
      name: string;
      phone: string;
      organizationName: string;
      address: { country: string };
      taxIds: { object: string; data: Record<string, unknown>[] };
    }>(`/api/v1/customers/${subscription.customerId}`)
  ).body;
  t.like(customer, {
    email: 'Sam@Example.com',
    name: 'Sam Subscriber',
    phone: '+1 555 0100',
    organizationName: 'Sam & Co',
    address: { line1: '1 Main St', country: 'US' },
    taxIds: { object: 'list', data: [{ ...taxIds.data[0], customerId: subscription.customerId }] },
  });
  // Then the session names that customer, and is among the customer's sessions (the dashboard's customer page lists these).
  await eventually(async () => {
    const read = (await api.get<{ customerId: string | null }>(`/api/v1/checkout/sessions/${session.id}`)).body;
    return read.customerId === subscription.customerId ? read : undefined;
  }, 'the session to name its customer');
  const listed = await api.get<Page<Session>>(`/api/v1/checkout/sessions?customerId=${subscription.customerId}`);
  t.deepEqual(
    listed.body.data.map((s) => s.id),
    [session.id],
  );

  await payInFull(weir, api, session);
  await until(api, subscription.id, 'active');
  t.deepEqual(sent, [], 'nothing is mailed before the renewal');
  clock.advanceTo(Date.parse('2026-06-10T12:00:00.000Z'));
  const renewed = await eventually(async () => {
    const s = (
      await api.get<Subscription & { latestInvoiceId: string | null }>(`/api/v1/subscriptions/${subscription.id}`)
    ).body;
    return s.latestInvoiceId ? s : undefined;
  }, 'the renewal');
  const invoice = await eventually(async () => {
    const response = await api.get<{ status: string; number: string; customerId: string }>(
      `/api/v1/invoices/${renewed.latestInvoiceId}`,
    );
    return response.body.status === 'open' ? response.body : undefined;
  }, 'the renewal invoice');
  t.is(invoice.customerId, subscription.customerId ?? 'no customer');
  const mail = await eventually(async () => sent[0], 'the renewal invoice mail');
  t.is(mail.to, 'Sam@Example.com');
  t.regex(mail.subject, new RegExp(`^Invoice ${invoice.number} `));
  t.true(mail.text.includes(`${weir.url}/invoices/${renewed.latestInvoiceId}`), mail.text);
});

test('a promotion code applied to a subscription session discounts its first payment only: the subscription, its webhooks and the session agree on it; the renewal bills the period in full', async (t) => {
  const { weir, api, clock } = await setup(t);
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  await api.post('/api/v1/webhook-endpoints', {
    description: 'subscriptions',
    url: receiver.url,
    enabledEvents: { events: ['customer.subscription.started'] },
  });
  const coupon = await api.post('/api/v1/coupons', {
    name: 'Launch',
    percentOff: 10,
    promotionCodeData: { data: [{ code: 'LAUNCH' }] },
  });
  t.is(coupon.status, 200, JSON.stringify(coupon.body));
  const monthly = await plan(api, 'Pro', 'month', 1);
  const { session, subscription } = await subscribe(api, monthly.priceId, { ...SUBSCRIBER, allowPromotionCodes: true });
  const applied = await apiClient(weir.url).post<{ amountDiscount: string }>(`/checkout/${session.id}/promotion-code`, {
    code: 'LAUNCH',
  });
  t.is(applied.status, 200, JSON.stringify(applied.body));
  t.is(applied.body.amountDiscount, '100000000');
  type Bill = { id: string | null; kind: string; amountDue: string; amountDiscount?: string; status: string };
  type Billed = Subscription & { latestInvoiceId: string | null; latestInvoice: Bill };
  const discounted = await eventually(async () => {
    const s = (await api.get<Billed>(`/api/v1/subscriptions/${subscription.id}`)).body;
    return s.latestInvoice.amountDiscount ? s : undefined;
  }, 'the discount on the first bill');
  const asked = (
    await api.get<Session & { amountDetails: { amountDiscount: string } }>(`/api/v1/checkout/sessions/${session.id}`)
  ).body;
  t.like(discounted.latestInvoice, {
    id: null,
    checkoutSessionId: session.id,
    kind: 'checkout_session',
    amountDiscount: '100000000',
  });
  t.is(
    discounted.latestInvoice.amountDue,
    (BigInt(asked.amountSubtotal) - BigInt(asked.amountDetails.amountDiscount)).toString(),
    'the first bill asks what the session asks',
  );
  t.is(discounted.latestInvoice.amountDue, '900000000');

  await payInFull(weir, api, session);
  t.like((await until(api, subscription.id, 'active')) as Billed, {
    latestInvoice: { amountDue: '900000000', amountDiscount: '100000000', status: 'paid' },
  });
  await receiver.waitFor(() => receiver.received.length > 0);
  const started = JSON.parse(receiver.received[0]!.body) as { type: string; data: { object: Billed } };
  t.is(started.type, 'customer.subscription.started');
  t.like(started.data.object.latestInvoice, { amountDue: '900000000', amountDiscount: '100000000', status: 'paid' });

  // The code discounted the first payment only: the next period is billed in full.
  clock.advanceTo(Date.parse('2026-06-10T12:00:00.000Z'));
  const renewed = await eventually(async () => {
    const s = (await api.get<Billed>(`/api/v1/subscriptions/${subscription.id}`)).body;
    return s.latestInvoiceId ? s : undefined;
  }, 'the renewal');
  t.is(renewed.latestInvoice.amountDue, '1000000000');
  t.is(renewed.latestInvoice.amountDiscount, undefined);
  const invoice = await eventually(async () => {
    const response = await api.get<{ status: string; amountDue: string; discounts?: unknown[] }>(
      `/api/v1/invoices/${renewed.latestInvoiceId}`,
    );
    return response.body.status === 'open' ? response.body : undefined;
  }, 'the renewal invoice');
  t.is(invoice.amountDue, '1000000000');
});

test("a subscription session with neither customerId nor customerData.email (the spec's body) is accepted: its page asks the payer's email before any asset, and the subscription is created with a customer of that email, as with customerData.email", async (t) => {
  const { weir, api } = await setup(t);
  const hooks = await receiveHooks(t, api, ['customer.subscription.created', 'customer.subscription.started']);
  const { productId } = await plan(api, 'Pro', 'month', 1);
  // The spec's subscription flow, word for word: a line whose priceData carries currency, unitAmount, interval and productId.
  const created = await api.post<Session & { subscriptionId: string; url: string; customerId: string | null }>(
    '/api/v1/checkout/sessions',
    {
      mode: 'subscription',
      successUrl: 'https://shop.example/ok',
      lineItems: {
        data: [
          { priceData: { currency: 'usdc', unitAmount: '1000000000', interval: 'month', productId }, quantity: 1 },
        ],
      },
    },
  );
  t.is(created.status, 200, JSON.stringify(created.body));
  const session = created.body;
  t.like(session, { mode: 'subscription', status: 'open', customerId: null });
  t.is((session as { customerDetails?: unknown }).customerDetails, undefined, 'no email yet');
  // Details without an email are accepted too: the page asks for the email.
  const named = await api.post('/api/v1/checkout/sessions', {
    mode: 'subscription',
    successUrl: 'https://shop.example/ok',
    lineItems: { data: [{ priceData: { currency: 'usdc', unitAmount: '1000000000', interval: 'month', productId } }] },
    customerData: { name: 'No Email' },
  });
  t.is(named.status, 200, JSON.stringify(named.body));

  // No asset before the email: the script's route says the email is asked first, in the payer's words; nothing is recorded.
  const usdc = session.addresses.find((a) => a.asset.currency === 'usdc')!;
  const early = await apiClient(weir.url).post<{ code: string; message: string; field?: string }>(
    `/checkout/${session.id}/payment-method`,
    { assetId: usdc.asset.id },
  );
  t.is(early.status, 400);
  t.like(early.body, { code: 'parameter_missing' });
  t.is(early.body.message, 'Give your email first: the renewal invoices of this subscription are sent to it.');
  const unchosen = await api.get<{ paymentIntent: { paymentMethod: unknown } }>(
    `/api/v1/checkout/sessions/${session.id}`,
  );
  t.is(unchosen.body.paymentIntent.paymentMethod, null);
  t.is((await api.get<Page<unknown>>('/api/v1/subscriptions')).body.count, 0, 'no subscription before the email');

  const given = await fetch(session.url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'action=email&email=pat%40example.com',
    redirect: 'manual',
  });
  t.is(given.status, 303);
  // The API shows it as it shows customerData.email: the session's customerDetails.
  const read = (
    await api.get<Session & { customerDetails: { email: string } | null }>(`/api/v1/checkout/sessions/${session.id}`)
  ).body;
  t.is(read.customerDetails?.email, 'pat@example.com');
  const subscription = await subscriptionOf(api, session.subscriptionId);
  t.like(subscription, { status: 'incomplete', currentPeriodStart: session.createdAt });
  t.truthy(subscription.customerId);
  const customer = (await api.get<{ email: string }>(`/api/v1/customers/${subscription.customerId}`)).body;
  t.is(customer.email, 'pat@example.com');
  await eventually(async () => {
    const s = (await api.get<{ customerId: string | null }>(`/api/v1/checkout/sessions/${session.id}`)).body;
    return s.customerId === subscription.customerId ? s : undefined;
  }, 'the session to name its customer');

  await payInFull(weir, api, session);
  await until(api, subscription.id, 'active');
  await hooks.waitFor(session.id, ['customer.subscription.created', 'customer.subscription.started']);
  t.deepEqual(hooks.about(session.id), ['customer.subscription.created', 'customer.subscription.started']);
  t.is((await api.get<Page<unknown>>('/api/v1/customers')).body.count, 1);
});

test('a renewal that fell due while Weir was down is issued at start: the timers and the billing work are in the log', async (t) => {
  const clock = createManualClock(Date.parse('2026-05-10T12:00:00.000Z'));
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-subscription-restart-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const first = await startTestWeir(t, { dataDir }, { clock });
  const { api, testSecretKey } = await createMerchant(first.url);
  const customer = (await api.post<{ id: string }>('/api/v1/customers', { email: 'c@example.com' })).body;
  const { session, subscription } = await subscribe(api, (await plan(api, 'Pro', 'month', 1)).priceId, {
    customerId: customer.id,
  });
  await payInFull(first, api, session);
  await until(api, subscription.id, 'active');
  await first.stop();

  clock.set(Date.parse('2026-06-10T13:00:00.000Z'));
  const second = await startTestWeir(t, { dataDir }, { clock });
  const again = apiClient(second.url, testSecretKey);
  const renewed = await eventually(async () => {
    const s = (
      await again.get<Subscription & { latestInvoiceId: string | null }>(`/api/v1/subscriptions/${subscription.id}`)
    ).body;
    return s.latestInvoiceId ? s : undefined;
  }, 'the renewal after the restart');
  t.like(renewed, {
    status: 'active',
    currentPeriodStart: '2026-06-10T12:00:00.000Z',
    currentPeriodEnd: '2026-07-10T12:00:00.000Z',
  });
  const invoice = await eventually(async () => {
    const response = await again.get<{ status: string; customerId: string }>(
      `/api/v1/invoices/${renewed.latestInvoiceId}`,
    );
    return response.body.status === 'open' ? response.body : undefined;
  }, 'the renewal invoice');
  t.is(invoice.customerId, customer.id);
});

const MINUTE = 60 * 1000;
const SESSION_HOOKS = [
  'checkout_session.canceled',
  'checkout_session.expired',
  'payment_intent.canceled',
  'checkout_session.late_payment',
  'checkout_session.completed',
];

/** How a session ended (canceled or expired): by whom, because of what, and why. */
async function endingsOf(weir: Pick<Weir, 'eventStore'>, sessionId: string) {
  return (await sessionEvents(weir, sessionId))
    .filter((e) => e.type === 'CheckoutSessionCanceled' || e.type === 'CheckoutSessionExpired')
    .map((e) => ({
      type: e.type,
      actor: e.metadata.actor,
      causationId: e.metadata.causationId,
      reason: (e.data as { reason?: string | null }).reason ?? null,
    }));
}

/** The first session of `subscriptionId`, canceled by the billing process because the subscription ended. */
const canceledBecauseOf = (subscriptionId: string) => [
  {
    type: 'CheckoutSessionCanceled',
    actor: 'system:subscription-billing',
    causationId: subscriptionId,
    reason: 'the subscription was canceled',
  },
];

test('the open first session of a subscription ended while incomplete is canceled, once, with its webhooks; money sent to it later is a late payment; nothing repeats after a restart', async (t) => {
  const clock = createManualClock(Date.parse('2026-05-10T12:00:00.000Z'));
  const weir = await restartableWeir(t, clock);
  const first = await weir.start();
  const { api, testSecretKey } = await createMerchant(first.url);
  const hooks = await receiveHooks(t, api, SESSION_HOOKS);
  const { session, subscription } = await subscribe(api, (await plan(api, 'Pro', 'month', 1)).priceId);
  const shown = await reveal(first, api, session.id);

  clock.advanceBy(10 * MINUTE);
  t.like((await api.post<Subscription>(`/api/v1/subscriptions/${subscription.id}/end`)).body, { status: 'canceled' });
  const canceled = await untilCanceled(api, session.id);
  t.is(canceled.paymentIntent.status, 'canceled');
  t.deepEqual(await endingsOf(first, session.id), canceledBecauseOf(subscription.id));
  await hooks.waitFor(session.id, ['checkout_session.canceled', 'payment_intent.canceled']);
  t.is(
    (
      await apiClient(first.url).post(`/checkout/${session.id}/payment-method`, {
        assetId: canceled.addresses[0]!.asset.id,
      })
    ).status,
    400,
    'its page gives out no address',
  );

  // The payer sends the amount shown anyway: a late payment of the canceled session; the subscription stays canceled.
  const late = await payLate(first, api, session.id, shown);
  t.like(late, { status: 'canceled', amountReceived: '1000000000' });
  t.true(late.paymentIntent.transactions[0]!.late);
  await hooks.waitFor(session.id, ['checkout_session.late_payment']);
  // Its expiry passes: nothing more happens to it.
  clock.advanceBy(2 * HOUR);
  await settled(first);
  t.like((await api.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`)).body, { status: 'canceled' });
  await first.stop();

  const second = await weir.start();
  const again = apiClient(second.url, testSecretKey);
  await settled(second);
  t.deepEqual(await endingsOf(second, session.id), canceledBecauseOf(subscription.id));
  t.deepEqual(
    (await second.eventStore.readStream(`subscription-${subscription.id}`)).map((e) => e.type),
    // The late money is owed back on its first bill, once (not again after the restart).
    ['SubscriptionCreated', 'SubscriptionCanceled', 'FirstBillLatePaymentReceived'],
  );
  // A later session's cancel marks the point by which a repeat of the earlier webhooks would have been sent.
  const marker = (await again.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;
  t.is((await again.post(`/api/v1/checkout/sessions/${marker.id}/cancel`)).status, 200);
  await hooks.waitFor(marker.id, ['checkout_session.canceled']);
  t.deepEqual(hooks.about(session.id), [
    'checkout_session.canceled',
    'checkout_session.late_payment',
    'payment_intent.canceled',
  ]);
  t.like(await getSession(again, session.id), { status: 'canceled' });
});

test('a subscription bought on a payment link and ended in a crash before its session was canceled: the restart cancels it, once', async (t) => {
  const clock = createManualClock(Date.parse('2026-05-10T12:00:00.000Z'));
  const weir = await restartableWeir(t, clock);
  const first = await weir.start();
  const { api, testSecretKey, organizationId } = await createMerchant(first.url);
  const { session, subscription } = await buyOnLink(api, (await plan(api, 'Pro', 'month', 1)).productId);
  await first.stop();

  // What a crash leaves: the end is in the log, the cancel of the session is not.
  clock.advanceBy(10 * MINUTE);
  const eventStore = await openEventStore({ dataDir: weir.dataDir });
  const end = await createCommandHandler({ eventStore, clock }).handle(
    subscriptionAggregate,
    subscription.id,
    { type: 'EndSubscription', comment: null },
    { organizationId, environment: 'test', actor: 'test' },
  );
  t.deepEqual(
    end.events.map((e) => e.type),
    ['SubscriptionCanceled'],
  );
  await eventStore.close();

  const second = await weir.start();
  const again = apiClient(second.url, testSecretKey);
  await untilCanceled(again, session.id);
  await settled(second);
  t.deepEqual(await endingsOf(second, session.id), canceledBecauseOf(subscription.id));
  t.like((await again.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`)).body, { status: 'canceled' });
});

test('a subscription canceled at period end while its renewal is past due: the period end ends it, and the renewal for the period it served stays owed and payable; paid after the end, the invoice is paid and the subscription stays canceled', async (t) => {
  const { mailer, sent } = recordingMailer();
  const { weir, api, clock } = await setup(t, undefined, mailer);
  const { session, subscription } = await subscribe(api, (await plan(api, 'Pro', 'month', 1)).priceId);
  await payInFull(weir, api, session);
  await until(api, subscription.id, 'active');
  clock.advanceTo(Date.parse('2026-06-10T12:00:00.000Z'));
  const renewalId = await renewalOf(api, subscription.id);
  await eventually(async () => sent.find((m) => m.text.includes(`/invoices/${renewalId}`)), 'the renewal invoice mail');

  // Unpaid past its due date (seven days): past due. The merchant cancels at the period end.
  clock.advanceTo(Date.parse('2026-06-17T12:00:00.000Z'));
  await until(api, subscription.id, 'past_due');
  t.like((await api.post<Subscription>(`/api/v1/subscriptions/${subscription.id}/cancel`)).body, {
    status: 'past_due',
    cancelAtPeriodEnd: true,
    cancelAt: '2026-07-10T12:00:00.000Z',
  });

  clock.advanceTo(Date.parse('2026-07-10T12:00:00.000Z'));
  t.like(await until(api, subscription.id, 'canceled'), { endedAt: '2026-07-10T12:00:00.000Z' });
  await settled(weir);
  // The customer had the whole June 10 – July 10 period: as Stripe does, the end voids nothing (the merchant still may).
  // It names no next invoice date: none comes after the end.
  type Shown = { status: string; voidedAt: string | null; nextInvoice: unknown };
  t.like((await api.get<Shown>(`/api/v1/invoices/${renewalId}`)).body, {
    status: 'open',
    voidedAt: null,
    nextInvoice: null,
  });
  t.deepEqual(
    (await weir.eventStore.readStream(`invoice-${renewalId}`)).filter((e) => e.type === 'InvoiceVoided'),
    [],
  );
  // A checkout session's subscription bills renewals with no reminders, and the subscription mails nothing of its own:
  // its invoice mail, sent at the issue, stays the only one.
  clock.advanceTo(Date.parse('2026-07-20T12:00:00.000Z'));
  await settled(weir);
  t.is(sent.filter((m) => m.text.includes(`/invoices/${renewalId}`)).length, 1, 'only its invoice mail');
  t.is((await api.get<Page<unknown>>('/api/v1/invoices')).body.count, 1, 'nothing issued for the period after the end');

  await payInFull(weir, api, await payPageOf(weir, api, renewalId));
  await eventually(async () => {
    const invoice = (await api.get<{ status: string }>(`/api/v1/invoices/${renewalId}`)).body;
    return invoice.status === 'paid' ? invoice : undefined;
  }, 'the renewal to be paid');
  await settled(weir);
  t.like((await api.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`)).body, {
    status: 'canceled',
    endedAt: '2026-07-10T12:00:00.000Z',
  });
  const types = (await weir.eventStore.readStream(`subscription-${subscription.id}`)).map((e) => e.type);
  t.is(types.at(-1), 'SubscriptionCanceled', 'the payment does not revive it');
});

test('a renewal the merchant writes off (uncollectible) settles its period: a past due subscription is active again, not unpaid, and bills the next period at its end', async (t) => {
  const { weir, api, clock } = await setup(t);
  const { session, subscription } = await subscribe(api, (await plan(api, 'Pro', 'month', 1)).priceId);
  await payInFull(weir, api, session);
  await until(api, subscription.id, 'active');
  clock.advanceTo(Date.parse('2026-06-10T12:00:00.000Z'));
  const renewalId = await renewalOf(api, subscription.id);
  clock.advanceTo(Date.parse('2026-06-17T12:00:00.000Z'));
  await until(api, subscription.id, 'past_due');
  t.is((await api.post(`/api/v1/invoices/${renewalId}/mark-uncollectible`)).status, 200);
  t.like(await until(api, subscription.id, 'active'), { latestInvoice: { status: 'uncollectible' } });
  clock.advanceTo(Date.parse('2026-07-10T12:00:00.000Z'));
  const next = await eventually(async () => {
    const id = await renewalOf(api, subscription.id);
    return id !== renewalId ? id : undefined;
  }, 'the next renewal');
  await eventually(async () => {
    const invoice = (await api.get<{ status: string }>(`/api/v1/invoices/${next}`)).body;
    return invoice.status === 'open' ? invoice : undefined;
  }, 'the next renewal to be sent');
  t.is((await api.get<Subscription>(`/api/v1/subscriptions/${subscription.id}`)).body.status, 'active');
});

test("deleting a customer ends each of their subscriptions that has not ended, at once, its open renewal for the period begun left owed; other customers' subscriptions go on", async (t) => {
  const { weir, api, clock } = await setup(t);
  const price = (await plan(api, 'Pro', 'month', 1)).priceId;
  const leaving = (await api.post<{ id: string }>('/api/v1/customers', { email: 'leaving@example.com' })).body;
  const staying = (await api.post<{ id: string }>('/api/v1/customers', { email: 'staying@example.com' })).body;
  const paid = await subscribe(api, price, { customerId: leaving.id });
  await payInFull(weir, api, paid.session);
  await until(api, paid.subscription.id, 'active');
  const other = await subscribe(api, price, { customerId: staying.id });
  await payInFull(weir, api, other.session);
  await until(api, other.subscription.id, 'active');
  const ended = await subscribe(api, price, { customerId: leaving.id });
  await api.post(`/api/v1/subscriptions/${ended.subscription.id}/end`, {
    cancellationComment: 'ended by the merchant',
  });

  clock.advanceTo(Date.parse('2026-06-10T12:00:00.000Z'));
  const renewalId = (
    await eventually(async () => {
      const s = (
        await api.get<Subscription & { latestInvoiceId: string | null }>(
          `/api/v1/subscriptions/${paid.subscription.id}`,
        )
      ).body;
      return s.latestInvoiceId ? s : undefined;
    }, 'the renewal')
  ).latestInvoiceId!;
  const pending = await subscribe(api, price, { customerId: leaving.id });
  await settled(weir);
  t.is((await api.get<{ status: string }>(`/api/v1/invoices/${renewalId}`)).body.status, 'open');

  clock.advanceBy(HOUR / 2);
  t.is((await api.delete(`/api/v1/customers/${leaving.id}`)).status, 200);
  t.like((await api.get<Subscription>(`/api/v1/subscriptions/${paid.subscription.id}`)).body, {
    status: 'canceled',
    endedAt: '2026-06-10T12:30:00.000Z',
    cancellationComment: CUSTOMER_DELETED_COMMENT,
  });
  t.like((await api.get<Subscription>(`/api/v1/subscriptions/${pending.subscription.id}`)).body, {
    status: 'canceled',
    cancellationComment: CUSTOMER_DELETED_COMMENT,
  });
  t.like(
    (await api.get<Subscription>(`/api/v1/subscriptions/${ended.subscription.id}`)).body,
    { status: 'canceled', endedAt: '2026-05-10T12:00:00.000Z', cancellationComment: 'ended by the merchant' },
    'already ended: untouched',
  );
  await untilCanceled(api, pending.session.id);
  await settled(weir);
  // Its period began before the end: owed, as any served period (the merchant may void it).
  t.like((await api.get<{ status: string; voidedAt: string | null }>(`/api/v1/invoices/${renewalId}`)).body, {
    status: 'open',
    voidedAt: null,
  });
  t.like((await api.get<Subscription>(`/api/v1/subscriptions/${other.subscription.id}`)).body, {
    status: 'active',
    cancellationComment: null,
  });
  assertError(t, await api.get(`/api/v1/customers/${leaving.id}`), 404, { message: /customer/ });

  // A month on, the other customer's billing has gone on (its renewal unpaid: past due, then
  // unpaid), and nothing more was billed to the deleted one.
  clock.advanceTo(Date.parse('2026-06-17T12:00:00.000Z'));
  await until(api, other.subscription.id, 'past_due');
  clock.advanceTo(Date.parse('2026-07-10T12:00:00.000Z'));
  await until(api, other.subscription.id, 'unpaid');
  await settled(weir);
  const invoices = (await api.get<Page<{ customerId: string }>>('/api/v1/invoices?limit=200')).body.data;
  t.is(invoices.filter((i) => i.customerId === leaving.id).length, 1, 'only the renewal issued before the delete');
});

test('a first checkout session paid in half, then nothing more, no longer holds its subscription for ever: at the expiry it is incomplete_expired, the half recorded on its bill as owed back, and the session completed as is so its page asks for nothing more', async (t) => {
  const { weir, api, clock } = await setup(t);
  const price = (await plan(api, 'Pro', 'month', 1)).priceId;
  const { session, subscription } = await subscribe(api, price);
  const part = await payPart(weir, api, session.id, 2n);
  clock.advanceBy(2 * HOUR);
  const expired = await until(api, subscription.id, 'incomplete_expired');
  t.like(expired.latestInvoice, {
    status: 'expired',
    checkoutSessionId: session.id,
    amountToRefund: part.amountReceived,
  });
  const closed = await eventually(async () => {
    const s = await getSession(api, session.id);
    return s.status === 'complete' ? s : undefined;
  }, 'the billing process to complete the part-paid session as is');
  t.is(closed.amountReceived, part.amountReceived);
});

test('a renewal payment detected before its due time and final after it: the subscription is never past due (no RenewalPaymentMissed, no webhook) and records RenewalPaid', async (t) => {
  const { weir, api, clock } = await setup(t);
  const hooks = await receiveHooks(t, api, ['customer.subscription.past_due']);
  const price = (await plan(api, 'Pro', 'month', 1)).priceId;
  const paying = await subscribe(api, price);
  await payInFull(weir, api, paying.session);
  // A subscription a minute younger whose renewal goes unpaid: once it is past due, the first one's due time was tried.
  clock.advanceBy(MINUTE);
  const unpaid = await subscribe(api, price);
  await payInFull(weir, api, unpaid.session);
  await until(api, unpaid.subscription.id, 'active');
  clock.advanceTo(Date.parse('2026-06-10T12:01:00.000Z'));
  const renewalId = await renewalOf(api, paying.subscription.id);
  await renewalOf(api, unpaid.subscription.id);

  const payment = await sendPayment(weir, api, await payPageOf(weir, api, renewalId));
  clock.advanceTo(Date.parse('2026-06-17T12:02:00.000Z'));
  await until(api, unpaid.subscription.id, 'past_due');
  // A subscription's webhooks name its first session as checkoutSessionId, which the receiver keys them by.
  await hooks.waitFor(unpaid.session.id, ['customer.subscription.past_due']);
  t.is((await api.get<Subscription>(`/api/v1/subscriptions/${paying.subscription.id}`)).body.status, 'active');

  await payment.final();
  const events = `subscription-${paying.subscription.id}`;
  const types = await eventually(async () => {
    const all = (await weir.eventStore.readStream(events)).map((e) => e.type);
    return all.includes('RenewalPaid') ? all : undefined;
  }, 'the renewal paid');
  t.false(types.includes('RenewalPaymentMissed'));
  t.deepEqual(hooks.about(paying.session.id), []);
  t.is((await api.get<Subscription>(`/api/v1/subscriptions/${paying.subscription.id}`)).body.status, 'active');
});
