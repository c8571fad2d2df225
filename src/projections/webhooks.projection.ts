import { evolveWebhookEndpoint, type WebhookEndpointEvent } from '../actors/webhook-endpoint.ts';
import { deterministicId } from '../shared/ids.ts';
import type { WebhookDeliveryEvent } from '../../machines/webhook-delivery.machine.ts';
import { CHECKPOINT_STREAM } from '../audit/checkpoints.ts';
import { AUDIT_CHECKPOINT_EVENT_TYPE, deliveredAs, subscribes } from '../webhooks/webhook-event-types.ts';
import { publicEventKindsOf, publicEventOf, testEventOf, type PublicEventRef } from '../webhooks/webhook-events.ts';
import { COLLECTIONS, type WebhookDeliveryDoc, type WebhookEndpointDoc } from './collections.ts';
import type { Projection } from './projection.ts';
import type { Collection, ReadStore } from '../read-store/read-store.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';

export const deliveryIdOf = (eventId: string, endpointId: string) =>
  deterministicId(`webhook-delivery:${eventId}:${endpointId}`);

type Endpoints = Collection<WebhookEndpointDoc>;

/**
 * Each tenant's endpoints (not deleted), remembered per endpoints collection from one public event
 * to the next: otherwise a query per public event, the costliest step of a replay. This projection
 * is the only writer of endpoints, so its own write forgets them all; and an entry is used only
 * while each endpoint in it is still the very document stored (a dropped and rebuilt store holds
 * other objects). Only for stores that keep documents by identity (the embedded one): a durable
 * store builds a new object per read, so it is simply asked each time.
 */
const endpointsByTenant = new WeakMap<Endpoints, Map<string, WebhookEndpointDoc[]>>();

async function tenantEndpoints(
  store: ReadStore,
  endpoints: Endpoints,
  organizationId: string,
  environment: string,
): Promise<WebhookEndpointDoc[]> {
  const filter = { organizationId, environment, deleted: false };
  if (store.durable) return endpoints.find(filter);
  let cache = endpointsByTenant.get(endpoints);
  if (!cache) {
    cache = new Map();
    endpointsByTenant.set(endpoints, cache);
  }
  const key = `${environment}:${organizationId}`;
  const cached = cache.get(key);
  if (cached && (await stillStored(endpoints, cached))) return cached;
  const found = await endpoints.find(filter);
  cache.set(key, found);
  return found;
}

async function stillStored(endpoints: Endpoints, docs: WebhookEndpointDoc[]): Promise<boolean> {
  for (const doc of docs) if ((await endpoints.get(doc._id)) !== doc) return false;
  return true;
}

async function putEndpoint(endpoints: Endpoints, doc: WebhookEndpointDoc): Promise<void> {
  endpointsByTenant.get(endpoints)?.clear();
  await endpoints.put(doc);
}

async function schedule(
  store: ReadStore,
  source: RecordedEvent,
  publicEvent: PublicEventRef,
  endpoints: WebhookEndpointDoc[],
): Promise<void> {
  const deliveries = store.collection<WebhookDeliveryDoc>(COLLECTIONS.webhookDeliveries);
  for (const endpoint of endpoints) {
    // The name it subscribed by: one event, one delivery, under either of a kind's two names.
    const eventType = deliveredAs(endpoint.enabledEvents.events, publicEvent.type);
    if (endpoint.deleted || endpoint.isDisabled || eventType === null) continue;
    // Changed after this event (a retried batch meets it so): what it was then decided, and that
    // delivery, if any, was scheduled before the change.
    if (endpoint._position !== undefined && BigInt(endpoint._position) > source.position) continue;
    const id = deliveryIdOf(publicEvent.id, endpoint.id);
    if (await deliveries.get(id)) continue;
    await deliveries.put({
      _id: id,
      id,
      // The endpoint's tenant: a checkpoint (no tenant's) goes to several.
      organizationId: endpoint.organizationId,
      environment: endpoint.environment,
      endpointId: endpoint.id,
      eventId: publicEvent.id,
      eventType,
      eventObject: publicEvent.object,
      source: { streamId: source.streamId, revision: source.revision },
      createdAt: source.metadata.occurredAt,
      firstDueAt: publicEvent.created,
      status: 'pending',
      attempts: 0,
      nextAttemptAt: publicEvent.created,
      log: [],
    });
  }
}

/**
 * Webhook endpoints, and one delivery document per (public event, subscribed endpoint) with its
 * attempts. A delivery exists because its event is in the log: the log is the outbox.
 */
