import type { CheckoutSession } from '../../machines/checkout-session.types.ts';
import type { InvoiceLineItem } from '../../machines/invoice.types.ts';
import { type AppliedTaxRate, taxSummary } from '../shared/tax.ts';

/**
 * One row of a totals block, 10^8-scaled. `included` tax is contained in the subtotal and only
 * shown; every other row adds to (or, a discount, takes from) the rows above it, so the rows a
 * surface shows always make its total.
 */
export type TotalsRow = {
  kind: 'subtotal' | 'discount' | 'tax' | 'included-tax' | 'gas-fee' | 'total';
  label: string;
  amount: bigint;
};

/** A line's price × quantity: what lines show beside a totals block (their tax is in its rows). */
export const lineAmount = (line: { unitAmount: string; quantity: number }): bigint =>
  BigInt(line.unitAmount) * BigInt(line.quantity);

function taxRows(lines: readonly { taxRates?: readonly AppliedTaxRate[] }[]): TotalsRow[] {
  return taxSummary(lines).map((tax) => ({
    kind: tax.type === 'inclusive' ? 'included-tax' : 'tax',
    label: `${tax.name} (${tax.percentage}%${tax.type === 'inclusive' ? ', included' : ''})`,
    amount: tax.amount,
  }));
}

/**
 * A checkout session's totals as the hosted page, the dashboard and the receipt show them:
 * subtotal (the lines' price × quantity), the discount with its codes, one row per tax rate,
 * the network fee, and the total (`amountTotal`).
 */
export function sessionTotals(
  session: Pick<CheckoutSession, 'amountSubtotal' | 'amountDetails' | 'amountGasFee' | 'amountTotal' | 'discounts'> & {
    lineItems: { data: readonly { taxRates?: readonly AppliedTaxRate[] }[] };
  },
): TotalsRow[] {
  const rows: TotalsRow[] = [{ kind: 'subtotal', label: 'Subtotal', amount: BigInt(session.amountSubtotal) }];
  const discount = BigInt(session.amountDetails.amountDiscount ?? '0');
  if (discount > 0n) {
    const codes = session.discounts.map((d) => d.code).join(', ');
    rows.push({ kind: 'discount', label: codes ? `Discount (${codes})` : 'Discount', amount: discount });
  }
  rows.push(...taxRows(session.lineItems.data));
  const gas = BigInt(session.amountGasFee ?? '0');
  if (gas > 0n) rows.push({ kind: 'gas-fee', label: 'Network fee', amount: gas });
  rows.push({ kind: 'total', label: 'Total', amount: BigInt(session.amountTotal) });
  return rows;
}

/** An invoice's totals as its page, PDF, mails and the dashboard show them: subtotal, one row per tax rate, total. */
export function invoiceTotals(invoice: {
  lineItems: {
    data: readonly (Pick<InvoiceLineItem, 'unitAmount' | 'quantity'> & { taxRates?: readonly AppliedTaxRate[] })[];
  };
  amountDue: string;
}): TotalsRow[] {
  const subtotal = invoice.lineItems.data.reduce((sum, line) => sum + lineAmount(line), 0n);
  return [
    { kind: 'subtotal', label: 'Subtotal', amount: subtotal },
    ...taxRows(invoice.lineItems.data),
    { kind: 'total', label: 'Total', amount: BigInt(invoice.amountDue) },
  ];
}
