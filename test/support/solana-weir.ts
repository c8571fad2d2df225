import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { startWeir, type Weir, type WeirOverrides } from '../../src/app/start-weir.ts';
import { SOLANA_LOCALNET_CHAIN_ID } from '../../src/chain-ingest/solana/networks.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { apiClient, eventually } from './api-client.ts';
import { startNatsServer } from './nats-server.ts';
import { startTestSolana } from './solana-devnet.ts';
import { startWebhookReceiver } from './webhook-receiver.ts';
import { ADMIN_TOKEN } from './weir-harness.ts';

export type SolanaSession = {
  id: string;
  status: string;
  paymentStatus: string;
  amountTotal: string;
  amountReceived: string;
  amountOverpaid: string;
  transactionHash: string | null;
  addresses: {
    id: string;
    network: string;
    asset: { id: string; currency: string; address: string; decimals: number; chainId: number };
    paymentAddress: string;
    merchantAddress: string;
  }[];
  paymentIntent: {
    status: string;
    amountReceived: string;
    transactions: { transactionHash: string; amountRaw: string; status: string; late: boolean }[];
  };
};

/** Cleanups run in reverse when the world is torn down (one world serves a whole test file). */
export function teardowns() {
  const steps: (() => unknown)[] = [];
  return {
    teardown: (fn: () => unknown) => void steps.push(fn),
    async run() {
      for (const step of steps.reverse()) await step();
    },
  };
}

/**
 * The local Solana (litesvm behind JSON-RPC), NATS, a webhook receiver and a Weir offering the local
 * Solana only (no EVM devnet, no test rail), with a shop whose wallet there is a fresh key. `restart`
 * stops Weir and starts it again on the same data dir, NATS and chain.
 */
export async function startSolanaWeir(overrides: WeirOverrides = {}) {
  const cleanup = teardowns();
  const chain = await startTestSolana(cleanup);
  const nats = await startNatsServer();
  cleanup.teardown(() => nats.stop());
  const receiver = await startWebhookReceiver();
  cleanup.teardown(() => receiver.close());
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-solana-'));
  const solanaLocal = { rpcUrl: chain.server.rpcUrl, wsUrl: chain.server.wsUrl, mints: chain.server.ledger.mints };
  const start = (port = 0, more: WeirOverrides = {}) =>
    startWeir(
      { port, host: '127.0.0.1', dataDir, adminToken: ADMIN_TOKEN, chainEnv: {}, natsUrl: nats.url },
      { logger: silentLogger(), solanaLocal, solanaPollIntervalMs: 50, ...overrides, ...more },
    );
  let weir: Weir = await start();
  cleanup.teardown(async () => {
    await weir.stop();
    await rm(dataDir, { recursive: true, force: true });
  });
  const merchant = (await generateKeyPairSigner()).address;
  const created = (
    await apiClient(weir.url, ADMIN_TOKEN).post<{ testSecretKey: string }>('/admin/organizations', {
      name: 'Solana Shop',
    })
  ).body;
  const api = () => apiClient(weir.url, created.testSecretKey);
  const added = await api().post('/api/v1/organization/withdrawal-addresses', {
    chainId: SOLANA_LOCALNET_CHAIN_ID,
    address: merchant,
    name: 'treasury',
  });
  if (added.status !== 200) throw new Error(`wallet: ${JSON.stringify(added.body)}`);
  const endpoint = await api().post<{ secret: string }>('/api/v1/webhook-endpoints', {
    description: 'shop',
    url: receiver.url,
    enabledEvents: { events: ['*'] },
  });
  if (endpoint.status !== 200) throw new Error(`endpoint: ${JSON.stringify(endpoint.body)}`);

  const session = async (currency: string, unitAmount: string) => {
    const r = await api().post<SolanaSession>('/api/v1/checkout/sessions', {
      successUrl: 'https://shop.example/ok',
      lineItems: { data: [{ priceData: { currency, unitAmount, productData: { name: 'Thing' } }, quantity: 1 }] },
    });
    if (r.status !== 200) throw new Error(`session: ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const get = async (id: string) => (await api().get<SolanaSession>(`/api/v1/checkout/sessions/${id}`)).body;
  const until = (id: string, predicate: (s: SolanaSession) => boolean, what: string, timeoutMs = 20_000) =>
    eventually(
      async () => {
        const s = await get(id);
        return predicate(s) ? s : undefined;
      },
      what,
      timeoutMs,
    );
  /** The session's reference (its payment address) for `currency`. */
  const referenceOf = (s: SolanaSession, currency: string) =>
    s.addresses.find((a) => a.asset.currency === currency)!.paymentAddress as Address;

  return {
    chain,
    nats,
    receiver,
    merchant,
    endpointSecret: endpoint.body.secret,
    get weir() {
      return weir;
    },
    api,
    session,
    get,
    until,
    referenceOf,
    async restart(stopped?: () => Promise<void>) {
      const port = weir.port;
      await weir.stop();
      await stopped?.();
      weir = await start(port);
    },
    teardown: () => cleanup.run(),
  };
}
