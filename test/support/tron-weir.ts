import type { ExecutionContext } from 'ava';
import { erc20Abi } from 'viem';
import type { WeirOverrides } from '../../src/app/start-weir.ts';
import { devnetAccount } from '../../src/chain-ingest/evm/devnet/devnet-info.ts';
import { evmToTron, tronToEvm } from '../../src/chain-ingest/tron/address.ts';
import { TRON_LOCAL_CHAIN_ID } from '../../src/chain-ingest/tron/networks.ts';
import type { TronLocalInfo } from '../../src/chain-ingest/tron/tron-setup.ts';
import { openChainShop, type ChainSession } from './chain-shop.ts';
import { startNatsServer } from './nats-server.ts';
import { startTestLocalTron } from './tron-devnet.ts';
import { startWebhookReceiver } from './webhook-receiver.ts';
import { startTestWeir } from './weir-harness.ts';

/** A transaction hash as the payer's anvil answers it (`0x…`), as Tron's tools write it: the bare txID. */
export const txIdOf = (hash: string): string => hash.replace(/^0x/, '');

export type TronSession = ChainSession & {
  sweeps: {
    transactionHash: string;
    gasUsed: string;
    gasCost: string;
    tron?: { energyUsed: string; bandwidthUsed: string; trxBurnt: string; energySource: string; rentalCost?: string };
  }[];
};

/**
 * The local Tron (anvil behind the Tron-flavoured proxy, finalized `finalizedDepth` blocks behind
 * the head), NATS, a webhook receiver and a Weir offering the local Tron only, with a shop whose
 * Tron wallet is the devnet's merchant account in T… form. `restart` starts Weir again on the same
 * port, data dir, chain and NATS.
 */
export async function startTronWeir(
  t: ExecutionContext,
  options: {
    finalizedDepth?: number;
    overrides?: WeirOverrides;
    chainEnv?: Record<string, string>;
    /** Sweep through the proxy's `/wallet/…` calls (the real-node path) instead of straight to anvil. */
    nativeSweeps?: boolean;
  } = {},
) {
  const finalizedDepth = options.finalizedDepth ?? 3;
  const chain = await startTestLocalTron(t, { finalizedDepth });
  const nats = await startNatsServer();
  t.teardown(() => nats.stop());
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const tronLocal: TronLocalInfo = options.nativeSweeps ? { ...chain.info, nativeSweeps: true } : chain.info;
  const config = { natsUrl: nats.url, testRail: false, ...(options.chainEnv ? { chainEnv: options.chainEnv } : {}) };
  const defaults: WeirOverrides = {
    sweepBatchDelayMs: 0,
    followerPollIntervalMs: 50,
    tronLocal,
    ...options.overrides,
  };
  let weir = await startTestWeir(t, config, defaults);
  const shop = await openChainShop<TronSession>({
    url: () => weir.url,
    name: 'Tron Shop',
    chainId: TRON_LOCAL_CHAIN_ID,
    merchant: chain.merchant,
    receiverUrl: receiver.url,
    untilTimeoutMs: 30_000,
  });
  const { api, session, get, until } = shop;
  const addressOf = (s: TronSession, currency: string) =>
    s.addresses.find((a) => a.asset.currency === currency)!.paymentAddress;
  /** The block a payment would land in next (anvil mines one block per transaction). */
  const nextBlock = async () => (await chain.reader.getBlockNumber()) + 1n;
  /**
   * Pays `amount` USDT to session `s` in a block whose logs the node misses: the first `times`
   * eth_getLogs answers touching it are [] (the follower's own read, then the solidified re-read's).
   */
  const payUsdtUnlogged = async (s: TronSession, amount: bigint, times = 1_000_000) => {
    const block = await nextBlock();
    chain.tron.proxy.emptyLogs(block, block, times);
    const paid = await chain.payer().payTrc20(chain.tokens.usdt, addressOf(s, 'usdt'), amount);
    t.is(paid.blockNumber, block);
    return paid;
  };
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
    /** The account the local Tron's sweeps are sent from, T… form (its energy: `tron.proxy.setAccountResource`). */
    sweeper: evmToTron(devnetAccount(chain.devnet, 'sweeper').address),
    nats,
    receiver,
    endpointSecret: shop.endpointSecret,
    get weir() {
      return weir;
    },
    api,
    session,
    get,
    until,
    addressOf,
    tokenBalance,
    payUsdtUnlogged,
    async restart(overrides: WeirOverrides = {}) {
      const { dataDir, port } = weir;
      await weir.stop();
      weir = await startTestWeir(t, { ...config, dataDir, port }, { ...defaults, ...overrides });
    },
  };
}
