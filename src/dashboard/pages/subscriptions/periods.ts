import { subscriptionAggregate } from '../../../../machines/subscription.aggregate.ts';
import { billsOf, evolveSubscription } from '../../../../machines/subscription.evolve.ts';
import type { Subscription, SubscriptionBill, SubscriptionEvent } from '../../../../machines/subscription.types.ts';
import type { EventStore } from '../../../event-store/event-store.ts';

/**
 * Every period a subscription has billed, oldest first: the read model keeps only the latest bill,
 * so its stream is folded with the subscription's own evolve, keeping each bill as it last stood,
 * an earlier one still owed after a later renewal was issued included (paid or lapsed since).
 */
export async function billedPeriods(eventStore: EventStore, subscriptionId: string): Promise<SubscriptionBill[]> {
  const events = await eventStore.readStream(`${subscriptionAggregate.category}-${subscriptionId}`);
  const bills = new Map<string, SubscriptionBill>();
  let state: Subscription | null = null;
  for (const event of events) {
    state = evolveSubscription(state, { type: event.type, data: event.data } as SubscriptionEvent);
    for (const bill of state ? billsOf(state) : []) bills.set(bill.id, bill);
  }
  return [...bills.values()];
}