export const webhooksProjection: Projection = {
  name: 'webhooks',
  // 2: endpoints hold the `_position` of their last change, deliveries the `_revision` of theirs.
  version: 2,
  collections: [COLLECTIONS.webhookEndpoints, COLLECTIONS.webhookDeliveries],
  async apply(event, store) {
    const endpoints = store.collection<WebhookEndpointDoc>(COLLECTIONS.webhookEndpoints);
    if (event.streamId.startsWith('webhook_endpoint-')) {
      const id = event.streamId.slice('webhook_endpoint-'.length);
      const typed = event as unknown as WebhookEndpointEvent;
      const stored = await endpoints.get(id);
      // Already folded in (a retried batch): applied again, it would bring back what later events changed.
      if (stored?._position !== undefined && BigInt(stored._position) >= event.position) return;
      const next = evolveWebhookEndpoint(stored, typed);
      if (!next) return;
      const doc = { ...next, _id: id, _position: event.position.toString() };
      // A test goes to this endpoint only, even while it is disabled; scheduled before the endpoint
      // is written, whose position then says it was.
      if (typed.type === 'WebhookEndpointTestRequested')
        await schedule(store, event, testEventOf(event as RecordedEvent & { data: { testId?: unknown } }), [
          { ...doc, isDisabled: false },
        ]);
      await putEndpoint(endpoints, doc);
      return;
    }
    if (event.streamId.startsWith('webhook_delivery-')) {
      const deliveries = store.collection<WebhookDeliveryDoc>(COLLECTIONS.webhookDeliveries);
      const doc = await deliveries.get(event.streamId.slice('webhook_delivery-'.length));
      // Already folded in (a retried batch): a failure or cancel applied again would undo a later resend's outcome.
      if (!doc || (doc._revision !== undefined && doc._revision >= event.revision)) return;
      const typed = event as unknown as WebhookDeliveryEvent;
      const update = (changes: Partial<WebhookDeliveryDoc>) =>
        deliveries.put({ ...doc, ...changes, _revision: event.revision });
      switch (typed.type) {
        case 'WebhookDeliveryAttemptFailed': {
          const { nextAttemptAt, ...entry } = typed.data;
          if (doc.log.some((l) => l.attempt === entry.attempt)) return;
          await update({
            attempts: entry.attempt,
            nextAttemptAt: nextAttemptAt ? Date.parse(nextAttemptAt) : null,
            log: [...doc.log, entry],
          });
          return;
        }
        case 'WebhookDeliverySucceeded':
          if (doc.log.some((l) => l.attempt === typed.data.attempt)) return;
          await update({
            status: 'succeeded',
            attempts: typed.data.attempt,
            nextAttemptAt: null,
            log: [...doc.log, typed.data],
          });
          return;
        case 'WebhookDeliveryFailed':
          await update({ status: 'failed', nextAttemptAt: null });
          return;
        case 'WebhookDeliveryResent':
          // Each resend makes the next attempt due: one listed already is this event repeated after a crash.
          if (doc.resends?.some((r) => r.attempt === typed.data.attempts + 1)) return;
          await update({
            status: 'pending',
            nextAttemptAt: Date.parse(typed.data.at),
            resends: [
              ...(doc.resends ?? []),
              { at: typed.data.at, by: typed.data.by, attempt: typed.data.attempts + 1 },
            ],
          });
          return;
        case 'WebhookDeliveryCanceled':
          await update({
            status: 'canceled',
            nextAttemptAt: null,
            canceled: { at: typed.data.at, reason: typed.data.reason },
          });
          return;
      }
    }
    const kinds = publicEventKindsOf(event);
    if (kinds.length === 0) return;
    // A checkpoint is no tenant's: every endpoint that names it, whatever its organization.
    const candidates =
      event.streamId === CHECKPOINT_STREAM
        ? await endpoints.find({ deleted: false, 'enabledEvents.events': AUDIT_CHECKPOINT_EVENT_TYPE })
        : await tenantEndpoints(store, endpoints, event.metadata.organizationId, event.metadata.environment);
    for (const kind of kinds) {
      // Ids are hashed only for events some endpoint will receive.
      const receivers = candidates.filter((e) => !e.isDisabled && subscribes(e.enabledEvents.events, kind.type));
      if (receivers.length > 0) await schedule(store, event, publicEventOf(event, kind), receivers);
    }
  },
};
