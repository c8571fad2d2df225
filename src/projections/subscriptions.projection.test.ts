import test, { type ExecutionContext } from 'ava';
import { created as invoiceCreated, deleted, invoiceFixture, paid, voided } from '../../machines/invoice.fixture.ts';
import type { Invoice, InvoiceEvent } from '../../machines/invoice.types.ts';
import { sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSession, CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import {
  canceled,
  cancelScheduled,
  created,
  incompleteExpired,
  issued,
  markedUnpaid,
  missed,
  paused,
  renewalPaid,
  started,
  SUBSCRIPTION_ID,
  subscriptionFixture,
  trialFixture,
} from '../../machines/subscription.fixture.ts';
import { subscriptionMachine } from '../../machines/subscription.machine.ts';
import type { SubscriptionEvent, SubscriptionStatus } from '../../machines/subscription.types.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { subscriptionPayloadOf, subscriptionWebhookTypeOf } from '../webhooks/subscription-webhook-events.ts';
import { COLLECTIONS, type CheckoutSessionDoc, type TimerDoc } from './collections.ts';
import { INVOICES, type InvoiceDoc } from './invoices.projection.ts';
import type { Collection, ReadStore } from '../read-store/read-store.ts';
import {
  isPartlyPaid,
  SUBSCRIPTION_BILLS,
  SUBSCRIPTION_TIMERS,
  SUBSCRIPTION_WORK,
  SUBSCRIPTIONS,
  subscriptionsProjection,
  type SubscriptionDoc,
  type SubscriptionWorkDoc,
} from './subscriptions.projection.ts';

const recorded = (events: SubscriptionEvent[]) =>
  events.map(
    (e, i) =>
      ({
        id: `e${i}`,
        streamId: `subscription-${SUBSCRIPTION_ID}`,
        revision: i,
        position: BigInt(i + 1),
        type: e.type,
        data: e.data,
        metadata: { organizationId: 'org-1', environment: 'test', actor: 't', occurredAt: '2026-01-02T00:00:00.000Z' },
      }) as unknown as RecordedEvent,
  );

async function project(events: SubscriptionEvent[]) {
  const store = createEmbeddedReadStore({});
  for (const event of recorded(events)) await subscriptionsProjection.apply(event, store);
  const timers = (
    await store.collection<TimerDoc>(COLLECTIONS.timers).find({ recordId: SUBSCRIPTION_ID }, { sort: { fireAt: 1 } })
  ).map((timer) => [timer.kind, new Date(timer.fireAt).toISOString()]);
  return { store, timers };
}

test('each state waits on exactly the timers whose command would act', async (t) => {
  t.deepEqual((await project([created()])).timers, [[SUBSCRIPTION_TIMERS.expireFirst, '2026-01-01T01:00:00.000Z']]);
  t.deepEqual((await project([created(), incompleteExpired()])).timers, []);
  t.deepEqual((await project([created(), started()])).timers, [
    [SUBSCRIPTION_TIMERS.renew, '2026-02-01T00:00:00.000Z'],
  ]);
  // An open renewal invoice: past due at its due time, and no renewal until it is paid.
  t.deepEqual((await project([created(), started(), issued()])).timers, [
    [SUBSCRIPTION_TIMERS.pastDue, '2026-02-04T00:00:00.000Z'],
  ]);
  t.deepEqual((await project([created(), started(), issued(), renewalPaid()])).timers, [
    [SUBSCRIPTION_TIMERS.renew, '2026-03-01T00:00:00.000Z'],
  ]);
  t.deepEqual((await project([created(), started(), issued(), missed()])).timers, [
    [SUBSCRIPTION_TIMERS.unpaid, '2026-02-11T00:00:00.000Z'],
  ]);
  t.deepEqual((await project([created(), started(), issued(), missed(), markedUnpaid()])).timers, []);
  // Canceled at period end while unpaid: the period end still ends it.
  t.deepEqual(
    (
      await project([
        created(),
        started(),
        issued(),
        missed(),
        markedUnpaid(),
        cancelScheduled('2026-02-12T00:00:00.000Z', '2026-03-01T00:00:00.000Z'),
      ])
    ).timers,
    [[SUBSCRIPTION_TIMERS.renew, '2026-03-01T00:00:00.000Z']],
  );
  t.deepEqual((await project([created(), started(), paused()])).timers, []);
});

test('the renewal timer names the invoice to issue; a renewal becomes work for the billing process manager', async (t) => {
  const { store } = await project([created(), started(), issued()]);
  const work = await store.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK).find({});
  t.deepEqual(
    work.map((w) => [w._id, w.kind, w.sourceId]),
    [['issue_invoice:inv-2', 'issue_invoice', 'inv-2']],
  );
  t.deepEqual(await store.collection(SUBSCRIPTION_BILLS).find({}, { sort: { _id: 1 } }), [
    { _id: 'cs-1', subscriptionId: SUBSCRIPTION_ID, first: true },
    { _id: 'inv-2', subscriptionId: SUBSCRIPTION_ID, first: false },
  ]);
  const renewals = await project([created(), started()]);
  const [timer] = await renewals.store
    .collection<TimerDoc>(COLLECTIONS.timers)
    .find({ kind: SUBSCRIPTION_TIMERS.renew });
  t.regex(String(timer?.args?.invoiceId), /^[0-9a-f-]{36}$/);
});

