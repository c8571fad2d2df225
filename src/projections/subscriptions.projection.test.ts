import test from 'ava';
import { deleted, paid } from '../../machines/invoice.fixture.ts';
import type { InvoiceEvent } from '../../machines/invoice.types.ts';
import {
  cancelScheduled,
  created,
  incompleteExpired,
  issued,
  markedUnpaid,
  missed,
  paused,
  renewalPaid,
  started,
  ENDINGS_AFTER_START,
  SUBSCRIPTION_ID,
} from '../../machines/subscription.fixture.ts';
import { subscriptionMachine } from '../../machines/subscription.machine.ts';
import type { SubscriptionEvent, SubscriptionStatus } from '../../machines/subscription.types.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { subscriptionPayloadOf, subscriptionWebhookTypeOf } from '../webhooks/subscription-webhook-events.ts';
import { COLLECTIONS, type TimerDoc } from './collections.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import {
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

test('the renewal timer names the invoice to issue; a renewal becomes work for the billing work queue', async (t) => {
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

/** An event of the renewal invoice `inv-2`'s stream, recorded at `revision`. */
const onRenewal = (event: InvoiceEvent, revision: number) =>
  ({
    id: `inv-2:${revision}`,
    streamId: 'invoice-inv-2',
    revision,
    position: BigInt(100 + revision),
    type: event.type,
    data: event.data,
    metadata: { organizationId: 'org-1', environment: 'test', actor: 't', occurredAt: '2026-02-01T00:00:00.000Z' },
  }) as unknown as RecordedEvent;

const work = async (store: ReadStore) =>
  (await store.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK).find({}, { sort: { _id: 1 } })).map((w) => [
    w._id,
    w.kind,
    w.sourceId,
  ]);
const ISSUE = [['issue_invoice:inv-2', 'issue_invoice', 'inv-2']];

test('a subscription that ends after it started no longer issues its renewal, whichever way it ends (its billing workflow removes one issued)', async (t) => {
  // Once out of `incomplete`, SubscriptionCanceled is the only way to end; a new one must be checked against this rule.
  for (const [state, node] of Object.entries(subscriptionMachine.config.states!)) {
    if (state === 'incomplete') continue;
    const ends = Object.entries(node.on ?? {})
      .filter(([, to]) => ['canceled', 'incomplete_expired'].includes(String((to as { target?: string }).target)))
      .map(([type]) => type);
    t.deepEqual(ends, ['new', 'canceled', 'incomplete_expired'].includes(state) ? [] : ['SubscriptionCanceled'], state);
  }
  for (const [how, events] of Object.entries(ENDINGS_AFTER_START)) {
    t.deepEqual(await work((await project(events.slice(0, -1))).store), ISSUE, `${how}: before the end`);
    t.deepEqual(await work((await project(events)).store), [], `${how}: no longer to issue`);
  }
});

test('a renewal sent, paid at its finalize or deleted as a draft by the merchant is no longer to issue; its recorded deletion leaves nothing past due and the next period renews at its end', async (t) => {
  const AT = '2026-02-01T01:00:00.000Z';
  for (const done of [
    { type: 'InvoiceSent', data: { to: null, at: AT } },
    paid('cs-2', '1000000000', AT),
    deleted(AT),
  ] as InvoiceEvent[]) {
    const { store } = await project([created(), started(), issued()]);
    await subscriptionsProjection.apply(onRenewal(done, 1), store);
    t.deepEqual(await work(store), [], done.type);
  }
  const GOING_ON: Record<string, { events: SubscriptionEvent[]; status: SubscriptionStatus; timers: string[][] }> = {
    'past due': {
      events: [created(), started(), issued(), missed()],
      status: 'active',
      timers: [[SUBSCRIPTION_TIMERS.renew, '2026-03-01T00:00:00.000Z']],
    },
    paused: {
      events: [created(), started(), issued(), paused('2026-02-01T12:00:00.000Z')],
      status: 'paused',
      timers: [],
    },
  };
  for (const [how, { events, status, timers }] of Object.entries(GOING_ON)) {
    const { store } = await project([
      ...events,
      { type: 'RenewalInvoiceDeleted', data: { invoiceId: 'inv-2', at: AT } },
    ]);
    t.like(
      await store.collection<SubscriptionDoc>(SUBSCRIPTIONS).get(SUBSCRIPTION_ID),
      { status, latestInvoiceId: 'inv-2', latestInvoice: { id: 'inv-2', status: 'deleted' }, pastDueSince: null },
      how,
    );
    const waiting = (
      await store.collection<TimerDoc>(COLLECTIONS.timers).find({ recordId: SUBSCRIPTION_ID }, { sort: { fireAt: 1 } })
    ).map((timer) => [timer.kind, new Date(timer.fireAt).toISOString()]);
    t.deepEqual(waiting, timers, `${how}: no past due nor unpaid timer; the renewal at the period end`);
  }
});
