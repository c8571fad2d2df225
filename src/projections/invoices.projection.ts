import { evolveInvoice } from '../../machines/invoice.evolve.ts';
import type { Invoice, InvoiceEvent } from '../../machines/invoice.types.ts';
import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import type { ReadDocument } from '../read-store/read-store.ts';
import { COLLECTIONS, type CheckoutSessionDoc, type TimerDoc } from './collections.ts';
import { setReminderTimers } from './invoice-reminder-timers.ts';
import type { Projection } from './projection.ts';
import { foldIntoDocument, type RecordDoc } from './record-document.ts';

export const INVOICES = 'invoices';
/** Ended checkout sessions of invoices whose outcome the invoice has not recorded yet. */
export const INVOICE_PAYMENT_OUTCOMES = 'invoice_payment_outcomes';

export type InvoiceDoc = RecordDoc<Invoice>;

/** What a linked checkout session's end means for its invoice; the `_id` is the session id. */
export type InvoicePaymentOutcomeDoc = ReadDocument & {
  checkoutSessionId: string;
  invoiceId: string;
  organizationId: string;
  environment: string;
  outcome: 'paid' | 'failed';
  amountReceived: string;
  transactionHash: string | null;
  reason: string | null;
  at: string;
};

const INVOICE_PREFIX = 'invoice-';
const SESSION_PREFIX = 'checkout_session-';

/** The invoice events that start, end or use up its reminders. */
const REMINDER_CHANGES: ReadonlySet<InvoiceEvent['type']> = new Set<InvoiceEvent['type']>([
  'InvoiceFinalized', 'InvoiceReminderSent', 'InvoicePaid', 'InvoiceMarkedAsPaid', 'InvoiceVoided', 'InvoiceMarkedUncollectible',
]);

const SESSION_ENDINGS: Partial<Record<CheckoutSessionEvent['type'], { outcome: 'paid' | 'failed'; reason: string | null }>> = {
  CheckoutSessionCompleted: { outcome: 'paid', reason: null },
  CheckoutSessionExpired: { outcome: 'failed', reason: 'the checkout session expired before it was paid' },
  CheckoutSessionCanceled: { outcome: 'failed', reason: 'the checkout session was canceled' },
};

/**
 * Invoices (one document per invoice, the `evolveInvoice` result), plus the pending outcomes of
 * checkout sessions opened to pay them: a session's end is recorded here until the invoice's
 * own stream records it (or the invoice is paid or voided), which is the work list of the
 * invoice payment linker. Must run after the checkout sessions projection (it reads the
 * session's `invoiceId`, which never changes). An open invoice also keeps one durable timer per
 * reminder still to send (see `pendingReminders`).
 */
export const invoicesProjection: Projection = {
  name: 'invoices',
  collections: [INVOICES, INVOICE_PAYMENT_OUTCOMES, COLLECTIONS.timers],
  categories: ['checkout_session', 'invoice'],
  async apply(event, store) {
    const outcomes = store.collection<InvoicePaymentOutcomeDoc>(INVOICE_PAYMENT_OUTCOMES);
    if (event.streamId.startsWith(SESSION_PREFIX)) {
      const ending = SESSION_ENDINGS[event.type as CheckoutSessionEvent['type']];
      if (!ending) return;
      const id = event.streamId.slice(SESSION_PREFIX.length);
      const session = await store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(id);
      if (!session?.invoiceId) return;
      const invoice = await store.collection<InvoiceDoc>(INVOICES).get(session.invoiceId);
      // An outcome the invoice already holds (a replay) or no longer needs is not work.
      if (invoice && (invoice.status === 'paid' || invoice.status === 'void')) return;
      const attempt = invoice?.paymentAttempts.find((a) => a.checkoutSessionId === id);
      if (attempt && attempt.status !== 'pending') return;
      const data = event.data as { amountReceived?: string; transactionHash?: string | null; at: string };
      await outcomes.put({
        _id: id, checkoutSessionId: id, invoiceId: session.invoiceId, organizationId: session.organizationId, environment: session.environment,
        outcome: ending.outcome, amountReceived: data.amountReceived ?? session.amountReceived, transactionHash: data.transactionHash ?? session.transactionHash,
        reason: ending.reason, at: data.at,
      });
      return;
    }
    if (!event.streamId.startsWith(INVOICE_PREFIX)) return;
    const invoices = store.collection<InvoiceDoc>(INVOICES);
    const typed = event as unknown as InvoiceEvent;
    const id = event.streamId.slice(INVOICE_PREFIX.length);
    const next = await foldIntoDocument<Invoice, InvoiceEvent>(invoices, id, event, evolveInvoice);
    if (!next) return;
    if (REMINDER_CHANGES.has(typed.type)) await setReminderTimers(store.collection<TimerDoc>(COLLECTIONS.timers), next, event.revision);
    switch (typed.type) {
      case 'InvoicePaymentFailed':
        await outcomes.delete(typed.data.checkoutSessionId);
        return;
      case 'InvoicePaid':
      case 'InvoiceMarkedAsPaid':
      case 'InvoiceVoided':
        for (const pending of await outcomes.find({ invoiceId: id })) await outcomes.delete(pending._id);
        return;
      default:
        return;
    }
  },
};

/** The invoice as merchants see it (API responses and webhook payloads), with the reference API's aliases. */
export function publicInvoice(invoice: Invoice & { _id?: string; _revision?: number }) {
  const { environment: _environment, _id, _revision, ...rest } = invoice;
  return {
    ...rest,
    object: 'invoice' as const,
    livemode: invoice.environment === 'live',
    invoiceNumber: invoice.number,
    total: invoice.amountDue,
    subTotal: invoice.amountDue,
  };
}
