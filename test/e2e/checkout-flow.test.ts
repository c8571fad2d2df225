import test, { type ExecutionContext } from 'ava';
import { createNatsJetStreamBus } from '../../src/bus/nats-jetstream-bus.ts';
import type { Bus } from '../../src/bus/bus.ts';
import { bodySignature, verifyTimestampedSignature } from '../../src/webhooks/signature.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { startNatsServer } from '../support/nats-server.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { createMerchant, sessionRequest, startTestWeir, MERCHANT_WALLET } from '../support/weir-harness.ts';
import { testWeirClient, undeclaredBody } from '../support/weir-client.ts';
import { expectData } from '../../weir-client/src/index.ts';

type Session = Record<string, unknown> & {
  id: string;
  url: string;
  status: string;
  paymentStatus: string;
  amountTotal: string;
  amountReceived: string;
  transactionHash: string | null;
  addresses: {
    id: string;
    asset: { id: string; chainId: number; address: string; decimals: number; currency: string };
    paymentAddress: string;
  }[];
  paymentIntent: {
    status: string;
    amountReceived: string;
    paymentMethod: { accountAddress: string; amountDue: string } | null;
  };
};

/**
 * The whole merchant journey over HTTP: organization, payment method, webhook endpoint, session,
 * payer's asset choice; then chain observations on the bus complete the session and the signed
 * webhooks arrive.
 */
