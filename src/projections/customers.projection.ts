import { evolveCustomer, type Customer, type CustomerEvent } from '../actors/customer.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import type { ReadDocument } from '../read-store/read-store.ts';
import type { Projection } from './projection.ts';

export type CustomerDoc = ReadDocument & Customer;
export const CUSTOMERS = 'customers';
const PREFIX = 'customer-';
/**
 * Customers, one document per customer (a deleted one is kept, flagged `deleted`). What a completed
 * checkout session's `customerUpdate` copies onto its customer is a workflow
 * (`workflows/customer-checkout-updates.ts`).
 */
export const customersProjection: Projection = {
  name: 'customers',
  // 2: the sessions' details to take are the customer checkout updates workflow's (no work list).
  // 3: customers keep the tax ids they were given (`taxIds`).
  version: 3,
  collections: [CUSTOMERS],
  categories: ['customer'],
  async apply(event: RecordedEvent, store) {
    if (!event.streamId.startsWith(PREFIX)) return;
    const customers = store.collection<CustomerDoc>(CUSTOMERS);
    const id = event.streamId.slice(PREFIX.length);
    const next = evolveCustomer(await customers.get(id), event as unknown as CustomerEvent);
    if (next) await customers.put({ ...next, _id: id });
  },
};
