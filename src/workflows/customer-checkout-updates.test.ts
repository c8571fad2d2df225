import { randomUUID } from 'node:crypto';
import test from 'ava';
import { sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSession, CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import { createCommandHandler } from '../actors/command-handler.ts';
import type { CustomerEvent } from '../actors/customer.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { createTestLog } from '../projections/test-log.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { customerCheckoutUpdates } from './customer-checkout-updates.ts';
import { eventsOfInstance, givenWhenThenWorkflow } from './workflow.ts';
import { createWorkflowRunner } from './workflow-runner.ts';

const AT = '2026-01-01T00:00:00.000Z';
const HOME = {
  line1: '1 Harbour Road',
  line2: null,
  city: 'Lisbon',
  state: null,
  postalCode: '1100-001',
  country: 'PT',
};

function logOf() {
  const { events, append } = createTestLog(AT);
  const session = (id: string, event: CheckoutSessionEvent) => append(`checkout_session-${id}`, event);
  const customer = (id: string, event: CustomerEvent) => append(`customer-${id}`, event);
  return {
    events,
    customerCreated: (id: string) =>
      customer(id, {
        type: 'CustomerCreated',
        data: {
          customer: {
            id,
            organizationId: 'org-1',
            environment: 'test',
            email: 'pat@example.com',
            emailLower: 'pat@example.com',
            name: null,
            phone: null,
            organizationName: null,
            customerReferenceId: null,
            address: null,
            metadata: {},
            visibility: 10,
            createdAt: AT,
          },
        },
      }),
    customerDeleted: (id: string) => customer(id, { type: 'CustomerDeleted', data: { at: AT } }),
    took: (customerId: string, checkoutSessionId: string, completedAt: string) =>
      customer(customerId, {
        type: 'CustomerUpdatedFromCheckout',
        data: { checkoutSessionId, completedAt, changes: {}, at: completedAt },
      }),
    opened: (id: string, overrides: Partial<CheckoutSession>) =>
      session(id, { type: 'CheckoutSessionCreated', data: { session: sessionFixture({ id, ...overrides }) } }),
    completed: (id: string, at: string) =>
      session(id, {
        type: 'CheckoutSessionCompleted',
        data: { amountReceived: '300000000', amountOverpaid: '0', transactionHash: null, partial: false, at },
      }),
  };
}

const named = {
  customerId: 'cus-1',
  customerUpdate: { address: 'auto', name: 'auto', shipping: 'never' },
  customerDetails: { name: 'Pat Payer', email: null, phone: null, address: HOME },
} as const;

const given = givenWhenThenWorkflow(customerCheckoutUpdates);
const instanceOf = (events: RecordedEvent[], id: string) => eventsOfInstance(customerCheckoutUpdates, events, id);

test('a completed session with customerUpdate has its customer take what it collected, for the parts set to auto; once', (t) => {
  const log = logOf();
  log.customerCreated('cus-1');
  log.opened('cs-1', named);
  const history = instanceOf(log.events, 'cs-1');
  const [first, again] = given(history).whenTwice(log.completed('cs-1', '2026-01-01T00:10:00.000Z'));
  t.deepEqual(first, [
    {
      aggregate: 'customer',
      id: 'cus-1',
      command: {
        type: 'UpdateCustomerFromCheckout',
        checkoutSessionId: 'cs-1',
        completedAt: '2026-01-01T00:10:00.000Z',
        changes: { name: 'Pat Payer', address: HOME },
      },
      context: { organizationId: 'org-1', environment: 'test', actor: 'system:customer-update', causationId: 'cs-1' },
    },
  ]);
  t.deepEqual(again, [], 'a repeat decides nothing');
});

test('nothing for a session without customerUpdate or customerId, one that collected nothing it asks for, or one still open', (t) => {
  const log = logOf();
  const sessions = {
    'cs-plain': { customerId: 'cus-1', customerDetails: named.customerDetails },
    'cs-anonymous': { ...named, customerId: null },
    'cs-nothing': { customerId: 'cus-1', customerUpdate: { address: 'auto', name: 'auto', shipping: 'auto' } },
    'cs-shipping': { ...named, customerUpdate: { address: 'never', name: 'never', shipping: 'auto' } },
  } as const;
  for (const [id, overrides] of Object.entries(sessions)) {
    t.false(customerCheckoutUpdates.correlate(log.opened(id, overrides)), id);
    log.completed(id, AT);
    t.deepEqual(instanceOf(log.events, id), [], `${id}: not the workflow's`);
  }
  log.opened('cs-open', named);
  t.deepEqual(
    instanceOf(log.events, 'cs-open').flatMap((event) => given([]).when(event)),
    [],
    'open: nothing yet',
  );
});

test("over the customer's decider: the latest session's details are taken, an older one's completing later is not, a deleted customer takes nothing; a replay of the log appends nothing", async (t) => {
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  t.teardown(() => eventStore.close());
  const clock = createManualClock(Date.parse(AT));
  const commands = createCommandHandler({ eventStore, clock });
  const log = logOf();
  log.customerCreated('cus-1');
  log.customerCreated('cus-2');
  log.opened('cs-a', named);
  log.opened('cs-b', named);
  log.opened('cs-gone', { ...named, customerId: 'cus-2' });
  log.completed('cs-b', '2026-01-01T00:02:00.000Z');
  log.completed('cs-a', '2026-01-01T00:01:00.000Z');
  log.customerDeleted('cus-2');
  log.completed('cs-gone', '2026-01-01T00:03:00.000Z');
  for (const event of log.events) {
    const revision = event.revision === 0 ? 'no_stream' : event.revision - 1;
    const recorded = { id: randomUUID(), type: event.type, data: event.data, metadata: event.metadata };
    await eventStore.append(event.streamId, [recorded], revision);
  }
  const replay = () =>
    createWorkflowRunner({
      workflow: customerCheckoutUpdates,
      eventStore,
      readStore: createEmbeddedReadStore({}),
      commands,
      clock,
      log: () => {},
    }).runOnce();
  await replay();
  const taken = async (customerId: string) =>
    (await eventStore.readStream(`customer-${customerId}`))
      .filter((e) => e.type === 'CustomerUpdatedFromCheckout')
      .map((e) => (e.data as { checkoutSessionId: string }).checkoutSessionId);
  t.deepEqual(await taken('cus-1'), ['cs-b'], 'cs-a completed later but is older: not taken');
  t.deepEqual(await taken('cus-2'), [], 'deleted first: nothing taken');
  const logged = (await eventStore.readAll(null, 1000)).length;
  await replay();
  t.is((await eventStore.readAll(null, 1000)).length, logged);
});
