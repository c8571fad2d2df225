import test from 'ava';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { COLLECTIONS, type WebhookDeliveryDoc } from './collections.ts';
import { createTestLog } from './test-log.ts';
import { webhooksProjection } from './webhooks.projection.ts';

const AT = '2026-01-01T00:00:00.000Z';

test('a batch applied again after a crash lists each hand resend of a delivery once', async (t) => {
  const store = createEmbeddedReadStore();
  const deliveries = store.collection<WebhookDeliveryDoc>(COLLECTIONS.webhookDeliveries);
  await deliveries.put({
    _id: 'd-1',
    id: 'd-1',
    organizationId: 'org-1',
    environment: 'test',
    endpointId: 'we-1',
    eventId: 'evt-1',
    eventType: 'checkout_session.completed',
    eventObject: 'checkout_session',
    source: { streamId: 'checkout_session-cs-1', revision: 3 },
    createdAt: AT,
    firstDueAt: Date.parse(AT),
    status: 'failed',
    attempts: 1,
    nextAttemptAt: null,
    log: [],
  });
  const { events, append } = createTestLog(AT);
  append('webhook_delivery-d-1', { type: 'WebhookDeliveryResent', data: { attempts: 1, at: AT, by: 'user:u-1' } });
  for (const event of events) await webhooksProjection.apply(event, store);
  // The runner repeats from a checkpoint older than the documents.
  for (const event of events) await webhooksProjection.apply(event, store);

  const doc = await deliveries.get('d-1');
  t.deepEqual(doc?.resends, [{ at: AT, by: 'user:u-1', attempt: 2 }]);
  t.is(doc?.status, 'pending');
});
