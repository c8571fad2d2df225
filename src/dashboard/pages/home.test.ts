import test from 'ava';
import { confirmed, detected } from '../../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionEvent } from '../../../machines/checkout-session.types.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../../projections/collections.ts';
import { INVOICES, type InvoiceDoc } from '../../projections/invoices.projection.ts';
import { TRANSACTIONS } from '../../projections/transactions.projection.ts';
import { createEmbeddedReadStore } from '../../read-store/embedded-read-store.ts';
import { createSqliteReadStore } from '../../read-store/sqlite-read-store.ts';
import type { ReadDocument } from '../../read-store/read-store.ts';
import {
  CANCELED_WHILE_CONFIRMING,
  COMPLETED_SHORT,
  CONFIRMED_AFTER_CANCEL,
  DUST_AFTER_CANCEL,
  MARKED_REFUNDED,
  PAID_IN_FULL,
  PAID_AFTER_EXPIRY,
  PAID_LATE_AFTER_MARK,
  PARTLY_PAID,
  sessionAfter,
} from './checkout-sessions/session-docs.fixture.ts';
import { lastDays, needsAction, type Overview, OverviewPanel, SessionsNeedingAction } from './home.tsx';
import { endOfDay } from './promo-codes.tsx';

/** A second 3 USDC confirmed after the session closed, from another transfer. */
const PAID_LATE_AGAIN: CheckoutSessionEvent[] = [
  detected('t10', '300000000', '2026-01-01T02:05:00.000Z'),
  confirmed('t10', '2026-01-01T02:06:00.000Z'),
  { type: 'LatePaymentReceived', data: { transferId: 't10', amount: '300000000', at: '2026-01-01T02:06:00.000Z' } },
];

const as = (id: string, session: CheckoutSessionDoc): CheckoutSessionDoc => ({ ...session, _id: id, id });

