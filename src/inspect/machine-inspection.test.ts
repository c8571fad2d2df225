import { createInspector, type StatelyInspectionEvent } from '@statelyai/inspect';
import test from 'ava';
import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import { sessionFixture } from '../../machines/checkout-session.fixture.ts';
import { createCommandHandler } from '../actors/command-handler.ts';
import { organizationAggregate } from '../actors/organization.ts';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { findMachineRecord } from './inspected-records.ts';
import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import { invoiceFixture } from '../../machines/invoice.fixture.ts';
import { createMachineInspection, type InspectorSink, namingActors, replayRecord } from './machine-inspection.ts';

const MERCHANT = { organizationId: 'org-1', environment: 'test' as const, actor: 'api_key:k1' };

/** Every call the inspector gets, as `kind actor event-or-state`. */
function recordingSink() {
  const calls: string[] = [];
  const name = (a: Parameters<InspectorSink['actor']>[0]) => (typeof a === 'string' ? a : a.sessionId);
  const sink: InspectorSink = {
    actor: (a, s) => calls.push(`actor ${name(a)} ${JSON.stringify(s?.value)}`),
    event: (a, e, info) => calls.push(`event ${name(a)} ${e.type} from ${info?.source}`),
    snapshot: (a, s) => calls.push(`snapshot ${name(a)} ${JSON.stringify(s.value)}`),
  };
  return { sink, calls };
}

async function world(observe?: ReturnType<typeof createMachineInspection>) {
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  const commands = createCommandHandler({
    eventStore,
    clock: createManualClock(Date.parse('2026-01-01T00:10:00Z')),
    observe,
  });
  return { eventStore, commands };
}

test('given a command on a record a machine models, the inspector is told of the actor once, then of each event and the state after it; other records are not shown', async (t) => {
  const { sink, calls } = recordingSink();
  const { commands } = await world(createMachineInspection(sink));
  const session = sessionFixture({ id: 's1' });
  await commands.handle(checkoutSessionAggregate, 's1', { type: 'CreateCheckoutSession', session }, MERCHANT);
  await commands.handle(checkoutSessionAggregate, 's1', { type: 'CancelCheckoutSession', reason: null }, MERCHANT);
  const org = await commands.handle(
    organizationAggregate,
    'org-1',
    { type: 'CreateOrganization', id: 'org-1', environment: 'test', name: 'Shop' },
    MERCHANT,
  );
  t.true(org.events.length > 0, 'the organization was created, and is no machine');
  t.deepEqual(calls, [
    'actor checkout_session-s1 "new"',
    'event checkout_session-s1 CheckoutSessionCreated from api_key:k1',
    'snapshot checkout_session-s1 {"open":"awaitingPayment"}',
    'event checkout_session-s1 CheckoutSessionCanceled from api_key:k1',
    'snapshot checkout_session-s1 "canceled"',
  ]);
});

test('given an inspector that throws, the command still succeeds', async (t) => {
  const { commands, eventStore } = await world(() => {
    throw new Error('socket gone');
  });
  await commands.handle(
    checkoutSessionAggregate,
    's2',
    { type: 'CreateCheckoutSession', session: sessionFixture({ id: 's2' }) },
    MERCHANT,
  );
  t.is((await eventStore.readStream('checkout_session-s2')).length, 1);
});

