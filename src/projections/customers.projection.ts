import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import {
  customerChangesFromCheckout,
  evolveCustomer,
  laterCheckout,
  type CheckoutCustomerChanges,
  type Customer,
  type CustomerEvent,
} from '../actors/customer.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import type { ReadDocument, ReadStore } from '../read-store/read-store.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from './collections.ts';
import type { Projection } from './projection.ts';

export type CustomerDoc = ReadDocument & Customer;
export const CUSTOMERS = 'customers';
/** Completed checkout sessions whose details their customer has still to take (see `customer-checkout-updates.ts`), by session id. */
export const CUSTOMER_CHECKOUT_UPDATES = 'customer_checkout_updates';

export type CustomerCheckoutUpdateDoc = ReadDocument & {
  customerId: string;
  organizationId: string;
  environment: string;
  checkoutSessionId: string;
  completedAt: string;
  /** What the customer takes: the session's collected details, for the parts its `customerUpdate` sets to `auto`. */
  changes: CheckoutCustomerChanges;
};

const PREFIX = 'customer-';
const SESSION_PREFIX = 'checkout_session-';

/**
 * A checkout session with a `customerUpdate` completed: its customer has to take what it collected,
 * unless the session collected nothing the update asks for or the customer is gone.
 */
async function sessionCompleted(store: ReadStore, sessionId: string, completedAt: string): Promise<void> {
  const session = await store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(sessionId);
  if (!session?.customerUpdate || !session.customerId) return;
  const changes = customerChangesFromCheckout(session.customerUpdate, session);
  if (Object.keys(changes).length === 0) return;
  const customer = await store.collection<CustomerDoc>(CUSTOMERS).get(session.customerId);
  if (!customer || customer.deleted) return;
  await store.collection<CustomerCheckoutUpdateDoc>(CUSTOMER_CHECKOUT_UPDATES).put({
    _id: sessionId,
    customerId: customer.id,
    organizationId: session.organizationId,
    environment: session.environment,
    checkoutSessionId: sessionId,
    completedAt,
    changes,
  });
}

/**
 * The customer took a session's details, or was deleted: the work that is done (that session and
 * every earlier one, whose details the customer no longer takes) or moot (all of a deleted
 * customer's) leaves the list.
 */
async function customerChanged(store: ReadStore, customerId: string, event: CustomerEvent): Promise<void> {
  if (event.type !== 'CustomerUpdatedFromCheckout' && event.type !== 'CustomerDeleted') return;
  const work = store.collection<CustomerCheckoutUpdateDoc>(CUSTOMER_CHECKOUT_UPDATES);
  for (const doc of await work.find({ customerId })) {
    if (event.type === 'CustomerUpdatedFromCheckout' && laterCheckout(doc, event.data)) continue;
    await work.delete(doc._id);
  }
}

/**
 * Customers, one document per customer (a deleted one is kept, flagged `deleted`), and the work
 * list of the customer checkout updates.
 */
export const customersProjection: Projection = {
  name: 'customers',
  collections: [CUSTOMERS, CUSTOMER_CHECKOUT_UPDATES],
  categories: ['customer', 'checkout_session'],
  async apply(event: RecordedEvent, store) {
    if (event.streamId.startsWith(SESSION_PREFIX)) {
      const typed = event as unknown as CheckoutSessionEvent;
      if (typed.type === 'CheckoutSessionCompleted')
        await sessionCompleted(store, event.streamId.slice(SESSION_PREFIX.length), typed.data.at);
      return;
    }
    if (!event.streamId.startsWith(PREFIX)) return;
    const customers = store.collection<CustomerDoc>(CUSTOMERS);
    const id = event.streamId.slice(PREFIX.length);
    const typed = event as unknown as CustomerEvent;
    const next = evolveCustomer(await customers.get(id), typed);
    if (next) await customers.put({ ...next, _id: id });
    await customerChanged(store, id, typed);
  },
};
