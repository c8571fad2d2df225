import test from 'ava';
import { COLLECTIONS, type TimerDoc } from '../../src/projections/collections.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { eventually } from '../support/api-client.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';
import { payInFull, type Api, type Session } from '../api/helpers.ts';

const DAY = 24 * 60 * 60 * 1000;
const USDC_10 = '1000000000';

type Bill = { id: string; kind: string; status: string; periodStart: string; periodEnd: string; dueAt: string };
type Subscription = {
  id: string;
  status: string;
  customerId: string | null;
  currentPeriodStart: string;
  currentPeriodEnd: string;
  latestInvoiceId: string | null;
  latestInvoice: Bill | null;
  pastDueSince: string | null;
  endedAt: string | null;
  amountTotal: string;
  checkoutSessionId: string | null;
};
type Invoice = {
  id: string;
  status: string;
  number: string;
  subscriptionId: string | null;
  billingReason: string;
  amountDue: string;
  dueDate: string;
  url: string | null;
  invoiceType: string;
  nextInvoice: { id: string; issueDate: string } | null;
};

async function subscriptionOf(api: Api, id: string): Promise<Subscription> {
  const response = await api.get<Subscription>(`/api/v1/subscriptions/${id}`);
  if (response.status !== 200) throw new Error(`GET subscription: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/** Pay an invoice the way a customer does: its hosted page opens a checkout session, paid on chain. */
async function payInvoice(weir: Parameters<typeof payInFull>[0], api: Api, invoiceId: string): Promise<void> {
  const redirect = await fetch(`${weir.url}/invoices/${invoiceId}/pay`, { redirect: 'manual' });
  const sessionId = redirect.headers.get('location')!.split('/').pop()!;
  const session = (await api.get<Session>(`/api/v1/checkout/sessions/${sessionId}`)).body;
  await payInFull(weir, api, session);
  await eventually(
    async () => ((await api.get<Invoice>(`/api/v1/invoices/${invoiceId}`)).body.status === 'paid' ? true : undefined),
    `invoice ${invoiceId} to be paid`,
  );
}

test('a monthly subscription over 13 months: renewals, one paid late, one run to unpaid, every status and webhook in order', async (t) => {
  // Started on Jan 31: the periods end on the last day of shorter months and come back to the 31st.
  const clock = createManualClock(Date.parse('2026-01-31T10:00:00.000Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const { api } = await createMerchant(weir.url);
  const endpoint = await api.post('/api/v1/webhook-endpoints', {
    description: 'billing backend',
    url: receiver.url,
    enabledEvents: {
      events: [
        'customer.subscription.created',
        'customer.subscription.started',
        'customer.subscription.past_due',
        'customer.subscription.unpaid',
        'customer.subscription.deleted',
        'invoice.finalized',
        'invoice.paid',
      ],
    },
  });
  t.is(endpoint.status, 200, JSON.stringify(endpoint.body));
  const customer = (await api.post<{ id: string }>('/api/v1/customers', { email: 'ada@example.com', name: 'Ada' }))
    .body;
  const product = (
    await api.post<{ id: string; defaultPrice: { id: string } }>('/api/v1/products', {
      name: 'Pro plan',
      defaultPriceData: {
        currency: 'usdc',
        unitAmount: USDC_10,
        type: 'recurring',
        interval: 'month',
        intervalCount: 1,
      },
    })
  ).body;

  const expected: string[] = [];
  const webhookTypes = () => receiver.received.map((r) => (JSON.parse(r.body) as { type: string }).type);
  /** Each step's webhooks arrive, and everything so far arrived in the expected order. */
  async function expectWebhooks(...types: string[]): Promise<void> {
    expected.push(...types);
    await receiver.waitFor((all) => all.length >= expected.length);
    t.deepEqual(webhookTypes(), expected);
  }

  const session = await api.post<Session & { subscriptionId: string }>('/api/v1/checkout/sessions', {
    mode: 'subscription',
    successUrl: 'https://shop.example/welcome',
    customerId: customer.id,
    lineItems: { data: [{ priceId: product.defaultPrice.id, quantity: 1 }] },
  });
  t.is(session.status, 200, JSON.stringify(session.body));
  const subscriptionId = session.body.subscriptionId;
  const incomplete = await eventually(async () => {
    const response = await api.get<Subscription>(`/api/v1/subscriptions/${subscriptionId}`);
    return response.status === 200 ? response.body : undefined;
  }, 'the subscription to be created');
  t.like(incomplete, {
    status: 'incomplete',
    customerId: customer.id,
    checkoutSessionId: session.body.id,
    amountTotal: USDC_10,
    currentPeriodEnd: '2026-02-28T10:00:00.000Z',
  });
  await expectWebhooks('customer.subscription.created');

  await payInFull(weir, api, session.body);
  await eventually(
    async () => ((await subscriptionOf(api, subscriptionId)).status === 'active' ? true : undefined),
    'the subscription to start',
  );
  await expectWebhooks('customer.subscription.started');

  const periodEnds = [
    '2026-02-28',
    '2026-03-31',
    '2026-04-30',
    '2026-05-31',
    '2026-06-30',
    '2026-07-31',
    '2026-08-31',
    '2026-09-30',
    '2026-10-31',
    '2026-11-30',
    '2026-12-31',
    '2027-01-31',
  ];
  const invoiceIds: string[] = [];
  const LATE_MONTH = 4;
  const UNPAID_MONTH = 10;
  for (let month = 1; month <= 12; month++) {
    const before = await subscriptionOf(api, subscriptionId);
    t.is(
      before.currentPeriodEnd,
      `${periodEnds[month - 1]}T10:00:00.000Z`,
      `period ${month} ends on the anchor's day, clamped`,
    );
    // The period ends: the renewal invoice is issued, finalized with its payment page and mailed.
    clock.advanceTo(Date.parse(before.currentPeriodEnd));
    const renewed = await eventually(async () => {
      const s = await subscriptionOf(api, subscriptionId);
      return s.latestInvoiceId && !invoiceIds.includes(s.latestInvoiceId) && s.latestInvoice?.kind === 'invoice'
        ? s
        : undefined;
    }, `the renewal of month ${month}`);
    const invoiceId = renewed.latestInvoiceId!;
    invoiceIds.push(invoiceId);
    t.like(renewed, {
      status: 'active',
      currentPeriodStart: before.currentPeriodEnd,
      latestInvoice: { status: 'open', periodStart: before.currentPeriodEnd },
    });
    const invoice = await eventually(async () => {
      const response = await api.get<Invoice>(`/api/v1/invoices/${invoiceId}`);
      return response.status === 200 && response.body.status === 'open' ? response.body : undefined;
    }, `invoice ${invoiceId} to be open`);
    t.like(invoice, {
      subscriptionId,
      billingReason: 'subscription_cycle',
      amountDue: USDC_10,
      dueDate: new Date(Date.parse(before.currentPeriodEnd) + 7 * DAY).toISOString(),
    });
    // The invoice announces its successor on the subscription's calendar (no drift after a short month).
    t.is(invoice.nextInvoice?.issueDate, renewed.currentPeriodEnd);
    await expectWebhooks('invoice.finalized');

    if (month === LATE_MONTH) {
      // Unpaid at its due time: past due. Paid two days later: active again.
      clock.advanceTo(Date.parse(invoice.dueDate));
      await eventually(
        async () => ((await subscriptionOf(api, subscriptionId)).status === 'past_due' ? true : undefined),
        'past_due',
      );
      await expectWebhooks('customer.subscription.past_due');
      clock.advanceBy(2 * DAY);
      await payInvoice(weir, api, invoiceId);
      const recovered = await eventually(async () => {
        const s = await subscriptionOf(api, subscriptionId);
        return s.status === 'active' ? s : undefined;
      }, 'active after the late payment');
      t.like(recovered, { pastDueSince: null, latestInvoice: { id: invoiceId, status: 'paid' } });
      await expectWebhooks('invoice.paid');
      continue;
    }
    if (month === UNPAID_MONTH) {
      clock.advanceTo(Date.parse(invoice.dueDate));
      await eventually(
        async () => ((await subscriptionOf(api, subscriptionId)).status === 'past_due' ? true : undefined),
        'past_due',
      );
      await expectWebhooks('customer.subscription.past_due');
      // Six days later it is still past due; on the seventh it is unpaid.
      clock.advanceBy(6 * DAY);
      t.is((await subscriptionOf(api, subscriptionId)).status, 'past_due');
      clock.advanceBy(1 * DAY);
      await eventually(
        async () => ((await subscriptionOf(api, subscriptionId)).status === 'unpaid' ? true : undefined),
        'unpaid',
      );
      await expectWebhooks('customer.subscription.unpaid');
      break;
    }
    await payInvoice(weir, api, invoiceId);
    await eventually(
      async () => ((await subscriptionOf(api, subscriptionId)).latestInvoice?.status === 'paid' ? true : undefined),
      `month ${month} paid`,
    );
    await expectWebhooks('invoice.paid');
  }

  // Unpaid, it issues no more invoices: it waits on no timer, and months 11 to 13 pass without a renewal.
  const unpaid = await subscriptionOf(api, subscriptionId);
  t.deepEqual(await weir.readStore.collection<TimerDoc>(COLLECTIONS.timers).find({ recordId: subscriptionId }), []);
  for (const end of periodEnds.slice(UNPAID_MONTH)) {
    clock.advanceTo(Date.parse(`${end}T10:00:00.000Z`) + DAY);
    await weir.projections.waitFor((await weir.eventStore.headPosition())!);
    t.like(await subscriptionOf(api, subscriptionId), { status: 'unpaid', latestInvoiceId: unpaid.latestInvoiceId });
  }
  t.is(invoiceIds.length, UNPAID_MONTH);
  const listed = (await api.get<{ data: Invoice[] }>(`/api/v1/invoices?customerId=${customer.id}`)).body.data;
  t.deepEqual(listed.map((i) => i.id).sort(), [...invoiceIds].sort());
  t.deepEqual(
    listed.filter((i) => i.status === 'open').map((i) => i.id),
    [invoiceIds[UNPAID_MONTH - 1]],
  );
  t.is(new Set(listed.map((i) => i.number)).size, UNPAID_MONTH, 'every renewal invoice has its own number');

  // The merchant ends it at once.
  const ended = await api.post<Subscription>(`/api/v1/subscriptions/${subscriptionId}/end`, {
    cancellationComment: 'never paid',
  });
  t.is(ended.status, 200, JSON.stringify(ended.body));
  t.like(ended.body, { status: 'canceled', endedAt: new Date(clock.now()).toISOString() });
  await expectWebhooks('customer.subscription.deleted');

  // Every webhook carries the subscription or invoice as it was at that event.
  const bodies = receiver.received.map(
    (r) => JSON.parse(r.body) as { type: string; data: { object: { status: string } } },
  );
  const statuses = bodies
    .filter((b) => b.type.startsWith('customer.subscription.'))
    .map((b) => `${b.type}:${b.data.object.status}`);
  t.deepEqual(statuses, [
    'customer.subscription.created:incomplete',
    'customer.subscription.started:active',
    'customer.subscription.past_due:past_due',
    'customer.subscription.past_due:past_due',
    'customer.subscription.unpaid:unpaid',
    'customer.subscription.deleted:canceled',
  ]);
});
