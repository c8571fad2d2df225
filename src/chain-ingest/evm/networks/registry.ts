import type { AssetRef } from '../../../../machines/checkout-session.types.ts';
import type { Environment } from '../../../event-store/event-store.ts';
import type { RailNetwork } from '../../rail.ts';
import { NATIVE_ASSET_ADDRESS, toAssetRef, toRailNetwork, type EvmNetwork } from './define-network.ts';

/** JSON-RPC endpoints of one chain. */
export type RpcEndpoints = { readonly http: readonly string[]; readonly ws: readonly string[] };

/** Endpoints by chain id. */
export type RpcEndpointsByChainId = Readonly<Record<number, RpcEndpoints>>;

/** The registry was given networks or endpoints that do not fit together; the message says which. */
export class NetworkRegistryError extends Error {
  override name = 'NetworkRegistryError';
}

export type NetworkRegistry = {
  /** Every network the registry was given, offered or not. */
  all(): readonly EvmNetwork[];
  /** Networks of that environment with at least one HTTP endpoint; a network without one is simply not offered. */
  offered(environment: Environment): EvmNetwork[];
  /** `offered(environment)` as rail networks (`Rail.networks`). */
  railNetworks(environment: Environment): RailNetwork[];
  /** Any known network by chain id, offered or not (old records still name networks that lost their endpoint). */
  byChainId(chainId: number): EvmNetwork | undefined;
  /** Any known network by bus name, offered or not. */
  byNetwork(network: string): EvmNetwork | undefined;
  /** The endpoints configured for a chain; empty lists when none. */
  endpoints(chainId: number): RpcEndpoints;
  /**
   * The asset a contract address (any letter case) stands for on a chain; `native` or the zero
   * address give the native coin.
   */
  assetByAddress(chainId: number, address: string): AssetRef | undefined;
};

const NO_ENDPOINTS: RpcEndpoints = Object.freeze({ http: Object.freeze([]), ws: Object.freeze([]) });

/**
 * The EVM networks Weir can take payments on, with where to reach them. Throws a
 * `NetworkRegistryError` when two networks share a chain id or bus name, or when `rpc` names a
 * chain id no network has.
 */
export function createNetworkRegistry(input: {
  networks: readonly EvmNetwork[];
  rpc: RpcEndpointsByChainId;
}): NetworkRegistry {
  const byChainId = new Map<number, EvmNetwork>();
  const byName = new Map<string, EvmNetwork>();
  const assets = new Map<string, AssetRef>();
  for (const network of input.networks) {
    if (byChainId.has(network.chainId))
      throw new NetworkRegistryError(
        `networks ${byChainId.get(network.chainId)?.network} and ${network.network} share chain id ${network.chainId}`,
      );
    if (byName.has(network.network)) throw new NetworkRegistryError(`two networks are named ${network.network}`);
    byChainId.set(network.chainId, network);
    byName.set(network.network, network);
    for (const asset of network.assets)
      assets.set(assetKey(network.chainId, asset.address), toAssetRef(network, asset));
  }

  const endpoints = new Map<number, RpcEndpoints>();
  const unknown: string[] = [];
  for (const [key, value] of Object.entries(input.rpc)) {
    const chainId = Number(key);
    if (!byChainId.has(chainId)) unknown.push(key);
    else
      endpoints.set(chainId, Object.freeze({ http: Object.freeze([...value.http]), ws: Object.freeze([...value.ws]) }));
  }
  if (unknown.length > 0) {
    throw new NetworkRegistryError(
      `RPC endpoints given for unknown chain id(s) ${unknown.join(', ')}; known: ${[...byChainId.keys()].join(', ')}`,
    );
  }

  const all = Object.freeze([...input.networks]);
  const offered = (environment: Environment) =>
    all.filter(
      (network) => network.environment === environment && (endpoints.get(network.chainId)?.http.length ?? 0) > 0,
    );

  return {
    all: () => all,
    offered,
    railNetworks: (environment) => offered(environment).map(toRailNetwork),
    byChainId: (chainId) => byChainId.get(chainId),
    byNetwork: (network) => byName.get(network),
    endpoints: (chainId) => endpoints.get(chainId) ?? NO_ENDPOINTS,
    assetByAddress: (chainId, address) => assets.get(assetKey(chainId, address)),
  };
}

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

function assetKey(chainId: number, address: string): string {
  const normalized = address.toLowerCase();
  return `${chainId}:${normalized === ZERO_ADDRESS ? NATIVE_ASSET_ADDRESS : normalized}`;
}
