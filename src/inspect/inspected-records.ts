import type { AnyStateMachine } from 'xstate';
import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import { couponAggregate } from '../../machines/coupon.aggregate.ts';
import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import { paymentLinkAggregate } from '../../machines/payment-link.aggregate.ts';
import { subscriptionAggregate } from '../../machines/subscription.aggregate.ts';
import { webhookDeliveryAggregate } from '../../machines/webhook-delivery.aggregate.ts';
import { type Aggregate, type DomainEvent, streamIdOf } from '../actors/aggregate.ts';
import type { EventStore } from '../event-store/event-store.ts';

type MachineAggregate = Aggregate<unknown, DomainEvent, unknown> & { machine: AnyStateMachine };

/** Every record kind a statechart models. */
const MACHINE_AGGREGATES = [
  checkoutSessionAggregate,
  invoiceAggregate,
  subscriptionAggregate,
  paymentLinkAggregate,
  couponAggregate,
  webhookDeliveryAggregate,
] as unknown as MachineAggregate[];

/**
 * The stream of the record `id` names, whichever kind it is, with whose it is and each event's actor;
 * null when there is none.
 */
export async function findMachineRecord(eventStore: EventStore, id: string) {
  for (const aggregate of MACHINE_AGGREGATES) {
    const streamId = streamIdOf(aggregate.category, id);
    const events = await eventStore.readStream(streamId);
    if (events.length === 0) continue;
    const { organizationId, environment } = events[0]!.metadata;
    return {
      aggregate,
      id,
      streamId,
      owner: { organizationId: String(organizationId), environment: String(environment) },
      events: events.map((e) => ({ type: e.type, data: e.data, actor: String(e.metadata.actor ?? 'unknown') })),
    };
  }
  return null;
}
