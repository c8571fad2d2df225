import type { AssetRef } from '../../machines/checkout-session.types.ts';
import { iconUrl, type IconName } from './assets.ts';

/** An asset's icon by its currency: the few Weir draws, a generic coin for the rest. */
const ASSET_ICONS: Record<string, IconName> = {
  usdc: 'usdc',
  usdt: 'usdt',
  dai: 'dai',
  eth: 'eth',
  weth: 'eth',
  pol: 'polygon',
  bnb: 'bsc',
  trx: 'trx',
};

export const assetIconUrl = (asset: Pick<AssetRef, 'currency'>): string =>
  iconUrl(ASSET_ICONS[asset.currency.toLowerCase()] ?? 'token');

/** A network's icon by its bus name's family (`base-sepolia` is Base's); local and test chains share one. */
export function networkIconUrl(network: string, chainId: number): string {
  if (chainId === 31_337 || chainId === 7357 || network === 'devnet') return iconUrl('local');
  const family = network.split('-')[0] ?? '';
  const known: Record<string, IconName> = {
    ethereum: 'ethereum',
    polygon: 'polygon',
    base: 'base',
    arbitrum: 'arbitrum',
    optimism: 'optimism',
    bsc: 'bsc',
    // Mainnet, Nile and the local Tron (whose name says it is local).
    tron: 'tron',
  };
  return iconUrl(known[family] ?? 'network');
}
