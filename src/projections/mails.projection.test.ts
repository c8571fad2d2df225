import test from 'ava';
import { created as sessionCreated, sessionFixture } from '../../machines/checkout-session.fixture.ts';
import { created, finalized, INVOICE_ID, invoiceFixture, paid, voided } from '../../machines/invoice.fixture.ts';
import type { InvoiceEvent } from '../../machines/invoice.types.ts';
import type { CustomerEvent } from '../actors/customer.ts';
import type { MailEvent } from '../actors/mail.ts';
import { organizationRecordId, type OrganizationEvent } from '../actors/organization.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { renderPendingMail } from '../mail/mail-dispatcher.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { COLLECTIONS, type TimerDoc } from './collections.ts';
import { checkoutSessionsProjection } from './checkout-sessions.projection.ts';
import { customersProjection } from './customers.projection.ts';
import { invoicesProjection } from './invoices.projection.ts';
import { tenancyProjection } from './tenancy.projection.ts';
import { createTestLog } from './test-log.ts';
import {
  MAIL_RETRY_TIMER,
  mailIdOf,
  mailRetryTimerId,
  mailsProjection,
  PENDING_MAILS,
  type PendingMailDoc,
} from './mails.projection.ts';

const AT = '2026-01-20T00:00:00.000Z';
const CUSTOMER_ID = 'cus-1';

/** A little log of one invoice, its customers and mails, and its business. */
function logOf() {
  const { events, append } = createTestLog(AT);
  return {
    events,
    organization: (event: OrganizationEvent) => append(`organization-${organizationRecordId('org-1', 'test')}`, event),
    invoice: (event: InvoiceEvent) => append(`invoice-${INVOICE_ID}`, event),
    customer: (event: CustomerEvent, id = CUSTOMER_ID, organizationId = 'org-1') =>
      append(`customer-${id}`, event, organizationId),
    mail: (mailId: string, event: MailEvent) => append(`mail-${mailId}`, event),
  };
}

const customerCreated = (email: string, organizationId = 'org-1'): CustomerEvent => ({
  type: 'CustomerCreated',
  data: {
    customer: {
      id: CUSTOMER_ID,
      organizationId,
      environment: 'test',
      email,
      emailLower: email.toLowerCase(),
      name: 'Ada',
      phone: null,
      organizationName: null,
      customerReferenceId: null,
      address: null,
      metadata: {},
      visibility: 20,
      createdAt: AT,
    },
  },
});
const reminderSent: InvoiceEvent = {
  type: 'InvoiceReminderSent',
  data: { kind: 'before_due', days: 3, dueDate: '2026-02-01T00:00:00.000Z', at: AT },
};

/** Applies `events` as the runner does (each to every projection, in the order of ALL_PROJECTIONS). */
async function applyTo(store: ReadStore, events: RecordedEvent[]) {
  for (const event of events)
    for (const projection of [tenancyProjection, customersProjection, invoicesProjection, mailsProjection])
      await projection.apply(event, store);
}

async function project(events: RecordedEvent[], store = createEmbeddedReadStore({})) {
  await applyTo(store, events);
  const pending = await store.collection<PendingMailDoc>(PENDING_MAILS).find({}, { sort: { createdAt: 1, _id: 1 } });
  const timers = await store.collection<TimerDoc>(COLLECTIONS.timers).find({ kind: MAIL_RETRY_TIMER });
  return { pending, timers, store };
}

test('a system-sent invoice, a reminder and a receipt are pending mails to the customer; an invoice the API mailed is not', async (t) => {
  const log = logOf();
  log.customer(customerCreated('ada@example.com'));
  log.invoice(created());
  log.invoice(finalized());
  const apiSent = log.invoice({ type: 'InvoiceSent', data: { to: 'ada@example.com', at: AT, mailed: true } });
  const legacySent = log.invoice({ type: 'InvoiceSent', data: { to: null, at: AT } });
  const systemSent = log.invoice({ type: 'InvoiceSent', data: { to: null, at: AT, mailed: false } });
  const reminder = log.invoice(reminderSent);
  const { pending } = await project(log.events);
  t.deepEqual(
    pending.map((m) => [m._id, m.kind, m.to]),
    [
      [mailIdOf(systemSent.id), 'invoice', 'ada@example.com'],
      [mailIdOf(reminder.id), 'reminder', 'ada@example.com'],
    ],
  );
  t.like(pending[0], {
    invoiceId: INVOICE_ID,
    organizationId: 'org-1',
    environment: 'test',
    createdAt: AT,
    attempts: 0,
    retryAt: null,
  });
  t.false(pending.some((m) => m._id === mailIdOf(apiSent.id) || m._id === mailIdOf(legacySent.id)));

  // Paid: the receipt is pending; the unsent invoice and reminder mails are dropped.
  const payment = log.invoice(paid('cs-1', '300000000', '2026-01-21T00:00:00.000Z'));
  t.deepEqual(
    (await project(log.events)).pending.map((m) => [m._id, m.kind]),
    [[mailIdOf(payment.id), 'receipt']],
  );
});

