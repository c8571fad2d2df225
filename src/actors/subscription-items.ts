import { type BillingInterval, unbillableInterval } from '../../machines/billing-calendar.ts';
import type { SubscriptionItem } from '../../machines/subscription.types.ts';
import { ValidationError } from '../shared/errors.ts';
import { deterministicId } from '../shared/ids.ts';

/** What a subscription bills, per line: a recurring price and a quantity. */
export type RecurringLine = {
  quantity: number;
  price: {
    id: string;
    productId: string;
    type: 'one_time' | 'recurring';
    currency: string;
    unitAmount: string;
    interval: string | null;
    intervalCount: number | null;
    product?: { name: string };
  };
};

/**
 * The subscription items of a `mode: subscription` checkout session's lines. Every line must be a
 * recurring price billed by the month or the year (monthly, quarterly, half-yearly, annual), all
 * on one interval and in one currency: one period bills them together. Throws ValidationError
 * naming `field`.
 */
export function subscriptionItemsOf(lines: RecurringLine[], field = 'lineItems'): SubscriptionItem[] {
  const items = lines.map((line, i): SubscriptionItem => {
    const { price } = line;
    if (price.type !== 'recurring' || price.interval === null || price.intervalCount === null) {
      throw new ValidationError(`${field}[${i}]`, 'a subscription bills recurring prices only; this price is one_time');
    }
    const unbillable = unbillableInterval(price.interval);
    if (unbillable) throw new ValidationError(`${field}[${i}]`, unbillable);
    return {
      priceId: price.id,
      productId: price.productId,
      ...(price.product ? { productName: price.product.name } : {}),
      quantity: line.quantity,
      unitAmount: price.unitAmount,
      currency: price.currency,
      interval: price.interval as BillingInterval,
      intervalCount: price.intervalCount,
    };
  });
  const [first] = items;
  if (!first) throw new ValidationError(field, 'a subscription needs at least one recurring price');
  for (const [i, item] of items.entries()) {
    if (item.currency !== first.currency)
      throw new ValidationError(`${field}[${i}]`, 'every price of a subscription must have the same currency');
    if (item.interval !== first.interval || item.intervalCount !== first.intervalCount) {
      throw new ValidationError(`${field}[${i}]`, 'every price of a subscription must have the same billing interval');
    }
  }
  return items;
}

/** The subscription a `mode: subscription` checkout session creates: derived, so a retry names the same one. */
export const subscriptionIdOfSession = (checkoutSessionId: string): string =>
  deterministicId(`subscription:checkout_session:${checkoutSessionId}`);
