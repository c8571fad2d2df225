/**
 * Tax arithmetic. A percentage is an exact decimal with at most 4 places (`8.25`), kept as a string
 * and computed as an integer count of 10^-4 percent; amounts are bigint on the API's 10^8 scale.
 * No float ever touches an amount.
 */
import { assetPaysCurrency } from './asset-currency.ts';
import { ValidationError } from './errors.ts';
import { API_DECIMALS } from './money.ts';

export type TaxType = 'exclusive' | 'inclusive';
export const TAX_TYPES: readonly TaxType[] = ['exclusive', 'inclusive'];

/** 100% in units of 10^-4 percent. */
const HUNDRED_PERCENT = 1_000_000n;
const PERCENTAGE = /^(0|[1-9][0-9]{0,2})(\.[0-9]{1,4})?$/;

/** A percentage from a request (a JSON number or a decimal string), as its canonical decimal string. */
export function parsePercentage(value: unknown, field: string): string {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== 'string' || !PERCENTAGE.test(text))
    throw new ValidationError(field, 'must be a number from 0 to 100 with at most 4 decimal places, such as 8.25');
  const units = percentUnits(text);
  if (units > HUNDRED_PERCENT) throw new ValidationError(field, 'must be at most 100');
  // Canonical: no trailing zeros after the point (`8.50` is `8.5`), so equal rates read the same.
  const [whole, fraction = ''] = text.split('.');
  const trimmed = fraction.replace(/0+$/, '');
  return trimmed ? `${whole}.${trimmed}` : whole!;
}

/** `8.25` as 82500 (10^-4 percent). */
export function percentUnits(percentage: string): bigint {
  const [whole, fraction = ''] = percentage.split('.');
  return BigInt(whole!) * 10_000n + BigInt(fraction.padEnd(4, '0'));
}

/** The percentage as the wire shows it: a JSON number (at most 4 decimals, so it reads back exactly). */
export const percentageNumber = (percentage: string): number => Number(percentage);

/** n / d rounded half up (n ≥ 0, d > 0). */
const divideHalfUp = (n: bigint, d: bigint): bigint => (2n * n + d) / (2n * d);

/** A tax rate as applied to one line, with the tax it adds or contains (10^8). */
export type AppliedTaxRate = {
  id: string;
  name: string;
  description: string | null;
  country: string | null;
  /** As the reference shows it: a number. */
  percentage: number;
  type: TaxType;
  /** Whether it came from the session's or invoice's own `taxRateIds` (not the line's). */
  isDefault: boolean;
  /** The tax of this rate on this line. */
  amount: string;
};

export type TaxRateTerms = Omit<AppliedTaxRate, 'amount' | 'percentage'> & { percentage: string };

/**
 * The taxes of one line whose price × quantity is `amount`, each rounded half up (per line, per
 * rate) to a multiple of 10^-`decimals` (the coarsest asset of the currency, so every asset can
 * still take the total exactly). Inclusive rates are contained in the amount: together they are
 * `amount × p / (100 + Σ inclusive p)`. Exclusive rates are added on the amount less its inclusive
 * tax (the net price).
 */
export function taxLine(
  amount: bigint,
  rates: TaxRateTerms[],
  decimals: number,
): { taxRates: AppliedTaxRate[]; amountTax: bigint; amountExclusive: bigint } {
  const unit = 10n ** BigInt(API_DECIMALS - Math.min(decimals, API_DECIMALS));
  const inclusiveUnits = rates
    .filter((r) => r.type === 'inclusive')
    .reduce((sum, r) => sum + percentUnits(r.percentage), 0n);
  const inclusive = new Map<string, bigint>();
  for (const rate of rates) {
    if (rate.type !== 'inclusive') continue;
    const share = divideHalfUp(amount * percentUnits(rate.percentage), (HUNDRED_PERCENT + inclusiveUnits) * unit);
    inclusive.set(rate.id, share * unit);
  }
  const net = amount - [...inclusive.values()].reduce((sum, v) => sum + v, 0n);
  let amountTax = 0n;
  let amountExclusive = 0n;
  const taxRates = rates.map((rate) => {
    const tax =
      rate.type === 'inclusive'
        ? inclusive.get(rate.id)!
        : divideHalfUp(net * percentUnits(rate.percentage), HUNDRED_PERCENT * unit) * unit;
    amountTax += tax;
    if (rate.type === 'exclusive') amountExclusive += tax;
    return { ...rate, percentage: percentageNumber(rate.percentage), amount: tax.toString() };
  });
  return { taxRates, amountTax, amountExclusive };
}

