import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { createNatsJetStreamBus } from '../../src/bus/nats-jetstream-bus.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { startNatsServer } from '../support/nats-server.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { createMerchant, sessionRequest } from '../support/weir-harness.ts';
import { spawnWeir } from '../support/weir-process.ts';

test('killed between the payment and the webhook: after restart each event is delivered once and the session is complete', async (t) => {
  const nats = await startNatsServer();
  t.teardown(() => nats.stop());
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-restart-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  let phase: 'before-kill' | 'after-restart' = 'before-kill';
  // Before the kill the receiver never answers, so the process dies with deliveries in flight.
  const receiver = await startWebhookReceiver(() => (phase === 'before-kill' ? 'hang' : 200));
  t.teardown(() => receiver.close());

  const env = { NATS_URL: nats.url };
  const first = await spawnWeir({ dataDir, env, testRail: true });
  t.teardown(() => first.kill());
  const merchant = await createMerchant(first.url);
  await merchant.api.post('/api/v1/webhook-endpoints', {
    description: 'orders',
    url: receiver.url,
    enabledEvents: { events: ['checkout_session.completed', 'payment_intent.succeeded'] },
  });
  const session = (
    await merchant.api.post<{ id: string; addresses: { paymentAddress: string }[] }>(
      '/api/v1/checkout/sessions',
      sessionRequest(),
    )
  ).body;

  const publisher = await createNatsJetStreamBus({ servers: nats.url });
  t.teardown(() => publisher.close());
  const chain = chainPublisher(publisher);
  const block = randomHash();
  await chain.transfer({
    to: session.addresses[0]!.paymentAddress,
    amount: '3000000',
    blockNumber: 42,
    blockHash: block,
  });
  await chain.final(42, block);

  await receiver.waitFor((all) => all.length >= 1);
  await first.kill('SIGKILL');
  t.true(
    receiver.received.every((r) => r.answered === null),
    'nothing was acknowledged before the kill',
  );

  phase = 'after-restart';
  const second = await spawnWeir({ dataDir, env, testRail: true });
  t.teardown(() => second.kill());
  const api = apiClient(second.url, merchant.testSecretKey);
  const done = await eventually(async () => {
    const s = (await api.get<{ status: string; paymentStatus: string }>(`/api/v1/checkout/sessions/${session.id}`))
      .body;
    return s.status === 'complete' ? s : undefined;
  }, 'the session to be complete after restart');
  t.is(done.paymentStatus, 'paid');

  const acknowledged = (all: typeof receiver.received) => all.filter((r) => r.answered === 200);
  await receiver.waitFor((all) => acknowledged(all).length >= 2);
  // Give a duplicate the chance to show up before counting.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const acked = acknowledged(receiver.received).map((r) => JSON.parse(r.body) as { id: string; type: string });
  t.deepEqual(acked.map((e) => e.type).sort(), ['checkout_session.completed', 'payment_intent.succeeded']);
  t.is(new Set(acked.map((e) => e.id)).size, 2, 'each event acknowledged exactly once');
  const allIds = new Set(receiver.received.map((r) => (JSON.parse(r.body) as { id: string }).id));
  t.is(allIds.size, 2, 'the attempts before the kill carried the same event ids as after the restart');

  // The payment was recorded exactly once across the kill.
  const events = (
    await api.get<{ data: { paymentIntent: { transactions: unknown[] } }[] }>(
      `/api/v1/checkout/sessions?ids=${session.id}`,
    )
  ).body.data[0]!;
  t.is(events.paymentIntent.transactions.length, 1);
});
