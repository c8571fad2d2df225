import type { ExecutionContext } from 'ava';
import { erc20Abi } from 'viem';
import type { WeirOverrides } from '../../src/app/start-weir.ts';
import { devnetAccount } from '../../src/chain-ingest/evm/devnet/devnet-info.ts';
import { tronToEvm } from '../../src/chain-ingest/tron/address.ts';
import { TRON_LOCAL_CHAIN_ID } from '../../src/chain-ingest/tron/networks.ts';
import type { TronLocalInfo } from '../../src/chain-ingest/tron/tron-setup.ts';
import { apiClient, eventually } from './api-client.ts';
import { startNatsServer } from './nats-server.ts';
import { startTestLocalTron } from './tron-devnet.ts';
import { startWebhookReceiver } from './webhook-receiver.ts';
import { ADMIN_TOKEN, startTestWeir } from './weir-harness.ts';

export type TronSession = {
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
    transactions: { transactionHash: string; amountRaw: string; status: string; late: boolean; fromAddress?: string }[];
  };
  sweeps: { transactionHash: string; gasUsed: string; gasCost: string }[];
};

/**
 * The local Tron (anvil behind the Tron-flavoured proxy, finalized `finalizedDepth` blocks behind
 * the head), NATS, a webhook receiver and a Weir offering the local Tron only, with a shop whose
 * Tron wallet is the devnet's merchant account in T… form. `restart` starts Weir again on the same
 * port, data dir, chain and NATS.
 */
export async function startTronWeir(
  t: ExecutionContext,
  options: { finalizedDepth?: number; overrides?: WeirOverrides } = {},
) {
  const finalizedDepth = options.finalizedDepth ?? 3;
  const chain = await startTestLocalTron(t, { finalizedDepth });
  const nats = await startNatsServer();
  t.teardown(() => nats.stop());
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const tronLocal: TronLocalInfo = {
    rpcUrl: chain.tron.proxy.url,
    sendUrl: chain.tron.upstreamUrl,
    tokens: chain.tokens,
    factory: chain.factory,
    sweeperKey: devnetAccount(chain.devnet, 'sweeper').privateKey,
    confirmations: finalizedDepth,
  };
  const config = { natsUrl: nats.url, testRail: false };
  const defaults: WeirOverrides = {
    sweepBatchDelayMs: 0,
    followerPollIntervalMs: 50,
    tronLocal,
    ...options.overrides,
  };
  let weir = await startTestWeir(t, config, defaults);
  const created = (
    await apiClient(weir.url, ADMIN_TOKEN).post<{ testSecretKey: string }>('/admin/organizations', {
      name: 'Tron Shop',
    })
  ).body;
  const api = () => apiClient(weir.url, created.testSecretKey);
  const added = await api().post('/api/v1/organization/withdrawal-addresses', {
    chainId: TRON_LOCAL_CHAIN_ID,
    address: chain.merchant,
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
    const r = await api().post<TronSession>('/api/v1/checkout/sessions', {
      successUrl: 'https://shop.example/ok',
      lineItems: { data: [{ priceData: { currency, unitAmount, productData: { name: 'Thing' } }, quantity: 1 }] },
    });
    if (r.status !== 200) throw new Error(`session: ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const get = async (id: string) => (await api().get<TronSession>(`/api/v1/checkout/sessions/${id}`)).body;
  const until = (id: string, predicate: (s: TronSession) => boolean, what: string, timeoutMs = 30_000) =>
    eventually(
      async () => {
        const s = await get(id);
        return predicate(s) ? s : undefined;
      },
      what,
      timeoutMs,
    );
  const addressOf = (s: TronSession, currency: string) =>
    s.addresses.find((a) => a.asset.currency === currency)!.paymentAddress;
  /** A TRC-20 balance read through the proxy (T… addresses). */
  const tokenBalance = (token: string, owner: string) =>
    chain.reader.readContract({
      address: tronToEvm(token),
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [tronToEvm(owner)],
    });

  return {
    ...chain,
    nats,
    receiver,
    endpointSecret: endpoint.body.secret,
    get weir() {
      return weir;
    },
    api,
    session,
    get,
    until,
    addressOf,
    tokenBalance,
    /** The block a payment would land in next (anvil mines one block per transaction). */
    nextBlock: async () => (await chain.reader.getBlockNumber()) + 1n,
    async restart(overrides: WeirOverrides = {}) {
      const { dataDir, port } = weir;
      await weir.stop();
      weir = await startTestWeir(t, { ...config, dataDir, port }, { ...defaults, ...overrides });
    },
  };
}
