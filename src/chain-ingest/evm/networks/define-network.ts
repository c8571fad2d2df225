import { getAddress, type Address } from 'viem';
import type { AssetRef } from '../../../../machines/checkout-session.types.ts';
import type { Environment } from '../../../event-store/event-store.ts';
import {
  assetIdOf,
  assetRefOf,
  checkAssets,
  frozenNetwork,
  railNetworkOf,
  checkNetworkBase,
  failFor,
  NATIVE_ASSET_ADDRESS,
  NetworkDefinitionError,
} from '../../network-definition.ts';
import type { RailNetwork } from '../../rail.ts';

export { NATIVE_ASSET_ADDRESS, NetworkDefinitionError };

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

/**
 * Checks and freezes a network definition, in the manner of viem's `defineChain`. Throws a
 * `NetworkDefinitionError` for a bad bus name, chain id, explorer URL, confirmation count,
 * asset address (must be EIP-55 checksummed), decimals or a duplicate asset.
 */
export function defineEvmNetwork<const T extends EvmNetworkDefinition>(definition: T): T & { readonly kind: 'evm' } {
  const fail = failFor(definition.network);
  checkNetworkBase(definition, fail);
  if (!Number.isSafeInteger(definition.confirmations) || definition.confirmations < 1)
    fail(`confirmations must be an integer >= 1, got ${definition.confirmations}`);
  if (definition.confirmationsSource.trim() === '')
    fail('confirmationsSource must say where the confirmation count comes from');
  if (!Number.isFinite(definition.blockTimeMs) || definition.blockTimeMs <= 0)
    fail(`blockTimeMs must be a positive number, got ${definition.blockTimeMs}`);
  checkAssets(
    definition,
    (asset, label) => {
      let checksummed: string | undefined;
      try {
        checksummed = getAddress(asset.address);
      } catch {
        fail(`${label}: ${JSON.stringify(asset.address)} is not an address`);
      }
      if (checksummed !== asset.address) fail(`${label}: address must be EIP-55 checksummed, write ${checksummed}`);
    },
    fail,
    (address) => address.toLowerCase(),
  );

  return frozenNetwork(definition, 'evm');
}

/** The asset id (`<network>:<key>`). */
export const assetId: (network: Pick<EvmNetworkDefinition, 'network'>, asset: EvmAssetDefinition) => string = assetIdOf;

/** The asset as the rest of Weir sees it. */
export const toAssetRef: (
  network: Pick<EvmNetworkDefinition, 'network' | 'chainId'>,
  asset: EvmAssetDefinition,
) => AssetRef = assetRefOf;

/** The network as a rail offers it (`Rail.networks`). */
export const toRailNetwork = (network: EvmNetworkDefinition): RailNetwork => railNetworkOf(network, 'evm');

/** The explorer link for one transaction. */
export function explorerTxUrl(network: Pick<EvmNetworkDefinition, 'explorer'>, hash: string): string {
  return network.explorer.txUrl.replace('{hash}', hash);
}
