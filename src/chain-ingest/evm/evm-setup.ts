import { getAddress, isAddress, type Address, type Hex } from 'viem';
import { readDevnetInfo, devnetAccount, type DevnetInfo } from './devnet/devnet-info.ts';
import { EVM_NETWORKS, KNOWN_EVM_CHAIN_IDS } from './networks/all-networks.ts';
import { devnetNetwork, DEVNET_CHAIN_ID } from './networks/devnet.ts';
import type { EvmNetwork } from './networks/define-network.ts';
import { createNetworkRegistry, type NetworkRegistry, type RpcEndpointsByChainId } from './networks/registry.ts';
import { loadRpcConfig } from './networks/rpc-config.ts';
import { SettingError } from '../../shared/setting-error.ts';

export const FACTORY_ENV_PREFIX = 'WEIR_FACTORY_';
export const CONFIRMATIONS_ENV_PREFIX = 'WEIR_CONFIRMATIONS_';

export class EvmConfigError extends SettingError {
  override readonly name = 'EvmConfigError';
}

export type EvmSetup = {
  registry: NetworkRegistry;
  /** ForwarderFactory per chain id; a network without one is not offered. */
  factories: Map<number, Address>;
  devnet: DevnetInfo | null;
  /** The operator's key paying sweep gas (`WEIR_SWEEPER_KEY`): the only key live networks sweep with. */
  sweeperKey: Hex | null;
  /** The devnet's own sweeper account: its key is public, so it sweeps the devnet alone, when the operator gave none. */
  devnetSweeperKey: Hex | null;
};

/** `WEIR_FACTORY_<chainId>=0x…`: where the ForwarderFactory is deployed on each network. */
export function parseFactoryEnv(env: Readonly<Record<string, string | undefined>>): Map<number, Address> {
  const factories = new Map<number, Address>();
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(FACTORY_ENV_PREFIX) || !value) continue;
    const chainId = Number(name.slice(FACTORY_ENV_PREFIX.length));
    if (!Number.isSafeInteger(chainId) || !KNOWN_EVM_CHAIN_IDS.includes(chainId))
      throw new EvmConfigError(`${name}: ${name.slice(FACTORY_ENV_PREFIX.length)} is not a known EVM chain id`);
    if (!isAddress(value, { strict: false }))
      throw new EvmConfigError(`${name} must be a contract address (0x and 40 hex digits)`);
    factories.set(chainId, getAddress(value));
  }
  return factories;
}

/** `WEIR_CONFIRMATIONS_<chainId>=N`: the operator's own confirmation depth for a network. */
export function parseConfirmationsEnv(
  env: Readonly<Record<string, string | undefined>>,
  /** Chain ids of other families whose rails read the same variable (Tron's), left to them. */
  otherChainIds: readonly number[] = [],
): Map<number, number> {
  const depths = new Map<number, number>();
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(CONFIRMATIONS_ENV_PREFIX) || !value) continue;
    const chainId = Number(name.slice(CONFIRMATIONS_ENV_PREFIX.length));
    if (otherChainIds.includes(chainId)) continue;
    if (!Number.isSafeInteger(chainId) || !KNOWN_EVM_CHAIN_IDS.includes(chainId))
      throw new EvmConfigError(`${name}: ${name.slice(CONFIRMATIONS_ENV_PREFIX.length)} is not a known EVM chain id`);
    const depth = Number(value);
    if (!Number.isInteger(depth) || depth < 1 || depth > 10_000)
      throw new EvmConfigError(`${name} must be a whole number of blocks from 1 to 10000`);
    depths.set(chainId, depth);
  }
  return depths;
}

/**
 * The EVM networks this server offers: the public networks with RPC endpoints and a factory, plus
 * the devnet when a devnet file is given, or the local chain's `devnet` info `weir serve` started
 * (its endpoints, factory and sweeper account come from it). The devnet is a test network only.
 */
export async function loadEvmSetup(input: {
  env: Readonly<Record<string, string | undefined>>;
  devnetFile?: string;
  /** The running local chain's info (the file wins when both are given). */
  devnet?: DevnetInfo | null;
  rpcConfigFile?: string;
  sweeperKey?: string;
  /** Chain ids of other rail families the same variables and file may name (left for their rails). */
  otherChainIds?: readonly number[];
}): Promise<EvmSetup> {
  const devnet = input.devnetFile ? await readDevnetInfo(input.devnetFile) : (input.devnet ?? null);
  let rpc: RpcEndpointsByChainId = await loadRpcConfig({
    env: input.env,
    configPath: input.rpcConfigFile,
    knownChainIds: [...KNOWN_EVM_CHAIN_IDS, ...(input.otherChainIds ?? [])],
  });
  // Another family's endpoints are read by its own rail, not registered here.
  const others = new Set(input.otherChainIds ?? []);
  rpc = Object.fromEntries(Object.entries(rpc).filter(([chainId]) => !others.has(Number(chainId))));
  const networks: EvmNetwork[] = [...EVM_NETWORKS];
  const factories = parseFactoryEnv(input.env);
  if (devnet) {
    if (devnet.chainId !== DEVNET_CHAIN_ID)
      throw new EvmConfigError(
        `${input.devnetFile ?? 'the local chain'}: the devnet chain id must be ${DEVNET_CHAIN_ID}`,
      );
    networks.push(devnetNetwork(devnet.contracts));
    rpc = { ...rpc, [DEVNET_CHAIN_ID]: { http: [devnet.rpcUrl], ws: [devnet.wsUrl] } };
    factories.set(DEVNET_CHAIN_ID, devnet.contracts.forwarderFactory);
  }
  let sweeperKey: Hex | null = null;
  if (input.sweeperKey) {
    if (!/^0x[0-9a-fA-F]{64}$/.test(input.sweeperKey))
      throw new EvmConfigError('WEIR_SWEEPER_KEY must be a private key: 0x and 64 hex digits');
    sweeperKey = input.sweeperKey as Hex;
  }
  const devnetSweeperKey = devnet ? devnetAccount(devnet, 'sweeper').privateKey : null;
  const depths = parseConfirmationsEnv(input.env, input.otherChainIds);
  const configured = networks.map((n) => {
    const confirmations = depths.get(n.chainId);
    return confirmations === undefined
      ? n
      : { ...n, confirmations, confirmationsSource: `WEIR_CONFIRMATIONS_${n.chainId} (operator setting)` };
  });
  return {
    registry: createNetworkRegistry({ networks: configured, rpc }),
    factories,
    devnet,
    sweeperKey,
    devnetSweeperKey,
  };
}
