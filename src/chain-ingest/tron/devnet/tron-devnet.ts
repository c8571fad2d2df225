import { devnetAccount, type DevnetInfo } from '../../evm/devnet/devnet-info.ts';
import { localChainWarning, startFailed } from '../../local-chain-warning.ts';
import type { Log } from '../../../shared/logger.ts';
import { startLocalChain, type LocalChainKind } from '../../evm/devnet/local-chain.ts';
import type { HardhatNode } from '../../evm/devnet/hardhat-node.ts';
import { deployDevnet } from '../../evm/devnet/start-devnet.ts';
import { deployLocalTronContracts } from './local-tron-contracts.ts';
import { evmToTron, type TronAddress } from '../address.ts';
import { TRON_LOCAL_CHAIN_ID, type TronLocalTokens } from '../networks.ts';
import type { TronLocalInfo } from '../tron-setup.ts';
import { startLocalTron, type LocalTron } from './local-tron.ts';

/** The local Tron's test tokens and factory in T… form (its anvil runs the devnet's contracts, 0x form). */
function tronDevnetContracts(devnet: DevnetInfo): { tokens: TronLocalTokens; factory: TronAddress } {
  return {
    tokens: { usdt: evmToTron(devnet.contracts.usdt), usdc: evmToTron(devnet.contracts.usdc) },
    factory: evmToTron(devnet.contracts.forwarderFactory),
  };
}

/**
 * The local Tron's devnet contracts and merchant account in T… form. The devnet's contracts and
 * accounts (0x form, as anvil runs them) are those of the EVM devnet: same deployer, same nonces.
 */
export function tronDevnetAddresses(devnet: DevnetInfo): {
  tokens: TronLocalTokens;
  factory: TronAddress;
  merchant: TronAddress;
} {
  return { ...tronDevnetContracts(devnet), merchant: evmToTron(devnetAccount(devnet, 'merchant').address) };
}

/**
 * The EVM devnet's contracts and accounts, with the local Tron's own factory (the Tron forwarder:
 * balance-checked transfers) and a USDT whose transfer returns false, as Tron mainnet's does, in
 * place of the EVM ones (local-tron-contracts.ts), so local sweeps meet Tron's USDT.
 */
export async function deployTronDevnet(node: Pick<HardhatNode, 'rpcUrl' | 'wsUrl' | 'chainId'>): Promise<DevnetInfo> {
  const devnet = await deployDevnet(node);
  const own = await deployLocalTronContracts(
    node,
    devnet.accounts.filter((a) => a.role === 'payer').map((a) => a.address),
  );
  return { ...devnet, contracts: { ...devnet.contracts, forwarderFactory: own.forwarderFactory, usdt: own.usdt } };
}

/** What Weir's Tron rail needs of a local Tron whose anvil (`devnet.rpcUrl`) runs the devnet contracts behind the proxy at `proxyUrl`. */
export function tronLocalInfo(devnet: DevnetInfo, proxyUrl: string, confirmations?: number): TronLocalInfo {
  const { tokens, factory } = tronDevnetContracts(devnet);
  return {
    rpcUrl: proxyUrl,
    // The proxy's Solidity-node view (json-rpc-proxy.ts), where the reconciler reads solidified balances.
    solidityRpcUrl: `${proxyUrl}/solidity`,
    sendUrl: devnet.rpcUrl,
    tokens,
    factory,
    sweeperKey: devnetAccount(devnet, 'sweeper').privateKey,
    ...(confirmations === undefined ? {} : { confirmations }),
  };
}

/** A local Tron running the devnet contracts: what Weir offers (`info`), its accounts (`devnet`, 0x form) and the proxy. */
export type TronDevnet = {
  info: TronLocalInfo;
  /** The anvil behind the proxy (`rpcUrl`), chain id "TrnL", with the devnet's contracts and funded accounts. */
  devnet: DevnetInfo;
  /** Where Weir reads (the Tron-flavoured JSON-RPC). */
  proxyUrl: string;
  stop(): Promise<void>;
};

/**
 * The proxy's finalized depth for development: 0, with 1 confirmation (mined is final), as on the
 * EVM devnet. Its anvil mines only on transactions, so a depth behind the head would hold a
 * payment until someone else pays.
 */
const DEVELOPMENT_DEPTH = 0;
const DEVELOPMENT_CONFIRMATIONS = 1;

/**
 * A fresh local Tron (`weir devnet`, tests): anvil with chain id "TrnL" behind the Tron-flavoured
 * proxy (on `port`, any free one unless given), with the Tron forwarder factory, test USDT and USDC
 * (and the devnet's contracts beneath), TRX as its native coin, and payers funded. Its state lives in memory. `finalizedDepth` is also its confirmations.
 */
