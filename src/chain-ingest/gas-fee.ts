import type { AssetRef } from '../../machines/checkout-session.types.ts';
import { API_DECIMALS } from '../shared/money.ts';
import type { RailNetwork } from './rail.ts';

/**
 * The sweep gas of one deposit address, and its price in the paying asset's currency (10^8-scaled),
 * a whole number of the asset's smallest unit (see `inAssetUnits`).
 */
export type GasQuote = { gas: bigint; amount: bigint };

/**
 * Prices the gas a sweep of one deposit address costs, for organizations that collect it from
 * the payer. Null when this network/asset pair cannot be priced (the payer then pays no gas).
 */
export type GasFeeQuoter = { quote(network: RailNetwork, asset: AssetRef): Promise<GasQuote | null> };

export const noGasFees: GasFeeQuoter = { quote: async () => null };

/**
 * A gas price rounded up to a whole smallest unit of the asset it is paid in (10^-6 for USDC), so
 * the total is payable exactly in it: a fraction would be rounded up to the unit in the amount due
 * and paying exactly that would read as overpaid. Up, so the merchant never pays a sweep short.
 */
export function inAssetUnits(amount: bigint, decimals: number): bigint {
  const unit = 10n ** BigInt(API_DECIMALS - Math.min(decimals, API_DECIMALS));
  return ((amount + unit - 1n) / unit) * unit;
}
