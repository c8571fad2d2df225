import { invoiceTotals, lineAmount } from '../hosted/totals.ts';
import { isOverdue } from '../../machines/invoice.due.ts';
import type { Invoice } from '../../machines/invoice.types.ts';
import { escapeHtml } from '../hosted/html.ts';
import { issuedAt } from '../hosted/invoice-document.ts';
import type { MailSender } from './mail-sender.ts';
import { documentMoney } from '../shared/money.ts';
import { overpaidOf } from '../../machines/invoice.evolve.ts';
import { contactPhrase } from '../hosted/business-footer.ts';

export type InvoiceMailKind = 'invoice' | 'reminder' | 'receipt';

export type InvoiceMailContent = { subject: string; text: string; html: string };

export type InvoiceMailInput = {
  kind: InvoiceMailKind;
  invoice: Invoice;
  /** The organization's business details and branding; null renders a plain mail. */
  organization: MailSender | null;
  customerName?: string | null;
  /** Where the customer pays (the invoice's hosted page). */
  payUrl: string | null;
  /** ms since epoch, for wording a reminder as overdue (defaults to the system time). */
  now?: number;
};

const HEX_COLOR = /^#[0-9a-fA-F]{3}(?:[0-9a-fA-F]{3})?$/;
const day = (iso: string | null) => (iso ? iso.slice(0, 10) : '');
const money = documentMoney;
const httpUrl = (value: string | null): string | null => (value && /^https?:\/\//i.test(value) ? value : null);

function addressLines(org: MailSender | null): string[] {
  if (!org) return [];
  const a = org.addressDetails;
  const cityLine = [a.postalCode, a.city, a.state].filter(Boolean).join(' ');
  return [a.line1, a.line2, cityLine, a.country].filter((line): line is string => Boolean(line));
}

/**
 * The invoice mails: the invoice itself, a payment reminder, and the receipt once paid. Each
 * carries the organization's business details (name, address, support email, website, ids) and
 * branding (brand color, logo), as text and as HTML with every value escaped.
 */
export function renderInvoiceMail(input: InvoiceMailInput): InvoiceMailContent {
  const { invoice, organization: org, kind } = input;
  const business = org?.name ?? 'Weir merchant';
  const color = org?.brandColor && HEX_COLOR.test(org.brandColor) ? org.brandColor : '#1f2937';
  const logo = httpUrl(org?.brandLogo ?? null);
  const supportEmail = org?.supportEmail ?? org?.email ?? null;
  const website = httpUrl(org?.websiteUrl ?? null);
  const due = money(invoice.amountRemaining, invoice.currency);
  const total = money(invoice.amountDue, invoice.currency);
  const overdue = isOverdue(invoice, input.now ?? Date.now());
  const overpaidAmount = BigInt(overpaidOf(invoice.amountDue, invoice.amountPaid));
  const overpaid = overpaidAmount > 0n ? money(overpaidAmount.toString(), invoice.currency) : null;

  const subject =
    kind === 'receipt'
      ? `Receipt for invoice ${invoice.number} from ${business}`
      : kind === 'reminder'
        ? `Reminder: invoice ${invoice.number} from ${business} ${overdue ? 'was' : 'is'} due ${day(invoice.dueDate)}`
        : `Invoice ${invoice.number} from ${business}: ${due} due ${day(invoice.dueDate)}`;
  const greeting = input.customerName ? `Hello ${input.customerName},` : 'Hello,';
  const lead =
    kind === 'receipt'
      ? `Thank you: we received ${money(invoice.amountPaid, invoice.currency)} for invoice ${invoice.number} on ${day(invoice.paidAt)}.${
          // The payer must learn the excess reached the business and whom to ask for it back.
          overpaid
            ? ` That is ${overpaid} more than was due; contact ${contactPhrase(org ?? { name: business })} about it.`
            : ''
        }`
      : kind === 'reminder'
        ? `This is a reminder that invoice ${invoice.number} for ${due} ${overdue ? 'was' : 'is'} due on ${day(invoice.dueDate)}.`
        : `${business} sent you invoice ${invoice.number} for ${due}, due on ${day(invoice.dueDate)}.`;
  const pay = kind !== 'receipt' && input.payUrl ? input.payUrl : null;
  const details = [
    business,
    ...addressLines(org),
    supportEmail ? `Support: ${supportEmail}` : null,
    org?.supportPhone ? `Phone: ${org.supportPhone}` : null,
    website ? `Website: ${website}` : null,
    org?.companyIdentificationNumber ? `Company no.: ${org.companyIdentificationNumber}` : null,
    org?.taxIdentificationNumber ? `Tax no.: ${org.taxIdentificationNumber}` : null,
  ].filter((line): line is string => Boolean(line));

  const items = invoice.lineItems.data;
  // Lines show price × quantity; their tax, once per rate, before the total.
  const taxes = invoiceTotals(invoice)
    .filter((row) => row.kind === 'tax' || row.kind === 'included-tax')
    .map((row) => ({ label: row.label, amount: money(row.amount, invoice.currency) }));
  // A recurring invoice bills the period from its issue date to the next invoice's.
  const start = issuedAt(invoice);
  const period =
    invoice.recurring && invoice.nextInvoice ? `${day(start)} – ${day(invoice.nextInvoice.issueDate)}` : null;
  const text = [
    greeting,
    '',
    lead,
    '',
    `Invoice ${invoice.number}`,
    `Issued: ${day(issuedAt(invoice))}`,
    `Due: ${day(invoice.dueDate)}`,
    ...(period ? [`Period: ${period}`] : []),
    '',
    ...items.map(
      (i) =>
        `${i.quantity} × ${i.description ?? 'Item'} @ ${money(i.unitAmount, invoice.currency)} = ${money(lineAmount(i), invoice.currency)}`,
    ),
    ...taxes.map((tax) => `${tax.label}: ${tax.amount}`),
    `Total: ${total}`,
    `Amount paid: ${money(invoice.amountPaid, invoice.currency)}`,
    ...(overpaid ? [`Overpaid: ${overpaid}`] : []),
    `Amount due: ${due}`,
    '',
    ...(invoice.memo ? [invoice.memo, ''] : []),
    ...(pay ? [`Pay online: ${pay}`, ''] : []),
    '--',
    ...details,
    ...(invoice.footer ? ['', invoice.footer] : []),
  ].join('\n');

  const e = escapeHtml;
  const row = (label: string, value: string, strong = false) =>
    `<tr><td style="padding:4px 0;color:#6b7280">${e(label)}</td><td style="padding:4px 0;text-align:right">${strong ? `<strong>${e(value)}</strong>` : e(value)}</td></tr>`;
  const html = `<!doctype html>
<html><head><meta charset="utf-8"><title>${e(subject)}</title></head>
<body style="margin:0;padding:24px;background:#f3f4f6;font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#111827">
<div style="max-width:600px;margin:0 auto;background:#ffffff;border-radius:8px;overflow:hidden">
<div style="background:${color};color:#ffffff;padding:20px 24px">
${logo ? `<img src="${e(logo)}" alt="${e(business)}" style="max-height:40px;display:block;margin-bottom:8px">` : ''}
<div style="font-size:20px;font-weight:600">${e(business)}</div>
<div>${e(kind === 'receipt' ? 'Receipt' : 'Invoice')} ${e(invoice.number)}</div>
</div>
<div style="padding:24px">
<p>${e(greeting)}</p>
<p>${e(lead)}</p>
<table style="width:100%;border-collapse:collapse;margin:16px 0">
<thead><tr><th style="text-align:left;border-bottom:1px solid #e5e7eb;padding:6px 0">Item</th><th style="text-align:right;border-bottom:1px solid #e5e7eb;padding:6px 0">Qty</th><th style="text-align:right;border-bottom:1px solid #e5e7eb;padding:6px 0">Amount</th></tr></thead>
<tbody>${items.map((i) => `<tr><td style="padding:6px 0">${e(i.description ?? 'Item')}</td><td style="padding:6px 0;text-align:right">${i.quantity}</td><td style="padding:6px 0;text-align:right">${e(money(lineAmount(i), invoice.currency))}</td></tr>`).join('')}</tbody>
</table>
<table style="width:100%;border-collapse:collapse">
${row('Issued', day(issuedAt(invoice)))}${row('Due', day(invoice.dueDate))}${period ? row('Period', period) : ''}${taxes.map((tax) => row(tax.label, tax.amount)).join('')}${row('Total', total)}${row('Amount paid', money(invoice.amountPaid, invoice.currency))}${overpaid ? row('Overpaid', overpaid) : ''}${row('Amount due', due, true)}
</table>
${invoice.memo ? `<p style="white-space:pre-wrap">${e(invoice.memo)}</p>` : ''}
${pay ? `<p style="text-align:center;margin:24px 0"><a href="${e(pay)}" style="background:${color};color:#ffffff;padding:12px 20px;border-radius:6px;text-decoration:none;display:inline-block">Pay ${e(due)}</a></p>` : ''}
</div>
<div style="padding:16px 24px;border-top:1px solid #e5e7eb;font-size:12px;color:#6b7280">
${details.map((line) => `<div>${e(line)}</div>`).join('\n')}
${invoice.footer ? `<p style="white-space:pre-wrap">${e(invoice.footer)}</p>` : ''}
</div>
</div>
</body></html>`;
  return { subject, text, html };
}
