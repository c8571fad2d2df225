import test from 'ava';
import {
  cancelScheduled,
  created,
  incompleteExpired,
  issued,
  markedUnpaid,
  missed,
  paused,
  renewalBill,
  renewalPaid,
  started,
  SUBSCRIPTION_ID,
  subscriptionFixture,
  trialFixture,
} from '../../machines/subscription.fixture.ts';
import type { SubscriptionEvent, SubscriptionStatus } from '../../machines/subscription.types.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { subscriptionPayloadOf, subscriptionWebhookTypeOf } from '../webhooks/subscription-webhook-events.ts';
import { COLLECTIONS, type TimerDoc } from './collections.ts';
import {
  publicSubscription,
  SUBSCRIPTION_TIMERS,
  SUBSCRIPTIONS,
  subscriptionsProjection,
  type SubscriptionDoc,
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
  // A first invoice due on a date (its last instant) expires its subscription once that day has ended, as the
  // invoice turns overdue; one due at midnight, at that instant.
  const firstInvoice = (dueAt: string) => subscriptionFixture({ firstBill: { id: 'inv-1', kind: 'invoice', dueAt } });
  t.deepEqual((await project([created(firstInvoice('2026-01-10T23:59:59.999Z'))])).timers, [
    [SUBSCRIPTION_TIMERS.expireFirst, '2026-01-11T00:00:00.000Z'],
  ]);
  t.deepEqual((await project([created(firstInvoice('2026-01-10T00:00:00.000Z'))])).timers, [
    [SUBSCRIPTION_TIMERS.expireFirst, '2026-01-10T00:00:00.000Z'],
  ]);
  t.deepEqual((await project([created(), started()])).timers, [
    [SUBSCRIPTION_TIMERS.renew, '2026-02-01T00:00:00.000Z'],
  ]);
  // An open renewal invoice (renewed at midnight): past due once it is overdue, at its due instant even at
  // midnight; the next period is billed at its end all the same.
  t.deepEqual((await project([created(), started(), issued()])).timers, [
    [SUBSCRIPTION_TIMERS.pastDue, '2026-02-04T00:00:00.000Z'],
    [SUBSCRIPTION_TIMERS.renew, '2026-03-01T00:00:00.000Z'],
  ]);
  // Bills an older Weir wrote (no `dueIsInstant`): an invoice due at midnight is due all that day, as it was then.
  const asEarlierWeir = (event: SubscriptionEvent): SubscriptionEvent => {
    const { dueIsInstant: _marker, ...data } = event.data as typeof event.data & { dueIsInstant?: true };
    return { ...event, data } as SubscriptionEvent;
  };
  t.deepEqual((await project([created(), started(), asEarlierWeir(issued())])).timers, [
    [SUBSCRIPTION_TIMERS.pastDue, '2026-02-05T00:00:00.000Z'],
    [SUBSCRIPTION_TIMERS.renew, '2026-03-01T00:00:00.000Z'],
  ]);
  // Terms longer than a period: March is billed while February's bill is open; past due at the earlier one's due.
  const february = renewalBill(
    'inv-2',
    '2026-02-01T00:00:00.000Z',
    '2026-03-01T00:00:00.000Z',
    undefined,
    '2026-04-02T00:00:00.000Z',
  );
  const march = renewalBill(
    'inv-3',
    '2026-03-01T00:00:00.000Z',
    '2026-04-01T00:00:00.000Z',
    undefined,
    '2026-04-30T00:00:00.000Z',
  );
  t.deepEqual((await project([created(), started(), issued(february), issued(march)])).timers, [
    [SUBSCRIPTION_TIMERS.renew, '2026-04-01T00:00:00.000Z'],
    [SUBSCRIPTION_TIMERS.pastDue, '2026-04-02T00:00:00.000Z'],
  ]);
  t.deepEqual((await project([asEarlierWeir(created(firstInvoice('2026-01-10T00:00:00.000Z')))])).timers, [
    [SUBSCRIPTION_TIMERS.expireFirst, '2026-01-11T00:00:00.000Z'],
  ]);
  t.deepEqual(
    (await project([asEarlierWeir(created())])).timers,
    [[SUBSCRIPTION_TIMERS.expireFirst, '2026-01-01T01:00:00.000Z']],
    'a checkout session expires at its instant',
  );
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

test('the renewal timer names the invoice to issue', async (t) => {
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

test('a recorded deletion of a renewal draft leaves nothing past due and the next period renews at its end', async (t) => {
  const AT = '2026-02-01T01:00:00.000Z';
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

test('the read model keeps when the first bill was paid and every past-due spell (for the report), never shown to merchants', async (t) => {
  const doc = async (events: SubscriptionEvent[]) =>
    (await (await project(events)).store.collection<SubscriptionDoc>(SUBSCRIPTIONS).get(SUBSCRIPTION_ID))!;
  t.like(await doc([created()]), { startedAt: null, pastDues: [] });
  t.like(await doc([created(trialFixture()), issued()]), { status: 'trialing', startedAt: null });
  t.like(await doc([created(), started()]), { startedAt: '2026-01-01T00:10:00.000Z' });
  // Past due, unpaid, then its bill voided: the spell stays, closed.
  const voided = await doc([
    created(),
    started(),
    issued(),
    missed(),
    markedUnpaid(),
    { type: 'RenewalInvoiceVoided', data: { invoiceId: 'inv-2', at: '2026-02-20T00:00:00.000Z' } },
  ]);
  t.like(voided, { status: 'active', pastDueSince: null, startedAt: '2026-01-01T00:10:00.000Z' });
  t.deepEqual(voided.pastDues, [
    { since: '2026-02-04T00:00:00.000Z', unpaidAt: '2026-02-11T00:00:00.000Z', until: '2026-02-20T00:00:00.000Z' },
  ]);
  t.deepEqual((await doc([created(), started(), issued(), missed()])).pastDues, [
    { since: '2026-02-04T00:00:00.000Z', unpaidAt: null, until: null },
  ]);
  // A trial whose first invoice went past due starts when it is paid at last.
  const trial = created(trialFixture());
  const late = await doc([trial, issued(), missed(), renewalPaid('inv-2', '2026-02-06T00:00:00.000Z')]);
  t.like(late, { status: 'active', startedAt: '2026-02-06T00:00:00.000Z' });
  const shown = publicSubscription(voided);
  t.false('startedAt' in shown || 'pastDues' in shown || 'pauses' in shown);
});
