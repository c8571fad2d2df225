import { type InvoiceDocument, owesNothing } from './invoice-document.ts';

const PAGE = { width: 595.28, height: 841.89 };
const MARGIN = 50;
const RIGHT = PAGE.width - MARGIN;
const CONTENT = RIGHT - MARGIN;
const INK = '#1d2327';
const MUTED = '#667080';
const RULE = '#d5d8dd';
/** Columns of the line items: description, quantity, unit price, amount (right edges for the numbers). */
const COLUMNS = { description: MARGIN, descriptionWidth: 250, qtyRight: 350, unitRight: 455, amountRight: RIGHT };
const BOTTOM = PAGE.height - MARGIN - 20;

/**
 * The PDF fonts are the standard Helvetica ones (nothing to ship or load), which draw WinAnsi only:
 * any other character becomes `?` rather than a wrong glyph.
 */
const WIN_ANSI_EXTRA = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');
const drawable = (text: string): string =>
  Array.from(text, (c) => {
    const code = c.codePointAt(0)!;
    return (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || WIN_ANSI_EXTRA.has(c) || c === '\n'
      ? c
      : '?';
  }).join('');

/** A logo PDFKit can embed without fetching anything: a PNG or JPEG data URL. */
function embeddableLogo(logo: string | null): Buffer | null {
  const match = logo ? /^data:image\/(?:png|jpe?g);base64,([A-Za-z0-9+/=]+)$/.exec(logo) : null;
  return match ? Buffer.from(match[1]!, 'base64') : null;
}

/**
 * The invoice as a PDF (A4), drawn from the same document as the hosted page: business and
 * branding, dates, billed-to, line items, totals, memo, footer, and the pay link while it is
 * payable. `compress: false` leaves the text readable in the file (tests).
 */
export async function renderInvoicePdf(
  doc: InvoiceDocument,
  options: { payUrl: string | null; createdAt: Date; compress?: boolean },
): Promise<Buffer> {
  // PDFKit and its fonts load at the first PDF asked for, not with every server.
  const { default: PDFDocument } = await import('pdfkit');
  const pdf = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    compress: options.compress ?? true,
    // Kept in memory until the end, so each page's footer can say "page n of N".
    bufferPages: true,
    info: {
      Title: drawable(`Invoice ${doc.number}`),
      Author: drawable(doc.business.name),
      Subject: drawable(`Invoice ${doc.number} from ${doc.business.name}`),
      CreationDate: options.createdAt,
    },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    pdf.on('data', (chunk: Buffer) => chunks.push(chunk));
    pdf.on('end', () => resolve(Buffer.concat(chunks)));
    pdf.on('error', reject);
  });
  const brand = doc.business.brandColor ?? '#2f5d62';
  const text = (value: string, x: number, y: number, opts: PDFKit.Mixins.TextOptions = {}) =>
    pdf.text(drawable(value), x, y, { lineBreak: opts.width !== undefined, ...opts });
  const rule = (y: number, color = RULE) =>
    pdf.moveTo(MARGIN, y).lineTo(RIGHT, y).lineWidth(0.7).strokeColor(color).stroke();

  pdf.rect(0, 0, PAGE.width, 8).fill(brand);

  // The business, left; the title and dates, right.
  let left = MARGIN + 4;
  const logo = embeddableLogo(doc.business.logo);
  if (logo) {
    try {
      pdf.image(logo, MARGIN, left, { fit: [140, 40] });
      left += 48;
    } catch {
      // A logo PDFKit cannot read is left out; the business name follows anyway.
    }
  }
  pdf.font('Helvetica-Bold').fontSize(15).fillColor(INK);
  text(doc.business.name, MARGIN, left, { width: 260 });
  pdf.font('Helvetica').fontSize(9).fillColor(MUTED);
  for (const line of [...doc.business.addressLines, ...doc.business.contact.map((c) => c.text)]) {
    text(line, MARGIN, pdf.y + 1, { width: 260 });
  }
  const businessBottom = pdf.y;

  pdf.font('Helvetica-Bold').fontSize(24).fillColor(INK);
  text('Invoice', MARGIN + 280, MARGIN + 2, { width: CONTENT - 280, align: 'right' });
  let metaY = MARGIN + 38;
  const meta: [string, string][] = [
    ['Invoice number', doc.number],
    ['Date of issue', doc.issued],
    ['Date due', doc.due],
    ...(doc.paidOn ? [['Date paid', doc.paidOn] as [string, string]] : []),
    ['Status', doc.status.label],
  ];
  for (const [label, value] of meta) {
    pdf.font('Helvetica').fontSize(9.5).fillColor(MUTED);
    text(label, MARGIN + 300, metaY, { width: 100 });
    pdf.font('Helvetica-Bold').fillColor(INK);
    text(value, MARGIN + 380, metaY, { width: CONTENT - 380, align: 'right' });
    metaY += 15;
  }

  // Billed to, and what is due.
  let y = Math.max(businessBottom, metaY) + 22;
  const billedTo = [...doc.billedTo.lines, ...(doc.billedTo.email ? [doc.billedTo.email] : [])];
  let billedY = y;
  if (billedTo.length) {
    pdf.font('Helvetica-Bold').fontSize(8).fillColor(MUTED);
    text('BILLED TO', MARGIN, y, { characterSpacing: 0.8 });
    pdf.font('Helvetica').fontSize(10).fillColor(INK);
    billedY = y + 14;
    for (const line of billedTo) {
      text(line, MARGIN, billedY, { width: 250 });
      billedY = pdf.y + 1;
    }
  }
  let aboutY = y;
  if (doc.description || doc.recurrence) {
    pdf.font('Helvetica-Bold').fontSize(8).fillColor(MUTED);
    text('SUBJECT', MARGIN + 280, y, { characterSpacing: 0.8 });
    aboutY = y + 14;
    pdf.font('Helvetica').fontSize(10).fillColor(INK);
    for (const line of [doc.description, doc.recurrence].filter((l): l is string => Boolean(l))) {
      text(line, MARGIN + 280, aboutY, { width: CONTENT - 280 });
      aboutY = pdf.y + 1;
    }
  }
  y = Math.max(billedY, aboutY) + 18;

  // What is due and when (or that it was paid, or voided), and where to pay it.
  const headline =
    doc.status.tone === 'paid'
      ? `${doc.total} paid${doc.paidOn ? ` on ${doc.paidOn}` : ''}`
      : doc.status.tone === 'void'
        ? `${doc.total}, voided: nothing to pay`
        : `${doc.amountRemaining} due ${doc.due}`;
  pdf.font('Helvetica-Bold').fontSize(15).fillColor(INK);
  text(headline, MARGIN, y, { width: CONTENT });
  y = pdf.y + 4;
  if (options.payUrl && doc.payable) {
    pdf.font('Helvetica').fontSize(9.5).fillColor(MUTED);
    text('Pay online: ', MARGIN, y, { continued: true });
    pdf.fillColor(brand).text(drawable(options.payUrl), { link: options.payUrl, underline: true });
    y = pdf.y + 2;
  }
  y += 20;

  // Line items.
  const header = (top: number): number => {
    pdf.font('Helvetica-Bold').fontSize(8).fillColor(MUTED);
    text('DESCRIPTION', COLUMNS.description, top, { characterSpacing: 0.6 });
    text('QTY', COLUMNS.qtyRight - 60, top, { width: 60, align: 'right', characterSpacing: 0.6 });
    text('UNIT PRICE', COLUMNS.unitRight - 100, top, { width: 100, align: 'right', characterSpacing: 0.6 });
    text('AMOUNT', COLUMNS.amountRight - 110, top, { width: 110, align: 'right', characterSpacing: 0.6 });
    rule(top + 14);
    return top + 22;
  };
  y = header(y);
  for (const line of doc.lines) {
    pdf.font('Helvetica').fontSize(10);
    const nameHeight = pdf.heightOfString(drawable(line.description), { width: COLUMNS.descriptionWidth });
    pdf.fontSize(8.5);
    const detailHeight = line.detail
      ? pdf.heightOfString(drawable(line.detail), { width: COLUMNS.descriptionWidth }) + 2
      : 0;
    const height = nameHeight + detailHeight;
    if (y + height > BOTTOM) {
      pdf.addPage();
      y = header(MARGIN);
    }
    pdf.font('Helvetica').fontSize(10).fillColor(INK);
    text(line.description, COLUMNS.description, y, { width: COLUMNS.descriptionWidth });
    if (line.detail) {
      pdf.fontSize(8.5).fillColor(MUTED);
      text(line.detail, COLUMNS.description, y + nameHeight + 2, { width: COLUMNS.descriptionWidth });
    }
    pdf.fontSize(10).fillColor(INK);
    text(line.quantity, COLUMNS.qtyRight - 60, y, { width: 60, align: 'right' });
    text(line.unitAmount, COLUMNS.unitRight - 100, y, { width: 100, align: 'right' });
    text(line.amount, COLUMNS.amountRight - 110, y, { width: 110, align: 'right' });
    y += height + 8;
    rule(y - 4, '#eceef1');
    y += 4;
  }

  // Totals, right.
  const totals: [string, string, boolean][] = [
    ['Subtotal', doc.subtotal, false],
    ...doc.taxes.map((tax): [string, string, boolean] => [tax.label, tax.amount, false]),
    ['Total', doc.total, true],
    ...(doc.anyPaid ? [['Amount paid', doc.amountPaid, false] as [string, string, boolean]] : []),
    ...(doc.amountOverpaid ? [['Overpaid', doc.amountOverpaid, false] as [string, string, boolean]] : []),
    ...(owesNothing(doc) ? [] : [['Amount remaining', doc.amountRemaining, true] as [string, string, boolean]]),
  ];
  if (y + totals.length * 18 + 10 > BOTTOM) {
    pdf.addPage();
    y = MARGIN;
  }
  y += 4;
  for (const [label, value, strong] of totals) {
    if (strong)
      pdf
        .moveTo(RIGHT - 230, y - 5)
        .lineTo(RIGHT, y - 5)
        .lineWidth(0.7)
        .strokeColor(RULE)
        .stroke();
    pdf
      .font(strong ? 'Helvetica-Bold' : 'Helvetica')
      .fontSize(10)
      .fillColor(strong ? INK : '#445060');
    text(label, RIGHT - 230, y, { width: 120 });
    text(value, RIGHT - 150, y, { width: 150, align: 'right' });
    y += 18;
  }

  // Memo, payment, footer, business identifiers and links.
  const paragraph = (value: string, size: number, color: string) => {
    pdf.font('Helvetica').fontSize(size);
    const height = pdf.heightOfString(drawable(value), { width: CONTENT });
    if (y + height > BOTTOM) {
      pdf.addPage();
      y = MARGIN;
    }
    pdf.fillColor(color);
    text(value, MARGIN, y, { width: CONTENT });
    y = pdf.y + 10;
  };
  y += 16;
  if (doc.memo) paragraph(doc.memo, 10, INK);
  if (doc.transactionHash) paragraph(`Payment transaction: ${doc.transactionHash}`, 8.5, MUTED);
  if (doc.footer || doc.business.identifiers.length || doc.business.links.length) {
    y += 6;
    if (y < BOTTOM) rule(y - 6);
    if (doc.footer) paragraph(doc.footer, 9, INK);
    paragraph([doc.business.name, ...doc.business.identifiers].join('  ·  '), 8.5, MUTED);
    for (const link of doc.business.links) paragraph(`${link.label}: ${link.href}`, 8.5, MUTED);
  }

  const range = pdf.bufferedPageRange();
  for (let i = 0; i < range.count; i++) {
    pdf.switchToPage(range.start + i);
    // Drawn in the bottom margin: without the margin for a moment, or PDFKit would start a new page.
    const bottom = pdf.page.margins.bottom;
    pdf.page.margins.bottom = 0;
    pdf.font('Helvetica').fontSize(8).fillColor(MUTED);
    text(`Invoice ${doc.number}`, MARGIN, PAGE.height - 34);
    text(`Page ${i + 1} of ${range.count}`, RIGHT - 100, PAGE.height - 34, { width: 100, align: 'right' });
    pdf.page.margins.bottom = bottom;
  }
  pdf.end();
  return done;
}
