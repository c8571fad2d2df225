import { getAddress, type Address } from 'viem';
import type { AssetRef } from '../../../../machines/checkout-session.types.ts';
import type { Environment } from '../../../event-store/event-store.ts';
import type { RailNetwork } from '../../rail.ts';

/** The address an asset definition gives the chain's native coin instead of a contract. */
export const NATIVE_ASSET_ADDRESS = 'native';

/** One asset a network can take payments in: its native coin or an ERC-20 contract. */
export type EvmAssetDefinition = {
  /** Ticker shown to payers, e.g. `USDC`, `USDC.e`, `USDbC`, `WETH`. */
  readonly symbol: string;
  readonly name: string;
  /** Lowercase currency code (`usdc`, `usdt`, `dai`, `eth`, `weth`, `pol`, `bnb`); bridged USDC is still `usdc`. */
  readonly currency: string;
  /** EIP-55 checksummed contract address, or `native` for the coin itself. */
  readonly address: Address | typeof NATIVE_ASSET_ADDRESS;
  readonly decimals: number;
  /**
   * The part of the asset id after `<network>:`. Defaults to the lowercased symbol for a
   * token and to the currency for the native coin (so testnet `tBNB` is still `bnb`).
   */
  readonly key?: string;
};

/** A network as written in a family file (`ethereum.ts`, `base.ts`, ...). */
export type EvmNetworkDefinition = {
  /** Bus name, lowercase words joined by dashes: the `<network>` of `chain.<network>.*`. */
  readonly network: string;
  readonly chainId: number;
  readonly name: string;
  readonly environment: Environment;
  readonly nativeCurrency: { readonly name: string; readonly symbol: string; readonly decimals: number };
  /** `txUrl` holds `{hash}` where the transaction hash goes: `https://etherscan.io/tx/{hash}`. */
  readonly explorer: { readonly name: string; readonly txUrl: string };
  /**
   * Blocks that must exist, counting the one holding the transfer, before a payment counts as
   * confirmed: confirmed when `head - transferBlock + 1 >= confirmations` (1 = mined), the
   * convention of viem's `waitForTransactionReceipt({ confirmations })`.
   */
  readonly confirmations: number;
  /** Where `confirmations` comes from and why it was chosen. */
  readonly confirmationsSource: string;
  /** Approximate time between blocks, for polling intervals and ETA estimates. */
  readonly blockTimeMs: number;
  readonly assets: readonly EvmAssetDefinition[];
};

/** A checked, deeply frozen network definition, as returned by `defineEvmNetwork`. */
export type EvmNetwork = EvmNetworkDefinition & { readonly kind: 'evm' };

/** A network definition is malformed; the message names the network and the offending field. */
export class NetworkDefinitionError extends Error {
  override name = 'NetworkDefinitionError';
}

const NETWORK_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const ASSET_KEY = /^[a-z0-9]+(?:[.-][a-z0-9]+)*$/;
const CURRENCY = /^[a-z0-9]+$/;

/**
 * Checks and freezes a network definition, in the manner of viem's `defineChain`. Throws a
 * `NetworkDefinitionError` for a bad bus name, chain id, explorer URL, confirmation count,
 * asset address (must be EIP-55 checksummed), decimals or a duplicate asset.
 */
