import { evolveCustomer, type Customer, type CustomerEvent } from '../actors/customer.ts';
import type { ReadDocument } from '../read-store/read-store.ts';
import type { Projection } from './projection.ts';

export type CustomerDoc = ReadDocument & Customer;
export const CUSTOMERS = 'customers';

const PREFIX = 'customer-';

/** Customers, one document per customer (a deleted one is kept, flagged `deleted`). */
export const customersProjection: Projection = {
  name: 'customers',
  collections: [CUSTOMERS],
  categories: ['customer'],
  async apply(event, store) {
    if (!event.streamId.startsWith(PREFIX)) return;
    const customers = store.collection<CustomerDoc>(CUSTOMERS);
    const id = event.streamId.slice(PREFIX.length);
    const next = evolveCustomer(await customers.get(id), event as unknown as CustomerEvent);
    if (next) await customers.put({ ...next, _id: id });
  },
};