test('a system send to an explicit address goes there; without a known customer address nothing is pending', async (t) => {
  const explicit = logOf();
  explicit.invoice(created());
  explicit.invoice({ type: 'InvoiceSent', data: { to: 'billing@client.example', at: AT, mailed: false } });
  t.deepEqual(
    (await project(explicit.events)).pending.map((m) => m.to),
    ['billing@client.example'],
  );

  const unknownCustomer = logOf();
  unknownCustomer.invoice(created());
  unknownCustomer.invoice(finalized());
  unknownCustomer.invoice(reminderSent);
  unknownCustomer.invoice({ type: 'InvoiceMarkedAsPaid', data: { amountPaid: '300000000', at: AT } });
  t.deepEqual((await project(unknownCustomer.events)).pending, []);

  const otherTenant = logOf();
  otherTenant.customer(customerCreated('ada@example.com', 'org-2'), CUSTOMER_ID, 'org-2');
  otherTenant.invoice(created());
  otherTenant.invoice(finalized());
  otherTenant.invoice(reminderSent);
  t.deepEqual((await project(otherTenant.events)).pending, [], "another tenant's customer is no recipient");

  const deleted = logOf();
  deleted.customer(customerCreated('ada@example.com'));
  deleted.customer({ type: 'CustomerDeleted', data: { at: AT } });
  deleted.invoice(created(invoiceFixture()));
  deleted.invoice(finalized());
  deleted.invoice(reminderSent);
  t.deepEqual((await project(deleted.events)).pending, [], 'a deleted customer is no recipient');
});

test('a failed attempt sets a retry timer; MailSent removes the mail and its timer; voiding drops an unsent reminder', async (t) => {
  const log = logOf();
  log.customer(customerCreated('ada@example.com'));
  log.invoice(created());
  log.invoice(finalized());
  const reminder = log.invoice(reminderSent);
  const mailId = mailIdOf(reminder.id);
  log.mail(mailId, {
    type: 'MailDeliveryFailed',
    data: {
      to: 'ada@example.com',
      attempt: 1,
      error: 'connection refused',
      retryAt: '2026-01-20T00:01:00.000Z',
      at: AT,
    },
  });
  const failed = await project(log.events);
  t.like(failed.pending[0], {
    _id: mailId,
    attempts: 1,
    lastError: 'connection refused',
    retryAt: '2026-01-20T00:01:00.000Z',
  });
  t.deepEqual(
    failed.timers.map((d) => [d._id, d.recordId, d.fireAt, d.version]),
    [[mailRetryTimerId(mailId), mailId, Date.parse('2026-01-20T00:01:00.000Z'), 0]],
  );

  log.invoice(voided('2026-01-22T00:00:00.000Z'));
  const closed = await project(log.events);
  t.deepEqual(closed.pending, []);
  t.deepEqual(closed.timers, [], 'voiding drops the unsent reminder and its retry timer');

  log.events.pop();
  log.mail(mailId, { type: 'MailSent', data: { to: 'ada@example.com', messageId: 'm-1', at: AT } });
  const done = await project(log.events);
  t.deepEqual(done.pending, []);
  t.deepEqual(done.timers, []);
});

test('rebuilding from the log gives the same pending mails (ids derive from the log events)', async (t) => {
  const log = logOf();
  log.customer(customerCreated('ada@example.com'));
  log.invoice(created());
  log.invoice({ type: 'InvoiceSent', data: { to: null, at: AT, mailed: false } });
  log.invoice(reminderSent);
  t.deepEqual((await project(log.events)).pending, (await project(log.events)).pending);
});

