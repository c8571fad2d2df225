import { evolveInvoice } from '../../machines/invoice.evolve.ts';
import type { Invoice, InvoiceEvent, InvoiceEventType } from '../../machines/invoice.types.ts';
import { subscriptionIdOfInvoice } from '../../machines/subscription.decide.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { publicInvoice } from '../projections/invoices.projection.ts';

export const INVOICE_STREAM_PREFIX = 'invoice-';

/** The public webhook events of invoice log events; each carries the invoice as `data.object`. */
export const INVOICE_WEBHOOK_EVENTS: Partial<Record<InvoiceEventType, string>> = {
  InvoiceFinalized: 'invoice.finalized',
  InvoicePaid: 'invoice.paid',
  InvoicePaymentFailed: 'invoice.payment_failed',
  InvoiceMarkedAsPaid: 'invoice.marked_as_paid',
  InvoiceMarkedUncollectible: 'invoice.marked_uncollectible',
};

/** The public event type of an invoice log event, if it has one. */
export const invoiceWebhookTypeOf = (event: RecordedEvent): string | null =>
  event.streamId.startsWith(INVOICE_STREAM_PREFIX)
    ? (INVOICE_WEBHOOK_EVENTS[event.type as InvoiceEventType] ?? null)
    : null;

/**
 * The invoice as it was right after the last event of `history` (its stream up to the source event).
 * The first invoice of a recurring series names the subscription its finalize creates, as the API's
 * invoice does once that exists: its id is derived from the invoice's, so every webhook of the
 * invoice (sent from its finalize on, some before the subscription exists) names it, on every render.
 */
export function invoicePayloadOf(history: RecordedEvent[]) {
  let invoice: Invoice | null = null;
  for (const event of history) invoice = evolveInvoice(invoice, event as unknown as InvoiceEvent);
  if (!invoice) throw new Error(`${history[0]?.streamId ?? 'invoice stream'} has no invoice`);
  const startsSeries = invoice.invoiceType === 'recurring' && invoice.subscriptionId === null;
  return publicInvoice(startsSeries ? { ...invoice, subscriptionId: subscriptionIdOfInvoice(invoice.id) } : invoice);
}