export async function startLocalTronDevnet(
  options: { port?: number; finalizedDepth?: number } = {},
): Promise<TronDevnet & { tron: LocalTron }> {
  const tron = await startLocalTron({
    finalizedDepth: options.finalizedDepth ?? DEVELOPMENT_DEPTH,
    ...(options.port === undefined ? {} : { port: options.port }),
  });
  try {
    if (tron.node === undefined) throw new Error('startLocalTron started no anvil');
    const devnet = await deployTronDevnet(tron.node);
    return {
      tron,
      devnet,
      info: tronLocalInfo(devnet, tron.proxy.url, options.finalizedDepth ?? DEVELOPMENT_CONFIRMATIONS),
      proxyUrl: tron.proxy.url,
      stop: () => tron.stop(),
    };
  } catch (error) {
    await tron.stop();
    throw error;
  }
}

/** The same accounts as the chain's, so a devnet file's local Tron is the chain's document with its own node and contracts. */
function withTron(info: DevnetInfo, tron: { sendUrl: string; contracts: DevnetInfo['contracts'] }): DevnetInfo {
  const { tron: _beside, ...chain } = info;
  return {
    ...chain,
    chainId: TRON_LOCAL_CHAIN_ID,
    rpcUrl: tron.sendUrl,
    wsUrl: tron.sendUrl.replace(/^http/, 'ws'),
    contracts: tron.contracts,
  };
}

/** What `weir devnet` writes of its local Tron into the devnet file (DevnetInfo's `tron`). */
export function devnetFileTron(tron: TronDevnet): NonNullable<DevnetInfo['tron']> {
  return { rpcUrl: tron.proxyUrl, sendUrl: tron.devnet.rpcUrl, contracts: tron.devnet.contracts };
}

/** The local Tron a devnet file names (`weir devnet --out FILE`, then `serve --devnet FILE`), or null when it names none. */
export function tronOfDevnetFile(info: DevnetInfo): Pick<TronDevnet, 'info' | 'devnet'> | null {
  if (info.tron === undefined) return null;
  const devnet = withTron(info, info.tron);
  return { devnet, info: tronLocalInfo(devnet, info.tron.rpcUrl, DEVELOPMENT_CONFIRMATIONS) };
}

/** The local Tron's anvil in the data dir: DATA_DIR/local-tron, read by the follower of `tron-local`. */
export const LOCAL_TRON_CHAIN: LocalChainKind = {
  dir: 'local-tron',
  chainId: TRON_LOCAL_CHAIN_ID,
  port: 0,
  checkpoint: 'tron-local',
  label: 'local tron',
  family: 'tron',
  name: 'local Tron',
  // As startLocalTron's anvil: no fees, its wei being sun.
  zeroFees: true,
  deploy: deployTronDevnet,
  // What it offers: the EVM devnet's DAI is on its anvil too, but no network asset, so left unsaid.
  deploys: 'the Tron forwarder factory and test USDT and USDC (TRX is its native coin)',
};

/**
 * The local Tron `weir serve` runs in its test environment (`npm start`): its anvil keeps its state
 * in the data dir as the local EVM chain does (startLocalChain: deployed once, kept across restarts,
 * mined up to the follower's checkpoint after a crash), behind the proxy on a free port.
 */
export async function startEmbeddedLocalTron(options: {
  dataDir: string;
  log: Log;
}): Promise<TronDevnet & { kill(): void }> {
  const chain = await startLocalChain({ ...options, kind: LOCAL_TRON_CHAIN });
  try {
    const tron = await startLocalTron({ upstreamUrl: chain.info.rpcUrl, finalizedDepth: DEVELOPMENT_DEPTH });
    options.log(
      `[local tron] Tron JSON-RPC on ${tron.proxy.url} (test environment only): test USDT ${tronDevnetAddresses(chain.info).tokens.usdt}`,
      { event: 'local_chain.started', family: 'tron', rpcUrl: tron.proxy.url },
    );
    return {
      info: tronLocalInfo(chain.info, tron.proxy.url, DEVELOPMENT_CONFIRMATIONS),
      devnet: chain.info,
      proxyUrl: tron.proxy.url,
      async stop() {
        await tron.stop();
        await chain.stop();
      },
      kill() {
        void tron.stop();
        chain.kill();
      },
    };
  } catch (error) {
    await chain.stop();
    throw error;
  }
}

/** {@link startEmbeddedLocalTron}, or null (logged) when it cannot start: Weir goes on without it. */
export async function startEmbeddedLocalTronOrWarn(options: {
  dataDir: string;
  log: Log;
}): Promise<(TronDevnet & { kill(): void }) | null> {
  try {
    return await startEmbeddedLocalTron(options);
  } catch (error) {
    const { family, label, name } = LOCAL_TRON_CHAIN;
    options.log(localChainWarning(family, label, name, error), startFailed(family));
    return null;
  }
}
