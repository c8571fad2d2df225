import { API_DECIMALS } from '../../shared/money.ts';

const DECIMAL = new RegExp(`^(\\d{1,19})(?:\\.(\\d{1,${API_DECIMALS}}))?$`);

/**
 * A decimal amount as a merchant types it ("100", "2.5", "1,000.25") as the API's 10^8-scaled
 * digit string, exactly (no floats); null when it is not a plain non-negative number with at most
 * 8 decimals. Range checks are the API's.
 */
export function decimalToAmount(typed: string): string | null {
  const match = DECIMAL.exec(typed.trim().replaceAll(',', ''));
  if (!match) return null;
  const [, whole = '0', fraction = ''] = match;
  return (BigInt(whole) * 10n ** BigInt(API_DECIMALS) + BigInt(fraction.padEnd(API_DECIMALS, '0'))).toString();
}