test('the projection is idempotent: re-applying events leaves the same documents', async (t) => {
  const events = recorded([created(), started(), issued(), missed()]);
  const store = createEmbeddedReadStore({});
  for (const event of events) await subscriptionsProjection.apply(event, store);
  const once = await store.collection<SubscriptionDoc>(SUBSCRIPTIONS).get(SUBSCRIPTION_ID);
  const timersOnce = await store.collection(COLLECTIONS.timers).find({});
  for (const event of events.slice(1)) await subscriptionsProjection.apply(event, store);
  t.is(once!.status, 'past_due');
  t.deepEqual(await store.collection<SubscriptionDoc>(SUBSCRIPTIONS).get(SUBSCRIPTION_ID), once);
  t.deepEqual(await store.collection(COLLECTIONS.timers).find({}), timersOnce);
});

test('subscription log events map to the customer.subscription.* webhooks, carrying the subscription as it was', (t) => {
  const history = recorded([created(), started(), issued(), missed(), markedUnpaid()]);
  t.deepEqual(history.map(subscriptionWebhookTypeOf), [
    'customer.subscription.created',
    'customer.subscription.started',
    null,
    'customer.subscription.past_due',
    'customer.subscription.unpaid',
  ]);
  t.is(
    subscriptionWebhookTypeOf(recorded([created(), incompleteExpired()])[1]!),
    'customer.subscription.incomplete_expired',
  );
  const payload = subscriptionPayloadOf(history.slice(0, 4));
  t.like(payload, { id: SUBSCRIPTION_ID, object: 'subscription', status: 'past_due', livemode: false });
  t.is(payload.lineItems.object, 'list');
});

/** A subscription whose first bill is the recurring invoice `inv-1`, due 2026-01-11, expired unpaid. */
const FIRST_INVOICE = 'inv-1';
const byInvoice = created(
  subscriptionFixture({ firstBill: { id: FIRST_INVOICE, kind: 'invoice', dueAt: '2026-01-11T00:00:00.000Z' } }),
);
const invoiceExpired: SubscriptionEvent = {
  type: 'SubscriptionIncompleteExpired',
  data: { invoiceId: FIRST_INVOICE, at: '2026-01-11T00:00:00.000Z' },
};
/** An event of another stream than the subscription's (its first bill's), recorded at `revision`. */
const onStream = (streamId: string) => (event: InvoiceEvent | CheckoutSessionEvent, revision: number) =>
  ({
    id: `${streamId}:${revision}`,
    streamId,
    revision,
    position: BigInt(100 + revision),
    type: event.type,
    data: event.data,
    metadata: { organizationId: 'org-1', environment: 'test', actor: 't', occurredAt: '2026-01-11T00:00:00.000Z' },
  }) as unknown as RecordedEvent;
const onInvoice = onStream(`invoice-${FIRST_INVOICE}`);

/**
 * The subscription's events over a first invoice in `status` (as the invoices projection left it),
 * and over the other invoices in `others` (by id).
 */
async function projectOverInvoice(
  status: Invoice['status'],
  events: SubscriptionEvent[],
  others: Record<string, Invoice['status']> = {},
) {
  const store = createEmbeddedReadStore({});
  for (const [id, invoiceStatus] of Object.entries({ ...others, [FIRST_INVOICE]: status })) {
    await store
      .collection<InvoiceDoc>(INVOICES)
      .put({ ...invoiceFixture({ id, status: invoiceStatus }), _id: id, _revision: 1 });
  }
  for (const event of recorded(events)) await subscriptionsProjection.apply(event, store);
  const work = async () =>
    (await store.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK).find({}, { sort: { _id: 1 } })).map((w) => [
      w._id,
      w.kind,
      w.sourceId,
      w.subscriptionId,
    ]);
  return { store, work };
}

