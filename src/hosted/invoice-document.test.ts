import test from 'ava';
import { invoiceFixture } from '../../machines/invoice.fixture.ts';
import type { Invoice } from '../../machines/invoice.types.ts';
import type { Organization } from '../actors/organization.ts';
import { documentAmount } from '../shared/money.ts';
import { invoiceDocument } from './invoice-document.ts';
import { renderInvoicePage } from './invoice-page.ts';

// Due on 1 February 2030, a date: stored as that day's last instant.
const DUE = '2030-02-01T23:59:59.999Z';
const BEFORE_DUE = Date.parse('2030-01-15T00:00:00.000Z');
const AFTER_DUE = Date.parse('2030-03-01T00:00:00.000Z');

function openInvoice(changes: Partial<Invoice> = {}): Invoice {
  return invoiceFixture({
    number: 'INV-000042',
    currency: 'usdc',
    status: 'open',
    dueDate: DUE,
    issueDate: '2030-01-02T00:00:00.000Z',
    lineItems: {
      object: 'list',
      data: [
        { description: 'Hour', priceId: null, quantity: 3, unitAmount: '15000000000', amountTotal: '45000000000' },
      ],
    },
    amountDue: '45000000000',
    amountPaid: '0',
    amountRemaining: '45000000000',
    ...changes,
  });
}

test('amounts read as on a document: grouped thousands, at least two decimals, no digit of the 10^8 scale lost', (t) => {
  t.is(documentAmount(0n), '0.00');
  t.is(documentAmount(150000000n), '1.50');
  t.is(documentAmount(123456789012n), '1,234.56789012');
  t.is(documentAmount(100000000000000000n), '1,000,000,000.00');
  t.is(documentAmount(1n), '0.00000001');
});

test('an invoice due on a date reads due all that UTC day and overdue from the next; one due at a time, from that time', (t) => {
  const status = (invoice: Invoice, now: string) =>
    invoiceDocument({ invoice, organization: null, customer: null, nowMs: Date.parse(now) }).status.label;
  t.is(status(openInvoice(), '2030-02-01T00:00:01.000Z'), 'Due');
  t.is(status(openInvoice(), '2030-02-01T23:59:59.999Z'), 'Due');
  t.is(status(openInvoice(), '2030-02-02T00:00:00.000Z'), 'Overdue');
  for (const at of ['12:00:00.000', '00:00:00.000']) {
    const atTime = openInvoice({ dueDate: `2030-02-01T${at}Z` });
    t.is(status(atTime, new Date(Date.parse(`2030-02-01T${at}Z`) - 1).toISOString()), 'Due');
    t.is(status(atTime, `2030-02-01T${at}Z`), 'Overdue', `due at ${at}: overdue from that instant`);
  }
  t.is(
    invoiceDocument({
      invoice: openInvoice({ amountPaid: '10000000000', amountRemaining: '35000000000' }),
      organization: null,
      customer: null,
      nowMs: Date.parse('2030-02-01T18:00:00.000Z'),
    }).status.tone,
    'due',
    'a part-paid invoice on its due day',
  );
});

test('the status in words: due, overdue, partially paid, paid, void; only an open or written-off invoice with something due is payable', (t) => {
  const doc = (invoice: Invoice, now = BEFORE_DUE) =>
    invoiceDocument({ invoice, organization: null, customer: null, nowMs: now });

  const due = doc(openInvoice());
  t.deepEqual(due.status, { label: 'Due', tone: 'due', sentence: '450.00 USDC due by February 1, 2030.' });
  t.true(due.payable);
  t.is(due.issued, 'January 2, 2030');

  t.deepEqual(doc(openInvoice(), AFTER_DUE).status, {
    label: 'Overdue',
    tone: 'overdue',
    sentence: '450.00 USDC was due on February 1, 2030.',
  });
  const partial = doc(openInvoice({ amountPaid: '10000000000', amountRemaining: '35000000000' }));
  t.is(partial.status.label, 'Partially paid');
  t.is(partial.status.sentence, '100.00 USDC received; 350.00 USDC is still due by February 1, 2030.');
  t.true(partial.anyPaid);
  t.is(partial.amountRemaining, '350.00 USDC');

  const writtenOff = doc(openInvoice({ status: 'uncollectible' }), AFTER_DUE);
  t.is(writtenOff.status.label, 'Overdue');
  t.true(writtenOff.payable, 'an uncollectible invoice can still be paid');

  const paid = doc(
    openInvoice({
      status: 'paid',
      paid: true,
      paidAt: '2030-01-20T10:00:00.000Z',
      amountPaid: '45000000000',
      amountRemaining: '0',
    }),
  );
  t.deepEqual(paid.status, {
    label: 'Paid',
    tone: 'paid',
    sentence: 'This invoice was paid on January 20, 2030. Thank you.',
  });
  t.false(paid.payable);
  t.is(paid.paidOn, 'January 20, 2030');

  const voided = doc(openInvoice({ status: 'void' }));
  t.is(voided.status.sentence, 'This invoice was voided and can no longer be paid.');
  t.false(voided.payable);
});

