import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { testTokenAbi } from '../contracts/abis.ts';
import { createEvmWriteClients } from '../contracts/clients.ts';
import { deployForwarderFactory, deployTestToken } from '../contracts/deploy-contracts.ts';
import { writeDevnetInfo, type DevnetAccount, type DevnetAccountRole, type DevnetInfo } from './devnet-info.ts';
import { hardhatAccounts } from './hardhat-accounts.ts';
import { startAnvilNode } from './anvil-node.ts';
import { startHardhatNode, type HardhatNode } from './hardhat-node.ts';

/** Hardhat's default chain id; the devnet always uses it. */
export const devnetChainId = 31337;

/** The port `weir devnet` listens on unless told otherwise (the usual local JSON-RPC port). */
export const defaultDevnetPort = 8545;

/** Which of hardhat's funded accounts plays which role (index into {@link hardhatAccounts}). */
const accountRoles: readonly { index: number; role: DevnetAccountRole }[] = [
  { index: 0, role: 'deployer' },
  { index: 1, role: 'sweeper' },
  { index: 2, role: 'payer' },
  { index: 3, role: 'payer' },
  { index: 4, role: 'merchant' },
];

/** Test tokens each payer holds from the start, in whole tokens. */
const payerTokenBalance = 1_000_000n;

export type StartDevnetOptions = {
  /** TCP port; {@link defaultDevnetPort} unless given; 0 lets the OS pick a free one. */
  port?: number;
  /** Only loopback: the devnet's keys are public, so it never listens on another interface. */
  host?: '127.0.0.1';
  /** Where to write the {@link DevnetInfo} JSON (read it back with `readDevnetInfo`); removed again by `stop`. */
  infoFile?: string;
  /** Which node runs the chain: hardhat (a dev dependency, the default here) or anvil (a runtime dependency). */
  node?: 'hardhat' | 'anvil';
};

export type Devnet = {
  info: DevnetInfo;
  /** Absolute path of the info file, when one was written. */
  infoFile?: string;
  /** Stops the node and removes the info file. */
  stop(): Promise<void>;
  /** Kills the node at once (SIGKILL); the info file is left behind, as after a crash. */
  kill(): void;
};

/**
 * Starts a local EVM devnet: a hardhat node, or anvil with `node: 'anvil'` (chain id 31337, automine,
 * 127.0.0.1), then deploys
 * with the deployer account, in this order, the ForwarderFactory, test USDC (6 decimals), test
 * USDT (6, no-return transfer like the real one) and test DAI (18), and mints each payer
 * 1 000 000 of every token. On a fresh node the addresses are therefore always the same:
 * factory 0x5FbDB2315678afecb367f032d93F642f64180aa3, USDC 0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512,
 * USDT 0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0, DAI 0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9.
 *
 * Resolves once everything is deployed, with the {@link DevnetInfo} (also written to `infoFile`
 * when given). Throws `HardhatNodeStartError` if the node cannot start (e.g. the port is taken)
 * and `ContractDeployError` if a deployment fails; the node is stopped in both cases.
 */
export async function startDevnet(options: StartDevnetOptions = {}): Promise<Devnet> {
  const nodeOptions = { chainId: devnetChainId, port: options.port ?? defaultDevnetPort };
  const node =
    options.node === 'anvil'
      ? await startAnvilNode(nodeOptions)
      : await startHardhatNode({ ...nodeOptions, host: options.host ?? '127.0.0.1' });
  try {
    const info = await deployDevnet(node);
    const infoFile = options.infoFile === undefined ? undefined : resolve(options.infoFile);
    if (infoFile !== undefined) await writeDevnetInfo(infoFile, info);

    let stopping: Promise<void> | undefined;
    return {
      info,
      ...(infoFile === undefined ? {} : { infoFile }),
      stop() {
        stopping ??= (async () => {
          await node.stop();
          if (infoFile !== undefined) await rm(infoFile, { force: true });
        })();
        return stopping;
      },
      kill: node.kill,
    };
  } catch (error) {
    await node.stop();
    throw error;
  }
}

/** The devnet's accounts by role: hardhat's (and anvil's) publicly known development accounts. */
export function devnetAccounts(): DevnetAccount[] {
  return accountRoles.map(({ index, role }) => {
    const account = hardhatAccounts[index];
    if (account === undefined) throw new RangeError(`devnetAccounts: account #${index} is not known`);
    return { address: account.address, privateKey: account.privateKey, role };
  });
}

/**
 * Deploys, with the deployer account, the ForwarderFactory, test USDC, USDT and DAI on a fresh
 * node and mints each payer 1 000 000 of every token; returns the {@link DevnetInfo} for it.
 */
export async function deployDevnet(node: Pick<HardhatNode, 'rpcUrl' | 'wsUrl' | 'chainId'>): Promise<DevnetInfo> {
  const accounts = devnetAccounts();
  const deployer = createEvmWriteClients({
    rpcUrl: node.rpcUrl,
    chainId: node.chainId,
    privateKey: hardhatAccounts[0].privateKey,
    pollingIntervalMs: 25,
  });
  const factory = await deployForwarderFactory(deployer);
  const usdc = await deployTestToken(deployer, { name: 'Test USD Coin', symbol: 'USDC', decimals: 6 });
  const usdt = await deployTestToken(deployer, {
    name: 'Test Tether USD',
    symbol: 'USDT',
    decimals: 6,
    kind: 'tether-like',
  });
  const dai = await deployTestToken(deployer, { name: 'Test Dai Stablecoin', symbol: 'DAI', decimals: 18 });

  for (const payer of accounts.filter((account) => account.role === 'payer')) {
    for (const [token, decimals] of [
      [usdc.address, 6n],
      [usdt.address, 6n],
      [dai.address, 18n],
    ] as const) {
      const hash = await deployer.walletClient.writeContract({
        address: token,
        abi: testTokenAbi,
        functionName: 'mint',
        args: [payer.address, payerTokenBalance * 10n ** decimals],
      });
      await deployer.publicClient.waitForTransactionReceipt({ hash });
    }
  }
  return {
    chainId: node.chainId,
    rpcUrl: node.rpcUrl,
    wsUrl: node.wsUrl,
    contracts: { forwarderFactory: factory.address, usdc: usdc.address, usdt: usdt.address, dai: dai.address },
    accounts,
    startedAt: new Date().toISOString(),
  };
}