const VOID_WORK = [`void_first_invoice:${FIRST_INVOICE}`, 'void_first_invoice', FIRST_INVOICE, SUBSCRIPTION_ID];

/**
 * `ending` (at `at`) takes the subscription out of `incomplete`: over an open or uncollectible
 * first invoice it leaves one piece of void work, dated `at`, still one when the projection
 * repeats the batch after a crash, and the void takes it off the list. Paid after the end, before
 * the void was done (a race), the invoice is not voided, and the payment leaves no work the
 * subscription would ignore anyway.
 */
async function assertVoidWorkUntilVoided(t: ExecutionContext, ending: SubscriptionEvent, at: string): Promise<void> {
  for (const status of ['open', 'uncollectible'] as const) {
    const { store, work } = await projectOverInvoice(status, [byInvoice, ending]);
    t.deepEqual(await work(), [VOID_WORK], `an ${status} first invoice is voided`);
    t.is((await store.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK).get(VOID_WORK[0]!))?.at, at);
    for (const event of recorded([byInvoice, ending])) await subscriptionsProjection.apply(event, store);
    t.deepEqual(await work(), [VOID_WORK], 'a repeated batch: still one piece of work');
    await subscriptionsProjection.apply(onInvoice(voided(at), 2), store);
    t.deepEqual(await work(), [], 'voided: done');
  }
  const raced = await projectOverInvoice('open', [byInvoice, ending]);
  await subscriptionsProjection.apply(onInvoice(paid('cs-9', '300000000', at), 2), raced.store);
  t.deepEqual(await raced.work(), [], 'paid before the void: nothing to do');
}

test('a subscription that expires unpaid gets its still payable first invoice voided; the void or a payment takes the work off the list', async (t) => {
  t.deepEqual(
    await (await projectOverInvoice('open', [byInvoice])).work(),
    [],
    'nothing to void while it may still be paid',
  );
  await assertVoidWorkUntilVoided(t, invoiceExpired, '2026-01-11T00:00:00.000Z');
  // Already paid or voided when the subscription expired: nothing to do.
  for (const status of ['paid', 'void'] as const)
    t.deepEqual(await (await projectOverInvoice(status, [byInvoice, invoiceExpired])).work(), [], status);
});

test('a subscription the merchant ends while incomplete gets its still payable first invoice voided, as one that expired; ending it later leaves the paid first invoice alone', async (t) => {
  // The only ways out of `incomplete`: started (paid), expired, ended. A new one must be checked against the rule.
  t.deepEqual(Object.keys(subscriptionMachine.config.states!.incomplete!.on!).sort(), [
    'SubscriptionCanceled',
    'SubscriptionIncompleteExpired',
    'SubscriptionStarted',
  ]);
  const ended = canceled('2026-01-05T00:00:00.000Z');
  await assertVoidWorkUntilVoided(t, ended, '2026-01-05T00:00:00.000Z');
  // Paid just before the end, the payment not yet recorded: the end wins, and the payment is not recorded.
  const paidFirst = await projectOverInvoice('paid', [byInvoice]);
  t.deepEqual(
    (await paidFirst.work()).map(([id]) => id),
    [`record_payment:${FIRST_INVOICE}`],
  );
  await subscriptionsProjection.apply(recorded([byInvoice, ended])[1]!, paidFirst.store);
  t.deepEqual(await paidFirst.work(), []);
  t.deepEqual(await (await projectOverInvoice('void', [byInvoice, ended])).work(), [], 'already void');
  // Ended later in life, with an open renewal invoice: the first invoice (paid) is not voided, the renewal is (see below).
  const later = await projectOverInvoice(
    'open',
    [byInvoice, started(FIRST_INVOICE), issued(), canceled('2026-02-02T00:00:00.000Z')],
    { 'inv-2': 'open' },
  );
  t.deepEqual(await later.work(), [['void_unpaid_invoice:inv-2', 'void_unpaid_invoice', 'inv-2', SUBSCRIPTION_ID]]);
});

