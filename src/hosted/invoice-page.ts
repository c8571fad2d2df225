import type { Organization } from '../actors/organization.ts';
import { escapeHtml as e, hostedPage } from './html.ts';
import { type InvoiceDocument, owesNothing } from './invoice-document.ts';

/** Where the page's actions go: the pay link, the PDF; `payOnline`: the pay link in full, printed on paper. */
export type InvoicePageLinks = { pay: string; pdf: string; payOnline?: string };

/** The invoice page's header badge: a test invoice says so, as the checkout page does. */
export type InvoicePageOptions = { testMode?: boolean };

const lines = (values: string[], className = 'lines-of-text'): string =>
  values.length ? `<p class="${className}">${values.map(e).join('<br>')}</p>` : '';

const row = (label: string, value: string, id: string, className = '') =>
  `<tr${className ? ` class="${className}"` : ''}><th scope="row">${e(label)}</th><td id="${id}">${e(value)}</td></tr>`;

/**
 * The heading amount breaks only between its number and its currency, never inside the number: a long
 * number is set smaller (by the summary's width, in invoice.css) so that it fits whole.
 */
function amountSizeClass(amount: string): string {
  const number = amount.split(' ')[0] ?? amount;
  return number.length > 18 ? ' summary-amount-longer' : number.length > 13 ? ' summary-amount-long' : '';
}

/** The box on the side: what is due and when, the pay action, and the download. Hidden in print. */
function summary(doc: InvoiceDocument, links: InvoicePageLinks, notice: string | null): string {
  const headline = doc.status.tone === 'paid' ? doc.total : doc.amountRemaining;
  // Read with the badge before it: "Due February 1, 2030", "Overdue since …", "Paid November 25, 2026".
  const when =
    doc.status.tone === 'paid'
      ? (doc.paidOn ?? '')
      : doc.status.tone === 'void'
        ? ''
        : doc.status.label === 'Overdue'
          ? `since ${doc.due}`
          : doc.status.label === 'Partially paid'
            ? `due ${doc.due}`
            : doc.due;
  // "Due" says no more than the date above it; every other status has something to add.
  const sentence = doc.status.label === 'Due' ? '' : ` <span id="message">${e(doc.status.sentence)}</span>`;
  const pay = doc.payable
    ? `<a class="pay-button" id="pay" href="${e(links.pay)}">Pay ${e(doc.amountRemaining)}</a>`
    : '';
  return `<section class="invoice-summary" aria-label="Summary">
    <p class="summary-from">Invoice from <strong>${e(doc.business.name)}</strong></p>
    <p class="summary-amount${amountSizeClass(headline)}" id="amount-due">${e(headline)}</p>
    <p class="summary-when status status-${doc.status.tone}" id="status"><span class="badge">${e(doc.status.label)}</span> <span class="summary-date">${e(when)}</span></p>
    ${sentence ? `<p class="summary-sentence">${sentence}</p>` : ''}
    ${notice ? `<p class="notice" id="notice" role="alert">${e(notice)}</p>` : ''}
    <table class="summary-meta">
      ${row('Invoice number', doc.number, 'summary-number')}
      ${row('Due date', doc.due, 'summary-due')}
      ${row('Amount', doc.total, 'summary-total')}
    </table>
    ${pay}
    <p class="doc-actions">
      <a id="download-pdf" href="${e(links.pdf)}" download>Download PDF</a>
      <button type="button" id="print" hidden>Print</button>
    </p>
  </section>`;
}

function businessBlock(doc: InvoiceDocument): string {
  const b = doc.business;
  const contact = b.contact
    .map((c) => `<li>${c.href ? `<a href="${e(c.href)}">${e(c.text)}</a>` : e(c.text)}</li>`)
    .join('');
  return `<div class="doc-business" id="business">
        ${b.logo ? `<img class="doc-logo" src="${e(b.logo)}" alt="${e(b.name)}">` : ''}
        <p class="doc-business-name">${e(b.name)}</p>
        ${lines(b.addressLines)}
        ${contact ? `<ul class="doc-contact">${contact}</ul>` : ''}
      </div>`;
}

function lineItems(doc: InvoiceDocument): string {
  const rows = doc.lines
    .map(
      (line) => `<tr>
          <td class="item"><span class="item-name">${e(line.description)}</span>${line.detail ? `<span class="item-detail">${e(line.detail)}</span>` : ''}<span class="item-meta">${e(line.quantity)} × ${e(line.unitAmount)}</span></td>
          <td class="num qty">${e(line.quantity)}</td>
          <td class="num unit">${e(line.unitAmount)}</td>
          <td class="num">${e(line.amount)}</td>
        </tr>`,
    )
    .join('\n        ');
  return `<table class="doc-lines" id="line-items">
      <caption class="visually-hidden">Line items</caption>
      <thead><tr><th scope="col">Description</th><th scope="col" class="num qty">Qty</th><th scope="col" class="num unit">Unit price</th><th scope="col" class="num">Amount</th></tr></thead>
      <tbody>
        ${rows}
      </tbody>
    </table>`;
}

