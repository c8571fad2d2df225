import { API_DECIMALS } from '../../shared/money.ts';

const DECIMAL = new RegExp(`^(\\d{1,19})(?:\\.(\\d{1,${API_DECIMALS}}))?$`);

/** Thousands groups: commas only between groups of three digits before the point (`1,000.25`). */
const GROUPED = /^\d{1,3}(,\d{3})+(\.\d*)?$/;

/**
 * The typed amount trimmed and without its thousands commas; null when a comma is anything else
 * (`1,50` is a decimal comma: read as 150 it would charge 100 times the price).
 */
export function withoutThousandsCommas(typed: string): string | null {
  const text = typed.trim();
  if (!text.includes(',')) return text;
  return GROUPED.test(text) ? text.replaceAll(',', '') : null;
}

/**
 * A decimal amount as a merchant types it ("100", "2.5", "1,000.25") as the API's 10^8-scaled
 * digit string, exactly (no floats); null when it is not a plain non-negative number with at most
 * 8 decimals. Range checks are the API's.
 */
export function decimalToAmount(typed: string): string | null {
  const text = withoutThousandsCommas(typed);
  const match = text === null ? null : DECIMAL.exec(text);
  if (!match) return null;
  const [, whole = '0', fraction = ''] = match;
  return (BigInt(whole) * 10n ** BigInt(API_DECIMALS) + BigInt(fraction.padEnd(API_DECIMALS, '0'))).toString();
}