test('a subscription canceled later in life leaves no payment work behind: a renewal paid after the end, or paid just before it', async (t) => {
  const renewalPaid = (at: string) =>
    ({
      id: 'i-renewal',
      streamId: 'invoice-inv-2',
      revision: 2,
      position: 200n,
      type: 'InvoicePaid',
      data: paid('cs-8', '300000000', at).data,
      metadata: { organizationId: 'org-1', environment: 'test', actor: 't', occurredAt: at },
    }) as unknown as RecordedEvent;
  const life = [byInvoice, started(FIRST_INVOICE), issued()];
  const recordWork = async (work: () => Promise<unknown[][]>) =>
    (await work()).filter(([id]) => String(id).startsWith('record_payment:'));

  // Paid while active: the payment becomes work, as before.
  const active = await projectOverInvoice('open', life, { 'inv-2': 'open' });
  await subscriptionsProjection.apply(renewalPaid('2026-02-01T12:00:00.000Z'), active.store);
  t.deepEqual(
    (await recordWork(active.work)).map(([id]) => id),
    ['record_payment:inv-2'],
  );
  // Then canceled before the billing process recorded it: the work goes, the decider would ignore it.
  await subscriptionsProjection.apply(recorded([...life, canceled('2026-02-01T13:00:00.000Z')])[3]!, active.store);
  t.deepEqual(await recordWork(active.work), []);

  // Canceled first, the renewal paid afterwards: no work at all.
  const ended = await projectOverInvoice('open', [...life, canceled('2026-02-01T13:00:00.000Z')], { 'inv-2': 'open' });
  await subscriptionsProjection.apply(renewalPaid('2026-02-02T00:00:00.000Z'), ended.store);
  t.deepEqual(await recordWork(ended.work), []);
});

/** The fixture's first bill, checkout session `cs-1` (expiring 2026-01-01T01:00Z), as the checkout sessions projection left it. */
async function projectOverSession(status: CheckoutSession['status'], events: SubscriptionEvent[]) {
  const store = createEmbeddedReadStore({});
  const session = sessionFixture({ id: 'cs-1', mode: 'subscription', subscriptionId: SUBSCRIPTION_ID, status });
  await store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).put({ ...session, _id: session.id });
  for (const event of recorded(events)) await subscriptionsProjection.apply(event, store);
  const work = async () =>
    (await store.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK).find({}, { sort: { _id: 1 } })).map((w) => [
      w._id,
      w.kind,
      w.sourceId,
      w.subscriptionId,
      w.at,
    ]);
  return { store, work };
}

const onSession = onStream('checkout_session-cs-1');
const SESSION_ENDS: CheckoutSessionEvent[] = [
  {
    type: 'CheckoutSessionCanceled',
    data: { at: '2026-01-01T01:00:00.000Z', reason: 'the subscription was canceled' },
  },
  { type: 'CheckoutSessionExpired', data: { at: '2026-01-01T01:00:00.000Z' } },
  {
    type: 'CheckoutSessionCompleted',
    data: {
      amountReceived: '1000000000',
      amountOverpaid: '0',
      transactionHash: '0xabc',
      partial: false,
      at: '2026-01-01T01:00:00.000Z',
    },
  },
  { type: 'CheckoutSessionPartiallyPaid', data: { amountReceived: '100000000', at: '2026-01-01T01:00:00.000Z' } },
];

test('a subscription that ends while incomplete gets its still open first checkout session closed; the session leaving open takes the work off the list', async (t) => {
  t.deepEqual(
    await (await projectOverSession('open', [created()])).work(),
    [],
    'nothing to close while it may still be paid',
  );
  t.deepEqual(await (await projectOverSession('open', [created(), started()])).work(), [], 'started: nothing to close');
  for (const [ending, at] of [
    [incompleteExpired(), '2026-01-01T01:00:00.000Z'],
    [canceled('2026-01-01T00:30:00.000Z'), '2026-01-01T00:30:00.000Z'],
  ] as const) {
    const closeWork = [['close_first_session:cs-1', 'close_first_session', 'cs-1', SUBSCRIPTION_ID, at]];
    for (const end of SESSION_ENDS) {
      const { store, work } = await projectOverSession('open', [created(), ending]);
      t.deepEqual(await work(), closeWork, `${ending.type}: the open session is closed`);
      for (const event of recorded([created(), ending])) await subscriptionsProjection.apply(event, store);
      t.deepEqual(await work(), closeWork, 'a repeated batch: still one piece of work');
      // Closed by the billing process, expired by its own timer, or paid (even partly) first: done,
      // and a payment of the ended subscription's bill is no work either.
      await subscriptionsProjection.apply(onSession(end, 1), store);
      t.deepEqual(await work(), [], `${ending.type}, then ${end.type}: done`);
    }
    // Paid (even partly), expired or canceled before the subscription ended: nothing to close.
    for (const status of ['complete', 'incomplete', 'expired', 'canceled'] as const) {
      t.deepEqual(
        await (await projectOverSession(status, [created(), ending])).work(),
        [],
        `${ending.type} over a session ${status}`,
      );
    }
  }
});