test('the payment transaction of an invoice paid on Tron is its bare txID, as the API and its checkout session show it', (t) => {
  const txid = 'cd'.repeat(32);
  const paid = (transactionChainId: number) =>
    invoiceDocument({
      invoice: openInvoice({ status: 'paid', transactionHash: `0x${txid}`, transactionChainId }),
      organization: null,
      customer: null,
      nowMs: BEFORE_DUE,
    }).transactionHash;
  t.is(paid(728126428), txid);
  t.is(paid(1), `0x${txid}`);
});

test('the business: its address, contact and identifiers; only http(s) links and http(s) or data: image logos are kept', (t) => {
  const org = {
    name: 'Acme',
    email: 'hello@acme.example',
    supportEmail: null,
    phone: null,
    supportPhone: '+44 (0)20 7946 0000',
    addressDetails: {
      line1: '1 Main St',
      line2: null,
      city: 'Springfield',
      state: 'IL',
      postalCode: '62701',
      country: 'US',
    },
    websiteUrl: 'https://acme.example/',
    supportUrl: 'javascript:alert(1)',
    privacyUrl: 'https://acme.example/privacy',
    termsUrl: null,
    companyIdentificationNumber: 'C-1',
    taxIdentificationNumber: null,
    brandColor: 'red;}',
    brandLogo: 'javascript:alert(1)',
  } as unknown as Organization;
  const doc = invoiceDocument({ invoice: openInvoice(), organization: org, customer: null, nowMs: BEFORE_DUE });
  t.deepEqual(doc.business.addressLines, ['1 Main St', '62701 Springfield, IL', 'United States']);
  t.deepEqual(doc.business.contact, [
    { label: 'Email', text: 'hello@acme.example', href: 'mailto:hello@acme.example' },
    { label: 'Phone', text: '+44 (0)20 7946 0000', href: 'tel:+4402079460000' },
    { label: 'Website', text: 'acme.example', href: 'https://acme.example/' },
  ]);
  t.deepEqual(doc.business.identifiers, ['Company no. C-1']);
  t.deepEqual(doc.business.links, [{ label: 'Privacy policy', href: 'https://acme.example/privacy' }]);
  t.is(doc.business.brandColor, null);
  t.is(doc.business.logo, null);
  t.deepEqual(doc.billedTo, { lines: [], email: null });
});

test('a recurring invoice says how often and the period it bills (its issue date to the next one); a one-time one says neither', (t) => {
  const recurring = openInvoice({
    invoiceType: 'recurring',
    recurring: { interval: 'month', intervalCount: 3 },
    nextInvoice: { id: 'inv-next', issueDate: '2030-04-02T00:00:00.000Z' },
  });
  t.is(
    invoiceDocument({ invoice: recurring, organization: null, customer: null, nowMs: BEFORE_DUE }).recurrence,
    'Billed every 3 months; this invoice covers January 2, 2030 – April 2, 2030',
  );
  const unscheduled = openInvoice({ invoiceType: 'recurring', recurring: { interval: 'month', intervalCount: 1 } });
  t.is(
    invoiceDocument({ invoice: unscheduled, organization: null, customer: null, nowMs: BEFORE_DUE }).recurrence,
    'Billed every month',
  );
  t.is(
    invoiceDocument({ invoice: openInvoice(), organization: null, customer: null, nowMs: BEFORE_DUE }).recurrence,
    null,
  );
});

test('a voided invoice says there is nothing to pay and shows no amount remaining beside it; an open one does', (t) => {
  const page = (status: Invoice['status']) =>
    renderInvoicePage(
      invoiceDocument({ invoice: openInvoice({ status }), organization: null, customer: null, nowMs: BEFORE_DUE }),
      null,
      { pay: '/pay', pdf: '/pdf' },
    );
  const voided = page('void');
  t.regex(voided, /voided: nothing to pay/);
  t.notRegex(voided, /Amount remaining/);
  t.regex(page('open'), /Amount remaining/);
});

test('an invoice paid beyond its total (two payments crossed) shows the payer an Overpaid row with the difference; one paid exactly or in part shows none', (t) => {
  const overpaid = openInvoice({
    status: 'paid',
    paid: true,
    paidAt: '2030-01-20T10:00:00.000Z',
    amountPaid: '60000000001',
    amountRemaining: '0',
  });
  const doc = invoiceDocument({ invoice: overpaid, organization: null, customer: null, nowMs: BEFORE_DUE });
  t.is(doc.amountOverpaid, '150.00000001 USDC');
  const page = renderInvoicePage(doc, null, { pay: '/pay', pdf: '/pdf' });
  t.regex(
    page,
    /<th scope="row">Amount paid<\/th><td id="amount-paid">600\.00000001 USDC<\/td><\/tr>\s*<tr><th scope="row">Overpaid<\/th><td id="amount-overpaid">150\.00000001 USDC<\/td>/,
  );

  const exact = openInvoice({ status: 'paid', paid: true, amountPaid: '45000000000', amountRemaining: '0' });
  const partial = openInvoice({ amountPaid: '10000000000', amountRemaining: '35000000000' });
  for (const invoice of [exact, partial]) {
    const other = invoiceDocument({ invoice, organization: null, customer: null, nowMs: BEFORE_DUE });
    t.is(other.amountOverpaid, null);
    t.notRegex(renderInvoicePage(other, null, { pay: '/pay', pdf: '/pdf' }), /Overpaid/);
  }
});
