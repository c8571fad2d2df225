import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { getAddress, type Address } from 'viem';
import type { Bus } from '../../src/bus/bus.ts';
import type { EvmFollowerCheckpoint } from '../../src/chain-ingest/evm/follower/checkpoint.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { startDevnetWeir } from '../support/devnet-weir.ts';
import { devnetPayer, merchantWallet, startTestDevnet } from '../support/evm-devnet.ts';
import { startNatsServer } from '../support/nats-server.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { ADMIN_TOKEN } from '../support/weir-harness.ts';
import { spawnWeir } from '../support/weir-process.ts';

type Session = {
  id: string;
  status: string;
  amountReceived: string;
  addresses: { paymentAddress: string; asset: { currency: string } }[];
  payments: unknown[];
};

/** A 7 USDC session (on the devnet's chain) and the address to pay it at. */
async function sevenUsdcSession<Extra extends object = object>(api: ReturnType<typeof apiClient>) {
  const session = (
    await api.post<Session & Extra>('/api/v1/checkout/sessions', {
      successUrl: 'https://shop.example/ok',
      lineItems: {
        data: [{ priceData: { currency: 'usdc', unitAmount: '700000000', productData: { name: 'Thing' } } }],
      },
    })
  ).body;
  return {
    session,
    to: getAddress(session.addresses.find((a) => a.asset.currency === 'usdc')!.paymentAddress) as Address,
  };
}