/**
 * Renewal invoice `inv-2` of the fixture (opened 2026-02-01) as the invoices projection left it
 * (absent when `status` is null), with a checkout session `cs-2` of its pay page in `payPage`
 * when given, under the subscription's `events`.
 */
async function projectOverRenewal(
  status: Invoice['status'] | null,
  events: SubscriptionEvent[],
  payPage: CheckoutSession['status'] | null = null,
) {
  const store = createEmbeddedReadStore({});
  if (status)
    await store
      .collection<InvoiceDoc>(INVOICES)
      .put({ ...invoiceFixture({ id: 'inv-2', status, subscriptionId: SUBSCRIPTION_ID }), _id: 'inv-2', _revision: 1 });
  if (payPage) {
    await store
      .collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions)
      .put({ ...sessionFixture({ id: 'cs-2', invoiceId: 'inv-2', status: payPage }), _id: 'cs-2' });
  }
  for (const event of recorded(events)) await subscriptionsProjection.apply(event, store);
  const work = async () =>
    (await store.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK).find({}, { sort: { _id: 1 } })).map((w) => [
      w._id,
      w.kind,
      w.sourceId,
      w.subscriptionId,
      w.at,
    ]);
  return { store, work };
}

const onRenewal = onStream('invoice-inv-2');
const onPayPage = onStream('checkout_session-cs-2');
const ENDED_AT = '2026-02-02T00:00:00.000Z';
const VOID_RENEWAL = ['void_unpaid_invoice:inv-2', 'void_unpaid_invoice', 'inv-2', SUBSCRIPTION_ID, ENDED_AT];

/** Every way a subscription that started ends, over the open renewal invoice `inv-2`, at ENDED_AT. */
const ENDINGS_AFTER_START: Record<string, SubscriptionEvent[]> = {
  'ended while active': [created(), started(), issued(), canceled(ENDED_AT)],
  'ended while past due': [created(), started(), issued(), missed(), canceled(ENDED_AT)],
  'ended while unpaid': [created(), started(), issued(), missed(), markedUnpaid(), canceled(ENDED_AT)],
  'ended while paused': [
    created(),
    started(),
    issued(),
    { type: 'SubscriptionPaused', data: { at: '2026-02-01T12:00:00.000Z' } },
    canceled(ENDED_AT),
  ],
  'ended while trialing': [created(trialFixture()), issued(), canceled(ENDED_AT)],
  'canceled at period end': [
    created(),
    started(),
    issued(),
    missed(),
    cancelScheduled('2026-02-01T12:00:00.000Z', ENDED_AT),
    canceled(ENDED_AT, true),
  ],
};

test('a subscription that ends after it started gets its open, unpaid renewal invoice voided, whichever way it ends; the void or a payment takes the work off the list', async (t) => {
  // Once out of `incomplete`, SubscriptionCanceled is the only way to end; a new one must be checked against this rule.
  for (const [state, node] of Object.entries(subscriptionMachine.config.states!)) {
    if (state === 'incomplete') continue;
    const ends = Object.entries(node.on ?? {})
      .filter(([, to]) => ['canceled', 'incomplete_expired'].includes(String((to as { target?: string }).target)))
      .map(([type]) => type);
    t.deepEqual(ends, ['new', 'canceled', 'incomplete_expired'].includes(state) ? [] : ['SubscriptionCanceled'], state);
  }
  for (const [how, events] of Object.entries(ENDINGS_AFTER_START)) {
    t.deepEqual(
      await (await projectOverRenewal('open', events.slice(0, -1))).work(),
      [['issue_invoice:inv-2', 'issue_invoice', 'inv-2', SUBSCRIPTION_ID, '2026-02-01T00:00:00.000Z']],
      `${how}: before the end`,
    );
    for (const status of ['open', 'uncollectible'] as const) {
      const { store, work } = await projectOverRenewal(status, events);
      t.deepEqual(await work(), [VOID_RENEWAL], `${how}: an ${status} renewal is voided, and is no longer to issue`);
      for (const event of recorded(events)) await subscriptionsProjection.apply(event, store);
      t.deepEqual(await work(), [VOID_RENEWAL], `${how}: a repeated batch, still one piece of work`);
      await subscriptionsProjection.apply(onRenewal(voided(ENDED_AT), 3), store);
      t.deepEqual(await work(), [], `${how}: voided, done`);
    }
  }
  const events = ENDINGS_AFTER_START['ended while active']!;
  // Paid in full, or in part on its pay page, after the end and before the void: it is not voided.
  const raced = await projectOverRenewal('open', events);
  await subscriptionsProjection.apply(onRenewal(paid('cs-2', '1000000000', ENDED_AT), 3), raced.store);
  t.deepEqual(await raced.work(), [], 'paid before the void');
  const partly = await projectOverRenewal('open', events, 'open');
  await partly.store
    .collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions)
    .put({ ...sessionFixture({ id: 'cs-2', invoiceId: 'inv-2', status: 'incomplete' }), _id: 'cs-2' });
  await subscriptionsProjection.apply(
    onPayPage({ type: 'CheckoutSessionPartiallyPaid', data: { amountReceived: '100000000', at: ENDED_AT } }, 2),
    partly.store,
  );
  t.deepEqual(await partly.work(), [], 'partly paid before the void');
});

