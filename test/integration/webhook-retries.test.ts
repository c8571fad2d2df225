import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { createManualClock } from '../../src/shared/clock.ts';
import { attemptDueAt } from '../../src/webhooks/retry-schedule.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';

type Delivery = {
  status: string;
  attempts: number;
  eventId: string;
  nextAttemptAt: string | null;
  attemptLog: { attempt: number; statusCode: number | null; at: string }[];
};

async function paidSession(
  weir: Awaited<ReturnType<typeof startTestWeir>>,
  api: Awaited<ReturnType<typeof createMerchant>>['api'],
) {
  const session = (
    await api.post<{ id: string; addresses: { paymentAddress: string }[] }>(
      '/api/v1/checkout/sessions',
      sessionRequest(),
    )
  ).body;
  const chain = chainPublisher(weir.bus);
  const block = randomHash();
  await chain.transfer({
    to: session.addresses[0]!.paymentAddress,
    amount: '3000000',
    blockNumber: 7,
    blockHash: block,
  });
  await chain.final(7, block);
  return session;
}

test('a receiver that keeps failing gets 10 attempts on the 30 s doubling schedule, then the delivery is failed', async (t) => {
  const receiver = await startWebhookReceiver(() => 500);
  t.teardown(() => receiver.close());
  const clock = createManualClock(Date.parse('2026-03-01T12:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url);
  const endpoint = (
    await api.post<{ id: string }>('/api/v1/webhook-endpoints', {
      description: 'd',
      url: receiver.url,
      enabledEvents: { events: ['checkout_session.completed'] },
    })
  ).body;
  await paidSession(weir, api);

  const deliveriesPath = `/api/v1/webhook-endpoints/${endpoint.id}/deliveries`;
  const first = clock.now();
  for (let attempt = 1; attempt <= 10; attempt++) {
    clock.set(attemptDueAt(first, attempt));
    const delivery = await eventually(async () => {
      const d = (await api.get<{ data: Delivery[] }>(deliveriesPath)).body.data[0];
      return d && d.attempts === attempt ? d : undefined;
    }, `attempt ${attempt}`);
    t.is(receiver.received.length, attempt, 'exactly one request per attempt');
    if (attempt < 10) {
      t.is(delivery.status, 'pending');
      t.is(delivery.nextAttemptAt, new Date(attemptDueAt(first, attempt + 1)).toISOString());
      // Just before the next attempt is due, nothing is sent.
      clock.set(attemptDueAt(first, attempt + 1) - 1);
      await new Promise((resolve) => setTimeout(resolve, 30));
      t.is(receiver.received.length, attempt);
    } else {
      const failed = await eventually(async () => {
        const d = (await api.get<{ data: Delivery[] }>(deliveriesPath)).body.data[0];
        return d?.status === 'failed' ? d : undefined;
      }, 'the delivery to be marked failed');
      t.is(failed.nextAttemptAt, null);
      t.is(failed.attemptLog.length, 10);
      t.is(
        Date.parse(failed.attemptLog[9]!.at) - Date.parse(failed.attemptLog[0]!.at),
        (4 * 3600 + 15 * 60 + 30) * 1000,
      );
    }
  }
  const ids = new Set(receiver.received.map((r) => (JSON.parse(r.body) as { id: string }).id));
  t.is(ids.size, 1, 'every attempt carries the same event id');
  clock.advanceBy(24 * 3600 * 1000);
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.is(receiver.received.length, 10);
});

test('a receiver that recovers is done at its first 2xx; a timeout counts as a failure', async (t) => {
  let calls = 0;
  const receiver = await startWebhookReceiver(() => (++calls === 1 ? 'hang' : calls === 2 ? 404 : 200));
  t.teardown(() => receiver.close());
  const clock = createManualClock(Date.parse('2026-03-01T12:00:00Z'));
  const { createHttpWebhookSender } = await import('../../src/webhooks/webhook-sender.ts');
  const weir = await startTestWeir(t, {}, { clock, webhookSender: createHttpWebhookSender({ timeoutMs: 1500 }) });
  const { api } = await createMerchant(weir.url);
  const endpoint = (
    await api.post<{ id: string }>('/api/v1/webhook-endpoints', {
      description: 'd',
      url: receiver.url,
      enabledEvents: { events: ['checkout_session.completed'] },
    })
  ).body;
  await paidSession(weir, api);
  const first = clock.now();
  const path = `/api/v1/webhook-endpoints/${endpoint.id}/deliveries`;
  const byAttempts = (n: number) =>
    eventually(async () => {
      const d = (await api.get<{ data: Delivery[] }>(path)).body.data[0];
      return d && d.attempts === n ? d : undefined;
    }, `${n} attempts`).catch(async (error: unknown) => {
      t.log(
        JSON.stringify((await api.get<{ data: Delivery[] }>(path)).body),
        receiver.received.map((r) => [r.at, r.answered]),
      );
      throw error;
    });
  const one = await byAttempts(1);
  t.is(one.attemptLog[0]!.statusCode, null, 'no answer within the timeout is a failure');
  clock.set(attemptDueAt(first, 2));
  const two = await byAttempts(2);
  t.is(two.attemptLog[1]!.statusCode, 404);
  clock.set(attemptDueAt(first, 3));
  const three = await byAttempts(3);
  t.is(three.status, 'succeeded');
});

test('a graceful stop lets a request in flight finish and records it: the next start does not send it again', async (t) => {
  let answer: (() => void) | null = null;
  const received: string[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push(Buffer.concat(chunks).toString('utf8'));
      // Held until the test lets it go, while Weir is stopping.
      answer = () => res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.teardown(() => receiver.close());
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-graceful-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));

  const first = await startTestWeir(t, { dataDir });
  const { api, testSecretKey } = await createMerchant(first.url);
  const endpoint = (
    await api.post<{ id: string }>('/api/v1/webhook-endpoints', {
      description: 'd',
      url,
      enabledEvents: { events: ['checkout_session.completed'] },
    })
  ).body;
  await paidSession(first, api);
  const reached = await eventually(async () => answer ?? undefined, 'the request to reach the receiver');
  const stopped = first.stop();
  setImmediate(reached);
  await stopped;

  const second = await startTestWeir(t, { dataDir });
  const again = apiClient(second.url, testSecretKey);
  const delivery = await eventually(async () => {
    const d = (await again.get<{ data: Delivery[] }>(`/api/v1/webhook-endpoints/${endpoint.id}/deliveries`)).body
      .data[0];
    return d?.status === 'succeeded' ? d : undefined;
  }, 'the delivery recorded as succeeded');
  t.is(delivery.attempts, 1, 'recorded by the instance that sent it, before it stopped');
  t.is(received.length, 1, 'sent once');
});
