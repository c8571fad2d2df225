/**
 * Solana detection, two figures (issue 17):
 *
 * 1. Latency from `finalized` to the `checkout_session.completed` webhook, over `--payments` (200)
 *    payments on the local Solana (litesvm behind JSON-RPC), Weir with its embedded stores and an
 *    in-process bus, a webhook receiver on 127.0.0.1. Each session (1 USDC) is paid in turn; once
 *    the follower has recorded the payment at `confirmed`, the bench finalizes the slot (t0) and
 *    at once asks the RPC itself (`getSignatureStatuses`) until it answers `finalized`: that round
 *    trip is the RPC's own answer time, the floor any follower has. Latency is webhook arrival − t0.
 *    The follower polls every `--poll-ms` (100: the local network's default); the bench waits a
 *    random 0–2 poll periods before finalizing, so the poll phase is not in its favour.
 *
 * 2. Polling cost: RPC calls and HTTP requests per open session per minute, for 10, 100 and 1000
 *    idle sessions, with the public clusters' settings (poll every 800 ms, backing off to 15 s),
 *    over 10 minutes of virtual time (the follower's clock is injected; the RPC is the local node).
 *
 * With `--ws` Weir is also given the node's WebSocket endpoint: the follower subscribes to each
 * reference (`logsSubscribe` by mention) and a notification starts a round at once, and the
 * polling cost is that of idle references with a live subscription; `--no-cost` skips the cost.
 *
 *   node --import tsx bench/solana/detection.ts [--payments 200] [--poll-ms 100] [--ws] [--no-cost]   (npm run bench:solana-detection)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPairSigner, type Address, type Signature } from '@solana/kit';
import { startWeir } from '../../src/app/start-weir.ts';
import { createSolanaJsonRpc } from '../../src/chain-ingest/solana/follower/json-rpc.ts';
import { createSolanaFollower } from '../../src/chain-ingest/solana/follower/solana-follower.ts';
import { createSolanaReferences } from '../../src/chain-ingest/solana/follower/solana-references.ts';
import { SOLANA_LOCALNET_CHAIN_ID, solanaLocalNetwork } from '../../src/chain-ingest/solana/networks.ts';
import { COLLECTIONS, type ChainPaymentDoc } from '../../src/projections/collections.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { startTestSolana } from '../../test/support/solana-devnet.ts';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const PAYMENTS = arg('payments', 200);
const POLL_MS = arg('poll-ms', 100);
const WS = process.argv.includes('--ws');
const COST = !process.argv.includes('--no-cost');
const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};
const ms = (v: number) => `${v.toFixed(1)} ms`;

async function latency() {
  const cleanups: (() => unknown)[] = [];
  const chain = await startTestSolana({ teardown: (fn) => void cleanups.push(fn) });
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-bench-solana-'));
  const arrived = new Map<string, number>();
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => {
      body += d.toString();
    });
    req.on('end', () => {
      const at = performance.now();
      const parsed = JSON.parse(body) as { type: string; data: { object: { id: string } } };
      if (parsed.type === 'checkout_session.completed') arrived.set(parsed.data.object.id, at);
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const weir = await startWeir(
    { port: 0, host: '127.0.0.1', dataDir, adminToken: 'bench-admin-token-0123456789', chainEnv: {} },
    {
      logger: silentLogger(),
      solanaLocal: {
        rpcUrl: chain.server.rpcUrl,
        ...(WS ? { wsUrl: chain.server.wsUrl } : {}),
        mints: chain.server.ledger.mints,
      },
      solanaPollIntervalMs: POLL_MS,
    },
  );
  const call = async <T>(path: string, key: string, body?: unknown) => {
    const response = await fetch(`${weir.url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  };
  const org = await call<{ testSecretKey: string }>('/admin/organizations', 'bench-admin-token-0123456789', {
    name: 'Bench',
  });
  const key = org.testSecretKey;
  const merchant = (await generateKeyPairSigner()).address;
  await call('/api/v1/organization/withdrawal-addresses', key, {
    chainId: SOLANA_LOCALNET_CHAIN_ID,
    address: merchant,
    name: 'treasury',
  });
  await call('/api/v1/webhook-endpoints', key, {
    description: 'bench',
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`,
    enabledEvents: { events: ['checkout_session.completed'] },
  });
  const payer = await chain.newPayer();
  await chain.server.ledger.mintTo(payer.address, 'usdc', BigInt(PAYMENTS + 10) * 1_000_000n);
  chain.server.ledger.finalize();
  const payments = weir.readStore.collection<ChainPaymentDoc>(COLLECTIONS.chainPayments);
  const usdc = chain.server.ledger.mints.usdc;
  const latencies: number[] = [];
  const rpcAnswers: number[] = [];
  for (let i = 0; i < PAYMENTS + 5; i++) {
    const session = await call<{ id: string; addresses: { paymentAddress: string; asset: { currency: string } }[] }>(
      '/api/v1/checkout/sessions',
      key,
      {
        successUrl: 'https://shop.example/ok',
        lineItems: {
          data: [
            { priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Thing' } }, quantity: 1 },
          ],
        },
      },
    );
    const reference = session.addresses.find((a) => a.asset.currency === 'usdc')!.paymentAddress as Address;
    const signature: Signature = await payer.payToken(usdc, merchant, 1_000_000n, [reference]);
    // Seen at confirmed (recorded pending) before the slot is finalized.
    // Instruction 1: the transfer (instruction 0 creates the merchant's token account if missing).
    while ((await payments.get(`solana-localnet:${signature}:1`)) === null) await new Promise((r) => setTimeout(r, 2));
    // A cluster finalizes ~13 s after confirmed, whatever the follower's phase: a random wait
    // (up to two poll periods) keeps the bench's finalize from falling right after the round that saw it.
    await new Promise((r) => setTimeout(r, Math.random() * 2 * POLL_MS));
    const t0 = performance.now();
    chain.server.ledger.finalize();
    let answered: number;
    for (;;) {
      const { value } = await chain.rpc.getSignatureStatuses([signature]).send();
      if (value[0]?.confirmationStatus === 'finalized') {
        answered = performance.now();
        break;
      }
    }
    while (!arrived.has(session.id)) await new Promise((r) => setTimeout(r, 1));
    if (i < 5) continue; // warm-up
    latencies.push(arrived.get(session.id)! - t0);
    rpcAnswers.push(answered - t0);
  }
  await weir.stop();
  receiver.close();
  for (const fn of cleanups.reverse()) await fn();
  await rm(dataDir, { recursive: true, force: true });
  return { latencies, rpcAnswers };
}

async function pollingCost(sessions: number) {
  const cleanups: (() => unknown)[] = [];
  const chain = await startTestSolana({ teardown: (fn) => void cleanups.push(fn) });
  const network = solanaLocalNetwork(chain.server.ledger.mints);
  const references = createSolanaReferences();
  for (let i = 0; i < sessions; i++)
    references.add({
      network: network.network,
      paymentAddress: (await generateKeyPairSigner()).address,
      merchantAddress: (await generateKeyPairSigner()).address,
      asset: { address: chain.server.ledger.mints.usdc } as never,
      checkoutSessionId: `s${i}`,
    });
  let now = 0;
  const rpc = createSolanaJsonRpc({ url: chain.server.rpcUrl });
  const follower = createSolanaFollower({
    network,
    rpc,
    bus: { publish: async () => undefined } as never,
    references,
    pollIntervalMs: 800,
    maxPollIntervalMs: 15_000,
    // Both of the follower's clocks on the virtual time: rounds are scheduled on `now`, grace and `onRound` dated on `readClock`.
    now: () => now,
    readClock: () => now,
    log: () => undefined,
    ...(WS ? { wsUrl: chain.server.wsUrl } : {}),
  });
  if (WS) {
    // Subscribed (each acknowledgement wakes a round at virtual time 0) before the clock moves.
    await follower.start();
    while ((follower.status().socket?.subscribed ?? 0) < sessions) await new Promise((r) => setTimeout(r, 10));
  }
  const minutes = 10;
  let atHalf = { calls: 0, requests: 0 };
  for (; now <= minutes * 60_000; now += 100) {
    if (now === (minutes / 2) * 60_000) atHalf = rpc.counts();
    await follower.poll();
  }
  const end = rpc.counts();
  await follower.stop();
  for (const fn of cleanups.reverse()) await fn();
  const perSessionMinute = (n: number) => n / sessions / minutes;
  const steady = (n: number, m: number) => (n - m) / sessions / (minutes / 2);
  return {
    sessions,
    calls: perSessionMinute(end.calls),
    requests: perSessionMinute(end.requests),
    steadyCalls: steady(end.calls, atHalf.calls),
    steadyRequests: steady(end.requests, atHalf.requests),
  };
}

const started = new Date().toISOString();
const { latencies, rpcAnswers } = await latency();
const costs = [];
if (COST) for (const n of [10, 100, 1000]) costs.push(await pollingCost(n));
const p50 = pct(latencies, 50);
const p99 = pct(latencies, 99);
const r50 = pct(rpcAnswers, 50);
const r99 = pct(rpcAnswers, 99);
console.log(
  JSON.stringify({
    started,
    nproc: cpus().length,
    load: loadavg(),
    payments: latencies.length,
    POLL_MS,
    WS,
    p50,
    p99,
    r50,
    r99,
    costs,
  }),
);
console.log(
  `\n${started}, nproc ${cpus().length}, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(`| ${latencies.length} payments, poll ${POLL_MS} ms${WS ? ', logsSubscribe' : ''} | p50 | p99 |`);
console.log('|---|---|---|');
console.log(`| finalized → completed webhook | ${ms(p50)} | ${ms(p99)} |`);
console.log(`| RPC's own answer (getSignatureStatuses says finalized) | ${ms(r50)} | ${ms(r99)} |`);
console.log(`| difference | ${ms(p50 - r50)} | ${ms(p99 - r99)} |`);
console.log(
  '\n| open sessions | calls / session / min (10 min) | HTTP requests / session / min | steady state (last 5 min): calls | requests |',
);
console.log('|---|---|---|---|---|');
for (const c of costs)
  console.log(
    `| ${c.sessions} | ${c.calls.toFixed(2)} | ${c.requests.toFixed(3)} | ${c.steadyCalls.toFixed(2)} | ${c.steadyRequests.toFixed(4)} |`,
  );
process.exit(0);