test('at the end, a renewal invoice partly paid, paid, void or not issued yet is not voided; one issued after the end is', async (t) => {
  const events = ENDINGS_AFTER_START['ended while active']!;
  t.deepEqual(await (await projectOverRenewal('open', events, 'incomplete')).work(), [], 'partly paid: it stays open');
  t.deepEqual(
    await (await projectOverRenewal('open', events, 'open')).work(),
    [VOID_RENEWAL],
    'an open pay page that received nothing',
  );
  t.deepEqual(
    await (await projectOverRenewal('open', events, 'expired')).work(),
    [VOID_RENEWAL],
    'an expired pay page that received nothing',
  );
  for (const status of ['paid', 'void'] as const)
    t.deepEqual(await (await projectOverRenewal(status, events)).work(), [], status);
  // Not issued yet when the subscription ended: it is no longer issued.
  const pending = await projectOverRenewal(null, events);
  t.deepEqual(await pending.work(), []);
  // Its issue was under way as the end came: once it opens, it is voided.
  await pending.store.collection<InvoiceDoc>(INVOICES).put({
    ...invoiceFixture({ id: 'inv-2', status: 'open', subscriptionId: SUBSCRIPTION_ID }),
    _id: 'inv-2',
    _revision: 2,
  });
  await subscriptionsProjection.apply(
    onRenewal(
      {
        type: 'InvoiceFinalized',
        data: { number: 'INV-2', url: 'http://weir.test/pay', issueDate: ENDED_AT, at: '2026-02-02T00:00:01.000Z' },
      },
      1,
    ),
    pending.store,
  );
  t.deepEqual(await pending.work(), [[...VOID_RENEWAL.slice(0, 4), '2026-02-02T00:00:01.000Z']]);
  // Opened while the subscription goes on: nothing to void.
  const ongoing = await projectOverRenewal(null, events.slice(0, -1));
  await ongoing.store.collection<InvoiceDoc>(INVOICES).put({
    ...invoiceFixture({ id: 'inv-2', status: 'open', subscriptionId: SUBSCRIPTION_ID }),
    _id: 'inv-2',
    _revision: 2,
  });
  await subscriptionsProjection.apply(
    onRenewal(
      {
        type: 'InvoiceFinalized',
        data: { number: 'INV-2', url: 'http://weir.test/pay', issueDate: ENDED_AT, at: ENDED_AT },
      },
      1,
    ),
    ongoing.store,
  );
  t.deepEqual(
    (await ongoing.work()).map(([id]) => id),
    ['issue_invoice:inv-2'],
  );
});

test('isPartlyPaid: a checkout session of the invoice, of its tenant, waits for the rest of a part payment', async (t) => {
  const store = createEmbeddedReadStore({});
  const sessions: Collection<CheckoutSessionDoc> = store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  const invoice = { id: 'inv-2', organizationId: 'org-1', environment: 'test' as const };
  const put = (id: string, overrides: Partial<CheckoutSession>) =>
    sessions.put({ ...sessionFixture({ id, invoiceId: 'inv-2', ...overrides }), _id: id });
  await put('cs-open', { status: 'open' });
  await put('cs-complete', { status: 'complete' });
  await put('cs-other-tenant', { status: 'incomplete', organizationId: 'org-2' });
  await put('cs-other-invoice', { status: 'incomplete', invoiceId: 'inv-3' });
  t.false(await isPartlyPaid(sessions, invoice));
  await put('cs-part', { status: 'incomplete' });
  t.true(await isPartlyPaid(sessions, invoice));
});

