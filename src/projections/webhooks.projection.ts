import { evolveWebhookEndpoint, type WebhookEndpointEvent } from '../actors/webhook-endpoint.ts';
import { deterministicId } from '../shared/ids.ts';
import type { WebhookDeliveryEvent } from '../../machines/webhook-delivery.machine.ts';
import { subscribes } from '../webhooks/webhook-event-types.ts';
import { publicEventKindsOf, publicEventOf, testEventOf, type PublicEventRef } from '../webhooks/webhook-events.ts';
import { COLLECTIONS, type WebhookDeliveryDoc, type WebhookEndpointDoc } from './collections.ts';
import type { Projection } from './projection.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';

export const deliveryIdOf = (eventId: string, endpointId: string) => deterministicId(`webhook-delivery:${eventId}:${endpointId}`);

async function schedule(store: ReadStore, source: RecordedEvent, publicEvent: PublicEventRef, endpoints: WebhookEndpointDoc[]): Promise<void> {
  const deliveries = store.collection<WebhookDeliveryDoc>(COLLECTIONS.webhookDeliveries);
  for (const endpoint of endpoints) {
    if (endpoint.deleted || endpoint.isDisabled || !subscribes(endpoint.enabledEvents.events, publicEvent.type)) continue;
    const id = deliveryIdOf(publicEvent.id, endpoint.id);
    if (await deliveries.get(id)) continue;
    await deliveries.put({
      _id: id, id, organizationId: source.metadata.organizationId, environment: source.metadata.environment,
      endpointId: endpoint.id, eventId: publicEvent.id, eventType: publicEvent.type, eventObject: publicEvent.object,
      source: { streamId: source.streamId, revision: source.revision },
      createdAt: source.metadata.occurredAt, firstDueAt: publicEvent.created,
      status: 'pending', attempts: 0, nextAttemptAt: publicEvent.created, log: [],
    });
  }
}

/**
 * Webhook endpoints, and one delivery document per (public event, subscribed endpoint) with its
 * attempts. A delivery exists because its event is in the log: the log is the outbox.
 */
export const webhooksProjection: Projection = {
  name: 'webhooks',
  collections: [COLLECTIONS.webhookEndpoints, COLLECTIONS.webhookDeliveries],
  async apply(event, store) {
    const endpoints = store.collection<WebhookEndpointDoc>(COLLECTIONS.webhookEndpoints);
    if (event.streamId.startsWith('webhook_endpoint-')) {
      const id = event.streamId.slice('webhook_endpoint-'.length);
      const typed = event as unknown as WebhookEndpointEvent;
      const next = evolveWebhookEndpoint(await endpoints.get(id), typed);
      if (!next) return;
      await endpoints.put({ ...next, _id: id });
      if (typed.type === 'WebhookEndpointTestRequested') {
        // A test goes to this endpoint only, even while it is disabled.
        await schedule(store, event, testEventOf(event as RecordedEvent & { data: { testId?: unknown } }), [{ ...next, _id: id, isDisabled: false }]);
      }
      return;
    }
    if (event.streamId.startsWith('webhook_delivery-')) {
      const deliveries = store.collection<WebhookDeliveryDoc>(COLLECTIONS.webhookDeliveries);
      const doc = await deliveries.get(event.streamId.slice('webhook_delivery-'.length));
      if (!doc) return;
      const typed = event as unknown as WebhookDeliveryEvent;
      switch (typed.type) {
        case 'WebhookDeliveryAttemptFailed': {
          const { nextAttemptAt, ...entry } = typed.data;
          if (doc.log.some((l) => l.attempt === entry.attempt)) return;
          await deliveries.put({ ...doc, attempts: entry.attempt, nextAttemptAt: nextAttemptAt ? Date.parse(nextAttemptAt) : null, log: [...doc.log, entry] });
          return;
        }
        case 'WebhookDeliverySucceeded':
          if (doc.log.some((l) => l.attempt === typed.data.attempt)) return;
          await deliveries.put({ ...doc, status: 'succeeded', attempts: typed.data.attempt, nextAttemptAt: null, log: [...doc.log, typed.data] });
          return;
        case 'WebhookDeliveryFailed':
          await deliveries.put({ ...doc, status: 'failed', nextAttemptAt: null });
          return;
      }
    }
    const kinds = publicEventKindsOf(event);
    if (kinds.length === 0) return;
    const tenantEndpoints = await endpoints.find({ organizationId: event.metadata.organizationId, environment: event.metadata.environment, deleted: false });
    for (const kind of kinds) {
      // Ids are hashed only for events some endpoint will receive.
      const receivers = tenantEndpoints.filter((e) => !e.isDisabled && subscribes(e.enabledEvents.events, kind.type));
      if (receivers.length > 0) await schedule(store, event, publicEventOf(event, kind), receivers);
    }
  },
};