test('a payment receipt the merchant asked for is a pending mail to the address it named, until its MailSent', async (t) => {
  const { events, append } = createTestLog(AT);
  const session = sessionFixture();
  const stream = `checkout_session-${session.id}`;
  append(stream, sessionCreated(session));
  const requested = append(stream, {
    type: 'PaymentReceiptRequested',
    data: { to: 'payer@example.com', receiptNumber: 'RCPT-0123456789', at: AT },
  });
  const store = createEmbeddedReadStore({});
  const apply = async (list: RecordedEvent[]) => {
    for (const event of list)
      for (const projection of [checkoutSessionsProjection, mailsProjection]) await projection.apply(event, store);
  };
  await apply(events);
  const pending = store.collection<PendingMailDoc>(PENDING_MAILS);
  t.like(await pending.get(mailIdOf(requested.id)), {
    kind: 'payment_receipt',
    to: 'payer@example.com',
    checkoutSessionId: session.id,
    receiptNumber: 'RCPT-0123456789',
    organizationId: session.organizationId,
    attempts: 0,
    session: { id: session.id, status: session.status },
  });
  const sent = append(`mail-${mailIdOf(requested.id)}`, {
    type: 'MailSent',
    data: { to: 'payer@example.com', messageId: 'm-1', at: AT },
  });
  await apply([sent]);
  t.is(await pending.count({}), 0);
});

test('a pending mail says what was so at its event: a rebuild after later changes, or a batch applied again over them, writes the live document', async (t) => {
  const LATER = '2026-01-25T00:00:00.000Z';
  const log = logOf();
  log.organization({
    type: 'OrganizationCreated',
    data: { id: 'org-1', environment: 'test', name: 'Acme Studio', at: AT },
  });
  log.customer(customerCreated('ada@example.com'));
  log.invoice(created());
  log.invoice(finalized());
  const sent = log.invoice({ type: 'InvoiceSent', data: { to: null, at: AT, mailed: false } });
  const mailId = mailIdOf(sent.id);
  // The mail server is down: the mail waits for its retry while the records change.
  log.mail(mailId, {
    type: 'MailDeliveryFailed',
    data: { to: 'ada@example.com', attempt: 1, error: 'connection refused', retryAt: LATER, at: AT },
  });
  const live = createEmbeddedReadStore({});
  const asSent = (await project(log.events, live)).pending;
  t.like(asSent[0], {
    _id: mailId,
    attempts: 1,
    customerName: 'Ada',
    sender: { name: 'Acme Studio', brandColor: null },
    invoice: { status: 'open', sentAt: AT, remindersSent: [] },
  });
  const liveMail = renderPendingMail(asSent[0]!);
  t.true(liveMail.text.startsWith('Hello Ada,\n'));
  t.true(liveMail.text.includes('--\nAcme Studio'));

  const changes = [
    log.customer({ type: 'CustomerUpdated', data: { changes: { name: 'Ada Lovelace' }, at: LATER } }),
    log.organization({ type: 'BusinessDetailsUpdated', data: { changes: { name: 'Acme Ltd' }, at: LATER } }),
    log.organization({ type: 'BrandingUpdated', data: { brandColor: '#ff6600', brandLogo: null, at: LATER } }),
    log.invoice({ type: 'InvoiceReminderSent', data: { ...reminderSent.data, at: LATER } }),
  ];
  const { pending } = await project(changes, live);
  t.deepEqual(pending[0], asSent[0], 'later changes leave the pending mail as it was');
  t.like(pending[1], { kind: 'reminder', customerName: 'Ada Lovelace', sender: { name: 'Acme Ltd' } });

  const rebuilt = await project(log.events);
  t.deepEqual(rebuilt.pending, pending);
  t.deepEqual(renderPendingMail(rebuilt.pending[0]!), liveMail);
  // The runner retries a failed batch from its checkpoint, over what the failed attempt wrote.
  const retried = await project(log.events, (await project(log.events)).store);
  t.deepEqual(retried.pending, pending);
});

test('applied again after later events of its invoice (a batch retried partway), an invoice event writes no mail from the invoice as it is later', async (t) => {
  const log = logOf();
  log.customer(customerCreated('ada@example.com'));
  log.invoice(created());
  log.invoice(finalized());
  const sent = log.invoice({ type: 'InvoiceSent', data: { to: null, at: AT, mailed: false } });
  log.mail(mailIdOf(sent.id), { type: 'MailSent', data: { to: 'ada@example.com', messageId: 'm-1', at: AT } });
  const reminder = log.invoice(reminderSent);
  const { store } = await project(log.events);
  // The retry reaches the send again before its MailSent: the mail is not written anew with the invoice of the reminder.
  const { pending } = await project([sent], store);
  t.deepEqual(
    pending.map((m) => m._id),
    [mailIdOf(reminder.id)],
  );
});
