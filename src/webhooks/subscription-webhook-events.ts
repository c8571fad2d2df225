import { evolveSubscription } from '../../machines/subscription.evolve.ts';
import {
  SUBSCRIPTION_WEBHOOK_EVENTS,
  type Subscription,
  type SubscriptionEvent,
  type SubscriptionEventType,
} from '../../machines/subscription.types.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { publicSubscription } from '../projections/subscriptions.projection.ts';

export const SUBSCRIPTION_STREAM_PREFIX = 'subscription-';

/** The public event type (`customer.subscription.*`) of a subscription log event, if it has one. */
export const subscriptionWebhookTypeOf = (event: RecordedEvent): string | null =>
  event.streamId.startsWith(SUBSCRIPTION_STREAM_PREFIX)
    ? (SUBSCRIPTION_WEBHOOK_EVENTS[event.type as SubscriptionEventType] ?? null)
    : null;

/** The subscription as it was right after the last event of `history` (its stream up to the source event). */
export function subscriptionPayloadOf(history: RecordedEvent[]) {
  let subscription: Subscription | null = null;
  for (const event of history) subscription = evolveSubscription(subscription, event as unknown as SubscriptionEvent);
  if (!subscription) throw new Error(`${history[0]?.streamId ?? 'subscription stream'} has no subscription`);
  return publicSubscription(subscription);
}
