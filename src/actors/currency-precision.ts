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
  const decimals = currencyDecimals(rail, environment, currency);
  if (decimals === null || isExactInDecimals(amount, decimals)) return;
  const name = currency.toUpperCase();
  const unit = 10n ** BigInt(API_DECIMALS - decimals);
  throw new ValidationError(
    field,
    `${amount} is ${formatAmount(amount)} ${name}, more decimals than any ${name} asset carries (at most ${decimals}), so it could never be paid exactly; send a multiple of ${unit} (${formatAmount(unit)} ${name}, scaled by 10^8)`,
  );
}
