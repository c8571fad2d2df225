import type { AssetRef } from '../../machines/checkout-session.types.ts';
import type { Rail, RailNetwork } from '../chain-ingest/rail.ts';
import type { Environment } from '../event-store/event-store.ts';
import { assetPaysCurrency } from '../shared/asset-currency.ts';
import { UnprocessableError, ValidationError } from '../shared/errors.ts';
import { evmChecksumHolds } from '../shared/evm-address.ts';
import type { WithdrawalAddress } from './organization.ts';

type Wallet = Pick<WithdrawalAddress, 'id' | 'address' | 'chainId' | 'isDefault'>;

/**
 * Why a merchant wallet on `network` cannot be paid, or null when it can: the rail's refusal
 * (`unpayableAddress`), or an EVM address failing its EIP-55 checksum (`typo`: stored before Weir
 * checked checksums; a likely typo, refused even where another network could be paid).
 */
export type WalletProblem = { reason: string; typo: boolean };

export function walletProblem(
  rail: Pick<Rail, 'unpayableAddress'>,
  network: RailNetwork,
  address: string,
): WalletProblem | null {
  if (network.kind === 'evm' && !evmChecksumHolds(address)) return { reason: 'fails its EIP-55 checksum', typo: true };
  const reason = rail.unpayableAddress({ network, address });
  return reason ? { reason, typo: false } : null;
}

/**
 * A network a checkout session uses: the organization's default wallet there, the assets the session
 * offers on it (at least one), and why the wallet cannot be paid (null: it can; else the session
 * creates no address there).
 */
export type SessionNetwork = {
  network: RailNetwork;
  wallet: Wallet;
  /** Those of the network's assets the session offers, in the network's order. */
  assets: AssetRef[];
  unpayable: WalletProblem | null;
};

/**
 * The one rule of which networks a session uses, in the rail's order: those `allowedChainIds` allows
 * (absent: all) where the organization has a default wallet and `offers` keeps an asset. A network
 * with no asset the session offers is not one of them, whatever its wallet. A session creates its
 * addresses on those it can pay (`payableChainIds`), and refuses a wallet it cannot pay there; an
 * invoice checks its preferred chain against them, and a payment link's page reads them.
 */
export function sessionNetworks(
  rail: Pick<Rail, 'networks' | 'unpayableAddress'>,
  environment: Environment,
  wallets: readonly Wallet[],
  allowedChainIds: readonly number[] | undefined,
  offers: (asset: AssetRef) => boolean,
): SessionNetwork[] {
  return rail.networks(environment).flatMap((network) => {
    if (allowedChainIds && !allowedChainIds.includes(network.chainId)) return [];
    const wallet = wallets.find((w) => w.chainId === network.chainId && w.isDefault);
    const assets = network.assets.filter(offers);
    if (!wallet || assets.length === 0) return [];
    return [{ network, wallet, assets, unpayable: walletProblem(rail, network, wallet.address) }];
  });
}

/** The assets a session offers: those paying its currency, only those of `onlyAssets` when it names some (an invoice's `paymentMethods.assetIds`). */
export const offersAsset =
  (currency: string, onlyAssets: readonly string[] | null) =>
  (asset: AssetRef): boolean =>
    assetPaysCurrency(asset, currency) && (onlyAssets === null || onlyAssets.includes(asset.id));

/** Those networks a payer can pay on: the ones whose wallet can be paid. */
export const payableSessionNetworks = (networks: readonly SessionNetwork[]): SessionNetwork[] =>
  networks.filter((n) => n.unpayable === null);

/** The chains of `payableSessionNetworks`: the only ones a session may prefer. */
export const payableChainIds = (networks: readonly SessionNetwork[]): number[] =>
  payableSessionNetworks(networks).map((n) => n.network.chainId);

/** What is wrong with a session network's wallet, and how to correct it (empty when nothing is). */
export function walletRefusal({ network, wallet, unpayable }: SessionNetwork): string {
  if (!unpayable) return '';
  const correct = unpayable.typo ? ': check it for a typo and correct it' : '; correct it';
  return `the payment method ${wallet.id} on chain ${network.chainId} has the address ${wallet.address}, which ${unpayable.reason}${correct} with PUT /api/v1/organization/withdrawal-addresses/${wallet.id}`;
}

/**
 * The code of a refusal because the merchant's own wallet is broken (a checksum that fails, an address
 * the rail refuses): the request is sound, the organization's setup is not, so a 422 wherever a
 * session would pay into it (a session's create, an invoice's finalize).
 */
export const WALLET_INVALID = 'payment_method_invalid';

/** The refusal of what would pay into `broken` wallets, each named with how to correct it; `what` says what is refused. */
export const walletsInvalid = (broken: readonly SessionNetwork[], what = ''): UnprocessableError =>
  new UnprocessableError(`${what}${broken.map(walletRefusal).join('; ')}`, WALLET_INVALID);

/**
 * The refusal of a preferred chain that is not one `networks` can pay on, listing those and why they
 * are (sessions, invoices and payment links word it alike): `chainsBy`/`assetsBy` name the fields that
 * restrict them, `hint` ends it with how to correct it, `field` is the one refused (a session's and an
 * invoice's `paymentSetting.preferredChainId` unless given). A chain left out for its wallet says what is wrong with it.
 */
export function preferredChainRefusal(refused: {
  chainId: number;
  of: 'session' | 'invoice' | 'payment link';
  field?: string;
  networks: readonly SessionNetwork[];
  currency: string;
  chainsBy: string | null;
  assetsBy?: string | null;
  hint: string;
}): ValidationError {
  const among = refused.chainsBy ? `those of ${refused.chainsBy}` : 'every network';
  const asset = `an asset${refused.assetsBy ? ` of ${refused.assetsBy}` : ''} in ${refused.currency.toUpperCase()}`;
  const offered = payableChainIds(refused.networks).join(', ') || 'none';
  const leftOut = refused.networks.find((n) => n.network.chainId === refused.chainId && n.unpayable);
  const wallet = leftOut ? `; chain ${refused.chainId} is left out because ${walletRefusal(leftOut)}` : '';
  return new ValidationError(
    refused.field ?? 'paymentSetting.preferredChainId',
    `chain ${refused.chainId} is not one of the ${refused.of}'s networks (${offered}: ${among} with a payment method of this organization and ${asset}): prefer one of them${refused.hint}${wallet}`,
  );
}