/** The exclusive tax a line's applied rates add to it. */
export const exclusiveTaxOf = (taxRates: readonly AppliedTaxRate[] | undefined): bigint =>
  (taxRates ?? []).reduce((sum, r) => (r.type === 'exclusive' ? sum + BigInt(r.amount) : sum), 0n);

/** All the tax a line's applied rates hold, inclusive and exclusive. */
export const taxOf = (taxRates: readonly AppliedTaxRate[] | undefined): bigint =>
  (taxRates ?? []).reduce((sum, r) => sum + BigInt(r.amount), 0n);

/** The decimals tax is rounded to for `currency`: those of its coarsest asset among `networks`, at most 8. */
export function taxDecimals(
  networks: readonly { assets: readonly { currency: string; decimals: number }[] }[],
  currency: string,
): number {
  let decimals = API_DECIMALS;
  for (const network of networks)
    for (const asset of network.assets)
      if (assetPaysCurrency(asset, currency)) decimals = Math.min(decimals, asset.decimals);
  return decimals;
}

/** The tax of every rate over all the lines, in the order the rates first appear: for totals blocks. */
export function taxSummary(
  lines: readonly { taxRates?: readonly AppliedTaxRate[] }[],
): { id: string; name: string; percentage: number; type: TaxType; amount: bigint }[] {
  const byRate = new Map<string, { id: string; name: string; percentage: number; type: TaxType; amount: bigint }>();
  for (const line of lines)
    for (const rate of line.taxRates ?? []) {
      const entry = byRate.get(rate.id) ?? { ...rate, amount: 0n };
      byRate.set(rate.id, { ...entry, amount: entry.amount + BigInt(rate.amount) });
    }
  return [...byRate.values()].map(({ id, name, percentage, type, amount }) => ({ id, name, percentage, type, amount }));
}

/**
 * `discount` (at most the sum of `amounts`) shared among lines in proportion to their amounts, by
 * largest remainder, so the shares add up to it exactly and none is more than its line (ties to the
 * first line).
 */
export function discountShares(amounts: readonly bigint[], discount: bigint): bigint[] {
  const whole = amounts.reduce((sum, a) => sum + a, 0n);
  if (whole === 0n || discount <= 0n) return amounts.map(() => 0n);
  const shares = amounts.map((a) => (discount * a) / whole);
  let left = discount - shares.reduce((sum, s) => sum + s, 0n);
  const byRemainder = amounts
    .map((a, i) => ({ i, rest: (discount * a) % whole }))
    .sort((x, y) => (x.rest === y.rest ? x.i - y.i : x.rest > y.rest ? -1 : 1));
  for (const { i } of byRemainder) {
    if (left === 0n) break;
    shares[i]! += 1n;
    left -= 1n;
  }
  return shares;
}

/**
 * The lines' taxes once `discount` is taken off them (a discount lowers what is sold, so the tax of
 * it): each line's rates as applied, on its amount less its share of the discount (`discountShares`),
 * rounded as `taxLine` rounds. Null when no line has a tax rate.
 */
export function taxesAfterDiscount(
  lines: readonly { amountSubtotal: string; taxRates?: readonly AppliedTaxRate[] }[],
  discount: bigint,
  decimals: number,
): { amountTax: string; taxRates: AppliedTaxRate[] }[] | null {
  if (!lines.some((line) => (line.taxRates ?? []).length > 0)) return null;
  const amounts = lines.map((line) => BigInt(line.amountSubtotal));
  const shares = discountShares(amounts, discount);
  return lines.map((line, i) => {
    const terms = (line.taxRates ?? []).map(({ amount: _a, ...rate }) => ({
      ...rate,
      percentage: String(rate.percentage),
    }));
    const { taxRates, amountTax } = taxLine(amounts[i]! - shares[i]!, terms, decimals);
    return { amountTax: amountTax.toString(), taxRates };
  });
}
