import test, { type ExecutionContext } from 'ava';
import { COLLECTIONS, type WebhookDeliveryDoc } from '../../src/projections/collections.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import type { WeirOverrides } from '../../src/app/start-weir.ts';
import { attemptDueAt } from '../../src/webhooks/retry-schedule.ts';
import { eventually } from '../support/api-client.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';

const ENDPOINTS = '/api/v1/webhook-endpoints';
type Delivery = { id: string; status: string; attempts: number; canceled: { reason: string } | null };

/** The delivery as the read model keeps it (its endpoint's delivery log answers 404 once the endpoint is gone). */
const deliveryOf = async (weir: Awaited<ReturnType<typeof startTestWeir>>, id: string) =>
  weir.readStore.collection<WebhookDeliveryDoc>(COLLECTIONS.webhookDeliveries).get(id);

/**
 * A receiver answering `receiver.answer` (503 until changed), a Weir, and an endpoint there taking
 * every event; `addWallet` makes a real event (a withdrawal address added).
 */
async function failingEndpoint(t: ExecutionContext, overrides: WeirOverrides = {}) {
  const receiver = { answer: 503 };
  const hooks = await startWebhookReceiver(() => receiver.answer);
  t.teardown(() => hooks.close());
  const weir = await startTestWeir(t, {}, overrides);
  const { api } = await createMerchant(weir.url);
  const endpoint = (
    await api.post<{ id: string }>(ENDPOINTS, {
      description: 'paused',
      url: hooks.url,
      enabledEvents: { events: ['*'] },
    })
  ).body;
  const addWallet = () =>
    api.post('/api/v1/organization/withdrawal-addresses', {
      chainId: 7357,
      address: '0x1111111111111111111111111111111111111111',
      name: 'second',
    });
  return { receiver, hooks, weir, api, endpoint, addWallet };
}

