import { recurrence } from '../../shared/recurrence.ts';
import { money } from './components.tsx';

/** A price in words: "25.00 USDC", or "20.00 USDC every 3 months" when it recurs; "—" for none. */
export function priceLabel(
  price: { unitAmount: string; currency: string; interval: string | null; intervalCount: number | null } | null,
): string {
  if (!price) return '—';
  const amount = money(price.unitAmount, price.currency);
  if (!price.interval) return amount;
  return `${amount} ${recurrence(price.interval, price.intervalCount)}`;
}
