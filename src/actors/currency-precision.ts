import type { Rail } from '../chain-ingest/rail.ts';
import type { Environment } from '../event-store/event-store.ts';
import { assetPaysCurrency } from '../shared/asset-currency.ts';
import { ValidationError } from '../shared/errors.ts';
import { API_DECIMALS, formatAmount, isExactInDecimals } from '../shared/money.ts';

/**
 * The decimals a price in `currency` may have in `environment`: the finest of its assets on the
 * networks offered there, at most the API's 8. Null when no asset pays it (nothing to measure by).
 */
export function currencyDecimals(
  rail: Pick<Rail, 'networks'>,
  environment: Environment,
  currency: string,
): number | null {
  const decimals = rail
    .networks(environment)
    .flatMap((n) => n.assets.filter((a) => assetPaysCurrency(a, currency)).map((a) => a.decimals));
  return decimals.length === 0 ? null : Math.min(API_DECIMALS, Math.max(...decimals));
}

/**
 * What `amount` (10^8) in `currency` is, and why it could never be paid exactly in `environment` (the
 * words every refusal of such an amount shares), with the unit it must be a multiple of; null when it can.
 */
function finerThanCurrency(
  rail: Pick<Rail, 'networks'>,
  environment: Environment,
  currency: string,
  amount: bigint,
): { said: string; unit: string } | null {
  const decimals = currencyDecimals(rail, environment, currency);
  if (decimals === null || isExactInDecimals(amount, decimals)) return null;
  const name = currency.toUpperCase();
  const unit = 10n ** BigInt(API_DECIMALS - decimals);
  return {
    said: `${amount} is ${formatAmount(amount)} ${name}, more decimals than any ${name} asset carries (at most ${decimals}), so it could never be paid exactly`,
    unit: `${unit} (${formatAmount(unit)} ${name}, scaled by 10^8)`,
  };
}

/**
 * A price (10^8) finer than every asset of its currency carries could never be paid exactly: its
 * invoice would be refused only at finalize. Refused where it is typed, naming `field`.
 */
export function assertAmountFitsCurrency(
  rail: Pick<Rail, 'networks'>,
  environment: Environment,
  field: string,
  currency: string,
  amount: bigint,
): void {
  const finer = finerThanCurrency(rail, environment, currency, amount);
  if (finer) throw new ValidationError(field, `${finer.said}; send a multiple of ${finer.unit}`);
}

/**
 * A catalog price stored before such prices were refused (by an earlier Weir, or the CLI) is refused
 * where a session, an invoice or a link would sell it, naming `field` and the price: a record made
 * from it could never be paid exactly (a quantity that happens to round it is not relied on).
 */
export function assertPriceFitsCurrency(
  rail: Pick<Rail, 'networks'>,
  environment: Environment,
  field: string,
  price: { id: string; currency: string; unitAmount: string },
): void {
  const finer = finerThanCurrency(rail, environment, price.currency, BigInt(price.unitAmount));
  if (finer)
    throw new ValidationError(
      field,
      `price ${price.id} cannot be sold: its unitAmount ${finer.said}; it was stored before Weir refused such prices, so create a price whose unitAmount is a multiple of ${finer.unit} and use it instead`,
    );
}
