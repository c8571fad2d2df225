/**
 * Money. API amounts are integers scaled by 10^8 (`"100000000"` is 1 USDC), carried as digit
 * strings on the wire and as bigint in code. Chain amounts use the asset's own decimals.
 */
export const API_DECIMALS = 8;
const DIGITS = /^(0|[1-9][0-9]*)$/;
/** Largest amount accepted from a request: int64, as in the reference API. */
export const MAX_AMOUNT = 2n ** 63n - 1n;

export class AmountError extends Error {
  override readonly name = 'AmountError';
}

/** Parse an API amount sent as a digit string or a safe integer number. */
export function parseAmount(value: unknown): bigint {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0)
      throw new AmountError('must be a non-negative integer (send large amounts as strings)');
    text = String(value);
  } else if (typeof value === 'string') {
    text = value;
  } else {
    throw new AmountError('must be an integer string or number');
  }
  if (!DIGITS.test(text)) throw new AmountError('must be a non-negative integer of digits, scaled by 10^8');
  const amount = BigInt(text);
  if (amount > MAX_AMOUNT) throw new AmountError('is larger than 9223372036854775807');
  return amount;
}

/** Whether an asset with `decimals` can carry the API amount exactly (1.000000015 cannot be paid in a 6-decimal token). */
export const isExactInDecimals = (amount: bigint, decimals: number): boolean =>
  decimals >= API_DECIMALS || amount % 10n ** BigInt(API_DECIMALS - decimals) === 0n;

/**
 * Convert an API amount (10^8) into an asset's chain units. Throws when the asset cannot
 * represent the amount exactly (see `isExactInDecimals`).
 */
export function toChainUnits(amount: bigint, decimals: number): bigint {
  if (decimals >= API_DECIMALS) return amount * 10n ** BigInt(decimals - API_DECIMALS);
  if (!isExactInDecimals(amount, decimals))
    throw new AmountError(`${amount} cannot be expressed exactly with ${decimals} decimals`);
  return amount / 10n ** BigInt(API_DECIMALS - decimals);
}

/**
 * Convert chain units into the API scale. Digits below 10^-8 (possible only for assets with more
 * than 8 decimals) are returned separately so nothing is silently dropped.
 */
export function fromChainUnits(raw: bigint, decimals: number): { amount: bigint; remainder: bigint } {
  if (decimals <= API_DECIMALS) return { amount: raw * 10n ** BigInt(API_DECIMALS - decimals), remainder: 0n };
  const divisor = 10n ** BigInt(decimals - API_DECIMALS);
  return { amount: raw / divisor, remainder: raw % divisor };
}

/**
 * An exact amount of a currency in units of 10^-decimals. Chain amounts of assets with different
 * decimals (DAI's 18, USDC's 6) add up without losing a wei at the finer of their scales; the 10^8
 * API scale is only how a sum is shown, rounded the way that never loses the merchant money.
 */
export type ExactAmount = { units: bigint; decimals: number };

export const ZERO_EXACT: ExactAmount = { units: 0n, decimals: API_DECIMALS };

/** An API (10^8) amount, exactly. */
export const exactOfApi = (amount: bigint): ExactAmount => ({ units: amount, decimals: API_DECIMALS });

/** The units of `a` at a scale at least as fine as its own. */
const unitsAt = (a: ExactAmount, decimals: number): bigint => a.units * 10n ** BigInt(decimals - a.decimals);

/** `a + sign·b`, exact at the finer of the two scales. */
function combine(a: ExactAmount, b: ExactAmount, sign: 1n | -1n): ExactAmount {
  const decimals = Math.max(a.decimals, b.decimals);
  return { units: unitsAt(a, decimals) + sign * unitsAt(b, decimals), decimals };
}

export const addExact = (a: ExactAmount, b: ExactAmount): ExactAmount => combine(a, b, 1n);
export const subtractExact = (a: ExactAmount, b: ExactAmount): ExactAmount => combine(a, b, -1n);

/** -1, 0 or 1 as `a` is below, equal to or above `b`. */
export function compareExact(a: ExactAmount, b: ExactAmount): -1 | 0 | 1 {
  const { units } = subtractExact(a, b);
  return units < 0n ? -1 : units > 0n ? 1 : 0;
}

/** `units` at `decimals`, rounded toward minus infinity (`down`) or plus infinity (`up`) where the scale is coarser. */
function rescaled(a: ExactAmount, decimals: number, rounding: 'down' | 'up'): bigint {
  if (decimals >= a.decimals) return unitsAt(a, decimals);
  const divisor = 10n ** BigInt(a.decimals - decimals);
  const quotient = a.units / divisor;
  const rest = a.units % divisor;
  if (rest === 0n) return quotient;
  // bigint division truncates toward zero: below zero that already rounded up.
  if (rounding === 'down') return a.units < 0n ? quotient - 1n : quotient;
  return a.units > 0n ? quotient + 1n : quotient;
}

/**
 * An exact amount on the API's 10^8 scale: `down` for what was received or overpaid (never shown
 * as more than arrived), `up` for what is still owed (never shown as less than is owed).
 */
export const exactToApi = (a: ExactAmount, rounding: 'down' | 'up'): bigint => rescaled(a, API_DECIMALS, rounding);

/** What is still owed, in an asset's chain units: rounded up, so paying it always covers the rest; 0 when nothing is owed. */
export function owedInChainUnits(owed: ExactAmount, decimals: number): bigint {
  return owed.units <= 0n ? 0n : rescaled(owed, decimals, 'up');
}

/** Human form of an API amount: `150000000` -> `1.5`. */
export function formatAmount(amount: bigint, decimals: number = API_DECIMALS): string {
  const negative = amount < 0n;
  const abs = negative ? -amount : amount;
  const base = 10n ** BigInt(decimals);
  const whole = abs / base;
  const fraction = (abs % base).toString().padStart(decimals, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/**
 * An amount as documents, pages and mails show it: thousands grouped and at least two decimals,
 * every digit the 10^8 scale holds kept (`450000000` → `4.50`, `123456789012` → `1,234.56789012`);
 * `decimals` for an amount in a token's own units.
 */
export function documentAmount(amount: bigint, minus = '-', decimals: number = API_DECIMALS): string {
  const [whole = '0', fraction = ''] = formatAmount(amount, decimals).split('.');
  const negative = whole.startsWith('-');
  const digits = negative ? whole.slice(1) : whole;
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${negative ? minus : ''}${grouped}.${fraction.padEnd(2, '0')}`;
}

/** `documentAmount` with its currency: `4.50 USDC`. */
export const documentMoney = (amount: string | bigint, currency: string): string =>
  `${documentAmount(BigInt(amount))} ${currency.toUpperCase()}`;
