import type { AssetRef } from '../../machines/checkout-session.types.ts';
import type { RailNetwork } from './rail.ts';

/** The sweep gas of one deposit address, and its price in the paying asset's currency (10^8-scaled). */
export type GasQuote = { gas: bigint; amount: bigint };

/**
 * Prices the gas a sweep of one deposit address costs, for organizations that collect it from
 * the payer. Null when this network/asset pair cannot be priced (the payer then pays no gas).
 */
export type GasFeeQuoter = { quote(network: RailNetwork, asset: AssetRef): Promise<GasQuote | null> };

export const noGasFees: GasFeeQuoter = { quote: async () => null };
