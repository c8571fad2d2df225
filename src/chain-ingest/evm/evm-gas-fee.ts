import { createPublicClient, http } from 'viem';
import type { Clock } from '../../shared/clock.ts';
import { type GasFeeQuoter, inAssetUnits } from '../gas-fee.ts';
import type { NetworkRegistry } from './networks/registry.ts';

/**
 * Gas of sweeping one deposit address: deploying its forwarder and flushing one asset. Measured on
 * hardhat (contracts tests): 201,074 for a new forwarder flushing three assets to a new wallet,
 * ~100–180k in batches; 160,000 covers the usual single-asset case.
 */
export const SWEEP_GAS_PER_ADDRESS = 160_000n;
const GAS_PRICE_TTL_MS = 15_000;
const WEI_PER_API_UNIT = 10n ** 10n; // 18-decimal native coins -> 10^8 API scale

/** Ceiling division: the payer covers the whole cost, never a fraction less. */
const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;

/**
 * Quotes sweep gas on EVM networks from the node's current gas price. Exact for sessions paid in
 * the network's native coin (or its wrapped form); for other assets the operator gives the native
 * coin's price in that asset's currency (`WEIR_NATIVE_PRICE_<chainId>_<CURRENCY>`, e.g.
 * `WEIR_NATIVE_PRICE_1_USDC=3000.5`), since Weir has no price feed of its own.
 */
export function createEvmGasFeeQuoter(deps: {
  registry: NetworkRegistry;
  clock: Clock;
  nativePrices?: ReadonlyMap<string, string>;
}): GasFeeQuoter {
  const prices = new Map<number, { wei: bigint; at: number }>();
  async function gasPrice(chainId: number): Promise<bigint | null> {
    const cached = prices.get(chainId);
    if (cached && deps.clock.now() - cached.at < GAS_PRICE_TTL_MS) return cached.wei;
    const url = deps.registry.endpoints(chainId).http[0];
    if (!url) return null;
    try {
      const wei = await createPublicClient({ transport: http(url, { retryCount: 1, timeout: 5000 }) }).getGasPrice();
      prices.set(chainId, { wei, at: deps.clock.now() });
      return wei;
    } catch {
      return cached?.wei ?? null;
    }
  }
  return {
    async quote(network, asset) {
      if (network.kind !== 'evm' || network.nativeCurrency.decimals !== 18) return null;
      const wei = await gasPrice(network.chainId);
      if (wei === null) return null;
      const costWei = SWEEP_GAS_PER_ADDRESS * wei;
      const native = network.nativeCurrency.symbol.toLowerCase();
      if (asset.address === 'native' || asset.currency === native || asset.currency === `w${native}`) {
        return { gas: SWEEP_GAS_PER_ADDRESS, amount: inAssetUnits(ceilDiv(costWei, WEI_PER_API_UNIT), asset.decimals) };
      }
      const price = deps.nativePrices?.get(`${network.chainId}_${asset.currency.toUpperCase()}`);
      if (!price || !/^[0-9]+(\.[0-9]{1,8})?$/.test(price)) return null;
      const [whole, fraction = ''] = price.split('.');
      const priceApi = BigInt(whole!) * 10n ** 8n + BigInt(fraction.padEnd(8, '0')); // asset per native coin, 10^8-scaled
      return {
        gas: SWEEP_GAS_PER_ADDRESS,
        amount: inAssetUnits(ceilDiv(costWei * priceApi, 10n ** 18n), asset.decimals),
      };
    },
  };
}

/** `WEIR_NATIVE_PRICE_<chainId>_<CURRENCY>=decimal` settings, keyed `<chainId>_<CURRENCY>`. */
export function parseNativePrices(env: Readonly<Record<string, string | undefined>>): Map<string, string> {
  const prices = new Map<string, string>();
  for (const [name, value] of Object.entries(env)) {
    const match = /^WEIR_NATIVE_PRICE_(\d+_[A-Z0-9.]+)$/.exec(name);
    if (match && value) prices.set(match[1]!, value);
  }
  return prices;
}
