import { invoiceTotals, lineAmount } from './totals.ts';
import { isOverdue } from '../../machines/invoice.due.ts';
import { overpaidOf } from '../../machines/invoice.evolve.ts';
import type { Invoice } from '../../machines/invoice.types.ts';
import { shownInvoiceHash } from '../projections/invoices.projection.ts';
import type { AddressDetails, Organization } from '../actors/organization.ts';
import type { Customer } from '../actors/customer.ts';
import { documentMoney } from '../shared/money.ts';
import { recurrence } from '../shared/recurrence.ts';

/**
 * What an invoice shows its payer, already in words: the one view the hosted page and the PDF
 * both draw, so the two never disagree on a date, an amount or the status.
 */
export type InvoiceDocument = {
  number: string;
  currency: string;
  description: string | null;
  /** "Invoice" for a one-time invoice; the recurring ones say how often. */
  recurrence: string | null;
  issued: string;
  due: string;
  paidOn: string | null;
  status: InvoiceStatusView;
  business: BusinessView;
  billedTo: { lines: string[]; email: string | null };
  lines: {
    description: string;
    /** The product's own description, under its name. */
    detail: string | null;
    quantity: string;
    unitAmount: string;
    amount: string;
  }[];
  subtotal: string;
  /** One per tax rate: exclusive ones add up to the total, inclusive ones (`included`) are in the prices. */
  taxes: { label: string; amount: string; included: boolean }[];
  total: string;
  amountPaid: string;
  amountRemaining: string;
  /** Whether anything has been received: the paid and remaining rows are shown then. */
  anyPaid: boolean;
  /** What was received beyond the total (two payments crossed), which the merchant refunds; null when none. */
  amountOverpaid: string | null;
  memo: string | null;
  footer: string | null;
  transactionHash: string | null;
  /** Whether a payer can pay it now (open or written off, and something still due). */
  payable: boolean;
};

export type InvoiceStatusView = {
  /** One or two words for the badge. */
  label: 'Due' | 'Overdue' | 'Partially paid' | 'Paid' | 'Void';
  tone: 'due' | 'overdue' | 'paid' | 'void';
  /** A sentence for the payer. */
  sentence: string;
};

export type BusinessView = {
  name: string;
  brandColor: string | null;
  /** Only an http(s) or data: image; anything else is not shown. */
  logo: string | null;
  addressLines: string[];
  contact: { label: string; text: string; href: string | null }[];
  identifiers: string[];
  /** Terms, privacy, support site: http(s) links only. */
  links: { label: string; href: string }[];
};

const HEX_COLOR = /^#[0-9a-fA-F]{3}(?:[0-9a-fA-F]{3})?$/;
const httpUrl = (value: string | null | undefined): string | null =>
  value && /^https?:\/\/[^\s]+$/i.test(value) ? value : null;
const imageUrl = (value: string | null | undefined): string | null =>
  httpUrl(value) ??
  (value && /^data:image\/(png|jpe?g|gif|svg\+xml|webp);base64,[A-Za-z0-9+/=]+$/.test(value) ? value : null);

const DATE = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', year: 'numeric', month: 'long', day: 'numeric' });
/** `2030-02-01T…` → `February 1, 2030` (UTC: the day the merchant chose, wherever the payer is). */
export const documentDate = (iso: string): string => DATE.format(new Date(iso));

const REGIONS = new Intl.DisplayNames(['en'], { type: 'region' });
/** `US` → `United States`; anything that is not a two-letter code is shown as given. */
function countryName(country: string | null): string | null {
  if (!country || !/^[A-Za-z]{2}$/.test(country)) return country;
  try {
    return REGIONS.of(country.toUpperCase()) ?? country;
  } catch {
    return country;
  }
}

export function addressLines(address: AddressDetails | null | undefined): string[] {
  if (!address) return [];
  const cityLine = [[address.postalCode, address.city].filter(Boolean).join(' '), address.state]
    .filter(Boolean)
    .join(', ');
  return [address.line1, address.line2, cityLine, countryName(address.country)].filter((line): line is string =>
    Boolean(line),
  );
}

/** When an invoice counts as issued (and its period starts): its issue date, else when it was finalized, else made. */
export const issuedAt = (invoice: Invoice): string => invoice.issueDate ?? invoice.finalizedAt ?? invoice.createdAt;

/** How often a recurring invoice bills and, once the next one is scheduled, the period this one covers. */
function recurrenceOf(invoice: Invoice): string | null {
  if (!invoice.recurring) return null;
  const { intervalCount } = invoice.recurring;
  const every = `Billed ${intervalCount === 12 ? recurrence('year', 1) : recurrence('month', intervalCount)}`;
  if (!invoice.nextInvoice) return every;
  const start = documentDate(issuedAt(invoice));
  return `${every}; this invoice covers ${start} – ${documentDate(invoice.nextInvoice.issueDate)}`;
}

