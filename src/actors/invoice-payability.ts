import type { Invoice, InvoicePaymentMethods } from '../../machines/invoice.types.ts';
import { assetsPayingExactly, type Rail } from '../chain-ingest/rail.ts';
import type { Environment } from '../event-store/event-store.ts';
import { assetPaysCurrency } from '../shared/asset-currency.ts';
import { ValidationError } from '../shared/errors.ts';
import { formatAmount, isExactInDecimals } from '../shared/money.ts';
import type { WithdrawalAddress } from './organization.ts';
import {
  offersAsset,
  payableChainIds,
  payableSessionNetworks,
  preferredChainRefusal,
  type SessionNetwork,
  sessionNetworks,
  walletsInvalid,
} from './session-networks.ts';

/**
 * Whether an invoice can be paid as it stands: the checks of a draft's networks, assets, preferred
 * chain and total against the organization's payment methods and Weir's networks. The invoices
 * route runs them on what a create or update sends and on a draft it finalizes; subscription
 * billing runs the finalize ones (`assertPayableAtFinalize`) on a renewal before it finalizes it,
 * so a draft the route would refuse is never opened by either.
 */

/** A network or asset an invoice is restricted to without a payment method of the organization (the message names it). */
export const NO_PAYMENT_METHOD = 'payment_method_not_available';

/** What the checks read: Weir's networks, and the organization's payment methods (null: no organization record). */
export type PayabilityDeps = {
  rail: Pick<Rail, 'networks' | 'unpayableAddress'>;
  organization: {
    withdrawalAddresses: readonly Pick<WithdrawalAddress, 'id' | 'address' | 'chainId' | 'isDefault'>[];
  } | null;
};

/** The networks and assets an invoice is restricted to, each with the field a refusal names (and a hint to add to its message). */
export type NamedMethods = {
  chains: { field: string; chainId: number; hint?: string }[];
  assets: { field: string; assetId: string; hint?: string }[];
};

/** An invoice's stored restriction, named by its fields (finalize checks it again). */
export const storedMethods = (methods: InvoicePaymentMethods, hint?: string): NamedMethods => ({
  chains: methods.chainIds.map((chainId, i) => ({ field: `paymentMethods.chainIds[${i}]`, chainId, hint })),
  assets: methods.assetIds.map((assetId, i) => ({ field: `paymentMethods.assetIds[${i}]`, assetId, hint })),
});

/** What a refusal at finalize of a draft's stored restriction adds: how to change it. */
export const REDRAFT = (invoiceId: string): string =>
  `; or change the draft's paymentMethods (PUT /api/v1/invoices/${invoiceId}) before finalizing`;

/** What a refusal at finalize of a draft's stored preferred chain adds: how to change or clear it. */
export const REPREFER = (invoiceId: string): string =>
  `, or clear it (null: the organization's), with PUT /api/v1/invoices/${invoiceId} before finalizing`;

const ADD_WALLET = 'POST /api/v1/organization/withdrawal-addresses';

/**
 * Each network and asset an invoice is restricted to must have a payment method of the
 * organization (a withdrawal address on its chain, as a session pays only to one), and each asset
 * must be on the invoice's networks: else the invoice could never be paid there. Refusals name the
 * field that set the value.
 */
export function assertPaymentMethodsAvailable(
  deps: PayabilityDeps,
  environment: Environment,
  named: NamedMethods,
  next: Pick<Invoice, 'paymentMethods'>,
): void {
  if (named.chains.length === 0 && named.assets.length === 0) return;
  const withMethod = [...new Set(deps.organization?.withdrawalAddresses.map((w) => w.chainId))];
  const noMethod = (field: string, what: string, chainId: number, hint = '') =>
    new ValidationError(
      field,
      `${what} has no payment method of this organization in the ${environment} environment; add a wallet address for chain ${chainId} with ${ADD_WALLET}${withMethod.length ? `, or use one of ${withMethod.join(', ')}` : ''}${hint}`,
      NO_PAYMENT_METHOD,
    );
  for (const { field, chainId, hint } of named.chains)
    if (!withMethod.includes(chainId)) throw noMethod(field, `chain ${chainId}`, chainId, hint);
  const assets = deps.rail.networks(environment).flatMap((network) => network.assets);
  const chains = next.paymentMethods.chainIds;
  for (const { field, assetId, hint = '' } of named.assets) {
    const asset = assets.find((a) => a.id === assetId);
    if (!asset) {
      const offered = assets.filter((a) => withMethod.includes(a.chainId)).map((a) => a.id);
      throw new ValidationError(
        field,
        `${assetId} is not an asset of Weir's ${environment} networks (GET /api/v1/assets lists them)${offered.length ? `; use one of ${offered.join(', ')}` : ''}${hint}`,
      );
    }
    if (!withMethod.includes(asset.chainId))
      throw noMethod(field, `asset ${assetId} is on chain ${asset.chainId}, which`, asset.chainId, hint);
    if (chains.length > 0 && !chains.includes(asset.chainId))
      throw new ValidationError(
        field,
        `asset ${assetId} is on chain ${asset.chainId}, not one of the invoice's networks (${chains.join(', ')}): it could never be paid in; add its network or leave the asset out${hint}`,
      );
  }
}

