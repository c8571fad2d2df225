import { evolveInvoice } from '../../machines/invoice.evolve.ts';
import type { Invoice, InvoiceEvent, InvoiceEventType } from '../../machines/invoice.types.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { publicInvoice, withSubscription } from '../projections/invoices.projection.ts';

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
 * The invoice as it was right after the last event of `history` (its stream up to the source event),
 * as the API's invoice shows it: the first invoice of a recurring series names the subscription its
 * finalize creates (`withSubscription`), on every render, some before the subscription exists.
 */
export function invoicePayloadOf(history: RecordedEvent[]) {
  let invoice: Invoice | null = null;
  for (const event of history) invoice = evolveInvoice(invoice, event as unknown as InvoiceEvent);
  if (!invoice) throw new Error(`${history[0]?.streamId ?? 'invoice stream'} has no invoice`);
  return publicInvoice(withSubscription(invoice));
}
