import { evolveCheckoutSession } from '../../machines/checkout-session.evolve.ts';
import { lineItemFixture, sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSession, CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import { taxesAfterDiscount, taxLine } from '../shared/tax.ts';

const AT = '2026-01-01T00:00:00.000Z';

/**
 * A session with every kind of totals row, folded by the machine's own evolve: 2 × 1.00 USDC with
 * 5% city tax included and 10% VAT added on the rest, 0.50 off with code SAVE (taken off before tax:
 * 0.071429 included and 0.142857 VAT on the 1.50 left), 0.01 network fee:
 * 2.00 − 0.50 + 0.142857 + 0.01 = 1.652857 (the included tax adds nothing).
 */
export function taxedDiscountedSession(): CheckoutSession {
  const rates = [
    { id: 'vat', name: 'VAT', description: null, country: null, percentage: '10', type: 'exclusive' as const },
    { id: 'inc', name: 'City tax', description: null, country: null, percentage: '5', type: 'inclusive' as const },
  ].map((rate) => ({ ...rate, isDefault: true }));
  const tax = taxLine(200_000_000n, rates, 6);
  const base = sessionFixture();
  const total = (200_000_000n + tax.amountExclusive).toString();
  const session = sessionFixture({
    amountSubtotal: '200000000',
    amountTotal: total,
    amountNet: total,
    amountDetails: {
      ...base.amountDetails,
      amountSubtotal: '200000000',
      amountTotal: total,
      amountTax: `${tax.amountTax}`,
    },
    addresses: [{ ...base.addresses[0]!, gasAmount: '1000000' }],
    allowPromotionCodes: true,
    lineItems: {
      object: 'list',
      data: [lineItemFixture(2, { amountTotal: total, amountTax: `${tax.amountTax}`, taxRates: tax.taxRates })],
    },
  });
  const events: CheckoutSessionEvent[] = [
    { type: 'CheckoutSessionCreated', data: { session } },
    {
      type: 'DiscountApplied',
      data: {
        discount: { couponId: 'coupon-1', promotionCodeId: 'code-1', code: 'SAVE', amountDiscount: '50000000', at: AT },
        lineTaxes: taxesAfterDiscount(session.lineItems.data, 50_000_000n, 6)!,
      },
    },
    {
      type: 'PaymentMethodSelected',
      data: { addressId: 'addr-usdc', amountDue: '1652857', amountGasFee: '1000000', at: AT },
    },
  ];
  return events.reduce<CheckoutSession | null>(evolveCheckoutSession, null)!;
}
