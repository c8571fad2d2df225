import { evolveInvoice } from '../../machines/invoice.evolve.ts';
import type { Invoice, InvoiceEvent } from '../../machines/invoice.types.ts';
import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import type { ReadDocument, ReadStore } from '../read-store/read-store.ts';
import { COLLECTIONS, type CheckoutSessionDoc, type TimerDoc } from './collections.ts';
import { LEAVES_OPEN } from '../workflows/invoice-session-closing.ts';
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
  'InvoiceFinalized',
  'InvoiceReminderSent',
  'InvoiceReminderSkipped',
  'InvoicePaid',
  'InvoiceMarkedAsPaid',
  'InvoiceVoided',
  'InvoiceMarkedUncollectible',
]);

/** Whether the invoice can no longer take a payment: no session opened for it may still be paid. */
const isSettled = (invoice: Invoice): boolean => invoice.status === 'paid' || invoice.status === 'void';

export { LEAVES_OPEN };

const SESSION_ENDINGS: Partial<
  Record<CheckoutSessionEvent['type'], { outcome: 'paid' | 'failed'; reason: string | null }>
> = {
  CheckoutSessionCompleted: { outcome: 'paid', reason: null },
  CheckoutSessionExpired: { outcome: 'failed', reason: 'the checkout session expired before it was paid' },
  CheckoutSessionCanceled: { outcome: 'failed', reason: 'the checkout session was canceled' },
};

/**
 * Invoices (one document per invoice, the `evolveInvoice` result), plus the work list of the
 * invoice payment linker: the pending outcomes of checkout sessions opened to pay them (a
 * session's end is recorded here until the invoice's own stream records it, or the invoice is
 * paid or voided). Closing the sessions of a settled invoice is a workflow
 * (`workflows/invoice-session-closing.ts`). Must run after the checkout sessions projection (it
 * reads the session documents as of this event). An open invoice also keeps one durable timer per
 * reminder still to send (see `pendingReminders`).
 */
export const invoicesProjection: Projection = {
  name: 'invoices',
  // 2: the sessions to close. 3: invoices hold `remindersSkipped`. 4: a void invoice announces no `nextInvoice`.
  // 5: the sessions to close are the invoice session closing workflow's.
  version: 5,
  collections: [INVOICES, INVOICE_PAYMENT_OUTCOMES, COLLECTIONS.timers],
  categories: ['checkout_session', 'invoice'],
  async apply(event, store) {
    if (event.streamId.startsWith(SESSION_PREFIX)) return applySessionEvent(event, store);
    if (!event.streamId.startsWith(INVOICE_PREFIX)) return;
    const invoices = store.collection<InvoiceDoc>(INVOICES);
    const outcomes = store.collection<InvoicePaymentOutcomeDoc>(INVOICE_PAYMENT_OUTCOMES);
    const typed = event as unknown as InvoiceEvent;
    const id = event.streamId.slice(INVOICE_PREFIX.length);
    const next = await foldIntoDocument<Invoice, InvoiceEvent>(invoices, id, event, evolveInvoice);
    if (!next) return;
    if (REMINDER_CHANGES.has(typed.type))
      await setReminderTimers(store.collection<TimerDoc>(COLLECTIONS.timers), next, event.revision);
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

/** A session opened for an invoice: its end is an outcome for the invoice. */
async function applySessionEvent(event: RecordedEvent, store: ReadStore): Promise<void> {
  const type = event.type as CheckoutSessionEvent['type'];
  if (!LEAVES_OPEN.has(type)) return;
  const id = event.streamId.slice(SESSION_PREFIX.length);
  const session = await store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(id);
  if (!session?.invoiceId) return;
  const invoice = await store.collection<InvoiceDoc>(INVOICES).get(session.invoiceId);
  const ending = SESSION_ENDINGS[type];
  if (!ending) return;
  // An outcome the invoice already holds (a replay) or no longer needs is not work.
  if (invoice && isSettled(invoice)) return;
  const attempt = invoice?.paymentAttempts.find((a) => a.checkoutSessionId === id);
  if (attempt && attempt.status !== 'pending') return;
  const data = event.data as { amountReceived?: string; transactionHash?: string | null; at: string };
  await store.collection<InvoicePaymentOutcomeDoc>(INVOICE_PAYMENT_OUTCOMES).put({
    _id: id,
    checkoutSessionId: id,
    invoiceId: session.invoiceId,
    organizationId: session.organizationId,
    environment: session.environment,
    outcome: ending.outcome,
    amountReceived: data.amountReceived ?? session.amountReceived,
    transactionHash: data.transactionHash ?? session.transactionHash,
    reason: ending.reason,
    at: data.at,
  });
}

/** The invoice as merchants see it (API responses and webhook payloads), with the reference API's aliases. */
export function publicInvoice(invoice: Invoice & { _id?: string; _revision?: number }) {
  const { environment: _environment, _id, _revision, ...rest } = invoice;
  return {
    ...rest,
    object: 'invoice' as const,
    livemode: invoice.environment === 'live',
    invoiceNumber: invoice.number,
    total: invoice.amountDue,
    ...invoiceTaxFields(invoice),
  };
}

/**
 * The reference's tax fields: `subTotal` before exclusive tax (inclusive tax is in the prices),
 * `totalTax` (all of it), the invoice's `taxRateIds`, and each line's `amountSubtotal`, `amountTax`
 * and `taxRates`.
 */
function invoiceTaxFields(invoice: Invoice) {
  const lines = invoice.lineItems.data.map((line) => ({
    ...line,
    amountSubtotal: (BigInt(line.unitAmount) * BigInt(line.quantity)).toString(),
    amountTax: line.amountTax ?? '0',
    taxRates: line.taxRates ?? [],
  }));
  return {
    lineItems: { ...invoice.lineItems, data: lines },
    subTotal: lines.reduce((sum, line) => sum + BigInt(line.amountSubtotal), 0n).toString(),
    totalTax: lines.reduce((sum, line) => sum + BigInt(line.amountTax), 0n).toString(),
    taxRateIds: invoice.taxRateIds ?? [],
  };
}
