import test from 'ava';
import type { DashboardContext } from '../../context.ts';
import {
  FinalizationFailure,
  InvoiceActions,
  InvoiceLines,
  InvoiceTable,
  type InvoiceView,
  Overpayment,
} from './views.tsx';

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

test('a renewal Weir could not finalize says why, when, and what to do, its message escaped', async (t) => {
  const ctx = { state: { timeZone: 'UTC' } } as unknown as DashboardContext;
  const invoice = { subscriptionId: 'sub-1' } as unknown as InvoiceView;
  const error = {
    code: 'payment_method_not_available',
    field: 'paymentMethods.chainIds[0]',
    message: 'paymentMethods.chainIds[0]: chain 84532 has no payment method <b>of this organization</b>',
    at: '2026-02-01T00:00:00.000Z',
  };
  const html = String(await FinalizationFailure({ ctx, invoice, error }));
  t.regex(html, /Weir could not finalize this renewal of its subscription, so it was not sent to the customer/);
  t.regex(html, /chain 84532 has no payment method &lt;b>of this organization&lt;\/b>/);
  t.regex(html, /datetime="2026-02-01T00:00:00.000Z"/);
  t.regex(html, /then finalize it/);
  t.regex(
    html,
    /<a href="\/dashboard\/settings\/payment-methods">Settings → Payment methods<\/a>/,
    'where to add the wallet, a link',
  );
});

test("a renewal refused for want of any wallet says to add one in the dashboard's Settings, not with the API's route", async (t) => {
  const ctx = { state: { timeZone: 'UTC' } } as unknown as DashboardContext;
  const invoice = { subscriptionId: 'sub-1' } as unknown as InvoiceView;
  const error = {
    code: 'payment_method_not_available',
    field: null,
    message:
      'cannot be finalized: this organization has no payment method (wallet address) in the test environment, so the invoice could not be paid anywhere; add one with POST /api/v1/organization/withdrawal-addresses before finalizing',
    at: '2026-02-01T00:00:00.000Z',
  };
  const html = String(await FinalizationFailure({ ctx, invoice, error }));
  t.regex(html, /add one under Settings → Payment methods before finalizing/);
  t.notRegex(html, /POST \/api/);
});

test('a renewal refused for a broken wallet says to correct it in Settings, not to add one, and names no API route', async (t) => {
  const ctx = { state: { timeZone: 'UTC' } } as unknown as DashboardContext;
  const invoice = { subscriptionId: 'sub-1' } as unknown as InvoiceView;
  const error = {
    code: 'payment_method_invalid',
    field: null,
    message:
      'cannot be finalized: the payment method old-wallet on chain 84532 has the address 0x5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1f, which fails its EIP-55 checksum: check it for a typo and correct it with PUT /api/v1/organization/withdrawal-addresses/old-wallet',
    at: '2026-02-01T00:00:00.000Z',
  };
  const html = String(await FinalizationFailure({ ctx, invoice, error }));
  t.regex(html, /check it for a typo and correct it under Settings → Payment methods</);
  t.regex(html, /Fix it \(correct the wallet address under\s+<a href="\/dashboard\/settings\/payment-methods">/);
  t.notRegex(html, /add the wallet address back/);
  t.notRegex(html, /\/api\/v1/);
});

test("an invoice's lines show price × quantity, then its subtotal, each tax rate and its total, as its page and PDF do", async (t) => {
  // The line showed 2.20 with its tax in it and a Tax row of 0.20 below: 2.20 + 0.20 for a 2.20 total.
  const vat = { id: 'vat', name: 'VAT', description: null, country: null, percentage: 10, type: 'exclusive' as const };
  const invoice = {
    currency: 'usdc',
    amountDue: '220000000',
    totalTax: '20000000',
    lineItems: {
      data: [
        {
          description: 'Consulting hour',
          quantity: 2,
          unitAmount: '100000000',
          amountTotal: '220000000',
          taxRates: [{ ...vat, isDefault: true, amount: '20000000' }],
        },
      ],
    },
  } as unknown as InvoiceView;
  const html = String(await InvoiceLines({ invoice }));
  const cells = [...html.matchAll(/<tr[^>]*>(.*?)<\/tr>/gs)].map(([, row]) =>
    [...row!.matchAll(/<t[dh][^>]*>(.*?)<\/t[dh]>/gs)].map(([, cell]) => cell!.replace(/<[^>]+>/g, '').trim()),
  );
  t.deepEqual(cells, [
    ['Description', 'Unit', 'Qty', 'Amount'],
    ['Consulting hour', '1.00 USDC', '2', '2.00 USDC'],
    ['Subtotal', '', '2.00 USDC'],
    ['VAT (10%)', '', '0.20 USDC'],
    ['Total', '', '2.20 USDC'],
  ]);
});

test('an open invoice whose session received only part of its network fee offers no void, and says why', async (t) => {
  // The fee its session charged on top is paid first, so nothing counts toward the invoice, but the API refuses the void.
  const ctx = { state: { timeZone: 'UTC', csrfToken: 'token' } } as unknown as DashboardContext;
  const invoice = (amountReceived: string) =>
    ({
      id: 'inv-1',
      status: 'open',
      amountDue: '300000000',
      amountPaid: '0',
      currency: 'usdc',
      paymentAttempts: [{ checkoutSessionId: 'cs-1', status: 'pending', amountReceived }],
    }) as unknown as InvoiceView;
  const short = String(await InvoiceActions({ ctx, invoice: invoice('400000') }));
  t.false(short.includes('/void"'), 'no void offered');
  t.regex(
    short,
    /A payment reached it \(no more than the network fee its checkout charged on top\), so it cannot be voided/,
  );
  const none = String(await InvoiceActions({ ctx, invoice: invoice('0') }));
  t.true(none.includes('/dashboard/invoices/inv-1/void"'), 'nothing received: void offered');
});

test('an overpaid invoice says by how much, through which sessions, and that the merchant refunds the payer from their wallet; one paid exactly says nothing', async (t) => {
  const attempt = (checkoutSessionId: string, amountReceived: string) => ({
    checkoutSessionId,
    status: 'succeeded' as const,
    startedAt: '2026-01-01T00:00:00.000Z',
    endedAt: null,
    failureReason: null,
    amountReceived,
  });
  const invoice = {
    currency: 'usdc',
    amountDue: '300000000',
    amountPaid: '400000000',
    amountOverpaid: '100000000',
    paymentAttempts: [
      attempt('cs_aaaaaaaaaaaaaaaa', '100000000'),
      attempt('cs_bbbbbbbbbbbbbbbb', '300000000'),
      attempt('cs_cccccccccccccccc', '0'),
    ],
  };
  const html = String(await Overpayment({ invoice }));
  const text = html
    .replace(/<\/p>/g, ' ')
    .replace(/<[^>]+>/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  t.is(
    text,
    'This invoice was overpaid by 1.00 USDC: it received 4.00 USDC for its 3.00 USDC through 2 checkout sessions that each received money for it (cs_aaaaa…aaaa and cs_bbbbb…bbbb). Weir holds no funds: all of it went to your wallet. Refund the payer 1.00 USDC from your wallet yourself.',
  );
  t.true(html.includes('href="/dashboard/checkout-sessions/cs_aaaaaaaaaaaaaaaa"'));
  t.true(html.includes('href="/dashboard/checkout-sessions/cs_bbbbbbbbbbbbbbbb"'));
  t.false(html.includes('cs_cccccccccccccccc'), 'a session that received nothing is not named');
  t.is(String(await Overpayment({ invoice: { ...invoice, amountPaid: '300000000', amountOverpaid: '0' } })), '');
});
