import { AmountError, API_DECIMALS, isExactInDecimals, MAX_AMOUNT } from './money.ts';

/**
 * Decimal numbers written as text (`-12`, `0.5`, `007`), compared exactly: no float ever holds
 * them. For amounts a person types and for numeric answers with bounds.
 */
export const DECIMAL = /^-?[0-9]+(\.[0-9]+)?$/;

const fractionDigits = (value: string): number => (value.split('.')[1] ?? '').length;

/** The decimal as an integer of `scale` fraction digits (`1.5`, 3 → 1500n). */
function scaled(value: string, scale: number): bigint {
  const negative = value.startsWith('-');
  const [whole = '0', fraction = ''] = (negative ? value.slice(1) : value).split('.');
  const units = BigInt(whole + fraction.padEnd(scale, '0'));
  return negative ? -units : units;
}

/** -1, 0 or 1 as `a` is below, equal to or above `b`; both must match DECIMAL. */
export function compareDecimals(a: string, b: string): -1 | 0 | 1 {
  const scale = Math.max(fractionDigits(a), fractionDigits(b));
  const difference = scaled(a, scale) - scaled(b, scale);
  return difference < 0n ? -1 : difference > 0n ? 1 : 0;
}

/** Digits of a decimal, without its sign and point (`-1.50` → 3). */
export const digitCount = (value: string): number => value.replace(/[-.]/g, '').length;

/**
 * An amount as a person writes it in currency units (`25`, `12.5`, `0.000001`) as a 10^8-scaled
 * integer. More than 8 decimals, a sign, or anything but digits and one point is an AmountError.
 */
export function parseDecimalAmount(text: string): bigint {
  if (!/^[0-9]+(\.[0-9]+)?$/.test(text)) throw new AmountError('must be a number such as 25 or 12.50');
  if (fractionDigits(text) > API_DECIMALS) throw new AmountError(`must have at most ${API_DECIMALS} decimals`);
  const amount = scaled(text, API_DECIMALS);
  if (amount > MAX_AMOUNT) throw new AmountError('is too large');
  return amount;
}

/**
 * A comma, apostrophe, underscore or space between digits: `1,500` is 1500 to some merchants and
 * 1.5 to others, and a money gateway guesses neither.
 */
const SEPARATOR = /[,'’_\s]/;

/**
 * An amount as a person types it (`25`, `12.50`) in the API's 10^8 scale, or the reason it is not
 * one: the dashboard's amount fields and the hosted payment-link page's amount.
 */
export function decimalAmount(text: string): { amount: string } | { error: string } {
  const plain = text.trim();
  if (SEPARATOR.test(plain))
    return { error: 'must be written with a dot for decimals and no separators, such as 1500 or 1.5' };
  try {
    return { amount: parseDecimalAmount(plain).toString() };
  } catch (error) {
    if (error instanceof AmountError) return { error: error.message };
    throw error;
  }
}

/**
 * `decimalAmount` of a price in `currency`, which may have at most `decimals` (its finest asset's, see
 * `currencyDecimals`; null: the API's 8): more could never be paid exactly, so it is refused as typed.
 */
export function decimalAmountIn(
  text: string,
  currency: string,
  decimals: number | null,
): { amount: string } | { error: string } {
  const parsed = decimalAmount(text);
  if ('error' in parsed || decimals === null || isExactInDecimals(BigInt(parsed.amount), decimals)) return parsed;
  const name = currency.toUpperCase();
  return { error: `must have at most ${decimals} decimals in ${name}: no ${name} asset carries more` };
}

/**
 * `part ÷ whole` (counts, not negative) to `places` decimals, rounded half up in integers: a float's
 * `toFixed` rounds the double nearest the quotient, so 3 of 160 (0.01875) gave 0.0187 where 1 of 32
 * (0.03125) gave 0.0313, and 23 of 2000 as a percent (1.15) gave 1.1. The reports' shares and Home's
 * percentages both use it, so they never disagree at a boundary. Null when `whole` is 0.
 */
export function quotientHalfUp(part: number, whole: number, places: number): string | null {
  // Counts only: BigInt() refuses fractions itself, and a negative one would round toward zero.
  if (part < 0 || whole < 0) throw new RangeError(`quotientHalfUp takes counts, not ${part} of ${whole}`);
  if (whole === 0) return null;
  const scale = 10n ** BigInt(places);
  const units = (BigInt(part) * scale * 2n + BigInt(whole)) / (2n * BigInt(whole));
  if (places === 0) return units.toString();
  return `${units / scale}.${(units % scale).toString().padStart(places, '0')}`;
}