export function defineEvmNetwork<const T extends EvmNetworkDefinition>(definition: T): T & { readonly kind: 'evm' } {
  const where = `network ${JSON.stringify(definition.network)}`;
  const fail = (message: string): never => {
    throw new NetworkDefinitionError(`${where}: ${message}`);
  };
  if (!NETWORK_NAME.test(definition.network))
    fail('network must be lowercase letters and digits joined by dashes, e.g. "base-sepolia"');
  if (!Number.isSafeInteger(definition.chainId) || definition.chainId <= 0)
    fail(`chainId must be a positive integer, got ${definition.chainId}`);
  if (definition.name.trim() === '') fail('name must not be empty');
  if (definition.environment !== 'test' && definition.environment !== 'live')
    fail(`environment must be "test" or "live", got ${JSON.stringify(definition.environment)}`);
  checkDecimals(definition.nativeCurrency.decimals, 'nativeCurrency.decimals', fail);
  checkTxUrl(definition.explorer.txUrl, fail);
  if (!Number.isSafeInteger(definition.confirmations) || definition.confirmations < 1)
    fail(`confirmations must be an integer >= 1, got ${definition.confirmations}`);
  if (definition.confirmationsSource.trim() === '')
    fail('confirmationsSource must say where the confirmation count comes from');
  if (!Number.isFinite(definition.blockTimeMs) || definition.blockTimeMs <= 0)
    fail(`blockTimeMs must be a positive number, got ${definition.blockTimeMs}`);

  const keys = new Set<string>();
  const addresses = new Set<string>();
  for (const asset of definition.assets) {
    const label = `asset ${asset.symbol}`;
    if (asset.symbol.trim() === '' || asset.name.trim() === '') fail(`${label}: symbol and name must not be empty`);
    if (!CURRENCY.test(asset.currency))
      fail(`${label}: currency must be a lowercase code such as "usdc", got ${JSON.stringify(asset.currency)}`);
    checkDecimals(asset.decimals, `${label} decimals`, fail);
    if (asset.address === NATIVE_ASSET_ADDRESS) {
      if (asset.decimals !== definition.nativeCurrency.decimals)
        fail(`${label}: the native coin has ${definition.nativeCurrency.decimals} decimals, not ${asset.decimals}`);
    } else {
      let checksummed: string | undefined;
      try {
        checksummed = getAddress(asset.address);
      } catch {
        fail(`${label}: ${JSON.stringify(asset.address)} is not an address`);
      }
      if (checksummed !== asset.address) fail(`${label}: address must be EIP-55 checksummed, write ${checksummed}`);
    }
    const key = assetKey(asset);
    if (!ASSET_KEY.test(key))
      fail(
        `${label}: asset key ${JSON.stringify(key)} must be lowercase letters and digits, optionally joined by "." or "-"`,
      );
    if (keys.has(key)) fail(`two assets share the id ${definition.network}:${key}`);
    keys.add(key);
    const normalized = asset.address.toLowerCase();
    if (addresses.has(normalized)) fail(`two assets share the address ${asset.address}`);
    addresses.add(normalized);
  }

  return Object.freeze({
    ...definition,
    kind: 'evm' as const,
    nativeCurrency: Object.freeze({ ...definition.nativeCurrency }),
    explorer: Object.freeze({ ...definition.explorer }),
    assets: Object.freeze(definition.assets.map((asset) => Object.freeze({ ...asset }))),
  });
}

/** The asset id (`<network>:<key>`, e.g. `ethereum:usdc`, `polygon:usdc.e`). */
export function assetId(network: Pick<EvmNetworkDefinition, 'network'>, asset: EvmAssetDefinition): string {
  return `${network.network}:${assetKey(asset)}`;
}

/** The asset as the rest of Weir sees it. */
export function toAssetRef(
  network: Pick<EvmNetworkDefinition, 'network' | 'chainId'>,
  asset: EvmAssetDefinition,
): AssetRef {
  return {
    id: assetId(network, asset),
    name: asset.name,
    symbol: asset.symbol,
    currency: asset.currency,
    chainId: network.chainId,
    address: asset.address,
    decimals: asset.decimals,
  };
}

/** The network as a rail offers it (`Rail.networks`). */
export function toRailNetwork(network: EvmNetworkDefinition): RailNetwork {
  return {
    network: network.network,
    chainId: network.chainId,
    name: network.name,
    kind: 'evm',
    environment: network.environment,
    nativeCurrency: { symbol: network.nativeCurrency.symbol, decimals: network.nativeCurrency.decimals },
    explorerTxUrl: network.explorer.txUrl,
    explorerName: network.explorer.name,
    assets: network.assets.map((asset) => toAssetRef(network, asset)),
  };
}

/** The explorer link for one transaction. */
export function explorerTxUrl(network: Pick<EvmNetworkDefinition, 'explorer'>, hash: string): string {
  return network.explorer.txUrl.replace('{hash}', hash);
}

function assetKey(asset: EvmAssetDefinition): string {
  if (asset.key !== undefined) return asset.key;
  return asset.address === NATIVE_ASSET_ADDRESS ? asset.currency : asset.symbol.toLowerCase();
}

function checkDecimals(decimals: number, field: string, fail: (message: string) => never): void {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 36)
    fail(`${field} must be an integer from 0 to 36, got ${decimals}`);
}

function checkTxUrl(txUrl: string, fail: (message: string) => never): void {
  if (!txUrl.includes('{hash}')) fail(`explorer.txUrl must contain "{hash}", got ${JSON.stringify(txUrl)}`);
  let url: URL | undefined;
  try {
    url = new URL(txUrl.replace('{hash}', '0x00'));
  } catch {
    fail(`explorer.txUrl is not a URL: ${JSON.stringify(txUrl)}`);
  }
  if (url && url.protocol !== 'https:' && url.protocol !== 'http:')
    fail(`explorer.txUrl must be http(s), got ${JSON.stringify(txUrl)}`);
}