/** The rows of the panel as text, one per row. */
const rowsOf = (html: string): string[] =>
  [...html.matchAll(/<tr>(.*?)<\/tr>/gs)]
    .map((m) =>
      m[1]!
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter((row) => !row.startsWith('What and why'));

// In memory, and in the file the server keeps without MongoDB.
for (const [kind, open] of [
  ['in memory', () => createEmbeddedReadStore()],
  ['SQLite', () => createSqliteReadStore({ path: ':memory:' })],
] as const)
  test(`Home's sessions needing action list each session once (${kind}): one paid late twice is one row with its late total and count; one marked refunded is off, unless more came after the mark`, async (t) => {
    const store = open();
    t.teardown(() => store.close());
    const sessions = store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
    const twice = as('late-twice', sessionAfter(...PAID_AFTER_EXPIRY, ...PAID_LATE_AGAIN));
    const once = as('late-once', sessionAfter(...PAID_AFTER_EXPIRY));
    const refunded = as('refunded', sessionAfter(...PAID_AFTER_EXPIRY, ...PAID_LATE_AGAIN, MARKED_REFUNDED));
    const underpaid = as('underpaid', sessionAfter(...PARTLY_PAID));
    const after = as('after-mark', sessionAfter(...PAID_AFTER_EXPIRY, MARKED_REFUNDED, ...PAID_LATE_AFTER_MARK));
    for (const doc of [twice, once, refunded, underpaid, after]) {
      await sessions.put(doc);
      // The payments' own read model too, as the projections keep it beside the sessions.
      for (const p of doc.payments)
        await store.collection(TRANSACTIONS).put({
          _id: `payment:${doc.id}:${p.transferId}`,
          organizationId: doc.organizationId,
          environment: doc.environment,
          checkoutSessionId: doc.id,
          type: 'incoming',
          status: p.status,
          late: p.late,
          createdAt: p.detectedAt,
          confirmedAt: p.confirmedAt,
        } satisfies ReadDocument);
    }
    const tenant = { organizationId: twice.organizationId, environment: twice.environment };

    const { items } = await needsAction({ readStore: store }, tenant);
    // Latest first: money after a mark (3 Jan), the second late payment (02:06), the other's (01:06), the part payment.
    t.deepEqual(
      items.map((i) => ['invoice' in i ? i.invoice.id : i.session.id, i.reason]),
      [
        ['after-mark', 'late'],
        ['late-twice', 'late'],
        ['late-once', 'late'],
        ['underpaid', 'underpaid'],
      ],
    );
    const rows = rowsOf(await SessionsNeedingAction({ items }));
    t.is(rows.length, 4);
    // Only what came after the mark is to settle: the 3 USDC it covered is not asked twice.
    t.regex(rows[0]!, /Paid after it closed 2\.00 USDC paid late$/);
    t.regex(rows[1]!, /Paid after it closed 6\.00 USDC paid late in 2 payments$/);
    t.regex(rows[2]!, /Paid after it closed 3\.00 USDC paid late$/);
    t.regex(rows[3]!, /Underpaid 1\.00 USDC of 3\.00 USDC$/);
  });

test("Home's volume names no currency while nothing was received (none is made up), and each figure's own currency once money came", async (t) => {
  const day = (n: number, volume = 0n, otherVolumes: Overview['days'][number]['otherVolumes'] = []) => ({
    day: `2026-01-${String(n).padStart(2, '0')}`,
    volume,
    otherVolumes,
    payments: 0,
    created: 0,
    completed: 0,
    medianSeconds: null,
    p95Seconds: null,
  });
  const quiet: Overview = {
    currency: null,
    days: Array.from({ length: 30 }, (_, i) => day(i + 1)),
    volume: 0n,
    payments: 0,
    others: [],
    created: 0,
    completed: 0,
    timeToPay: { payments: 0, medianSeconds: null, p95Seconds: null },
  };
  const none = await OverviewPanel({ data: quiet });
  t.notRegex(none, /USDC|\d \s*</);
  t.regex(none, /Gross volume per day over the last 30 days"/);
  t.regex(none, /nothing received/);
  const paid = await OverviewPanel({
    data: {
      ...quiet,
      currency: 'eur',
      volume: 500000000n,
      others: [{ currency: 'usdc', volume: 100000000n }],
      days: [day(1, 500000000n, [{ currency: 'usdc', volume: 100000000n }]), ...quiet.days.slice(1)],
    },
  });
  t.regex(paid, /5\.00 EUR, also 1\.00 USDC/);
  t.regex(paid, /Gross volume per day over the last 30 days, in EUR/);
});

for (const [kind, open] of [
  ['in memory', () => createEmbeddedReadStore()],
  ['SQLite', () => createSqliteReadStore({ path: ':memory:' })],
] as const)
  test(`Home does not list a session completed short and then paid the rest (${kind}): no more than its total, it is the merchant's to keep; one whose money went past its total is listed once, overpaid, with the excess to refund`, async (t) => {
    const store = open();
    t.teardown(() => store.close());
    const sessions = store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
    const late: CheckoutSessionEvent = {
      type: 'LatePaymentReceived',
      data: { transferId: 't2', amount: '200000000', at: '2026-01-01T00:21:00.000Z' },
    };
    const rest = [
      detected('t2', '200000000', '2026-01-01T00:20:00.000Z'),
      confirmed('t2', '2026-01-01T00:21:00.000Z'),
      late,
    ];
    const over = (id: string, at: string): CheckoutSessionEvent[] => [
      detected(id, '100000000', at),
      confirmed(id, at),
      { type: 'OverpaymentReceived', data: { transferId: id, amount: '100000000', amountOverpaid: '100000000', at } },
    ];
    await sessions.put(as('kept', sessionAfter(...COMPLETED_SHORT, ...rest)));
    await sessions.put(
      as('past-total', sessionAfter(...COMPLETED_SHORT, ...rest, ...over('t3', '2026-01-01T00:31:00.000Z'))),
    );
    await sessions.put(as('overpaid', sessionAfter(...PAID_IN_FULL, ...over('t4', '2026-01-01T00:41:00.000Z'))));
    const { organizationId, environment } = sessionAfter();
    const { items } = await needsAction({ readStore: store }, { organizationId, environment });
    t.deepEqual(
      items.map((i) => ['invoice' in i ? i.invoice.id : i.session.id, i.reason]),
      [
        ['overpaid', 'overpaid'],
        ['past-total', 'overpaid'],
      ],
    );
    const rows = rowsOf(await SessionsNeedingAction({ items }));
    t.regex(rows[1]!, /Overpaid 1\.00 USDC over the total, to refund$/);
  });

for (const [kind, open] of [
  ['in memory', () => createEmbeddedReadStore()],
  ['SQLite', () => createSqliteReadStore({ path: ':memory:' })],
] as const)
  test(`Home lists a payment still confirming after its session closed (${kind}), once per session, and not twice for a session also paid late; money sent before a cancel and confirmed after it reads as such`, async (t) => {
    const store = open();
    t.teardown(() => store.close());
    const sessions = store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
    const expired: CheckoutSessionEvent = { type: 'CheckoutSessionExpired', data: { at: '2026-01-01T01:00:00.000Z' } };
    for (const doc of [
      // Two payments confirming after the expiry: one row.
      as(
        'confirming-expired',
        sessionAfter(
          expired,
          detected('t9', '300000000', '2026-01-01T01:05:00.000Z'),
          detected('t10', '100000000', '2026-01-01T01:07:00.000Z'),
        ),
      ),
      as('confirming-canceled', sessionAfter(...CANCELED_WHILE_CONFIRMING)),
      // Late money to settle and more confirming: listed for the money to settle alone.
      as(
        'late-and-confirming',
        sessionAfter(...PAID_AFTER_EXPIRY, detected('t11', '100000000', '2026-01-01T03:00:00.000Z')),
      ),
      // Its late money settled, a new payment confirming: the merchant watches that.
      as(
        'marked-then-confirming',
        sessionAfter(...PAID_AFTER_EXPIRY, MARKED_REFUNDED, detected('t12', '100000000', '2026-01-04T00:00:00.000Z')),
      ),
      as('confirmed-after-cancel', sessionAfter(...CONFIRMED_AFTER_CANCEL)),
      // Late dust of an 18-decimal token (0 at the 10^8 scale) and more confirming: listed once, as late.
      as(
        'dust-and-confirming',
        sessionAfter(...DUST_AFTER_CANCEL, detected('t14', '100000000', '2026-01-01T00:50:00.000Z')),
      ),
      // Open and confirming in time: nothing to act on.
      as('open', sessionAfter(detected('t1', '300000000', '2026-01-05T00:00:00.000Z'))),
    ])
      await sessions.put(doc);
    const { organizationId, environment } = sessionAfter();
    const { items } = await needsAction({ readStore: store }, { organizationId, environment });
    t.deepEqual(
      items.map((i) => ['invoice' in i ? i.invoice.id : i.session.id, i.reason]),
      [
        ['marked-then-confirming', 'confirming'],
        ['confirming-expired', 'confirming'],
        ['late-and-confirming', 'late'],
        ['dust-and-confirming', 'late'],
        ['confirmed-after-cancel', 'late'],
        ['confirming-canceled', 'confirming'],
      ],
    );
    const rows = rowsOf(await SessionsNeedingAction({ items }));
    t.regex(rows[0]!, /Confirming after it closed 1\.00 USDC not final yet$/);
    t.regex(rows[1]!, /Confirming after it closed 4\.00 USDC in 2 payments, not final yet$/);
    t.regex(rows[2]!, /Paid after it closed 3\.00 USDC paid late$/);
    // Dust is late money, never told as 0.00.
    t.regex(rows[3]!, /Paid after it closed less than 0\.00000001 USDC paid late$/);
    t.regex(rows[4]!, /Confirmed after the cancel 3\.00 USDC sent before the cancel$/);
    t.regex(rows[5]!, /Confirming after it closed 3\.00 USDC not final yet$/);
  });

/** Home's conversion section for 30 days whose first created `created` sessions and completed `completed`. */
async function conversionOf(created: number, completed: number): Promise<string> {
  const day = (n: number, made = 0, done = 0) => ({
    day: `2026-01-${String(n).padStart(2, '0')}`,
    volume: 0n,
    otherVolumes: [],
    payments: 0,
    created: made,
    completed: done,
    medianSeconds: null,
    p95Seconds: null,
  });
  const html = await OverviewPanel({
    data: {
      currency: null,
      days: [day(1, created, completed), ...Array.from({ length: 29 }, (_, i) => day(i + 2))],
      volume: 0n,
      payments: 0,
      others: [],
      created,
      completed,
      timeToPay: { payments: 0, medianSeconds: null, p95Seconds: null },
    },
  });
  return /<section[^>]*id="conversion"[\s\S]*?<\/section>/.exec(html)?.[0] ?? '';
}

test("Home's conversion says the sessions were completed, not paid: a session completed with the amount received counts too", async (t) => {
  const conversion = await conversionOf(10, 3);
  t.regex(conversion, /3 of 10 checkout sessions created were completed: paid in full, or with the amount received/);
  t.regex(conversion, /3 of 10 completed \(30\.0%\)/);
  t.notRegex(conversion, /were paid|\bpaid \(/);
});

test("Home's conversion rounds half up in integers as the reports do: 23 of 2000 is 1.2% (the report's 0.0115), not toFixed's 1.1%", async (t) => {
  const conversion = await conversionOf(2000, 23);
  t.regex(conversion, /23 of 2000 completed \(1\.2%\)/);
  t.notRegex(conversion, /1\.1%/);
});

test("Home's time to pay says completed sessions, not paid ones: it runs from creation to completion, a session completed with the amount received included", async (t) => {
  const day = (n: number, medianSeconds: number | null = null) => ({
    day: `2026-01-${String(n).padStart(2, '0')}`,
    volume: 0n,
    otherVolumes: [],
    payments: 0,
    created: 0,
    completed: 0,
    medianSeconds,
    p95Seconds: medianSeconds,
  });
  const overview = (timeToPay: Overview['timeToPay'], first = day(1)) =>
    OverviewPanel({
      data: {
        currency: null,
        days: [first, ...Array.from({ length: 29 }, (_, i) => day(i + 2))],
        volume: 0n,
        payments: 0,
        others: [],
        created: 3,
        completed: 3,
        timeToPay,
      },
    });
  const card = (html: string) => /<section[^>]*id="time-to-pay"[\s\S]*?<\/section>/.exec(html)?.[0] ?? '';
  const timed = card(await overview({ payments: 3, medianSeconds: 420, p95Seconds: 600 }, day(1, 420)));
  t.regex(timed, /Median from creation to completion; p95 10 min, over 3 completed sessions/);
  t.regex(timed, /creation to its completion, per day/);
  t.regex(
    card(await overview({ payments: 0, medianSeconds: null, p95Seconds: null })),
    /From a session’s creation to its completion/,
  );
  t.notRegex(timed, /paid session|to payment|to its payment/);
});

/** A renewal draft of the tenant's, refused at its issue unless `failed` is null. */
const renewal = (id: string, number: string, failedAt: string | null, more: Partial<InvoiceDoc> = {}): InvoiceDoc =>
  ({
    _id: id,
    id,
    number,
    organizationId: 'org-1',
    environment: 'test',
    status: 'draft',
    subscriptionId: 'sub-1',
    amountDue: '1000000000',
    currency: 'usdc',
    deletedAt: null,
    updatedAt: failedAt ?? '2026-01-01T00:00:00.000Z',
    ...(failedAt
      ? {
          lastFinalizationError: {
            code: 'payment_method_not_available',
            field: null,
            message: 'cannot be finalized: this organization has no payment method',
            at: failedAt,
          },
        }
      : {}),
    ...more,
  }) as unknown as InvoiceDoc;

for (const [kind, open] of [
  ['in memory', () => createEmbeddedReadStore()],
  ['SQLite', () => createSqliteReadStore({ path: ':memory:' })],
] as const)
  test(`Home's needs action lists each renewal Weir could not finalize (${kind}), linking its invoice, and not a draft that was not refused, a deleted one or another environment's`, async (t) => {
    const store = open();
    t.teardown(() => store.close());
    const invoices = store.collection<InvoiceDoc>(INVOICES);
    for (const doc of [
      renewal('stuck-old', 'INV-000001', '2026-02-01T00:00:00.000Z'),
      renewal('stuck-new', 'INV-000002', '2026-03-01T00:00:00.000Z'),
      renewal('plain-draft', 'INV-000003', null),
      renewal('deleted', 'INV-000004', '2026-03-02T00:00:00.000Z', { deletedAt: '2026-03-03T00:00:00.000Z' }),
      renewal('live', 'INV-000005', '2026-03-02T00:00:00.000Z', { environment: 'live' }),
    ])
      await invoices.put(doc);

    const { items } = await needsAction({ readStore: store }, { organizationId: 'org-1', environment: 'test' });
    t.deepEqual(
      items.map((i) => ['invoice' in i ? i.invoice.id : i.session.id, i.reason]),
      [
        ['stuck-new', 'not_finalized'],
        ['stuck-old', 'not_finalized'],
      ],
    );
    const html = await SessionsNeedingAction({ items });
    t.regex(html, /<a href="\/dashboard\/invoices\/stuck-new"[^>]*>Invoice INV-000002<\/a>/);
    const rows = rowsOf(html);
    t.is(rows.length, 2);
    t.regex(rows[0]!, /^Invoice INV-000002 Renewal not finalized 10\.00 USDC not sent$/);
  });

for (const [kind, open] of [
  ['in memory', () => createEmbeddedReadStore()],
  ['SQLite', () => createSqliteReadStore({ path: ':memory:' })],
] as const)
  test(`Home finds late money to settle past more than a page of later sessions whose late money paid their invoices (${kind}): the read store leaves those out, not a page read first`, async (t) => {
    const store = open();
    t.teardown(() => store.close());
    const sessions = store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
    const invoices = store.collection<InvoiceDoc>(INVOICES);
    const invoiceOf = (id: string, latePaidTransferIds?: string[]) =>
      invoices.put({
        ...renewal(id, `INV-${id}`, null, { status: 'paid' }),
        ...(latePaidTransferIds ? { latePaidTransferIds } : {}),
      } as InvoiceDoc);
    // Twenty sessions updated last, each paid late, that late money paying its invoice while owed: nothing to settle.
    const late = sessionAfter(...PAID_AFTER_EXPIRY);
    for (let i = 0; i < 20; i++) {
      const id = `paid-invoice-${i}`;
      await invoiceOf(`inv-${i}`, ['t9']);
      await sessions.put({
        ...as(id, late),
        invoiceId: `inv-${i}`,
        updatedAt: `2026-02-${String(i + 1).padStart(2, '0')}T00:00:00.000Z`,
      });
    }
    // Older: one whose invoice counted none of it (paid before), one of no invoice, one whose invoice counted another transfer.
    await invoiceOf('inv-before');
    await sessions.put({
      ...as('invoice-paid-before', late),
      invoiceId: 'inv-before',
      updatedAt: '2026-01-03T00:00:00.000Z',
    });
    await sessions.put({ ...as('no-invoice', late), updatedAt: '2026-01-02T00:00:00.000Z' });
    await invoiceOf('inv-other', ['t10']);
    const twice = sessionAfter(...PAID_AFTER_EXPIRY, ...PAID_LATE_AGAIN);
    await sessions.put({
      ...as('other-counted', twice),
      invoiceId: 'inv-other',
      updatedAt: '2026-01-04T00:00:00.000Z',
    });
    const tenant = { organizationId: late.organizationId, environment: late.environment };

    const { items } = await needsAction({ readStore: store }, tenant);
    t.deepEqual(items.map((i) => ['invoice' in i ? i.invoice.id : i.session.id, i.reason]).sort(), [
      ['invoice-paid-before', 'late'],
      ['no-invoice', 'late'],
      ['other-counted', 'late'],
    ]);
    // Only what its invoice did not count is to settle: the first 3 USDC, not the 3 more that paid it.
    const rows = rowsOf(await SessionsNeedingAction({ items }));
    t.is(rows.filter((row) => /Paid after it closed 3\.00 USDC paid late$/.test(row)).length, 3);
  });

test('the last 30 days and a promo code’s end of day keep years 0 to 99 themselves (Date.UTC would make 50 into 1950)', (t) => {
  const days = lastDays(Date.parse('0050-03-01T12:00:00Z'), 'UTC');
  t.deepEqual(days.at(-1), { day: '0050-03-01', start: '0050-03-01T00:00:00.000Z' });
  t.deepEqual(days[0], { day: '0050-01-31', start: '0050-01-31T00:00:00.000Z' });
  t.true(
    days.every(({ day, start }) => start.startsWith(day)),
    'each day is the day it starts',
  );
  t.is(endOfDay('0050-03-01', 'UTC'), '0050-03-01T23:59:59Z');
  t.is(endOfDay('2026-03-08', 'America/New_York'), '2026-03-09T03:59:59Z');
  t.is(endOfDay('0050-02-30', 'UTC'), '0050-02-30', 'a day no calendar has goes as typed');
});
