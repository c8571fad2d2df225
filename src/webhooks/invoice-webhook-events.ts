import { evolveCheckoutSession } from '../../machines/checkout-session.evolve.ts';
import type { CheckoutSession, CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import { evolveInvoice } from '../../machines/invoice.evolve.ts';
import type { Invoice, InvoiceEvent, InvoiceEventType } from '../../machines/invoice.types.ts';
import type { EventStore, RecordedEvent } from '../event-store/event-store.ts';
import { publicInvoice, withSubscription } from '../projections/invoices.projection.ts';
import { sessionHashChainOf } from '../projections/public-views.ts';

export const INVOICE_STREAM_PREFIX = 'invoice-';

/**
 * The public webhook events of invoice log events; each carries the invoice as `data.object`.
 * `InvoicePaymentReceivedAfterPaid` (a paid invoice paid again through another session) has none: the
 * reference lists no `invoice.updated`, and a second `invoice.paid` would have the order fulfilled
 * twice. The session that received it says so once it completes (`checkout_session.completed`), as
 * for a part of an open invoice (`InvoicePartialPaymentReceived`, no webhook either). Money a session
 * received after it expired or was canceled is told the same way: a part as a part (none), one that
 * pays the invoice as its `InvoicePaid` (`invoice.paid`, once), one to a paid invoice as paid twice (none).
 */
export const INVOICE_WEBHOOK_EVENTS: Partial<Record<InvoiceEventType, string>> = {
  InvoiceFinalized: 'invoice.finalized',
  InvoicePaid: 'invoice.paid',
  InvoicePaymentFailed: 'invoice.payment_failed',
  InvoiceMarkedAsPaid: 'invoice.marked_as_paid',
  InvoiceMarkedUncollectible: 'invoice.marked_uncollectible',
};

/** Weir could not finalize a draft (a renewal): `data.object.lastFinalizationError` says why (Stripe's name). */
const FINALIZATION_FAILED = 'invoice.finalization_failed';

/**
 * The public event type of an invoice log event, if it has one. A finalization failure announces one
 * only when recorded since that webhook exists (`announced`): older ones were never sent, and a
 * replay of the log must not send them late.
 */
export function invoiceWebhookTypeOf(event: RecordedEvent): string | null {
  if (!event.streamId.startsWith(INVOICE_STREAM_PREFIX)) return null;
  if (event.type === 'InvoiceFinalizationFailed')
    return (event.data as { announced?: unknown }).announced === true ? FINALIZATION_FAILED : null;
  return INVOICE_WEBHOOK_EVENTS[event.type as InvoiceEventType] ?? null;
}

/** The invoice as it was right after the last event of `history` (its stream up to the source event). */
function invoiceOf(history: RecordedEvent[]): Invoice {
  let invoice: Invoice | null = null;
  for (const event of history) invoice = evolveInvoice(invoice, event as unknown as InvoiceEvent);
  if (!invoice) throw new Error(`${history[0]?.streamId ?? 'invoice stream'} has no invoice`);
  return invoice;
}

/**
 * The invoice as the API shows it: the first invoice of a recurring series names the subscription its
 * finalize creates (`withSubscription`), on every render, some before the subscription exists.
 */
function presentInvoice(invoice: Invoice) {
  return publicInvoice(withSubscription(invoice));
}

/** The invoice as it was right after the last event of `history`, as the API shows it. */
export const invoicePayloadOf = (history: RecordedEvent[]) => presentInvoice(invoiceOf(history));

/**
 * The payload of a webhook: `invoicePayloadOf`, with the chain of a payment whose `InvoicePaid` was
 * stored before it recorded one taken from the checkout session that paid it (its stream), as the
 * invoices read model does, so a Tron txID shows bare in the webhook as in the API.
 */
export async function invoiceWebhookPayloadOf(eventStore: Pick<EventStore, 'readStream'>, history: RecordedEvent[]) {
  const invoice = invoiceOf(history);
  const { transactionHash, checkoutSessionId } = invoice;
  if (invoice.transactionChainId !== undefined || transactionHash === null || checkoutSessionId === null)
    return presentInvoice(invoice);
  let session: CheckoutSession | null = null;
  for (const event of await eventStore.readStream(`checkout_session-${checkoutSessionId}`))
    session = evolveCheckoutSession(session, event as unknown as CheckoutSessionEvent);
  const chainId =
    session && session.organizationId === invoice.organizationId
      ? sessionHashChainOf(session, transactionHash)
      : undefined;
  return presentInvoice(chainId === undefined ? invoice : { ...invoice, transactionChainId: chainId });
}