test('weir inspect: a record found by its id alone is replayed through its machine from the start, one pause before each event', async (t) => {
  const { commands, eventStore } = await world();
  await commands.handle(
    checkoutSessionAggregate,
    's3',
    { type: 'CreateCheckoutSession', session: sessionFixture({ id: 's3' }) },
    MERCHANT,
  );
  await commands.handle(checkoutSessionAggregate, 's3', { type: 'CancelCheckoutSession', reason: null }, MERCHANT);
  t.is(await findMachineRecord(eventStore, 'nothing-here'), null);
  const record = await findMachineRecord(eventStore, 's3');
  t.is(record?.streamId, 'checkout_session-s3');
  const { sink, calls } = recordingSink();
  let pauses = 0;
  const replayed = await replayRecord(sink, record!, async () => {
    pauses += 1;
    calls.push('pause');
  });
  t.is(replayed, 2);
  t.is(pauses, 2);
  t.deepEqual(calls, [
    'actor checkout_session-s3 "new"',
    'pause',
    'event checkout_session-s3 CheckoutSessionCreated from api_key:k1',
    'snapshot checkout_session-s3 {"open":"awaitingPayment"}',
    'pause',
    'event checkout_session-s3 CheckoutSessionCanceled from api_key:k1',
    'snapshot checkout_session-s3 "canceled"',
  ]);
});

/** The messages `@statelyai/inspect` sends for Weir's calls, as `openInspector` makes it (with Weir's naming). */
function sentMessages() {
  const sent: StatelyInspectionEvent[] = [];
  const naming = namingActors();
  const inspector = createInspector({ send: (event) => void sent.push(event) }, { serialize: naming.serialize });
  return { sink: naming.sink(inspector), sent };
}

test("each actor is named by its record (id, organization/environment, what it was made for); a session for an invoice is nested under the invoice's actor", async (t) => {
  const { sink, sent } = sentMessages();
  const { commands } = await world(createMachineInspection(sink));
  await commands.handle(
    invoiceAggregate,
    'inv_1',
    { type: 'CreateInvoice', invoice: invoiceFixture({ id: 'inv_1' }) },
    MERCHANT,
  );
  for (const id of ['cs_1', 'cs_2'])
    await commands.handle(
      checkoutSessionAggregate,
      id,
      { type: 'CreateCheckoutSession', session: sessionFixture({ id, invoiceId: 'inv_1' }) },
      MERCHANT,
    );
  // Made for an invoice this inspection never showed: named for it, nested under nothing the inspector lacks.
  await commands.handle(
    checkoutSessionAggregate,
    'cs_3',
    { type: 'CreateCheckoutSession', session: sessionFixture({ id: 'cs_3', invoiceId: 'inv_9' }) },
    MERCHANT,
  );
  const actors = sent.flatMap((m) => (m.type === '@xstate.actor' ? [m] : []));
  t.deepEqual(
    actors.map(({ sessionId, name, parentId, rootId }) => ({ sessionId, name, parentId, rootId })),
    [
      { sessionId: 'invoice-inv_1', name: 'inv_1 (org-1/test)', parentId: undefined, rootId: undefined },
      {
        sessionId: 'checkout_session-cs_1',
        name: 'cs_1 (org-1/test) for invoice inv_1',
        parentId: 'invoice-inv_1',
        rootId: 'invoice-inv_1',
      },
      {
        sessionId: 'checkout_session-cs_2',
        name: 'cs_2 (org-1/test) for invoice inv_1',
        parentId: 'invoice-inv_1',
        rootId: 'invoice-inv_1',
      },
      {
        sessionId: 'checkout_session-cs_3',
        name: 'cs_3 (org-1/test) for invoice inv_9',
        parentId: undefined,
        rootId: undefined,
      },
    ],
  );
  t.regex(actors[1]?.definition ?? '', /^\{"context":.*"id":"checkoutSession"/, 'the chart is the machine as it is');
});

test('weir inspect names the replayed actor as the live inspection does', async (t) => {
  const { commands, eventStore } = await world();
  await commands.handle(
    checkoutSessionAggregate,
    'cs_4',
    { type: 'CreateCheckoutSession', session: sessionFixture({ id: 'cs_4', subscriptionId: 'sub_1' }) },
    MERCHANT,
  );
  const record = await findMachineRecord(eventStore, 'cs_4');
  const { sink, sent } = sentMessages();
  await replayRecord(sink, record!, async () => {});
  t.like(sent[0], { type: '@xstate.actor', name: 'cs_4 (org-1/test) for subscription sub_1', parentId: undefined });
});
