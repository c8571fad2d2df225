import test from 'ava';
import { sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import {
  attemptStarted,
  created,
  finalized,
  INVOICE_ID,
  invoiceFixture,
  paid,
  voided,
} from '../../machines/invoice.fixture.ts';
import type { InvoiceEvent } from '../../machines/invoice.types.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { checkoutSessionsProjection } from './checkout-sessions.projection.ts';
import { INVOICE_SESSIONS_TO_CLOSE, invoicesProjection, type InvoiceSessionToCloseDoc } from './invoices.projection.ts';
import { createTestLog } from './test-log.ts';

const AT = '2026-01-03T00:00:00.000Z';
const OTHER_INVOICE = '33333333-3333-4333-8333-333333333333';

/** A little log of one invoice and the sessions opened for it. */
function logOf() {
  const { events, append } = createTestLog(AT);
  const session = (id: string, event: CheckoutSessionEvent) => append(`checkout_session-${id}`, event);
  return {
    events,
    invoice: (event: InvoiceEvent, id = INVOICE_ID) => append(`invoice-${id}`, event),
    /** A session opened on the invoice's pay page (created, then recorded as an attempt). */
    opened: (
      id: string,
      invoiceId = INVOICE_ID,
      organizationId = 'org-1',
      attempt = invoiceId === INVOICE_ID && organizationId === 'org-1',
    ) => {
      append(
        `checkout_session-${id}`,
        { type: 'CheckoutSessionCreated', data: { session: sessionFixture({ id, invoiceId, organizationId }) } },
        organizationId,
      );
      if (attempt) append(`invoice-${INVOICE_ID}`, attemptStarted(id));
    },
    completed: (id: string) =>
      session(id, {
        type: 'CheckoutSessionCompleted',
        data: { amountReceived: '300000000', amountOverpaid: '0', transactionHash: null, partial: false, at: AT },
      }),
    partlyPaid: (id: string) =>
      session(id, { type: 'CheckoutSessionPartiallyPaid', data: { amountReceived: '100000000', at: AT } }),
    expired: (id: string) => session(id, { type: 'CheckoutSessionExpired', data: { at: AT } }),
    canceled: (id: string) =>
      session(id, {
        type: 'CheckoutSessionCanceled',
        data: { at: AT, reason: 'the invoice was paid through another checkout session' },
      }),
  };
}

/** An open invoice of 3 USDC. */
function openInvoice() {
  const log = logOf();
  log.invoice(created());
  log.invoice(finalized());
  return log;
}

/** The two read models involved, in the order ALL_PROJECTIONS applies them to each event. */
async function project(events: RecordedEvent[], store: ReadStore = createEmbeddedReadStore({})) {
  for (const event of events)
    for (const projection of [checkoutSessionsProjection, invoicesProjection]) await projection.apply(event, store);
  return store;
}

async function toClose(store: ReadStore): Promise<[string, string][]> {
  const docs = await store
    .collection<InvoiceSessionToCloseDoc>(INVOICE_SESSIONS_TO_CLOSE)
    .find({}, { sort: { _id: 1 } });
  return docs.map((doc) => [doc._id, doc.reason]);
}

test("a paid invoice lists its other open sessions to close, never the one that paid nor another invoice's or tenant's; each leaves the list once canceled", async (t) => {
  const log = openInvoice();
  log.invoice(created(invoiceFixture({ id: OTHER_INVOICE })), OTHER_INVOICE);
  log.opened('a');
  log.opened('b');
  log.opened('c');
  log.opened('other-invoice', OTHER_INVOICE);
  log.opened('other-tenant', INVOICE_ID, 'org-2');
  t.deepEqual(await toClose(await project(log.events)), [], 'an open invoice closes nothing');
  log.completed('a');
  log.invoice(paid('a'));
  const store = await project(log.events);
  const reason = 'the invoice was paid through another checkout session';
  t.deepEqual(await toClose(store), [
    ['b', reason],
    ['c', reason],
  ]);
  t.like(await store.collection<InvoiceSessionToCloseDoc>(INVOICE_SESSIONS_TO_CLOSE).get('b'), {
    invoiceId: INVOICE_ID,
    organizationId: 'org-1',
    environment: 'test',
    at: AT,
  });

  // Idempotent: the same events again leave the same list.
  t.deepEqual(await toClose(await project(log.events.slice(-2), store)), [
    ['b', reason],
    ['c', reason],
  ]);
  log.canceled('b');
  log.expired('c');
  t.deepEqual(
    await toClose(await project(log.events)),
    [],
    'a session canceled, or expired first, is no longer to close',
  );
});

test('a voided invoice lists its open sessions; a partly paid one cannot be canceled and is not listed', async (t) => {
  const log = openInvoice();
  log.opened('open');
  log.opened('partly');
  log.partlyPaid('partly');
  log.invoice(voided());
  t.deepEqual(await toClose(await project(log.events)), [['open', 'the invoice was voided']]);
});

test('an invoice marked as paid lists its open session with that reason', async (t) => {
  const log = openInvoice();
  log.opened('s');
  log.invoice({ type: 'InvoiceMarkedAsPaid', data: { amountPaid: '300000000', at: AT } });
  t.deepEqual(await toClose(await project(log.events)), [['s', 'the invoice was marked as paid']]);
});

test("a session opened for an invoice already voided (a pay page racing the void) is listed at once; another tenant's is not", async (t) => {
  const log = openInvoice();
  log.invoice(voided());
  // The voided invoice refuses the attempt: only the session's creation reaches the log.
  log.opened('raced', INVOICE_ID, 'org-1', false);
  log.opened('other-tenant', INVOICE_ID, 'org-2');
  t.deepEqual(await toClose(await project(log.events)), [['raced', 'the invoice was voided']]);
});