const DELETE_DRAFT = ['delete_draft_invoice:inv-2', 'delete_draft_invoice', 'inv-2', SUBSCRIPTION_ID, ENDED_AT];
const DRAFT_CREATED_AT = '2026-01-11T00:00:00.000Z';

test('a subscription that ends after it started gets its renewal left a draft (its issue crashed before the send) deleted, whichever way it ends; the delete takes the work off the list', async (t) => {
  for (const [how, events] of Object.entries(ENDINGS_AFTER_START)) {
    const { store, work } = await projectOverRenewal('draft', events);
    t.deepEqual(await work(), [DELETE_DRAFT], `${how}: the draft is deleted, and is no longer to issue`);
    for (const event of recorded(events)) await subscriptionsProjection.apply(event, store);
    t.deepEqual(await work(), [DELETE_DRAFT], `${how}: a repeated batch, still one piece of work`);
    await subscriptionsProjection.apply(onRenewal(deleted(ENDED_AT), 1), store);
    t.deepEqual(await work(), [], `${how}: deleted, done`);
  }
  const events = ENDINGS_AFTER_START['ended while active']!;
  // A draft the merchant deleted already: nothing to do.
  const gone = createEmbeddedReadStore({});
  await gone.collection<InvoiceDoc>(INVOICES).put({
    ...invoiceFixture({ id: 'inv-2', subscriptionId: SUBSCRIPTION_ID, deletedAt: ENDED_AT }),
    _id: 'inv-2',
    _revision: 1,
  });
  for (const event of recorded(events)) await subscriptionsProjection.apply(event, gone);
  t.deepEqual(await gone.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK).find({}), []);
  // The draft finalized (its issue resumed) before it was deleted: voided instead.
  const resumed = await projectOverRenewal('draft', events);
  await resumed.store.collection<InvoiceDoc>(INVOICES).put({
    ...invoiceFixture({ id: 'inv-2', status: 'open', subscriptionId: SUBSCRIPTION_ID }),
    _id: 'inv-2',
    _revision: 2,
  });
  await subscriptionsProjection.apply(
    onRenewal(
      {
        type: 'InvoiceFinalized',
        data: { number: 'INV-2', url: 'http://weir.test/pay', issueDate: ENDED_AT, at: ENDED_AT },
      },
      1,
    ),
    resumed.store,
  );
  t.deepEqual(await resumed.work(), [VOID_RENEWAL]);
});

test('a renewal created as a draft after its subscription ended (its issue under way, then a crash before the send) is deleted; one created while it goes on is issued', async (t) => {
  const events = ENDINGS_AFTER_START['ended while active']!;
  const draft = invoiceFixture({ id: 'inv-2', status: 'draft', subscriptionId: SUBSCRIPTION_ID });
  const after = await projectOverRenewal(null, events);
  await after.store.collection<InvoiceDoc>(INVOICES).put({ ...draft, _id: 'inv-2', _revision: 0 });
  await subscriptionsProjection.apply(onRenewal(invoiceCreated(draft), 0), after.store);
  t.deepEqual(await after.work(), [[...DELETE_DRAFT.slice(0, 4), DRAFT_CREATED_AT]]);
  await subscriptionsProjection.apply(onRenewal(deleted(ENDED_AT), 1), after.store);
  t.deepEqual(await after.work(), [], 'deleted, done');
  const ongoing = await projectOverRenewal(null, events.slice(0, -1));
  await ongoing.store.collection<InvoiceDoc>(INVOICES).put({ ...draft, _id: 'inv-2', _revision: 0 });
  await subscriptionsProjection.apply(onRenewal(invoiceCreated(draft), 0), ongoing.store);
  t.deepEqual(
    (await ongoing.work()).map(([id]) => id),
    ['issue_invoice:inv-2'],
  );
});

