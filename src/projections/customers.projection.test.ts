import test from 'ava';
import { sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSession, CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import type { CustomerEvent } from '../actors/customer.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { checkoutSessionsProjection } from './checkout-sessions.projection.ts';
import {
  CUSTOMER_CHECKOUT_UPDATES,
  customersProjection,
  type CustomerCheckoutUpdateDoc,
} from './customers.projection.ts';
import { createTestLog } from './test-log.ts';

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

/** The read models involved, in the order ALL_PROJECTIONS applies them to each event; the work list left. */
async function workAfter(events: RecordedEvent[]) {
  const store = createEmbeddedReadStore({});
  for (const event of events)
    for (const projection of [customersProjection, checkoutSessionsProjection]) await projection.apply(event, store);
  return (
    await store.collection<CustomerCheckoutUpdateDoc>(CUSTOMER_CHECKOUT_UPDATES).find({}, { sort: { _id: 1 } })
  ).map(({ _id, customerId, completedAt, changes }) => ({ _id, customerId, completedAt, changes }));
}

const named = {
  customerId: 'cus-1',
  customerUpdate: { address: 'auto', name: 'auto', shipping: 'never' },
  customerDetails: { name: 'Pat Payer', email: null, phone: null, address: HOME },
} as const;

test("a completed session with customerUpdate puts its customer's changes on the work list, until the customer takes them", async (t) => {
  const log = logOf();
  log.customerCreated('cus-1');
  log.opened('cs-1', named);
  log.completed('cs-1', '2026-01-01T00:10:00.000Z');
  t.deepEqual(await workAfter(log.events), [
    {
      _id: 'cs-1',
      customerId: 'cus-1',
      completedAt: '2026-01-01T00:10:00.000Z',
      changes: { name: 'Pat Payer', address: HOME },
    },
  ]);
  log.took('cus-1', 'cs-1', '2026-01-01T00:10:00.000Z');
  t.deepEqual(await workAfter(log.events), []);
});

test("no work for a session without customerUpdate, one that collected nothing it asks for, an open one, or a deleted customer's", async (t) => {
  const log = logOf();
  log.customerCreated('cus-1');
  log.customerCreated('cus-2');
  log.opened('cs-plain', { customerId: 'cus-1', customerDetails: named.customerDetails });
  log.completed('cs-plain', AT);
  log.opened('cs-nothing', {
    customerId: 'cus-1',
    customerUpdate: { address: 'auto', name: 'auto', shipping: 'auto' },
  });
  log.completed('cs-nothing', AT);
  log.opened('cs-shipping', { ...named, customerUpdate: { address: 'never', name: 'never', shipping: 'auto' } });
  log.completed('cs-shipping', AT);
  log.opened('cs-open', named);
  log.customerDeleted('cus-2');
  log.opened('cs-gone', { ...named, customerId: 'cus-2' });
  log.completed('cs-gone', AT);
  t.deepEqual(await workAfter(log.events), []);
});

test("taking a session's details also ends the work of the earlier sessions; deleting the customer ends all of it", async (t) => {
  const log = logOf();
  log.customerCreated('cus-1');
  for (const [id, at] of [
    ['cs-a', '2026-01-01T00:01:00.000Z'],
    ['cs-b', '2026-01-01T00:02:00.000Z'],
    ['cs-c', '2026-01-01T00:03:00.000Z'],
  ] as const) {
    log.opened(id, named);
    log.completed(id, at);
  }
  log.took('cus-1', 'cs-b', '2026-01-01T00:02:00.000Z');
  t.deepEqual(
    (await workAfter(log.events)).map((w) => w._id),
    ['cs-c'],
  );
  log.customerDeleted('cus-1');
  t.deepEqual(await workAfter(log.events), []);
});
