import test from 'ava';
import { checkpointMessage, latestCheckpoint } from '../../src/audit/checkpoints.ts';
import { signatureHolds } from '../../src/audit/operator-key.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { eventually } from '../support/api-client.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';
import type { Page } from './helpers.ts';

type Delivered = {
  type: string;
  object: string;
  data: { object: { position: string; hash: string; signedAt: string; publicKey: string; signature: string } };
};
type Delivery = { eventType: string };

const ENDPOINTS = '/api/v1/webhook-endpoints';

async function receiver(t: import('ava').ExecutionContext) {
  const hooks = await startWebhookReceiver();
  t.teardown(() => hooks.close());
  return hooks;
}

test('audit.checkpoint: every organization’s endpoint that names it receives the signed checkpoint, whose signature holds with its public key; a `*` endpoint does not', async (t) => {
  const clock = createManualClock(Date.parse('2026-03-01T00:00:00.000Z'));
  const weir = await startTestWeir(t, { auditCheckpointSeconds: 60 }, { clock });
  const alice = await createMerchant(weir.url, 'Alice');
  const bob = await createMerchant(weir.url, 'Bob');
  const aliceHooks = await receiver(t);
  const bobHooks = await receiver(t);
  const bobAllHooks = await receiver(t);
  const endpoint = async (api: typeof alice.api, url: string, events: string[]) => {
    const created = await api.post<{ id: string }>(ENDPOINTS, { description: 'audit', url, enabledEvents: { events } });
    t.is(created.status, 200, JSON.stringify(created.body));
    return created.body.id;
  };
  await endpoint(alice.api, aliceHooks.url, ['audit.checkpoint']);
  await endpoint(bob.api, bobHooks.url, ['audit.checkpoint', 'invoice.paid']);
  const everything = await endpoint(bob.api, bobAllHooks.url, ['*']);

  const head = await weir.eventStore.headPosition();
  clock.advanceBy(60_000);
  const signed = await eventually(() => latestCheckpoint(weir.eventStore).then((c) => c ?? undefined), 'a checkpoint');
  t.is(signed.position, String(head));

  for (const hooks of [aliceHooks, bobHooks]) {
    const [request] = await hooks.waitFor((all) => all.length > 0);
    const body = JSON.parse(request!.body) as Delivered;
    t.is(body.type, 'audit.checkpoint');
    t.is(body.object, 'auditCheckpoint');
    const checkpoint = body.data.object;
    t.deepEqual(checkpoint, {
      position: signed.position,
      hash: signed.hash,
      signedAt: signed.signedAt,
      publicKey: signed.publicKey,
      signature: signed.signature,
    });
    t.true(signatureHolds(checkpoint.publicKey, checkpointMessage(checkpoint), checkpoint.signature));
    t.false(
      signatureHolds(checkpoint.publicKey, checkpointMessage({ ...checkpoint, position: '1' }), checkpoint.signature),
      'the signature is over the position',
    );
  }

  // The `*` endpoint's deliveries were decided with the others' (one projection step): none is the checkpoint.
  const deliveries = (await bob.api.get<Page<Delivery>>(`${ENDPOINTS}/${everything}/deliveries`)).body;
  t.deepEqual(
    deliveries.data.map((d) => d.eventType),
    [],
  );
  await bob.api.post(`${ENDPOINTS}/${everything}/test`);
  const got = await bobAllHooks.waitFor((all) => all.length > 0);
  t.deepEqual(
    got.map((request) => (JSON.parse(request.body) as Delivered).type),
    ['webhook_endpoint.test'],
  );
});

test('an endpoint may subscribe to audit.checkpoint, and GET /event-types lists it', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const types = await api.get<{ events: string[] }>(`${ENDPOINTS}/event-types`);
  t.true(types.body.events.includes('audit.checkpoint'));
  const created = await api.post<{ enabledEvents: { events: string[] } }>(ENDPOINTS, {
    description: 'audit',
    url: 'https://auditor.example/hooks',
    enabledEvents: { events: ['audit.checkpoint'] },
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  t.deepEqual(created.body.enabledEvents.events, ['audit.checkpoint']);
});
