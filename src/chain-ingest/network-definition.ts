import type { AssetRef } from '../../machines/checkout-session.types.ts';
import type { RailNetwork } from './rail.ts';
import type { Environment } from '../event-store/event-store.ts';

/**
 * Checks every chain family's network definition shares (EVM `define-network.ts`, Solana
 * `solana/define-network.ts`): bus name, chain id, explorer URL, decimals and asset ids.
 */

/** The address an asset definition gives the chain's native coin instead of a contract or mint. */
export const NATIVE_ASSET_ADDRESS = 'native';

/** The explorer a local chain names: a placeholder, since no explorer runs beside it (nothing answers there). */
export const LOCAL_EXPLORER_TX_URL = 'http://127.0.0.1/tx/{hash}';

/**
 * The network's explorer as a transaction URL template (`…/tx/{hash}`); null when it has none: no
 * template, or a local chain's placeholder. The one rule of the API, the dashboard and the hosted page.
 */
export function explorerTemplateOf(network: Pick<RailNetwork, 'explorerTxUrl'>): string | null {
  const template = network.explorerTxUrl;
  return template === '' || template === LOCAL_EXPLORER_TX_URL ? null : template;
}

/** A Tron txID or block id as Weir keeps it: `0x` and 64 hex digits (the JSON-RPC form its follower reads). */
const KEPT_TRON_HASH = /^0x[0-9a-fA-F]{64}$/;

/**
 * A transaction (or block) hash as the network's own tools show it, for what merchants and payers
 * read: a Tron txID or block id bare, as Tronscan, TronWeb and TronLink take them; any other as kept. The log, transfer ids and
 * read models keep the `0x…` form, so only presenters call this.
 */
export function shownTransactionHash(kind: RailNetwork['kind'] | null, hash: string): string {
  return kind === 'tron' && KEPT_TRON_HASH.test(hash) ? hash.slice(2) : hash;
}

/**
 * The explorer page of a transaction; null when the network has none (a local chain's placeholder).
 * The hash goes in as shown (a Tron txID bare, as Tronscan's pages take it): the network's `kind` is
 * required, so no caller gets a `0x…` Tronscan link by leaving it out.
 */
export function explorerLinkOf(network: Pick<RailNetwork, 'explorerTxUrl' | 'kind'>, hash: string): string | null {
  return explorerTemplateOf(network)?.replace('{hash}', shownTransactionHash(network.kind, hash)) ?? null;
}

/** A network definition is malformed; the message names the network and the offending field. */
export class NetworkDefinitionError extends Error {
  override name = 'NetworkDefinitionError';
}

/** Reports one problem with a definition; never returns. */
export type Fail = (message: string) => never;

/** What every family's asset definition has. */
export type AssetDefinitionBase = {
  readonly symbol: string;
  readonly name: string;
  readonly currency: string;
  readonly address: string;
  readonly decimals: number;
  readonly key?: string;
};

/** What every family's network definition has. */
export type NetworkDefinitionBase = {
  readonly network: string;
  readonly chainId: number;
  readonly name: string;
  readonly environment: Environment;
  readonly nativeCurrency: { readonly decimals: number };
  readonly explorer: { readonly txUrl: string };
};

const NETWORK_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const ASSET_KEY = /^[a-z0-9]+(?:[.-][a-z0-9]+)*$/;
const CURRENCY = /^[a-z0-9]+$/;

/** A `fail` that throws a `NetworkDefinitionError` prefixed with the network's name. */
export function failFor(network: string): Fail {
  return (message) => {
    throw new NetworkDefinitionError(`network ${JSON.stringify(network)}: ${message}`);
  };
}

/** Checks the fields every family shares: bus name, chain id, name, environment, native decimals, explorer. */
export function checkNetworkBase(definition: NetworkDefinitionBase, fail: Fail): void {
  if (!NETWORK_NAME.test(definition.network))
    fail('network must be lowercase letters and digits joined by dashes, e.g. "base-sepolia"');
  if (!Number.isSafeInteger(definition.chainId) || definition.chainId <= 0)
    fail(`chainId must be a positive integer, got ${definition.chainId}`);
  if (definition.name.trim() === '') fail('name must not be empty');
  if (definition.environment !== 'test' && definition.environment !== 'live')
    fail(`environment must be "test" or "live", got ${JSON.stringify(definition.environment)}`);
  checkDecimals(definition.nativeCurrency.decimals, 'nativeCurrency.decimals', fail);
  checkTxUrl(definition.explorer.txUrl, fail);
}