/** The networks the invoice's pay page would offer: its networks with a payment method and an asset in its currency (of its assets). */
const networksFor = (
  deps: PayabilityDeps,
  environment: Environment,
  invoice: Pick<Invoice, 'paymentMethods' | 'currency'>,
): SessionNetwork[] => {
  const { chainIds, assetIds } = invoice.paymentMethods;
  return sessionNetworks(
    deps.rail,
    environment,
    deps.organization?.withdrawalAddresses ?? [],
    chainIds.length > 0 ? chainIds : undefined,
    offersAsset(invoice.currency, assetIds.length > 0 ? assetIds : null),
  );
};

/**
 * A preferred chain must be one the invoice's sessions can pay on (`sessionNetworks`, as a session's
 * own is checked): one of its networks with a payment method the rail can pay and an asset in its
 * currency (of its assets, when it names some); else its pay page would prefer none. `hint` ends the refusal with
 * how to correct it; `chainsBy` is the field that restricts the networks, when one does.
 */
export function assertPreferredOffered(
  deps: PayabilityDeps,
  environment: Environment,
  invoice: Pick<Invoice, 'paymentMethods' | 'preferredChainId' | 'currency'>,
  hint: string,
  chainsBy = 'paymentMethods.chainIds',
): void {
  const chainId = invoice.preferredChainId;
  if (chainId === undefined) return;
  const networks = networksFor(deps, environment, invoice);
  if (payableChainIds(networks).includes(chainId)) return;
  const { chainIds, assetIds } = invoice.paymentMethods;
  throw preferredChainRefusal({
    chainId,
    of: 'invoice',
    networks,
    currency: invoice.currency,
    chainsBy: chainIds.length > 0 ? chainsBy : null,
    assetsBy: assetIds.length > 0 ? 'paymentMethods.assetIds' : null,
    hint,
  });
}

/**
 * Each asset an invoice is restricted to must pay its currency (the rule a session offers assets
 * by): a DAI asset on a USDC invoice would never be offered on its pay page. An unknown asset is
 * left to `assertPaymentMethodsAvailable`, which names it first.
 */
export function assertAssetsPayCurrency(
  deps: Pick<PayabilityDeps, 'rail'>,
  environment: Environment,
  currency: string,
  named: NamedMethods['assets'],
): void {
  const assets = deps.rail.networks(environment).flatMap((network) => network.assets);
  for (const { field, assetId, hint = '' } of named) {
    const asset = assets.find((a) => a.id === assetId);
    if (!asset || assetPaysCurrency(asset, currency)) continue;
    const paying = assets.filter((a) => assetPaysCurrency(a, currency)).map((a) => a.id);
    throw new ValidationError(
      field,
      `asset ${assetId} is ${asset.currency.toUpperCase()}, which cannot pay an invoice in ${currency.toUpperCase()}: its pay page would never offer it; use an asset in ${currency.toUpperCase()}${paying.length ? ` (${paying.join(', ')})` : ''} or leave it out${hint}`,
    );
  }
}

/** The total as an amount of the currency (`1.1234567 USDC`), as the merchant typed its lines, not the API's 10^8 integer. */
const totalInCurrency = (invoice: Pick<Invoice, 'amountDue' | 'currency'>): string =>
  `${formatAmount(BigInt(invoice.amountDue))} ${invoice.currency.toUpperCase()}`;

/** A total no asset can take exactly would get a pay page that can never be paid: refused before it is finalized. */
export function assertTotalPayable(
  deps: Pick<PayabilityDeps, 'rail'>,
  invoice: Pick<Invoice, 'amountDue' | 'currency' | 'environment' | 'paymentMethods'>,
): void {
  const total = BigInt(invoice.amountDue);
  if (total === 0n) return;
  const { payable, unpayable } = assetsPayingExactly(
    deps.rail,
    invoice.environment,
    invoice.currency,
    total,
    invoice.paymentMethods,
  );
  if (payable.length > 0 || unpayable.length === 0) return;
  throw new ValidationError(
    'lineItems',
    `cannot be paid: the total ${totalInCurrency(invoice)} cannot be paid exactly in ${unpayable.join(', ')}; use amounts those assets' decimals can hold`,
    'amount_not_payable',
  );
}