function statusOf(invoice: Invoice, nowMs: number, paidOn: string | null, due: string): InvoiceStatusView {
  const remaining = documentMoney(invoice.amountRemaining, invoice.currency);
  if (invoice.status === 'paid')
    return {
      label: 'Paid',
      tone: 'paid',
      sentence: paidOn ? `This invoice was paid on ${paidOn}. Thank you.` : 'This invoice was paid. Thank you.',
    };
  if (invoice.status === 'void')
    return { label: 'Void', tone: 'void', sentence: 'This invoice was voided and can no longer be paid.' };
  const overdue = isOverdue(invoice, nowMs);
  if (BigInt(invoice.amountPaid) > 0n)
    return {
      label: 'Partially paid',
      tone: overdue ? 'overdue' : 'due',
      sentence: `${documentMoney(invoice.amountPaid, invoice.currency)} received; ${remaining} ${overdue ? 'was' : 'is'} still due ${overdue ? 'on' : 'by'} ${due}.`,
    };
  return overdue
    ? { label: 'Overdue', tone: 'overdue', sentence: `${remaining} was due on ${due}.` }
    : { label: 'Due', tone: 'due', sentence: `${remaining} due by ${due}.` };
}

function businessOf(org: Organization | null): BusinessView {
  if (!org)
    return {
      name: 'Weir merchant',
      brandColor: null,
      logo: null,
      addressLines: [],
      contact: [],
      identifiers: [],
      links: [],
    };
  const email = org.supportEmail ?? org.email;
  const phone = org.supportPhone ?? org.phone;
  const website = httpUrl(org.websiteUrl);
  const contact = [
    email ? { label: 'Email', text: email, href: `mailto:${email}` } : null,
    phone ? { label: 'Phone', text: phone, href: `tel:${phone.replace(/[^+0-9]/g, '')}` } : null,
    website ? { label: 'Website', text: website.replace(/^https?:\/\//i, '').replace(/\/$/, ''), href: website } : null,
  ].filter((c) => c !== null);
  const identifiers = [
    org.companyIdentificationNumber ? `Company no. ${org.companyIdentificationNumber}` : null,
    org.taxIdentificationNumber ? `Tax ID ${org.taxIdentificationNumber}` : null,
  ].filter((line): line is string => line !== null);
  const links = (
    [
      ['Support', org.supportUrl],
      ['Terms of service', org.termsUrl],
      ['Privacy policy', org.privacyUrl],
    ] as const
  )
    .map(([label, url]) => ({ label, href: httpUrl(url) }))
    .filter(
      (link): link is { label: 'Support' | 'Terms of service' | 'Privacy policy'; href: string } => link.href !== null,
    );
  return {
    name: org.name,
    brandColor: org.brandColor && HEX_COLOR.test(org.brandColor) ? org.brandColor : null,
    logo: imageUrl(org.brandLogo),
    addressLines: addressLines(org.addressDetails),
    contact,
    identifiers,
    links,
  };
}

function billedToOf(customer: Customer | null): InvoiceDocument['billedTo'] {
  if (!customer) return { lines: [], email: null };
  const lines = [customer.name, customer.organizationName, ...addressLines(customer.address), customer.phone].filter(
    (line): line is string => Boolean(line),
  );
  return { lines, email: customer.email || null };
}

/**
 * The document of a finalized invoice. `productDetails`: the catalog description of a line's
 * price's product, when it has one. `nowMs` words the status (due or overdue).
 */
/** A voided invoice is owed nothing: its page and PDF show no "amount remaining" beside "nothing to pay". */
export const owesNothing = (doc: InvoiceDocument): boolean => doc.status.tone === 'void';

export function invoiceDocument(input: {
  invoice: Invoice;
  organization: Organization | null;
  customer: Customer | null;
  productDetails?: ReadonlyMap<string, string>;
  nowMs: number;
}): InvoiceDocument {
  const { invoice, nowMs } = input;
  const money = (amount: string) => documentMoney(amount, invoice.currency);
  const due = documentDate(invoice.dueDate);
  const paidOn = invoice.paidAt ? documentDate(invoice.paidAt) : null;
  // Lines show their price × quantity; their tax is shown once per rate under the subtotal.
  const totals = invoiceTotals(invoice);
  const remaining = BigInt(invoice.amountRemaining);
  const overpaid = BigInt(overpaidOf(invoice.amountDue, invoice.amountPaid));
  return {
    number: invoice.number,
    currency: invoice.currency.toUpperCase(),
    description: invoice.description,
    recurrence: recurrenceOf(invoice),
    issued: documentDate(issuedAt(invoice)),
    due,
    paidOn,
    status: statusOf(invoice, nowMs, paidOn, due),
    business: businessOf(input.organization),
    billedTo: billedToOf(input.customer),
    lines: invoice.lineItems.data.map((line) => ({
      description: line.description ?? 'Item',
      detail: (line.priceId && input.productDetails?.get(line.priceId)) || null,
      quantity: String(line.quantity),
      unitAmount: money(line.unitAmount),
      amount: money(lineAmount(line).toString()),
    })),
    subtotal: money(totals[0]!.amount.toString()),
    taxes: totals
      .filter((row) => row.kind === 'tax' || row.kind === 'included-tax')
      .map((row) => ({
        label: row.label,
        amount: money(row.amount.toString()),
        included: row.kind === 'included-tax',
      })),
    total: money(invoice.amountDue),
    amountPaid: money(invoice.amountPaid),
    amountRemaining: money(invoice.amountRemaining),
    anyPaid: BigInt(invoice.amountPaid) > 0n || invoice.status === 'paid',
    amountOverpaid: overpaid > 0n ? money(overpaid.toString()) : null,
    memo: invoice.memo,
    footer: invoice.footer,
    transactionHash: shownInvoiceHash(invoice),
    payable: (invoice.status === 'open' || invoice.status === 'uncollectible') && remaining > 0n,
  };
}
