import test from 'ava';
import { InvoiceTable } from './views.tsx';

const row = (status: 'open' | 'paid' | 'uncollectible', amountPaid: string) => ({
  id: 'inv-1',
  number: 'INV-000001',
  status,
  amountDue: '300000000',
  amountPaid,
  currency: 'usdc',
  dueDate: '2026-02-01T00:00:00.000Z',
});

/** The text of the Amount cell of the one row of the table. */
async function amountCell(invoice: ReturnType<typeof row>): Promise<string> {
  const html = await InvoiceTable({ invoices: [invoice], timeZone: 'UTC' });
  const cell = /<td class="amount">(.*?)<\/td>/s.exec(html)?.[1] ?? '';
  return cell
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

test('an open invoice paid in part says so in the list, as the sessions list does (it read as nothing paid)', async (t) => {
  t.is(await amountCell(row('open', '100000000')), '3.00 USDC 1.00 USDC paid');
  t.is(await amountCell(row('uncollectible', '100000000')), '3.00 USDC 1.00 USDC paid');
});

test('an invoice settled as paid with less than its amount (a session completed short) says what was paid, where it read as paid in full', async (t) => {
  t.is(await amountCell(row('paid', '100000000')), '3.00 USDC 1.00 USDC paid');
});

test('an invoice paid in full, or not at all, shows its amount alone', async (t) => {
  t.is(await amountCell(row('paid', '300000000')), '3.00 USDC');
  t.is(await amountCell(row('open', '0')), '3.00 USDC');
});
