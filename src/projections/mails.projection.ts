import type { CheckoutSession, CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import type { Invoice, InvoiceEvent } from '../../machines/invoice.types.ts';
import { isEmail } from '../actors/customer.ts';
import type { MailEvent } from '../actors/mail.ts';
import { organizationRecordId } from '../actors/organization.ts';
import type { Environment, RecordedEvent } from '../event-store/event-store.ts';
import type { InvoiceMailKind } from '../mail/invoice-mail.ts';
import { mailSenderOf, type MailSender } from '../mail/mail-sender.ts';
import type { ReadDocument, ReadStore } from '../read-store/read-store.ts';
import { deterministicId } from '../shared/ids.ts';
import { COLLECTIONS, type CheckoutSessionDoc, type OrganizationDoc, type TimerDoc } from './collections.ts';
import { CUSTOMERS, type CustomerDoc } from './customers.projection.ts';
import { INVOICES, type InvoiceDoc } from './invoices.projection.ts';
import type { Projection } from './projection.ts';
import { recordOf } from './record-document.ts';
import { isTenants } from '../tenancy/same-tenant.ts';

export const PENDING_MAILS = 'pending_mails';
export const MAIL_RETRY_TIMER = 'mail.retry';

/**
 * A mail that follows from an event and is not sent yet; `_id` is the mail's id (its stream is
 * `mail-<id>`). It holds what the mail says as of that event (the invoice or session, the
 * customer's name, the sender), so a retry, a restart or a rebuild sends the same mail.
 */
type PendingMailFields = ReadDocument & {
  /** The invoice the mail is about; for a payment receipt, the session's invoice or ''. */
  invoiceId: string;
  to: string;
  organizationId: string;
  environment: string;
  /** When the fact it follows from happened: mails go out oldest first, and a reminder is worded as of then. */
  createdAt: string;
  /** Failed attempts so far. The first attempt is the dispatcher's work; the next ones are `mail.retry` timers. */
  attempts: number;
  lastError: string | null;
  retryAt: string | null;
  /** The business's details and branding; null when its record was not in the read models. */
  sender: MailSender | null;
  customerName: string | null;
};

export type PendingInvoiceMailDoc = PendingMailFields & { kind: InvoiceMailKind; invoice: Invoice };

/** The receipt of a checkout session's payment, which the merchant asked for. */
export type PendingReceiptMailDoc = PendingMailFields & {
  kind: 'payment_receipt';
  checkoutSessionId: string;
  receiptNumber: string;
  session: CheckoutSession;
};

export type PendingMailDoc = PendingInvoiceMailDoc | PendingReceiptMailDoc;

const INVOICE_PREFIX = 'invoice-';
const SESSION_PREFIX = 'checkout_session-';
const MAIL_PREFIX = 'mail-';

/** The mail that follows from a log event: one per event, the same id on every rebuild. */
export const mailIdOf = (eventId: string): string => deterministicId(`mail:${eventId}`);
export const mailRetryTimerId = (mailId: string): string => `${MAIL_RETRY_TIMER}:${mailId}`;

/**
 * The mail an invoice event asks for, and its recipient when the event names one (else the
 * customer's address): the invoice when the system sent it (`mailed: false`; the API mails its
 * sends itself, and an event stored before the flag was mailed), a reminder when one is due, and
 * the receipt when the invoice is paid, on chain or out of band.
 */
export function mailFor(event: InvoiceEvent): { kind: InvoiceMailKind; to: string | null } | null {
  switch (event.type) {
    case 'InvoiceSent':
      return event.data.mailed === false ? { kind: 'invoice', to: event.data.to } : null;
    case 'InvoiceReminderSent':
      return { kind: 'reminder', to: null };
    case 'InvoicePaid':
    case 'InvoiceMarkedAsPaid':
      return { kind: 'receipt', to: null };
    default:
      return null;
  }
}

/** Once an invoice is paid, void or written off, its unsent invoice and reminder mails have no purpose. */
const CLOSING: ReadonlySet<InvoiceEvent['type']> = new Set<InvoiceEvent['type']>([
  'InvoicePaid',
  'InvoiceMarkedAsPaid',
  'InvoiceVoided',
  'InvoiceMarkedUncollectible',
]);

/** The customer of a record, when known to the record's tenant (deleted or not). */
async function tenantCustomer(
  store: ReadStore,
  record: { customerId: string | null; organizationId: string; environment: string },
): Promise<CustomerDoc | null> {
  const customer = record.customerId ? await store.collection<CustomerDoc>(CUSTOMERS).get(record.customerId) : null;
  return isTenants(customer, record) ? customer : null;
}

/** The customer's address, when not deleted and it has one. */
const addressOf = (customer: CustomerDoc | null): string | null =>
  customer && !customer.deleted && isEmail(customer.email) ? customer.email : null;

/** The fields every pending mail starts with: its tenant, recipient, time, and sender as of `event`. */
async function newMail(
  store: ReadStore,
  event: RecordedEvent,
  record: { organizationId: string; environment: Environment },
  to: string,
  customerName: string | null,
) {
  const org = await store
    .collection<OrganizationDoc>(COLLECTIONS.organizations)
    .get(organizationRecordId(record.organizationId, record.environment));
  return {
    _id: mailIdOf(event.id),
    to,
    organizationId: record.organizationId,
    environment: record.environment,
    createdAt: (event.data as { at: string }).at,
    attempts: 0,
    lastError: null,
    retryAt: null,
    sender: org ? mailSenderOf(org) : null,
    customerName,
  };
}

/**
 * The record's document as of `event` (its own projection, run before this one, has just folded it
 * in), or null. One holding later events means a batch retried after its failed attempt went past
 * this event: that attempt wrote the event's mail, and the later events, applied again, redo what
 * they did to it; a mail written now would carry later data.
 */
function asOf<T extends { _revision?: number }>(doc: T | null, event: RecordedEvent): T | null {
  return doc && (doc._revision ?? event.revision) <= event.revision ? doc : null;
}

async function applyInvoiceEvent(event: RecordedEvent, store: ReadStore): Promise<void> {
  const typed = event as unknown as InvoiceEvent;
  const pending = store.collection<PendingMailDoc>(PENDING_MAILS);
  const invoiceId = event.streamId.slice(INVOICE_PREFIX.length);
  if (CLOSING.has(typed.type)) {
    for (const stale of await pending.find({ invoiceId, kind: { $in: ['invoice', 'reminder'] } })) {
      // The timer first: once the mail is gone, a retried batch no longer finds it to delete its timer.
      await store.collection<TimerDoc>(COLLECTIONS.timers).delete(mailRetryTimerId(stale._id));
      await pending.delete(stale._id);
    }
  }
  const mail = mailFor(typed);
  if (!mail) return;
  // Written already (a retried batch): the customer read now may have changed address since the event.
  if (await pending.get(mailIdOf(event.id))) return;
  const doc = asOf(await store.collection<InvoiceDoc>(INVOICES).get(invoiceId), event);
  if (!doc) return;
  const invoice = recordOf<Invoice>(doc);
  const customer = await tenantCustomer(store, invoice);
  // A mail with nobody to send it to is not pending work.
  const to = mail.to ?? addressOf(customer);
  if (!to) return;
  await pending.put({
    ...(await newMail(store, event, invoice, to, customer?.name ?? null)),
    kind: mail.kind,
    invoiceId,
    invoice,
  });
}

/** A receipt the merchant asked for: a pending mail to the address the request named. */
async function applySessionEvent(event: RecordedEvent, store: ReadStore): Promise<void> {
  const typed = event as unknown as CheckoutSessionEvent;
  if (typed.type !== 'PaymentReceiptRequested') return;
  const pending = store.collection<PendingMailDoc>(PENDING_MAILS);
  // Written already (a retried batch), maybe with failed attempts since.
  if (await pending.get(mailIdOf(event.id))) return;
  const sessionId = event.streamId.slice(SESSION_PREFIX.length);
  const doc = asOf(await store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(sessionId), event);
  if (!doc) return;
  const session = recordOf<CheckoutSession>(doc);
  const customerName = session.customerDetails?.name ?? (await tenantCustomer(store, session))?.name ?? null;
  await pending.put({
    ...(await newMail(store, event, session, typed.data.to, customerName)),
    kind: 'payment_receipt',
    invoiceId: session.invoiceId ?? '',
    checkoutSessionId: sessionId,
    receiptNumber: typed.data.receiptNumber,
    session,
  });
}

async function applyMailEvent(event: RecordedEvent, store: ReadStore): Promise<void> {
  const typed = event as unknown as MailEvent;
  const mailId = event.streamId.slice(MAIL_PREFIX.length);
  const pending = store.collection<PendingMailDoc>(PENDING_MAILS);
  const timers = store.collection<TimerDoc>(COLLECTIONS.timers);
  const doc = await pending.get(mailId);
  if (!doc) return;
  if (typed.type === 'MailSent') {
    // The timer first, as when an invoice closes.
    if (doc.attempts > 0) await timers.delete(mailRetryTimerId(mailId));
    await pending.delete(mailId);
    return;
  }
  const { attempt, error, retryAt } = typed.data;
  await pending.put({ ...doc, attempts: attempt, lastError: error, retryAt });
  await timers.put({
    _id: mailRetryTimerId(mailId),
    kind: MAIL_RETRY_TIMER,
    recordId: mailId,
    organizationId: doc.organizationId,
    environment: doc.environment,
    fireAt: Date.parse(retryAt),
    version: event.revision,
  });
}

/**
 * Mails that follow from events and are not sent yet (the mail dispatcher's work list), with a
 * retry timer for each whose last attempt failed. A mail leaves the list when its own stream
 * records `MailSent`, or when its invoice is closed before an invoice or reminder mail went out.
 * A payment receipt the merchant asks for (`PaymentReceiptRequested`) is one too. Runs after the
 * tenancy, customers, checkout sessions and invoices projections (it copies from them what a mail says).
 */
export const mailsProjection: Projection = {
  name: 'mails',
  // 2: pending mails hold what they say as of their event (the invoice or session, the customer's name, the sender).
  version: 2,
  collections: [PENDING_MAILS, COLLECTIONS.timers],
  categories: ['invoice', 'mail', 'checkout_session'],
  async apply(event, store) {
    if (event.streamId.startsWith(INVOICE_PREFIX)) await applyInvoiceEvent(event, store);
    else if (event.streamId.startsWith(SESSION_PREFIX)) await applySessionEvent(event, store);
    else if (event.streamId.startsWith(MAIL_PREFIX)) await applyMailEvent(event, store);
  },
};
