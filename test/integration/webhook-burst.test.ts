import test from 'ava';
import { eventually } from '../support/api-client.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';

const ENDPOINTS = '/api/v1/webhook-endpoints';

test('a burst of deliveries: each arrives once, and once the read model shows them the dispatcher keeps nothing of them', async (t) => {
  const hooks = await startWebhookReceiver();
  t.teardown(() => hooks.close());
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const endpoints: string[] = [];
  for (let i = 0; i < 3; i++) {
    const created = await api.post<{ id: string }>(ENDPOINTS, {
      description: `burst ${i}`,
      url: `${hooks.url}?endpoint=${i}`,
      enabledEvents: { events: ['checkout_session.completed'] },
    });
    endpoints.push(created.body.id);
  }
  await Promise.all(Array.from({ length: 120 }, (_, i) => api.post(`${ENDPOINTS}/${endpoints[i % 3]}/test`)));
  const received = await hooks.waitFor((all) => all.length >= 120);
  await weir.projections.waitFor((await weir.eventStore.headPosition())!);
  const status = await eventually(async () => {
    const now = weir.webhooks.status();
    return now.queued === 0 && now.inFlight === 0 && now.awaitingReadModel === 0 ? now : undefined;
  }, 'the dispatcher to hold nothing');
  t.deepEqual(status, { queued: 0, inFlight: 0, awaitingReadModel: 0 });
  t.is(new Set(received.map((r) => r.headers['x-webhook-id'])).size, 120, 'each event once');
  t.is(hooks.received.length, 120);
});
