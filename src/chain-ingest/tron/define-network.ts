import type { AssetRef } from '../../../machines/checkout-session.types.ts';
import type { Environment } from '../../event-store/event-store.ts';
import {
  assetIdOf,
  assetRefOf,
  checkAssets,
  frozenNetwork,
  railNetworkOf,
  checkNetworkBase,
  failFor,
  NATIVE_ASSET_ADDRESS,
  type Fail,
} from '../network-definition.ts';
import type { RailNetwork } from '../rail.ts';
import { tronAddressProblem, type TronAddress } from './address.ts';

/** One asset a Tron network takes payments in: TRX itself or a TRC-20 contract. */
export type TronAssetDefinition = {
  readonly symbol: string;
  readonly name: string;
  /** Lowercase currency code (`usdt`, `usdc`, `trx`). */
  readonly currency: string;
  /** The TRC-20 contract in Base58Check (T…), or `native` for TRX. */
  readonly address: TronAddress | typeof NATIVE_ASSET_ADDRESS;
  readonly decimals: number;
  readonly key?: string;
};

/** A Tron network as written in `networks.ts`. */
export type TronNetworkDefinition = {
  /** Bus name: the `<network>` of `chain.<network>.*`. */
  readonly network: string;
  /**
   * What the full node's `eth_chainId` answers (the last 4 bytes of the genesis block id). It keys
   * RPC endpoints (`WEIR_RPC_<chainId>`) and the API's `chainId`, and the rail checks the node with it.
   */
  readonly chainId: number;
  readonly name: string;
  readonly environment: Environment;
  readonly nativeCurrency: { readonly name: string; readonly symbol: string; readonly decimals: number };
  /** `txUrl` holds `{hash}` where the transaction id goes (64 hex digits, no 0x). */
  readonly explorer: { readonly name: string; readonly txUrl: string };
  /**
   * Blocks on top of a payment's block before it is final, for a node that cannot answer the
   * `finalized` tag; the rail prefers `finalized` (the latest solidified block) when it can.
   */
  readonly confirmations: number;
  /** Where `confirmations` comes from. */
  readonly confirmationsSource: string;
  /** Block interval, for polling intervals and ETA estimates. */
  readonly blockTimeMs: number;
  readonly assets: readonly TronAssetDefinition[];
};

/** A checked, deeply frozen Tron network, as returned by `defineTronNetwork`. */
export type TronNetwork = TronNetworkDefinition & { readonly kind: 'tron' };

/**
 * Checks and freezes a Tron network definition, like `defineSolanaNetwork`. Throws a
 * `NetworkDefinitionError` for a bad bus name, chain id, explorer URL, confirmations, contract
 * address (Base58Check with its checksum), decimals or a duplicate asset.
 */
export function defineTronNetwork<const T extends TronNetworkDefinition>(definition: T): T & { readonly kind: 'tron' } {
  const fail = failFor(definition.network);
  checkNetworkBase(definition, fail);
  if (!Number.isSafeInteger(definition.confirmations) || definition.confirmations < 1)
    fail(`confirmations must be a positive integer, got ${definition.confirmations}`);
  if (definition.confirmationsSource.trim() === '') fail('confirmationsSource must say where confirmations come from');
  if (!Number.isFinite(definition.blockTimeMs) || definition.blockTimeMs <= 0)
    fail(`blockTimeMs must be a positive number, got ${definition.blockTimeMs}`);
  checkAssets(definition, (asset, label) => checkContract(asset, label, fail), fail);

  return frozenNetwork(definition, 'tron');
}

function checkContract(asset: TronAssetDefinition, label: string, fail: Fail): void {
  const problem = tronAddressProblem(asset.address);
  if (problem !== null) fail(`${label}: contract ${JSON.stringify(asset.address)} ${problem}`);
}

/** The asset id (`<network>:<key>`, e.g. `tron-mainnet:usdt`). */
export const tronAssetId: (network: Pick<TronNetworkDefinition, 'network'>, asset: TronAssetDefinition) => string =
  assetIdOf;

/** The asset as the rest of Weir sees it: `address` is the T… contract, or `native` for TRX. */
export const toTronAssetRef: (
  network: Pick<TronNetworkDefinition, 'network' | 'chainId'>,
  asset: TronAssetDefinition,
) => AssetRef = assetRefOf;

/** The network as a rail offers it (`Rail.networks`). */
export const toTronRailNetwork = (network: TronNetworkDefinition): RailNetwork => railNetworkOf(network, 'tron');