/**
 * Checks the assets' shared fields and that ids and addresses are unique; `checkAddress` says
 * what a token address must look like in this family (it may `fail`). The native coin must have
 * the native decimals.
 */
export function checkAssets<A extends AssetDefinitionBase>(
  definition: NetworkDefinitionBase & { readonly assets: readonly A[] },
  checkAddress: (asset: A, label: string) => void,
  fail: Fail,
  normalizeAddress: (address: string) => string = (address) => address,
): void {
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
    } else checkAddress(asset, label);
    const key = assetKey(asset);
    if (!ASSET_KEY.test(key))
      fail(
        `${label}: asset key ${JSON.stringify(key)} must be lowercase letters and digits, optionally joined by "." or "-"`,
      );
    if (keys.has(key)) fail(`two assets share the id ${definition.network}:${key}`);
    keys.add(key);
    const normalized = normalizeAddress(asset.address);
    if (addresses.has(normalized)) fail(`two assets share the address ${asset.address}`);
    addresses.add(normalized);
  }
}

/**
 * The part of an asset id after `<network>:`: the definition's `key`, else the lowercased symbol
 * for a token and the currency for the native coin (so testnet `tBNB` is still `bnb`).
 */
export function assetKey(asset: Pick<AssetDefinitionBase, 'key' | 'symbol' | 'currency' | 'address'>): string {
  if (asset.key !== undefined) return asset.key;
  return asset.address === NATIVE_ASSET_ADDRESS ? asset.currency : asset.symbol.toLowerCase();
}

export function checkDecimals(decimals: number, field: string, fail: Fail): void {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 36)
    fail(`${field} must be an integer from 0 to 36, got ${decimals}`);
}

function checkTxUrl(txUrl: string, fail: Fail): void {
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

/** The asset id (`<network>:<key>`, e.g. `ethereum:usdc`, `polygon:usdc.e`, `solana-mainnet:usdc`). */
export function assetIdOf(network: { network: string }, asset: AssetDefinitionBase): string {
  return `${network.network}:${assetKey(asset)}`;
}

/** The asset as the rest of Weir sees it (`address` is a contract, a mint, or `native`). */
export function assetRefOf(network: { network: string; chainId: number }, asset: AssetDefinitionBase): AssetRef {
  return {
    id: assetIdOf(network, asset),
    name: asset.name,
    symbol: asset.symbol,
    currency: asset.currency,
    chainId: network.chainId,
    address: asset.address,
    decimals: asset.decimals,
  };
}

/** What a network needs to be offered by a rail: the base, with its coin's symbol, explorer name and assets. */
type OfferedNetwork = NetworkDefinitionBase & {
  readonly nativeCurrency: { readonly symbol: string; readonly decimals: number };
  readonly explorer: { readonly name: string; readonly txUrl: string };
  readonly assets: readonly AssetDefinitionBase[];
};

/** The network as a rail offers it (`Rail.networks`), whatever its family. */
export function railNetworkOf(network: OfferedNetwork, kind: RailNetwork['kind']): RailNetwork {
  return {
    network: network.network,
    chainId: network.chainId,
    name: network.name,
    kind,
    environment: network.environment,
    nativeCurrency: { symbol: network.nativeCurrency.symbol, decimals: network.nativeCurrency.decimals },
    explorerTxUrl: network.explorer.txUrl,
    explorerName: network.explorer.name,
    assets: network.assets.map((asset) => assetRefOf(network, asset)),
  };
}

/** A checked definition frozen deeply (its coin, explorer and each asset), tagged with its family. */
export function frozenNetwork<T extends OfferedNetwork, K extends RailNetwork['kind']>(
  definition: T,
  kind: K,
): T & { readonly kind: K } {
  return Object.freeze({
    ...definition,
    kind,
    nativeCurrency: Object.freeze({ ...definition.nativeCurrency }),
    explorer: Object.freeze({ ...definition.explorer }),
    assets: Object.freeze(definition.assets.map((asset) => Object.freeze({ ...asset }))),
  });
}