test('killed after the paying block: after restart the follower catches up and the session completes once', async (t) => {
  const devnet = await startTestDevnet(t);
  const nats = await startNatsServer();
  t.teardown(() => nats.stop());
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-evm-restart-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const env = { NATS_URL: nats.url, WEIR_DEVNET_FILE: devnet.file, WEIR_CONFIRMATIONS_31337: '3' };

  const first = await spawnWeir({ dataDir, env });
  t.teardown(() => first.kill());
  const created = (
    await apiClient(first.url, ADMIN_TOKEN).post<{ testSecretKey: string }>('/admin/organizations', {
      name: 'Restart Shop',
    })
  ).body;
  let api = apiClient(first.url, created.testSecretKey);
  await api.post('/api/v1/organization/withdrawal-addresses', { chainId: 31337, address: merchantWallet(devnet.info) });
  await api.post('/api/v1/webhook-endpoints', {
    description: 'shop',
    url: receiver.url,
    enabledEvents: { events: ['checkout_session.completed'] },
  });
  const { session, to } = await sevenUsdcSession(api);

  const payer = devnetPayer(devnet.info);
  await payer.payToken(devnet.info.contracts.usdc, to, 7_000_000n);
  await first.kill('SIGKILL');
  // The chain moves on while Weir is down: the paying block reaches its confirmations.
  await devnet.mine(5);

  const second = await spawnWeir({ dataDir, env });
  t.teardown(() => second.kill());
  api = apiClient(second.url, created.testSecretKey);
  const done = await eventually(
    async () => {
      const s = (await api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body;
      return s.status === 'complete' ? s : undefined;
    },
    'completion after restart',
    60_000,
  ).catch((error: unknown) => {
    t.log(`first process:\n${first.output()}\nsecond process:\n${second.output()}`);
    throw error;
  });
  t.is(done.amountReceived, '700000000');
  t.is(done.payments.length, 1, 'the payment is recorded once');
  await receiver.waitFor((all) => all.length >= 1);
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.is(new Set(receiver.received.map((r) => (JSON.parse(r.body) as { id: string }).id)).size, 1);
  t.is(receiver.received.filter((r) => r.answered === 200).length, 1, 'one checkout_session.completed delivery');
});

test('paid before its expiry while Weir was down, restarted after it: the session completes, it does not expire before the follower has read the payment', async (t) => {
  const clock = createManualClock(Date.now());
  const { devnet, receiver, weir, organization, restart } = await startDevnetWeir(t, {
    confirmations: 2,
    overrides: { clock },
  });
  const { api } = await organization('Downtime Shop');
  await api.post('/api/v1/webhook-endpoints', {
    description: 'shop',
    url: receiver.url,
    enabledEvents: { events: ['*'] },
  });
  const { session, to } = await sevenUsdcSession<{ expiresAt: string }>(api);

  await weir.stop();
  // Paid in time (the clock is still before expiresAt), confirmed while Weir is down.
  await devnetPayer(devnet.info).payToken(devnet.info.contracts.usdc, to, 7_000_000n);
  await devnet.mine(3);
  clock.set(Date.parse(session.expiresAt) + 60 * 60_000);

  await restart(weir);
  const done = await eventually(
    async () => {
      const s = (await api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body;
      return s.status !== 'open' && s.payments.length > 0 ? s : undefined;
    },
    'the session to settle after restart',
    60_000,
  );
  t.is(done.status, 'complete');
  t.is(done.amountReceived, '700000000');
  await receiver.waitFor((all) => all.some((r) => r.body.includes('"checkout_session.completed"')));
  await new Promise((resolve) => setTimeout(resolve, 500));
  const types = receiver.received.map((r) => (JSON.parse(r.body) as { type: string }).type);
  t.is(types.filter((type) => type === 'checkout_session.completed').length, 1);
  t.false(
    types.some((type) => type === 'checkout_session.expired' || type === 'checkout_session.late_payment'),
    types.join(', '),
  );
});

test('embedded bus: what the follower published and checkpointed past, not yet handled at a stop, is detected and confirmed after restart', async (t) => {
  // While held, the matcher refuses every message: published, not handled (as when Weir stops or dies behind a backlog).
  let holding = true;
  const published: string[] = [];
  const holdMatcher = (bus: Bus): Bus => ({
    ...bus,
    publish: async (subject, data, options) => {
      await bus.publish(subject, data, options);
      published.push(subject);
    },
    consume: (options, handler) =>
      bus.consume(options, async (message) => {
        if (holding) throw new Error('held by the test');
        await handler(message);
      }),
  });
  const { devnet, weir, organization, restart } = await startDevnetWeir(t, {
    confirmations: 2,
    embeddedBus: true,
    node: 'anvil',
    overrides: { wrapBus: holdMatcher },
  });
  const { api } = await organization('Embedded Bus Shop');
  const { session, to } = await sevenUsdcSession(api);
  const paid = await devnetPayer(devnet.info).payToken(devnet.info.contracts.usdc, to, 7_000_000n);
  const paidBlock = Number(paid.blockNumber);
  await devnet.mine(3);

  // The follower published the transfer and its final and saved its checkpoint past them.
  const ingest = join(weir.dataDir, 'ingest');
  await eventually(
    async () => {
      if (!published.some((subject) => subject.endsWith('.final'))) return undefined;
      const file = (await readdir(ingest)).find((name) => name.endsWith('.evm-follower.json'));
      if (file === undefined) return undefined;
      const checkpoint = JSON.parse(await readFile(join(ingest, file), 'utf8')) as EvmFollowerCheckpoint;
      const block = checkpoint.window.find((b) => b.number === paidBlock);
      return (block?.finalPublished ?? (checkpoint.window[0]?.number ?? 0) > paidBlock) ? true : undefined;
    },
    'the follower to checkpoint past the final of the paying block',
    30_000,
  );
  t.true(published.some((subject) => subject.endsWith('.transfer')));
  t.is((await api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body.payments.length, 0, 'not handled yet');

  holding = false;
  await restart(weir);
  const done = await eventually(
    async () => {
      const s = (await api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body;
      return s.status === 'complete' ? s : undefined;
    },
    'completion after restart',
    30_000,
  );
  t.is(done.amountReceived, '700000000');
  t.is(done.payments.length, 1, 'the payment is recorded once');
});