function totals(doc: InvoiceDocument): string {
  return `<table class="doc-totals" id="totals">
      ${row('Subtotal', doc.subtotal, 'subtotal')}
      ${doc.taxes.map((tax, i) => row(tax.label, tax.amount, `tax-${i}`, tax.included ? 'tax-included' : 'tax')).join('')}
      ${row('Total', doc.total, 'total', 'total')}
      ${doc.anyPaid ? row('Amount paid', doc.amountPaid, 'amount-paid') : ''}
      ${doc.amountOverpaid ? row('Overpaid', doc.amountOverpaid, 'amount-overpaid') : ''}
      ${owesNothing(doc) ? '' : row('Amount remaining', doc.amountRemaining, 'amount-remaining', 'remaining')}
    </table>`;
}

/** The line above the items: what is due and when, or that it was paid or voided. */
function amountLine(doc: InvoiceDocument): string {
  if (doc.status.tone === 'paid') return `${doc.total} paid${doc.paidOn ? ` on ${doc.paidOn}` : ''}`;
  if (doc.status.tone === 'void') return `${doc.total}, voided: nothing to pay`;
  return `${doc.amountRemaining} due ${doc.due}`;
}

/** The invoice itself, as it is printed: the part a print shows alone. */
function documentBody(doc: InvoiceDocument, links: InvoicePageLinks): string {
  const b = doc.business;
  const footerLinks = b.links.map((l) => `<a href="${e(l.href)}">${e(l.label)}</a>`).join(' · ');
  const billedTo = doc.billedTo;
  return `<article class="invoice-document" id="invoice" aria-labelledby="invoice-title">
    <div class="doc-head">
      ${businessBlock(doc)}
      <div class="doc-title">
        <h1 id="invoice-title">Invoice <span class="visually-hidden">${e(doc.number)}</span></h1>
        <table class="doc-meta">
          ${row('Invoice number', doc.number, 'number')}
          ${row('Date of issue', doc.issued, 'issued')}
          ${row('Date due', doc.due, 'due')}
          ${doc.paidOn ? row('Date paid', doc.paidOn, 'paid-on') : ''}
          ${row('Status', doc.status.label, 'status-word')}
        </table>
      </div>
    </div>
    <div class="doc-parties">
      <div class="doc-billed-to" id="billed-to">
        <h2>Billed to</h2>
        ${lines(billedTo.lines)}
        ${billedTo.email ? `<p><a href="mailto:${e(billedTo.email)}">${e(billedTo.email)}</a></p>` : ''}
      </div>
      ${
        doc.description || doc.recurrence
          ? `<div class="doc-about">
        <h2>Subject</h2>
        ${doc.description ? `<p class="doc-description" id="description">${e(doc.description)}</p>` : ''}
        ${doc.recurrence ? `<p class="muted" id="recurrence">${e(doc.recurrence)}</p>` : ''}
      </div>`
          : ''
      }
    </div>
    <p class="doc-amount-due" id="amount-line">${e(amountLine(doc))}</p>
    ${doc.payable && links.payOnline ? `<p class="print-only" id="pay-online">Pay online: ${e(links.payOnline)}</p>` : ''}
    ${lineItems(doc)}
    ${totals(doc)}
    ${doc.memo ? `<section class="doc-memo" id="memo" aria-label="Memo"><p>${e(doc.memo)}</p></section>` : ''}
    ${doc.transactionHash ? `<p class="doc-transaction muted">Payment transaction <code id="transaction">${e(doc.transactionHash)}</code></p>` : ''}
    <footer class="doc-footer">
      ${doc.footer ? `<p class="doc-footer-text" id="footer">${e(doc.footer)}</p>` : ''}
      <p class="muted" id="business-identifiers">${[b.name, ...b.identifiers].map(e).join(' · ')}</p>
      ${footerLinks ? `<p class="muted doc-links">${footerLinks}</p>` : ''}
    </footer>
  </article>`;
}

/**
 * The hosted invoice page: the invoice as a document (business and branding, billed-to, dates,
 * lines, totals, memo and footer) beside a summary with the pay action and the PDF download.
 * `notice`: a line about why it cannot be paid right now, if so. Styles in invoice.css, which
 * also prints the document alone; the print button's script is invoice.js (no inline script).
 */
export function renderInvoicePage(
  doc: InvoiceDocument,
  org: Organization | null,
  links: InvoicePageLinks,
  notice: string | null = null,
  options: InvoicePageOptions = {},
): string {
  return hostedPage({
    title: `Invoice ${doc.number} · ${doc.business.name}`,
    kind: 'invoice',
    org,
    business: doc.business.name,
    testMode: options.testMode ?? false,
    stylesheets: ['invoice.css'],
    script: { name: 'invoice.js' },
    main: `<div class="invoice-layout">
  ${summary(doc, links, notice)}
  ${documentBody(doc, links)}
</div>`,
  });
}