test('deleting an endpoint while a delivery waits for its retry ends the delivery, recorded in the log and the delivery log, and Weir keeps answering, also after a restart', async (t) => {
  const clock = createManualClock(Date.parse('2026-05-01T10:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url);
  // Nothing listens on port 1: the first attempt fails and the next is due 30 s later.
  const endpoint = (
    await api.post<{ id: string }>(ENDPOINTS, {
      description: 'gone soon',
      url: 'http://127.0.0.1:1/x',
      enabledEvents: { events: ['checkout_session.completed'] },
    })
  ).body;
  const testedAt = clock.now();
  t.is((await api.post(`${ENDPOINTS}/${endpoint.id}/test`)).status, 200);
  const [failed] = await eventually(async () => {
    const page = (await api.get<{ data: Delivery[] }>(`${ENDPOINTS}/${endpoint.id}/deliveries`)).body.data;
    return page[0]?.attempts === 1 ? page : undefined;
  }, 'the first attempt to fail');
  t.is(failed!.status, 'pending');

  t.is((await api.delete(`${ENDPOINTS}/${endpoint.id}`)).status, 200);
  clock.set(attemptDueAt(testedAt, 2));
  const canceled = await eventually(async () => {
    const doc = await deliveryOf(weir, failed!.id);
    return doc?.status === 'canceled' ? doc : undefined;
  }, 'the delivery to be canceled');
  t.deepEqual(canceled.canceled?.reason, 'endpoint_deleted');
  t.is(canceled.nextAttemptAt, null);
  t.is(canceled.attempts, 1, 'no request was made for the deleted endpoint');
  const stream = await weir.eventStore.readStream(`webhook_delivery-${failed!.id}`);
  t.deepEqual(
    stream.map((e) => [e.type, (e.data as { reason?: string }).reason ?? null]),
    [
      ['WebhookDeliveryAttemptFailed', null],
      ['WebhookDeliveryCanceled', 'endpoint_deleted'],
    ],
  );

  // The server answers every tenant, at once.
  const health = await fetch(`${weir.url}/health`, { signal: AbortSignal.timeout(5_000) });
  t.is(health.status, 200);
  t.is((await api.get(ENDPOINTS)).status, 200);
  clock.advanceBy(24 * 3600_000);
  t.is((await fetch(`${weir.url}/health`, { signal: AbortSignal.timeout(5_000) })).status, 200);

  // Restarted on the same data dir, it starts and listens; the ended delivery stays ended.
  await weir.stop();
  const again = await startTestWeir(t, { dataDir: weir.dataDir }, { clock });
  t.is((await fetch(`${again.url}/health`, { signal: AbortSignal.timeout(5_000) })).status, 200);
  t.is((await deliveryOf(again, failed!.id))?.status, 'canceled');
});

test('disabling an endpoint ends its pending deliveries at once (endpoint_disabled); a test event still goes, at its own retry time', async (t) => {
  const clock = createManualClock(Date.parse('2026-05-01T10:00:00Z'));
  const { receiver, hooks, weir, api, endpoint, addWallet } = await failingEndpoint(t, { clock });
  const failedOnce = (status: string) =>
    eventually(async () => {
      const page = (
        await api.get<{ data: (Delivery & { eventType: string })[] }>(
          `${ENDPOINTS}/${endpoint.id}/deliveries?status=${status}`,
        )
      ).body.data;
      return page.length === 2 && page.every((d) => d.attempts === 1) ? page : undefined;
    }, 'both first attempts to fail');
  // A test event and a real one (a wallet added), each failed once and waiting 30 s for its retry.
  await api.post(`${ENDPOINTS}/${endpoint.id}/test`);
  await addWallet();
  const waiting = await failedOnce('pending');
  const real = waiting.find((d) => d.eventType !== 'webhook_endpoint.test')!;
  const testEvent = waiting.find((d) => d.eventType === 'webhook_endpoint.test')!;

  await api.put(`${ENDPOINTS}/${endpoint.id}`, { isDisabled: true });
  const ended = await eventually(async () => {
    const doc = await deliveryOf(weir, real.id);
    return doc?.status === 'canceled' ? doc : undefined;
  }, "the real event's delivery to end");
  t.is(ended.canceled?.reason, 'endpoint_disabled');
  t.is(ended.attempts, 1, 'no request was made for it');
  await eventually(async () => (weir.webhooks.status().inFlight === 0 ? true : undefined), 'nothing in flight');
  t.is(hooks.received.length, 2, 'the test event was not sent again before its retry time');
  t.like(await deliveryOf(weir, testEvent.id), { status: 'pending', attempts: 1 });

  // At its retry time it goes, though the endpoint is disabled: that is what a test is for.
  receiver.answer = 200;
  clock.set(clock.now() + 30_000);
  await hooks.waitFor((all) => all.length === 3);
  await eventually(
    async () => ((await deliveryOf(weir, testEvent.id))?.status === 'succeeded' ? true : undefined),
    'the retried test delivery to succeed',
  );
});

test('a canceled delivery resent once its endpoint is enabled again, and delivered, shows delivered in the delivery log, its cancel and every attempt kept', async (t) => {
  const { receiver, hooks, weir, api, endpoint, addWallet } = await failingEndpoint(t);
  type Logged = Delivery & {
    eventType: string;
    attemptLog: { attempt: number; statusCode: number | null }[];
    resends: { attempt: number }[];
    canceled: { reason: string; at: string } | null;
  };
  const log = (query = '') =>
    api.get<{ data: Logged[] }>(`${ENDPOINTS}/${endpoint.id}/deliveries${query}`).then((r) => r.body.data);
  await addWallet();
  const [failed] = await eventually(async () => {
    const page = await log();
    return page.length === 1 && page[0]!.attempts === 1 ? page : undefined;
  }, 'the first attempt to fail');

  await api.put(`${ENDPOINTS}/${endpoint.id}`, { isDisabled: true });
  const canceled = await eventually(async () => {
    const [d] = await log('?status=canceled');
    return d;
  }, 'the delivery to be canceled');
  t.is(canceled.canceled?.reason, 'endpoint_disabled');

  await api.put(`${ENDPOINTS}/${endpoint.id}`, { isDisabled: false });
  receiver.answer = 200;
  const resent = await api.post<Logged>(`${ENDPOINTS}/${endpoint.id}/deliveries/${failed!.id}/resend`);
  t.is(resent.status, 200);
  t.is(resent.body.status, 'pending', 'one more attempt is due');
  await hooks.waitFor((all) => all.length === 2);
  const delivered = await eventually(async () => {
    const [d] = await log('?status=succeeded');
    return d;
  }, 'the resent delivery to show delivered');
  t.is(delivered.id, failed!.id);
  t.deepEqual(
    delivered.attemptLog.map((a) => [a.attempt, a.statusCode]),
    [
      [1, 503],
      [2, 200],
    ],
  );
  t.deepEqual(
    delivered.resends.map((r) => r.attempt),
    [2],
  );
  t.deepEqual(delivered.canceled, canceled.canceled, 'the cancel is kept as history');
  t.deepEqual(await log('?status=canceled'), [], 'no longer listed as canceled');
  const stream = await weir.eventStore.readStream(`webhook_delivery-${failed!.id}`);
  t.deepEqual(
    stream.map((e) => e.type),
    ['WebhookDeliveryAttemptFailed', 'WebhookDeliveryCanceled', 'WebhookDeliveryResent', 'WebhookDeliverySucceeded'],
  );
});
