import type { Invoice, InvoiceEvent } from '../../machines/invoice.types.ts';
import { isEmail } from '../actors/customer.ts';
import type { MailEvent } from '../actors/mail.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import type { InvoiceMailKind } from '../mail/invoice-mail.ts';
import type { ReadDocument, ReadStore } from '../read-store/read-store.ts';
import { deterministicId } from '../shared/ids.ts';
import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import { COLLECTIONS, type CheckoutSessionDoc, type TimerDoc } from './collections.ts';
import { CUSTOMERS, type CustomerDoc } from './customers.projection.ts';
import { INVOICES, type InvoiceDoc } from './invoices.projection.ts';
import type { Projection } from './projection.ts';

export const PENDING_MAILS = 'pending_mails';
export const MAIL_RETRY_TIMER = 'mail.retry';

/** A mail that follows from an event and is not sent yet; `_id` is the mail's id (its stream is `mail-<id>`). */
export type PendingMailDoc = ReadDocument & {
  /** An invoice mail, or the receipt of a checkout session's payment (`payment_receipt`). */
  kind: InvoiceMailKind | 'payment_receipt';
  /** The invoice the mail is about; for a payment receipt, the session's invoice or ''. */
  invoiceId: string;
  /** A payment receipt's session and number; absent on invoice mails. */
  checkoutSessionId?: string;
  receiptNumber?: string;
  to: string;
  organizationId: string;
  environment: string;
  /** When the fact it follows from happened: mails go out oldest first. */
  createdAt: string;
  /** Failed attempts so far. The first attempt is the dispatcher's work; the next ones are `mail.retry` timers. */
  attempts: number;
  lastError: string | null;
  retryAt: string | null;
};

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

/** The customer's address, when the invoice's customer is known to its tenant, not deleted, and has one. */
async function customerAddress(store: ReadStore, invoice: Invoice): Promise<string | null> {
  const customer = await store.collection<CustomerDoc>(CUSTOMERS).get(invoice.customerId);
  if (
    !customer ||
    customer.deleted ||
    customer.organizationId !== invoice.organizationId ||
    customer.environment !== invoice.environment
  )
    return null;
  return isEmail(customer.email) ? customer.email : null;
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
  // The invoices projection runs first, so this is the invoice as of this event.
  const invoice = await store.collection<InvoiceDoc>(INVOICES).get(invoiceId);
  if (!invoice) return;
  // A mail with nobody to send it to is not pending work.
  const to = mail.to ?? (await customerAddress(store, invoice));
  if (!to) return;
  await pending.put({
    _id: mailIdOf(event.id),
    kind: mail.kind,
    invoiceId,
    to,
    organizationId: invoice.organizationId,
    environment: invoice.environment,
    createdAt: (typed.data as { at: string }).at,
    attempts: 0,
    lastError: null,
    retryAt: null,
  });
}

/** A receipt the merchant asked for: a pending mail to the address the request named. */
async function applySessionEvent(event: RecordedEvent, store: ReadStore): Promise<void> {
  const typed = event as unknown as CheckoutSessionEvent;
  if (typed.type !== 'PaymentReceiptRequested') return;
  const sessionId = event.streamId.slice(SESSION_PREFIX.length);
  const session = await store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(sessionId);
  if (!session) return;
  await store.collection<PendingMailDoc>(PENDING_MAILS).put({
    _id: mailIdOf(event.id),
    kind: 'payment_receipt',
    invoiceId: session.invoiceId ?? '',
    checkoutSessionId: sessionId,
    receiptNumber: typed.data.receiptNumber,
    to: typed.data.to,
    organizationId: session.organizationId,
    environment: session.environment,
    createdAt: typed.data.at,
    attempts: 0,
    lastError: null,
    retryAt: null,
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
 * invoices, customers and checkout sessions projections (it reads them).
 */
export const mailsProjection: Projection = {
  name: 'mails',
  collections: [PENDING_MAILS, COLLECTIONS.timers],
  categories: ['invoice', 'mail', 'checkout_session'],
  async apply(event, store) {
    if (event.streamId.startsWith(INVOICE_PREFIX)) await applyInvoiceEvent(event, store);
    else if (event.streamId.startsWith(SESSION_PREFIX)) await applySessionEvent(event, store);
    else if (event.streamId.startsWith(MAIL_PREFIX)) await applyMailEvent(event, store);
  },
};
