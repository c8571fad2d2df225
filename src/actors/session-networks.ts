import type { AssetRef } from '../../machines/checkout-session.types.ts';
import type { RailNetwork } from '../chain-ingest/rail.ts';
import { assetPaysCurrency } from '../shared/asset-currency.ts';
import { ValidationError } from '../shared/errors.ts';
import type { WithdrawalAddress } from './organization.ts';

/** A network a checkout session may pay to: the organization's default wallet there, and the assets it offers on it. */
export type SessionNetwork = {
  network: RailNetwork;
  wallet: Pick<WithdrawalAddress, 'id' | 'address' | 'chainId' | 'isDefault'>;
  /** Those of the network's assets the session offers, in the network's order; none: it offers nothing there. */
  assets: AssetRef[];
};

/**
 * The networks a session pays to, in the rail's order: those `allowedChainIds` allows (absent: all)
 * where the organization has a default wallet, each with the assets `offers` keeps. A session
 * creates its addresses from them; an invoice checks its preferred chain against them, so both hold
 * one rule of which networks are offered (`offeredChainIds`).
 */
export function sessionNetworks(
  networks: readonly RailNetwork[],
  wallets: readonly SessionNetwork['wallet'][],
  allowedChainIds: readonly number[] | undefined,
  offers: (asset: AssetRef) => boolean,
): SessionNetwork[] {
  return networks.flatMap((network) => {
    if (allowedChainIds && !allowedChainIds.includes(network.chainId)) return [];
    const wallet = wallets.find((w) => w.chainId === network.chainId && w.isDefault);
    return wallet ? [{ network, wallet, assets: network.assets.filter(offers) }] : [];
  });
}

/** The assets a session offers: those paying its currency, only those of `onlyAssets` when it names some (an invoice's `paymentMethods.assetIds`). */
export const offersAsset =
  (currency: string, onlyAssets: readonly string[] | null) =>
  (asset: AssetRef): boolean =>
    assetPaysCurrency(asset, currency) && (onlyAssets === null || onlyAssets.includes(asset.id));

/** The chains of those networks on which an asset is offered: the ones a payer can pay on. */
export const offeredChainIds = (networks: readonly SessionNetwork[]): number[] =>
  networks.filter((n) => n.assets.length > 0).map((n) => n.network.chainId);

/**
 * The refusal of a preferred chain that is not among `offered`, listing those and why they are
 * (sessions and invoices word it alike): `chainsBy`/`assetsBy` name the fields that restrict them,
 * `hint` ends it with how to correct it.
 */
export function preferredChainRefusal(refused: {
  chainId: number;
  of: 'session' | 'invoice';
  offered: readonly number[];
  currency: string;
  chainsBy: string | null;
  assetsBy?: string | null;
  hint: string;
}): ValidationError {
  const among = refused.chainsBy ? `those of ${refused.chainsBy}` : 'every network';
  const asset = `an asset${refused.assetsBy ? ` of ${refused.assetsBy}` : ''} in ${refused.currency.toUpperCase()}`;
  return new ValidationError(
    'paymentSetting.preferredChainId',
    `chain ${refused.chainId} is not one of the ${refused.of}'s networks (${refused.offered.join(', ') || 'none'}: ${among} with a payment method of this organization and ${asset}): prefer one of them${refused.hint}`,
  );
}
