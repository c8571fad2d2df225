import test from 'ava';
import { invoiceFixture } from '../../machines/invoice.fixture.ts';
import type { Organization } from '../actors/organization.ts';
import { pdfText } from '../../test/support/pdf-text.ts';
import { invoiceDocument } from './invoice-document.ts';
import { renderInvoicePdf } from './invoice-pdf.ts';

/** A 1×1 PNG. */
const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const pages = (pdf: Buffer) => (pdf.toString('latin1').match(/\/Type \/Page\b/g) ?? []).length;

test('a long invoice flows onto more pages with the column headings repeated; text outside WinAnsi is drawn as ?; a data: PNG logo is embedded', async (t) => {
  const lines = Array.from({ length: 60 }, (_, i) => ({
    description: `Line ${i + 1}: a description long enough to wrap onto a second line in the description column`,
    priceId: null,
    quantity: 1,
    unitAmount: '100000000',
    amountTotal: '100000000',
  }));
  const invoice = invoiceFixture({
    status: 'open',
    number: 'INV-000077',
    lineItems: { object: 'list', data: lines },
    amountDue: '6000000000',
    amountRemaining: '6000000000',
    memo: 'Merci — 谢谢',
  });
  const organization = { name: 'Café Zürich', addressDetails: {}, brandLogo: PNG } as unknown as Organization;
  const doc = invoiceDocument({ invoice, organization, customer: null, nowMs: Date.parse('2026-01-10T00:00:00Z') });
  const pdf = await renderInvoicePdf(doc, {
    payUrl: 'http://127.0.0.1/invoices/x/pay',
    createdAt: new Date('2026-01-02T00:00:00Z'),
    compress: false,
  });
  t.is(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
  t.true(pages(pdf) >= 3, `${pages(pdf)} pages`);
  const text = pdfText(pdf);
  t.is(text.filter((s) => s === 'DESCRIPTION').length, pages(pdf), 'the headings on every page');
  t.true(text.includes('60.00 USDC'), 'the total');
  t.true(text.includes('Café Zürich'), 'Latin-1 letters are drawn as they are');
  t.true(text.includes('Merci — ??'), 'CJK is not WinAnsi: shown as ?');
  t.regex(pdf.toString('latin1'), /\/Subtype \/Image/);
  t.regex(pdf.toString('latin1'), /\/URI \(http:\/\/127\.0\.0\.1\/invoices\/x\/pay\)/, 'the pay link is a link');
});

test('an overpaid invoice prints an Overpaid row under Amount paid; one paid exactly prints none', async (t) => {
  const printed = async (amountPaid: string) => {
    const invoice = invoiceFixture({ status: 'paid', paid: true, amountPaid, amountRemaining: '0' });
    const doc = invoiceDocument({
      invoice,
      organization: null,
      customer: null,
      nowMs: Date.parse('2026-01-10T00:00:00Z'),
    });
    return pdfText(
      await renderInvoicePdf(doc, { payUrl: 'http://127.0.0.1/pay', createdAt: new Date(0), compress: false }),
    );
  };
  const over = await printed('400000000');
  const at = over.indexOf('Overpaid');
  t.true(at > over.indexOf('Amount paid'), over.join(' | '));
  t.is(over[at + 1], '1.00 USDC');
  t.false((await printed('300000000')).includes('Overpaid'));
});
