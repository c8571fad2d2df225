/**
 * Tron through the local proxy: detection latency, and what the reconciler costs.
 *
 *   node --import tsx bench/tron/detection.ts [--payments 100] [--warmup 5] [--poll-ms 100] [--deposits 1000]
 *   (npm run bench:tron)
 *
 * Detection: anvil behind the Tron-flavoured JSON-RPC proxy with `finalized` 1 block behind the
 * head, so the block a payment lands in is solidified (final) as soon as the payer's transaction
 * is mined; Weir (embedded stores, in-process bus) offers the local Tron only; each session (1
 * USDT) is paid in turn with a TRC-20 transfer to its deposit address. t0 is when the payer has
 * the receipt; t1 when the `checkout_session.completed` webhook reaches a receiver on 127.0.0.1.
 * Sweeps are held back (1 h) so none competes with the payments.
 *
 * Reconciliation: one reconciler pass over `--deposits` open, unswept USDT deposits (fresh
 * addresses, nothing credited) against the same proxy: its JSON-RPC calls and its time. At the
 * default interval (one pass a minute) calls per pass are calls per minute.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { startWeir } from '../../src/app/start-weir.ts';
import { devnetAccount } from '../../src/chain-ingest/evm/devnet/devnet-info.ts';
import { deployDevnet } from '../../src/chain-ingest/evm/devnet/start-devnet.ts';
import { evmToTron } from '../../src/chain-ingest/tron/address.ts';
import { startLocalTron } from '../../src/chain-ingest/tron/devnet/local-tron.ts';
import { TRON_LOCAL_CHAIN_ID } from '../../src/chain-ingest/tron/networks.ts';
import { createTronReconciler, type OpenDeposit } from '../../src/chain-ingest/tron/reconciler.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { apiClient } from '../../test/support/api-client.ts';
import { tronDevnetPayer } from '../../test/support/tron-devnet.ts';
import { distribution, loadAverage1m, machineInfo, numberFlag } from '../evm/support/bench-env.ts';

const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const argv = process.argv.slice(2);
const payments = numberFlag(argv, '--payments', 100, 1, 10_000);
const warmup = numberFlag(argv, '--warmup', 5, 0, 100);
const pollMs = numberFlag(argv, '--poll-ms', 100, 10, 10_000);
const depositCount = numberFlag(argv, '--deposits', 1000, 1, 100_000);

const started = new Date();
const loadBefore = loadAverage1m();
const tron = await startLocalTron({ finalizedDepth: 1 });
const dataDir = await mkdtemp(join(tmpdir(), 'weir-bench-tron-'));
const arrivals = new Map<string, number>();
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    if (body.includes('"checkout_session.completed"')) {
      const id = (JSON.parse(body) as { data: { object: { id: string } } }).data.object.id;
      if (!arrivals.has(id)) arrivals.set(id, performance.now());
    }
    res.writeHead(200).end('ok');
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

try {
  const devnet = await deployDevnet(tron.node!);
  const tokens = { usdt: evmToTron(devnet.contracts.usdt), usdc: evmToTron(devnet.contracts.usdc) };
  const weir = await startWeir(
    { port: 0, host: '127.0.0.1', dataDir, adminToken: ADMIN_TOKEN, chainEnv: {} },
    {
      logger: silentLogger(),
      followerPollIntervalMs: pollMs,
      sweepBatchDelayMs: 3_600_000,
      tronLocal: {
        rpcUrl: tron.proxy.url,
        solidityRpcUrl: tron.proxy.solidityUrl,
        sendUrl: tron.upstreamUrl,
        tokens,
        factory: evmToTron(devnet.contracts.forwarderFactory),
        sweeperKey: devnetAccount(devnet, 'sweeper').privateKey,
        confirmations: 1,
      },
    },
  );
  try {
    const key = (
      await apiClient(weir.url, ADMIN_TOKEN).post<{ testSecretKey: string }>('/admin/organizations', { name: 'Bench' })
    ).body.testSecretKey;
    const api = apiClient(weir.url, key);
    await api.post('/api/v1/organization/withdrawal-addresses', {
      chainId: TRON_LOCAL_CHAIN_ID,
      address: evmToTron(devnetAccount(devnet, 'merchant').address),
      name: 'treasury',
    });
    const endpoint = await api.post('/api/v1/webhook-endpoints', {
      description: 'bench',
      url: receiverUrl,
      enabledEvents: { events: ['checkout_session.completed'] },
    });
    if (endpoint.status !== 200) throw new Error(`webhook endpoint: ${JSON.stringify(endpoint.body)}`);
    const payer = tronDevnetPayer(devnet);
    const latencies: number[] = [];
    for (let i = 0; i < warmup + payments; i++) {
      const session = (
        await api.post<{ id: string; addresses: { asset: { currency: string }; paymentAddress: string }[] }>(
          '/api/v1/checkout/sessions',
          {
            successUrl: 'https://shop.example/ok',
            lineItems: {
              data: [
                { priceData: { currency: 'usdt', unitAmount: '100000000', productData: { name: 'x' } }, quantity: 1 },
              ],
            },
          },
        )
      ).body;
      const to = session.addresses.find((a) => a.asset.currency === 'usdt')!.paymentAddress;
      await payer.payTrc20(tokens.usdt, to, 1_000_000n);
      const t0 = performance.now();
      for (let waited = 0; !arrivals.has(session.id); waited++) {
        if (waited > 30_000) throw new Error(`no webhook for ${session.id} after 30 s`);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      if (i >= warmup) latencies.push(arrivals.get(session.id)! - t0);
    }
    const detection = distribution(latencies);

    // Reconciliation: one pass over `depositCount` open deposits that hold nothing and were credited nothing.
    const deposits: OpenDeposit[] = Array.from({ length: depositCount }, (_, i) => ({
      checkoutSessionId: `s${i}`,
      paymentAddress: evmToTron(privateKeyToAccount(`0x${(i + 1).toString(16).padStart(64, '0')}`).address),
      asset: {
        id: 'tron-local:usdt',
        chainId: TRON_LOCAL_CHAIN_ID,
        symbol: 'USDT',
        name: 'Test Tether USD',
        currency: 'usdt',
        address: tokens.usdt,
        decimals: 6,
      },
      credits: [],
      lastSweep: null,
      sweeps: [],
      sweeping: false,
    }));
    const reconciler = createTronReconciler({
      network: 'tron-local',
      chainId: TRON_LOCAL_CHAIN_ID,
      rpcUrl: tron.proxy.solidityUrl,
      openDeposits: async () => deposits,
      adopt: async () => {},
      now: () => new Date(),
      log: () => {},
    });
    const passStart = performance.now();
    await reconciler.step();
    const passMs = performance.now() - passStart;
    const counters = reconciler.counters();
    const result = {
      started: started.toISOString(),
      finished: new Date().toISOString(),
      machine: machineInfo(),
      loadAverage1m: { before: loadBefore, after: loadAverage1m() },
      settings: { payments, warmup, pollMs, finalizedDepth: 1 },
      detectionMs: detection,
      reconciliation: {
        deposits: depositCount,
        rpcCallsPerPass: counters.rpcCalls,
        rpcCallsPer1000DepositsPerMinute: Math.round((counters.rpcCalls / depositCount) * 1000),
        passMs: Math.round(passMs),
      },
    };
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await weir.stop();
  }
} finally {
  receiver.close();
  await tron.stop();
  await rm(dataDir, { recursive: true, force: true });
}
