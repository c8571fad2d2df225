import type { CheckoutSession } from '../../machines/checkout-session.types.ts';
import { escapeHtml } from '../hosted/html.ts';
import type { MailSender } from './mail-sender.ts';
import { documentMoney } from '../shared/money.ts';
import { shownHashOn } from '../chain-ingest/tron/networks.ts';
import { sessionTotals } from '../hosted/totals.ts';

export type PaymentReceiptMailInput = {
  session: CheckoutSession;
  receiptNumber: string;
  /** The organization's business details and branding; null renders a plain mail. */
  organization: MailSender | null;
  customerName: string | null;
};

const HEX_COLOR = /^#[0-9a-fA-F]{3}(?:[0-9a-fA-F]{3})?$/;
const money = documentMoney;

/**
 * The receipt of a paid checkout session, mailed to its payer on the merchant's request: what
 * was bought, what was received and in which transaction, with the business's details. Every
 * value is escaped in the HTML.
 */
export function renderPaymentReceiptMail(input: PaymentReceiptMailInput): {
  subject: string;
  text: string;
  html: string;
} {
  const { session, organization: org, receiptNumber } = input;
  const business = org?.name ?? 'Weir merchant';
  const color = org?.brandColor && HEX_COLOR.test(org.brandColor) ? org.brandColor : '#1f2937';
  const paidOn = (session.completedAt ?? session.updatedAt).slice(0, 10);
  const received = money(session.amountReceived, session.currency);
  const subject = `Receipt ${receiptNumber} from ${business}`;
  const greeting = input.customerName ? `Hello ${input.customerName},` : 'Hello,';
  const lead = `Thank you: ${business} received ${received} on ${paidOn}.`;
  // Lines at price × quantity, then the rows the hosted page shows (discount, each tax, network fee):
  // with a line's tax in it and no discount or fee row, the lines did not add up to the total.
  const items = session.lineItems.data.map(
    (i) =>
      `${i.quantity} × ${i.description ?? i.price.product.name} = ${money(i.amountSubtotal, i.currency || session.currency)}`,
  );
  const totals = sessionTotals(session);
  const total = `Total: ${money(session.amountTotal, session.currency)}`;
  const breakdown = totals
    .filter((row) => row.kind !== 'total')
    .map((row) => `${row.label}: ${row.kind === 'discount' ? '−' : ''}${money(row.amount, session.currency)}`);
  const transactions = session.payments
    .filter((p) => p.status === 'confirmed')
    .map((p) => `${p.asset.symbol} on ${p.network}: ${shownHashOn(p.chainId, p.transactionHash)}`);
  const support = org?.supportEmail ?? org?.email ?? null;
  const lines = [
    greeting,
    '',
    lead,
    '',
    `Receipt ${receiptNumber}`,
    `Paid: ${paidOn}`,
    ...items,
    ...breakdown,
    total,
    `Amount received: ${received}`,
    ...(transactions.length ? ['', 'Transactions:', ...transactions] : []),
    '',
    '--',
    business,
    ...(support ? [`Support: ${support}`] : []),
  ];
  const e = escapeHtml;
  const html = `<!doctype html>
<html><head><meta charset="utf-8"><title>${e(subject)}</title></head>
<body style="margin:0;padding:24px;background:#f3f4f6;font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#111827">
<div style="max-width:600px;margin:0 auto;background:#ffffff;border-radius:8px;overflow:hidden">
<div style="background:${color};color:#ffffff;padding:20px 24px"><div style="font-size:20px;font-weight:600">${e(business)}</div><div>Receipt ${e(receiptNumber)}</div></div>
<div style="padding:24px">
<p>${e(greeting)}</p>
<p>${e(lead)}</p>
${[...items, ...breakdown].map((line) => `<div>${e(line)}</div>`).join('\n')}
<p><strong>${e(total)}</strong></p>
${transactions.length ? `<p style="font-size:12px;color:#6b7280">${transactions.map((line) => e(line)).join('<br>')}</p>` : ''}
</div>
<div style="padding:16px 24px;border-top:1px solid #e5e7eb;font-size:12px;color:#6b7280"><div>${e(business)}</div>${support ? `<div>Support: ${e(support)}</div>` : ''}</div>
</div>
</body></html>`;
  return { subject, text: lines.join('\n'), html };
}