/** Every way a subscription that started goes on over its renewal `inv-2` left a draft (its issue crashed before the send). */
const RENEWS_AT_PERIOD_END = [[SUBSCRIPTION_TIMERS.renew, '2026-03-01T00:00:00.000Z']];
const GOING_ON: Record<string, { events: SubscriptionEvent[]; status: SubscriptionStatus; timers: string[][] }> = {
  active: { events: [created(), started(), issued()], status: 'active', timers: RENEWS_AT_PERIOD_END },
  'past due': { events: [created(), started(), issued(), missed()], status: 'active', timers: RENEWS_AT_PERIOD_END },
  unpaid: {
    events: [created(), started(), issued(), missed(), markedUnpaid()],
    status: 'active',
    timers: RENEWS_AT_PERIOD_END,
  },
  paused: {
    events: [created(), started(), issued(), paused('2026-02-01T12:00:00.000Z')],
    status: 'paused',
    timers: [],
  },
  trialing: { events: [created(trialFixture()), issued()], status: 'trialing', timers: RENEWS_AT_PERIOD_END },
};
const DELETED_RENEWAL = [
  'record_deleted_renewal:inv-2',
  'record_deleted_renewal',
  'inv-2',
  SUBSCRIPTION_ID,
  DRAFT_CREATED_AT,
];

/** The draft `inv-2` deleted, as the invoices projection shows it, then its InvoiceDeleted projected here. */
async function draftDeleted(store: ReadStore): Promise<void> {
  await store.collection<InvoiceDoc>(INVOICES).put({
    ...invoiceFixture({ id: 'inv-2', subscriptionId: SUBSCRIPTION_ID, deletedAt: DRAFT_CREATED_AT }),
    _id: 'inv-2',
    _revision: 2,
  });
  await subscriptionsProjection.apply(onRenewal(deleted(DRAFT_CREATED_AT), 1), store);
}

test('a renewal draft the merchant deletes while its subscription goes on is no longer to issue: its deletion is recorded on the subscription, once; then nothing is past due and the next period renews at its end', async (t) => {
  for (const [how, { events, status, timers }] of Object.entries(GOING_ON)) {
    const { store, work } = await projectOverRenewal('draft', events);
    t.deepEqual(
      (await work()).map(([id]) => id),
      ['issue_invoice:inv-2'],
      `${how}: the draft is still to issue`,
    );
    await draftDeleted(store);
    t.deepEqual(await work(), [DELETED_RENEWAL], `${how}: deleted, no longer to issue; the deletion is to record`);
    await draftDeleted(store);
    t.deepEqual(await work(), [DELETED_RENEWAL], `${how}: a repeated delete, still one piece of work`);
    const recordedDeletion = recorded([
      ...events,
      { type: 'RenewalInvoiceDeleted', data: { invoiceId: 'inv-2', at: DRAFT_CREATED_AT } },
    ]).at(-1)!;
    await subscriptionsProjection.apply(recordedDeletion, store);
    t.deepEqual(await work(), [], `${how}: recorded, done`);
    await draftDeleted(store);
    t.deepEqual(await work(), [], `${how}: the delete projected again after the record leaves nothing to do`);
    const subscription = await store.collection<SubscriptionDoc>(SUBSCRIPTIONS).get(SUBSCRIPTION_ID);
    t.like(
      subscription,
      { status, latestInvoiceId: 'inv-2', latestInvoice: { id: 'inv-2', status: 'deleted' }, pastDueSince: null },
      how,
    );
    const waiting = (
      await store.collection<TimerDoc>(COLLECTIONS.timers).find({ recordId: SUBSCRIPTION_ID }, { sort: { fireAt: 1 } })
    ).map((timer) => [timer.kind, new Date(timer.fireAt).toISOString()]);
    t.deepEqual(waiting, timers, `${how}: no past due nor unpaid timer; the renewal at the period end`);
  }
});

test('a renewal draft deleted by the billing process after its subscription ended, or deleted before an end that comes first, leaves no deletion to record', async (t) => {
  const events = ENDINGS_AFTER_START['ended while active']!;
  const ended = await projectOverRenewal('draft', events);
  await subscriptionsProjection.apply(onRenewal(deleted(ENDED_AT), 1), ended.store);
  t.deepEqual(await ended.work(), []);
  // Deleted by the merchant while it went on, then ended before the deletion was recorded: nothing left to record.
  const going = await projectOverRenewal('draft', events.slice(0, -1));
  await draftDeleted(going.store);
  t.deepEqual(await going.work(), [DELETED_RENEWAL]);
  await subscriptionsProjection.apply(recorded(events).at(-1)!, going.store);
  t.deepEqual(await going.work(), []);
});
