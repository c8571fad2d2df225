import type { SessionDiscount } from '../../machines/checkout-session.types.ts';
import { decideFirstBillDiscount } from '../../machines/subscription.decide.ts';
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

/**
 * The promotion code the payer applied to the first checkout session of the subscription created by
 * `created` before that creation (earlier in the log), if any: its billing records it right after
 * (`FirstBillDiscounted`, from the first code the session took), so `customer.subscription.created`
 * shows it as `.started` and the API do. Null for any other event, or a code applied after.
 */
export async function discountBeforeCreation(
  readStream: (streamId: string) => Promise<RecordedEvent[]>,
  created: RecordedEvent,
): Promise<SessionDiscount | null> {
  const typed = created as unknown as SubscriptionEvent;
  if (typed.type !== 'SubscriptionCreated') return null;
  const bill = typed.data.subscription.latestInvoice;
  if (bill?.kind !== 'checkout_session' || bill.amountDiscount !== undefined) return null;
  const { organizationId, environment } = created.metadata;
  const applied = (await readStream(`checkout_session-${bill.id}`)).find(
    (e) =>
      e.type === 'DiscountApplied' &&
      e.position < created.position &&
      e.metadata.organizationId === organizationId &&
      e.metadata.environment === environment,
  );
  return applied ? (applied.data as { discount: SessionDiscount }).discount : null;
}

/**
 * The subscription as it was right after the last event of `history` (its stream up to the source
 * event); `firstBillDiscount`: a code applied to its first session before its creation (see
 * `discountBeforeCreation`), taken off the first bill by the subscription's own rule.
 */
export function subscriptionPayloadOf(history: RecordedEvent[], firstBillDiscount: SessionDiscount | null = null) {
  let subscription: Subscription | null = null;
  for (const event of history) subscription = evolveSubscription(subscription, event as unknown as SubscriptionEvent);
  if (!subscription) throw new Error(`${history[0]?.streamId ?? 'subscription stream'} has no subscription`);
  const bill = subscription.latestInvoice;
  if (firstBillDiscount && bill) {
    const { promotionCodeId, amountDiscount } = firstBillDiscount;
    const command = { type: 'RecordFirstBillDiscount', invoiceId: bill.id, promotionCodeId, amountDiscount } as const;
    // At the creation's own time: the payload is the subscription as created, its bill as billed.
    for (const event of decideFirstBillDiscount(subscription, subscription.status, command, subscription.updatedAt))
      subscription = evolveSubscription(subscription, event);
  }
  return publicSubscription(subscription!);
}
