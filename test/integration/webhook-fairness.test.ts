import test from 'ava';
import { DEFAULT_DELIVERY_LIMITS } from '../../src/webhooks/webhook-dispatcher.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';

const ENDPOINTS = '/api/v1/webhook-endpoints';

test("one tenant's endpoints that never answer do not delay another tenant's webhook: it arrives in under a second while they hang", async (t) => {
  const hanging = await startWebhookReceiver(() => 'hang');
  t.teardown(() => hanging.close());
  const prompt = await startWebhookReceiver();
  t.teardown(() => prompt.close());
  const weir = await startTestWeir(t);
  const slowShop = await createMerchant(weir.url, 'Slow Shop');
  const otherShop = await createMerchant(weir.url, 'Other Shop');

  // Sixteen endpoints that accept the connection and never answer, and 80 test events for them.
  const slow: string[] = [];
  for (let i = 0; i < 16; i++) {
    const created = await slowShop.api.post<{ id: string }>(ENDPOINTS, {
      description: `hangs ${i}`,
      url: `${hanging.url}?endpoint=${i}`,
      enabledEvents: { events: ['checkout_session.completed'] },
    });
    slow.push(created.body.id);
  }
  for (let i = 0; i < 80; i++) t.is((await slowShop.api.post(`${ENDPOINTS}/${slow[i % 16]}/test`)).status, 200);
  // The slow tenant holds every slot it may have, each for the whole 10 s timeout.
  await hanging.waitFor((all) => all.length >= DEFAULT_DELIVERY_LIMITS.perTenant);

  const other = await otherShop.api.post<{ id: string }>(ENDPOINTS, {
    description: 'answers at once',
    url: prompt.url,
    enabledEvents: { events: ['checkout_session.completed'] },
  });
  const asked = performance.now();
  t.is((await otherShop.api.post(`${ENDPOINTS}/${other.body.id}/test`)).status, 200);
  await prompt.waitFor((all) => all.length === 1, 5_000);
  const tookMs = performance.now() - asked;
  t.log(`the other tenant's webhook arrived ${Math.round(tookMs)} ms after it was asked for`);
  t.true(tookMs < 1_000, `${Math.round(tookMs)} ms`);
  t.is(
    hanging.received.filter((r) => r.answered !== null).length,
    0,
    'while every request of the slow tenant still hangs',
  );
  t.is(hanging.received.length, DEFAULT_DELIVERY_LIMITS.perTenant, 'the slow tenant uses no more than its share');
});
