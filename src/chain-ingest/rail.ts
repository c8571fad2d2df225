import type { AssetRef } from '../../machines/checkout-session.types.ts';
import type { Environment } from '../event-store/event-store.ts';
import { isExactInDecimals } from '../shared/money.ts';

/** A network a rail can take payments on. */
export type RailNetwork = {
  /** Bus name, e.g. `ethereum`, `base-sepolia`: the `<network>` of `chain.<network>.*`. */
  network: string;
  chainId: number;
  name: string;
  kind: 'evm' | 'solana' | 'tron';
  environment: Environment;
  nativeCurrency: { symbol: string; decimals: number };
  explorerTxUrl: string;
  /** The explorer's name (`Etherscan`), when the network definition gives one. */
  explorerName?: string;
  assets: AssetRef[];
};

/**
 * A payment rail: which networks it offers, which merchant wallets it can pay out to, and where a
 * session's payer sends money. The address is derived from (network, merchant wallet, session)
 * alone, so it is known at creation.
 */
export type Rail = {
  name: string;
  networks(environment: Environment): RailNetwork[];
  /**
   * Why the rail cannot pay a merchant at `address` on `network` (funds sent there would be lost,
   * or it is Weir's own machinery on that network), or null when it can. `address` is already in
   * the format of the network's kind; each rail family says its own rule.
   */
  unpayableAddress(input: { network: RailNetwork; address: string }): string | null;
  depositAddress(input: {
    network: RailNetwork;
    organizationId: string;
    checkoutSessionId: string;
    merchantAddress: string;
  }): string;
};

/** The networks a rail offers in either environment, test first. */
export const everyNetwork = (rail: Pick<Rail, 'networks'>): RailNetwork[] => [
  ...rail.networks('test'),
  ...rail.networks('live'),
];

/**
 * The assets (as `SYMBOL on Network`) that could take `amount` (API scale) of `currency` exactly, on
 * the networks of `environment` (only `chainIds` when given): an amount finer than an asset's
 * decimals (1e-8 USDC, which has 6) cannot be paid in it.
 */
export function assetsPayingExactly(
  rail: Pick<Rail, 'networks'>,
  environment: Environment,
  currency: string,
  amount: bigint,
  chainIds: readonly number[] = [],
): { payable: string[]; unpayable: string[] } {
  const payable: string[] = [];
  const unpayable: string[] = [];
  for (const network of rail.networks(environment)) {
    if (chainIds.length > 0 && !chainIds.includes(network.chainId)) continue;
    for (const asset of network.assets) {
      if (asset.currency !== currency) continue;
      (isExactInDecimals(amount, asset.decimals) ? payable : unpayable).push(`${asset.symbol} on ${network.name}`);
    }
  }
  return { payable, unpayable };
}

/** Several rails seen as one. */
export function combineRails(rails: Rail[]): Rail & { railFor(network: string): Rail | undefined } {
  const railFor = (network: string) => rails.find((r) => everyNetwork(r).some((n) => n.network === network));
  return {
    name: rails.map((r) => r.name).join('+'),
    networks: (environment) => rails.flatMap((r) => r.networks(environment)),
    unpayableAddress(input) {
      const rail = railFor(input.network.network);
      return rail ? rail.unpayableAddress(input) : `no rail offers network ${input.network.network}`;
    },
    depositAddress(input) {
      const rail = railFor(input.network.network);
      if (!rail) throw new Error(`no rail offers network ${input.network.network}`);
      return rail.depositAddress(input);
    },
    railFor,
  };
}
