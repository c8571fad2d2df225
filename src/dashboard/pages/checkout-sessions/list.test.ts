import test from 'ava';
import { confirmed, detected } from '../../../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionEvent } from '../../../../machines/checkout-session.types.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../../../projections/collections.ts';
import { CUSTOMERS, type CustomerDoc } from '../../../projections/customers.projection.ts';
import { createEmbeddedReadStore } from '../../../read-store/embedded-read-store.ts';
import type { ReadDocument, ReadStore } from '../../../read-store/read-store.ts';
import { EXPORT_BATCH, sessionRows } from '../../../read-api/routes/checkout-session-export.ts';
import { parseSessionsQuery, sessionsFilter } from './list-query.ts';
import { loadSessions, SessionsTable } from './list.tsx';
import {
  CANCELED_WHILE_CONFIRMING,
  COMPLETED_SHORT,
  CONFIRMED_AFTER_CANCEL,
  customerDoc,
  DUST_AFTER_CANCEL,
  MARKED_REFUNDED,
  PAID_AFTER_CANCEL,
  PAID_AFTER_EXPIRY,
  PAID_IN_FULL,
  PARTLY_PAID,
  sessionAfter,
} from './session-docs.fixture.ts';

/** The text of the first cell of class `cell` of the one row of `session` in the list. */
async function cellText(session: CheckoutSessionDoc, cell: 'amount' | 'nowrap'): Promise<string> {
  const html = await SessionsTable({
    sessions: [session],
    count: 1,
    customers: new Map(),
    query: parseSessionsQuery({}).query,
  });
  return (new RegExp(`<td class="${cell}">(.*?)</td>`, 's').exec(html)?.[1] ?? '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The text of the Amount cell of the one row of `session` in the list. */
const amountCell = (session: CheckoutSessionDoc) => cellText(session, 'amount');

/** The text of the Status cell of the one row of `session` in the list. */
const statusCell = (session: CheckoutSessionDoc) => cellText(session, 'nowrap');

test('a session completed with part of its amount does not read as its total paid: the row says what was received', async (t) => {
  t.is(await amountCell(sessionAfter(...COMPLETED_SHORT)), '3.00 USDC 1.00 USDC received');
  t.is(await amountCell(sessionAfter(...PARTLY_PAID)), '3.00 USDC 1.00 USDC received');
});

test('a session paid in full, or paid nothing, shows its amount alone', async (t) => {
  t.is(await amountCell(sessionAfter(...PAID_IN_FULL)), '3.00 USDC');
  t.is(await amountCell(sessionAfter()), '3.00 USDC');
});

/** The Customer cell of the one row of `session` in the list, its text alone unless `html`. */
async function customerCell(
  session: CheckoutSessionDoc,
  customers = new Map<string, CustomerDoc>(),
  html = false,
): Promise<string> {
  const table = await SessionsTable({ sessions: [session], count: 1, customers, query: parseSessionsQuery({}).query });
  const cell = /<td class="hide-narrow">(.*?)<\/td>/s.exec(table)?.[1]?.trim() ?? '';
  return html ? cell : cell.replace(/<[^>]+>/g, '').trim();
}

test('the customer column names the payer by email; a session without one shows its client reference as a reference, not as a customer', async (t) => {
  const session = sessionAfter();
  t.is(await customerCell({ ...session, customerDetails: null, clientReferenceId: 'INV-000001' }), 'Ref. INV-000001');
  t.is(await customerCell({ ...session, customerDetails: null, clientReferenceId: null }), '—');
  const paidBy = { ...session, clientReferenceId: 'INV-000001' };
  t.is(
    await customerCell({
      ...paidBy,
      customerDetails: { ...session.customerDetails, email: 'ada@example.com' },
    } as CheckoutSessionDoc),
    'ada@example.com',
  );
});

test("a session linked to a customer (customerId: given, or an invoice's or subscription's) names them, linked to their page, though it collected nothing", async (t) => {
  const session = { ...sessionAfter(), customerDetails: null, clientReferenceId: 'INV-000001', customerId: 'cus-1' };
  const ada = customerDoc('cus-1');
  t.is(await customerCell(session, new Map([['cus-1', ada]])), 'Ada Lovelace');
  t.regex(await customerCell(session, new Map([['cus-1', ada]]), true), /<a href="\/dashboard\/customers\/cus-1">/);
  t.is(await customerCell(session, new Map([['cus-1', { ...ada, name: null }]])), 'ada@example.com');
  t.is(await customerCell(session, new Map([['cus-1', { ...ada, deleted: true }]])), 'Ada Lovelace (deleted)');
});

test('a session that collected only a name (a payment link asking for it) shows it; one that collected both shows both', async (t) => {
  const session = sessionAfter();
  const details = { name: 'Pat Doe', email: null, phone: null, address: null };
  t.is(await customerCell({ ...session, clientReferenceId: null, customerDetails: details }), 'Pat Doe');
  t.is(
    await customerCell({ ...session, customerDetails: { ...details, email: 'pat@example.com' } }),
    'Pat Doe (pat@example.com)',
  );
});

test("a page of sessions reads its customers in one query, not one per row, and only the tenant's", async (t) => {
  const store = createEmbeddedReadStore();
  const base = sessionAfter();
  const sessions = store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  for (const [i, customerId] of ['cus-1', 'cus-2', 'cus-1', null, 'cus-other'].entries())
    await sessions.put({ ...base, _id: `s-${i}`, id: `s-${i}`, customerId });
  await store.collection<CustomerDoc>(CUSTOMERS).put(customerDoc('cus-1'));
  await store.collection<CustomerDoc>(CUSTOMERS).put(customerDoc('cus-2', { name: 'Grace Hopper' }));
  await store.collection<CustomerDoc>(CUSTOMERS).put(customerDoc('cus-other', { organizationId: 'org-other' }));
  const reads: string[] = [];
  const counted: ReadStore = {
    ...store,
    collection: <T extends ReadDocument>(name: string) => {
      const collection = store.collection<T>(name);
      return {
        ...collection,
        get: (id) => (reads.push(`get ${name}`), collection.get(id)),
        find: (filter, options) => (reads.push(`find ${name}`), collection.find(filter, options)),
      };
    },
  };
  const { query, errors } = parseSessionsQuery({});
  const page = await loadSessions(
    counted,
    { organizationId: base.organizationId, environment: base.environment },
    query,
    errors,
  );
  t.is(page.sessions.length, 5);
  t.deepEqual(
    reads.filter((r) => r.endsWith(CUSTOMERS)),
    [`find ${CUSTOMERS}`],
  );
  t.deepEqual([...page.customers.keys()].sort(), ['cus-1', 'cus-2']);
});

test('the list offers its sessions as CSV with the filters it shows, in a link the live refresh keeps in step', async (t) => {
  const { query } = parseSessionsQuery({ status: 'complete', q: 'INV-1', page: '2' });
  const html = await SessionsTable({ sessions: [sessionAfter()], count: 1, customers: new Map(), query });
  t.regex(
    html,
    /<a class="button button-quiet" href="\/dashboard\/checkout-sessions\/export\?status=complete&amp;q=INV-1" download="">Download CSV<\/a>/,
  );
});

test('the CSV link, the pages and the live refresh carry the time zone the list counts days in; UTC, the default, is left out', async (t) => {
  const { query } = parseSessionsQuery({ from: '2026-11-30', timezone: 'Asia/Tokyo' });
  const html = await SessionsTable({ sessions: [sessionAfter()], count: 60, customers: new Map(), query });
  t.regex(html, /href="\/dashboard\/checkout-sessions\/export\?from=2026-11-30&amp;timezone=Asia%2FTokyo" download=""/);
  t.regex(html, /hx-get="\/dashboard\/checkout-sessions\?from=2026-11-30&amp;timezone=Asia%2FTokyo"/);
  t.regex(html, /href="\/dashboard\/checkout-sessions\?from=2026-11-30&amp;timezone=Asia%2FTokyo&amp;page=2"/);
  const utc = await SessionsTable({
    sessions: [],
    count: 0,
    customers: new Map(),
    query: parseSessionsQuery({ timezone: 'UTC' }).query,
  });
  t.notRegex(utc, /timezone=/);
});

test("the CSV of a searched list holds every session the search finds past the export's first batch, and no other", async (t) => {
  const store = createEmbeddedReadStore();
  const base = sessionAfter();
  const sessions = store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  // Matching rows on both sides of the batch's edge, created in the same second as their neighbours.
  for (let i = 0; i < 2 * EXPORT_BATCH + 40; i++)
    await sessions.put({
      ...base,
      _id: `s-${String(i).padStart(4, '0')}`,
      id: `s-${i}`,
      createdAt: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.000Z`,
      clientReferenceId: i % 2 === 0 ? 'INV-1' : 'INV-2',
    });
  const { query } = parseSessionsQuery({ q: 'INV-1' });
  const filter = sessionsFilter({ organizationId: base.organizationId, environment: base.environment }, query);
  const rows: string[] = [];
  for await (const row of sessionRows(sessions, store.collection<CustomerDoc>(CUSTOMERS), filter)) rows.push(row);
  t.is(rows.length - 1, EXPORT_BATCH + 20);
  t.false(
    rows.some((r) => r.includes('INV-2')),
    'only the sessions the search finds',
  );
});

test('a session paid after it expired or was canceled says so beside its status (its payment status stays unpaid), and once marked refunded says that', async (t) => {
  t.is(await statusCell(sessionAfter(...PAID_AFTER_EXPIRY)), 'Expired Paid late');
  t.is(await statusCell(sessionAfter(...PAID_AFTER_CANCEL)), 'Canceled Paid late');
  t.is(await statusCell(sessionAfter(...PAID_AFTER_EXPIRY, MARKED_REFUNDED)), 'Expired Paid late · refunded');
  t.is(await statusCell(sessionAfter(...PAID_IN_FULL)), 'Complete');
  // Sent before the cancel, final after it: the payer did not pay late.
  t.is(await statusCell(sessionAfter(...CONFIRMED_AFTER_CANCEL)), 'Canceled Confirmed after the cancel');
  t.is(
    await statusCell(sessionAfter(...CONFIRMED_AFTER_CANCEL, MARKED_REFUNDED)),
    'Canceled Confirmed after the cancel · refunded',
  );
});

test('an expired or canceled session with a payment still confirming after it closed says so beside its status, as Home lists it; late money to settle says more, money after a mark of refunded still confirming is watched', async (t) => {
  const AFTER_EXPIRY = { type: 'CheckoutSessionExpired', data: { at: '2026-01-01T01:00:00.000Z' } } as const;
  const seenLate = detected('t30', '100000000', '2026-01-03T10:00:00.000Z');
  // Seen after the expiry, or before the cancel and confirming across it.
  t.is(await statusCell(sessionAfter(AFTER_EXPIRY, seenLate)), 'Expired Confirming after it closed');
  t.is(await statusCell(sessionAfter(...CANCELED_WHILE_CONFIRMING)), 'Canceled Confirming after it closed');
  // Paid late and not settled: that is what needs the merchant.
  t.is(await statusCell(sessionAfter(...PAID_AFTER_EXPIRY, seenLate)), 'Expired Paid late');
  // Settled by a mark, more money confirming: watched again.
  t.is(
    await statusCell(sessionAfter(...PAID_AFTER_EXPIRY, MARKED_REFUNDED, seenLate)),
    'Expired Confirming after it closed',
  );
  // Open and confirming: nothing beside the status.
  t.is(await statusCell(sessionAfter(seenLate)), 'Open');
});

test('late dust (an 18-decimal payment under 10^-8, 0 at the 10^8 scale) is late money as Home counts it: the row badges it, refunded once marked, and not as merely confirming', async (t) => {
  const CONFIRMING = detected('t14', '100000000', '2026-01-01T00:50:00.000Z');
  t.is(await statusCell(sessionAfter(...DUST_AFTER_CANCEL)), 'Canceled Paid late');
  t.is(await statusCell(sessionAfter(...DUST_AFTER_CANCEL, MARKED_REFUNDED)), 'Canceled Paid late · refunded');
  // Home lists this one as late (home.test.ts), so the row says the same.
  t.is(await statusCell(sessionAfter(...DUST_AFTER_CANCEL, CONFIRMING)), 'Canceled Paid late');
});

test("a session completed short and then paid the rest says so plainly beside its status (it is the merchant's to keep); past its total, overpaid", async (t) => {
  const rest = (id: string, amount: string, events: CheckoutSessionEvent[]) => [
    detected(id, amount, '2026-01-01T00:20:00.000Z'),
    confirmed(id, '2026-01-01T00:21:00.000Z'),
    ...events,
  ];
  const late: CheckoutSessionEvent = {
    type: 'LatePaymentReceived',
    data: { transferId: 't2', amount: '200000000', at: '2026-01-01T00:21:00.000Z' },
  };
  const short = sessionAfter(...COMPLETED_SHORT, ...rest('t2', '200000000', [late]));
  t.is(await statusCell(short), 'Complete Paid after completion');
  const over: CheckoutSessionEvent = {
    type: 'OverpaymentReceived',
    data: { transferId: 't3', amount: '100000000', amountOverpaid: '100000000', at: '2026-01-01T00:31:00.000Z' },
  };
  t.is(
    await statusCell(
      sessionAfter(...COMPLETED_SHORT, ...rest('t2', '200000000', [late]), ...rest('t3', '100000000', [over])),
    ),
    'Complete Overpaid',
  );
});