async function checkoutJourney(
  t: ExecutionContext,
  options: { natsUrl?: string; publisherBus?: (weirBus: Bus) => Promise<Bus> },
) {
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const weir = await startTestWeir(t, { natsUrl: options.natsUrl });
  const merchant = await createMerchant(weir.url);
  // The merchant's calls go through weir-client, typed from the OpenAPI document.
  const weirApi = testWeirClient(weir.url, merchant.testSecretKey);
  const getSession = async (id: string) =>
    undeclaredBody<Session>(await weirApi.GET('/api/v1/checkout/sessions/{id}', { params: { path: { id } } }));
  const createSession = () =>
    weirApi.POST('/api/v1/checkout/sessions', {
      // `as never` until the route declares its body schema (then the request is typed too).
      body: sessionRequest('150000000', 2) as never,
      headers: { 'Idempotency-Key': 'order-1001' },
    });

  const endpointAnswer = await weirApi.POST('/api/v1/webhook-endpoints', {
    body: {
      description: 'shop backend',
      url: receiver.url,
      enabledEvents: { events: ['checkout_session.completed', 'payment_intent.succeeded'] },
    },
  });
  t.is(endpointAnswer.response.status, 200, JSON.stringify(endpointAnswer.error));
  const endpoint = expectData(endpointAnswer);
  t.regex(endpoint.secret, /^whsec_/);

  const created = await createSession();
  t.is(created.response.status, 200, JSON.stringify(created.error));
  const session = undeclaredBody<Session>(created);
  t.is(session.status, 'open');
  t.is(session.paymentStatus, 'unpaid');
  t.is(session.amountTotal, '300000000');
  t.is(session.url, `${weir.url}/checkout/${session.id}`);
  const usdc = session.addresses.find((a) => a.asset.currency === 'usdc')!;
  t.truthy(usdc);
  t.is(session.paymentIntent.status, 'requires_payment_method');

  // A GET right after the POST sees the new record.
  t.is((await getSession(session.id)).id, session.id);

  // The payer reveals the address for USDC on the hosted page.
  const payer = apiClient(weir.url);
  const reveal = await payer.post<{ address: string; amountDueRaw: string; qrSvg: string }>(
    `/checkout/${session.id}/payment-method`,
    { assetId: usdc.asset.id },
  );
  t.is(reveal.status, 200, JSON.stringify(reveal.body));
  t.is(reveal.body.address, usdc.paymentAddress);
  t.is(reveal.body.amountDueRaw, '3000000');
  t.true(reveal.body.qrSvg.startsWith('<svg'));
  const page = await fetch(session.url);
  t.is(page.status, 200);
  const html = await page.text();
  t.true(html.includes('Acme Test Shop') && html.includes('3') && html.includes('USDC'));

  const publisherBus = options.publisherBus ? await options.publisherBus(weir.bus) : weir.bus;
  const chain = chainPublisher(publisherBus);
  const blockHash = randomHash();
  const transfer = await chain.transfer({ to: usdc.paymentAddress, amount: '3000000', blockNumber: 100, blockHash });
  // Seen but not final: the session waits.
  const pending = await eventually(async () => {
    const r = await getSession(session.id);
    return r.paymentIntent.status === 'processing' ? r : undefined;
  }, 'the transfer to be detected');
  t.is(pending.status, 'open');
  await chain.final(100, blockHash);

  const hooks = await receiver.waitFor((all) => all.length >= 2);
  const secret = endpoint.secret;
  const types = new Set<string>();
  for (const hook of hooks) {
    t.is(
      hook.headers['x-webhook-signature'],
      bodySignature(secret, hook.body),
      'x-webhook-signature is the HMAC of the exact raw body',
    );
    t.is(hook.headers['x-webhook-token'], secret);
    t.true(
      verifyTimestampedSignature({
        secret,
        body: hook.body,
        header: String(hook.headers['x-weir-signature']),
        nowSeconds: Math.floor(Date.now() / 1000),
      }),
    );
    const envelope = JSON.parse(hook.body) as {
      id: string;
      apiVersion: string;
      created: number;
      object: string;
      type: string;
      data: { object: Session };
    };
    t.regex(envelope.id, /^[0-9a-f-]{36}$/);
    t.regex(envelope.apiVersion, /^\d{4}-\d{2}-\d{2}$/);
    t.true(Number.isInteger(envelope.created));
    types.add(envelope.type);
    if (envelope.type === 'checkout_session.completed') {
      t.is(envelope.object, 'checkoutSession');
      t.is(envelope.data.object.id, session.id);
      t.is(envelope.data.object.status, 'complete');
      t.is(envelope.data.object.paymentStatus, 'paid');
      t.is(envelope.data.object.transactionHash, transfer.type === 'transfer' ? transfer.transactionHash : null);
    }
  }
  t.deepEqual([...types].sort(), ['checkout_session.completed', 'payment_intent.succeeded']);

  const done = await getSession(session.id);
  t.is(done.status, 'complete');
  t.is(done.paymentStatus, 'paid');
  t.is(done.amountReceived, '300000000');
  t.is(done.paymentIntent.status, 'succeeded');
  t.is(done.paymentIntent.paymentMethod?.accountAddress, usdc.paymentAddress);

  // Redelivered observations (without the bus's own dedupe) change nothing.
  const streamBefore = await weir.eventStore.readStream(`checkout_session-${session.id}`);
  if (transfer.type === 'transfer') {
    await publisherBus.publish('chain.weir-testnet.transfer', Buffer.from(JSON.stringify(transfer)));
    await publisherBus.publish(
      'chain.weir-testnet.final',
      Buffer.from(
        JSON.stringify({
          type: 'final',
          network: 'weir-testnet',
          chainId: 7357,
          blockNumber: 100,
          blockHash,
          observedAt: new Date().toISOString(),
        }),
      ),
    );
  }
  const marker = randomHash();
  await chain.final(101, marker);
  await eventually(
    async () => ((await apiClient(weir.url).get('/health')).status === 200 ? true : undefined),
    'health',
  );
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.is((await weir.eventStore.readStream(`checkout_session-${session.id}`)).length, streamBefore.length);
  t.is(receiver.received.length, 2);

  const deliveries = expectData(
    await weirApi.GET('/api/v1/webhook-endpoints/{id}/deliveries', { params: { path: { id: endpoint.id } } }),
  );
  t.is(deliveries.data.length, 2);
  t.true(deliveries.data.every((d) => d.status === 'succeeded' && d.attempts === 1));

  // The idempotent retry of the create gets the first response.
  const retried = await createSession();
  t.is(undeclaredBody<Session>(retried).id, session.id);
  t.is(retried.response.headers.get('idempotent-replayed'), 'true');
  t.not(MERCHANT_WALLET, usdc.paymentAddress);
}

test('checkout journey on the embedded default (in-process bus, SQLite, embedded read store)', async (t) => {
  await checkoutJourney(t, {});
});

test('checkout journey with NATS JetStream as the bus', async (t) => {
  const nats = await startNatsServer();
  t.teardown(() => nats.stop());
  await checkoutJourney(t, {
    natsUrl: nats.url,
    publisherBus: async () => {
      const bus = await createNatsJetStreamBus({ servers: nats.url });
      t.teardown(() => bus.close());
      return bus;
    },
  });
});