const FINALIZE_REFUSED = 'cannot be finalized: ';

/**
 * An invoice with something to pay needs a network its pay page offers: one of its networks (any,
 * unrestricted) where the organization has a wallet the rail can pay and an asset in its currency
 * that can take the total exactly, as its pay page's session is made. An organization with no wallet
 * at all would open a pay page with nothing to pay with; refused, naming the fix (a 400). A wallet of
 * its own that is broken refuses it as it would refuse that session (`walletsInvalid`, a 422).
 */
export function assertSomeNetworkOffered(
  deps: PayabilityDeps,
  invoice: Pick<Invoice, 'id' | 'amountDue' | 'currency' | 'environment' | 'paymentMethods'>,
): void {
  const total = BigInt(invoice.amountDue);
  if (total === 0n) return;
  const networks = networksFor(deps, invoice.environment, invoice);
  // A checksum that fails (a wallet stored before Weir checked them) refuses the pay page's session
  // whatever else it offers: refused here first, with that session's 422.
  const mistyped = networks.find((n) => n.unpayable?.typo);
  if (mistyped) throw walletsInvalid([mistyped], FINALIZE_REFUSED);
  const payable = payableSessionNetworks(networks);
  if (payable.length > 0) {
    // The total must fit an asset of those networks: the exact check of all assets knows no wallets.
    const exact = payable.some((n) => n.assets.some((a) => isExactInDecimals(total, a.decimals)));
    if (exact) return;
    const tried = payable.flatMap((n) => n.assets.map((a) => `${a.symbol} on ${n.network.name}`));
    throw new ValidationError(
      'lineItems',
      `cannot be paid: the total ${totalInCurrency(invoice)} cannot be paid exactly in ${tried.join(', ')}, the assets of this organization's payment methods; use amounts those assets' decimals can hold, or add a wallet address with ${ADD_WALLET} on a network whose asset can`,
      'amount_not_payable',
    );
  }
  // Every network it would use is left out for its wallet (one the rail cannot pay): that session's 422 too.
  if (networks.length > 0) throw walletsInvalid(networks, FINALIZE_REFUSED);
  const wallets = deps.organization?.withdrawalAddresses ?? [];
  const restricted = invoice.paymentMethods.chainIds.length > 0 || invoice.paymentMethods.assetIds.length > 0;
  const why =
    wallets.length === 0
      ? `this organization has no payment method (wallet address) in the ${invoice.environment} environment, so the invoice could not be paid anywhere; add one with ${ADD_WALLET} before finalizing`
      : `no network ${restricted ? 'of its paymentMethods ' : ''}has both a wallet address of this organization that can be paid and an asset in ${invoice.currency.toUpperCase()}, so the invoice could not be paid anywhere; add a wallet address on such a network with ${ADD_WALLET}${restricted ? REDRAFT(invoice.id) : ''}`;
  throw new ValidationError(restricted ? 'paymentMethods' : null, `${FINALIZE_REFUSED}${why}`, NO_PAYMENT_METHOD);
}

/**
 * What a draft's payment must be before it opens (the finalize route's checks and subscription
 * billing's, before a renewal): its total payable exactly, its stored networks and assets still with
 * a payment method and in its currency (one removed since the draft was written, or copied by
 * duplicate or into a renewal, would leave its pay page with nothing to offer), its preferred chain
 * still offered, and some network offered at all. Throws the refusal: a 400 naming the field, or a
 * 422 (`payment_method_invalid`) for a wallet of the organization that is broken.
 */
export function assertPayableAtFinalize(
  deps: PayabilityDeps,
  invoice: Pick<Invoice, 'id' | 'amountDue' | 'currency' | 'environment' | 'paymentMethods' | 'preferredChainId'>,
): void {
  assertTotalPayable(deps, invoice);
  const stored = storedMethods(invoice.paymentMethods, REDRAFT(invoice.id));
  assertPaymentMethodsAvailable(deps, invoice.environment, stored, invoice);
  assertAssetsPayCurrency(deps, invoice.environment, invoice.currency, stored.assets);
  assertPreferredOffered(deps, invoice.environment, invoice, REPREFER(invoice.id));
  assertSomeNetworkOffered(deps, invoice);
}
