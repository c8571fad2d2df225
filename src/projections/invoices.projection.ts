import { evolveInvoice, overpaidOf } from '../../machines/invoice.evolve.ts';
import type { Invoice, InvoiceEvent } from '../../machines/invoice.types.ts';
import { subscriptionIdOfInvoice } from '../../machines/subscription.decide.ts';
import { shownHashOn } from '../chain-ingest/tron/networks.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import type { Collection } from '../read-store/read-store.ts';
import { COLLECTIONS, type CheckoutSessionDoc, type TimerDoc } from './collections.ts';
import { setReminderTimers } from './invoice-reminder-timers.ts';
import type { Projection } from './projection.ts';
import { sessionHashChainOf } from './public-views.ts';
import { foldIntoDocument, type RecordDoc } from './record-document.ts';

export const INVOICES = 'invoices';

export type InvoiceDoc = RecordDoc<Invoice>;

const INVOICE_PREFIX = 'invoice-';

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

/**
 * Invoices (one document per invoice, the `evolveInvoice` result). What their checkout sessions'
 * ends mean for them and closing the sessions of a settled invoice are workflows
 * (`workflows/invoice-payments.ts`, `workflows/invoice-session-closing.ts`). An open invoice also
 * keeps one durable timer per reminder still to send (see `pendingReminders`).
 */
export const invoicesProjection: Projection = {
  name: 'invoices',
  // 2: the sessions to close. 3: invoices hold `remindersSkipped`. 4: a void invoice announces no `nextInvoice`.
  // 5: the sessions to close are the invoice session closing workflow's.
  // 6: the sessions' outcomes are the invoice payments workflow's (no work list).
  // 7: each payment attempt holds what its session received (a partial payment counts as paid).
  // 8: the first invoice of a recurring series names the subscription it created.
  // 9: it names it from its finalize on (`withSubscription`), as its webhooks do, not once the subscription exists.
  // 10: an invoice paid before `InvoicePaid` recorded the chain takes it from its checkout session.
  // 11: a midnight due date in events an older Weir wrote (no `dueIsInstant`) is that whole day, as then.
  // 12: an invoice holds the `preferredChainId` its payment setting was sent with.
  // 13: an attempt paid late (after its session expired or was canceled) no longer keeps its failureReason.
  // 14: an invoice holds the late transfers that paid it (`latePaidTransferIds`), so their sessions have nothing to settle.
  version: 14,
  collections: [INVOICES, COLLECTIONS.timers],
  categories: ['invoice'],
  async apply(event, store) {
    const invoices = store.collection<InvoiceDoc>(INVOICES);
    if (!event.streamId.startsWith(INVOICE_PREFIX)) return;
    const typed = event as unknown as InvoiceEvent;
    const id = event.streamId.slice(INVOICE_PREFIX.length);
    const evolve = (invoice: Invoice | null, e: InvoiceEvent) => {
      const next = evolveInvoice(invoice, e);
      return next && withSubscription(next);
    };
    const chained = await withPaymentChain(event, store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions));
    await foldIntoDocument<Invoice, InvoiceEvent>(invoices, id, chained, evolve, async (next) => {
      if (REMINDER_CHANGES.has(typed.type))
        await setReminderTimers(store.collection<TimerDoc>(COLLECTIONS.timers), next, event.revision);
    });
  },
};

/**
 * An `InvoicePaid` stored before it recorded the chain of its transaction, with the chain of the
 * checkout session that paid it (its read model is ahead: the sessions projection runs first), so
 * a Tron payment is shown as Tron's tools show it; any other event as it is.
 */
async function withPaymentChain(
  event: RecordedEvent,
  sessions: Collection<CheckoutSessionDoc>,
): Promise<RecordedEvent> {
  const typed = event as unknown as InvoiceEvent;
  if (typed.type !== 'InvoicePaid') return event;
  const { chainId, checkoutSessionId, transactionHash } = typed.data;
  if (chainId !== undefined || checkoutSessionId === null || transactionHash === null) return event;
  const session = await sessions.get(checkoutSessionId);
  const found =
    session && session.organizationId === event.metadata.organizationId
      ? sessionHashChainOf(session, transactionHash)
      : undefined;
  return found === undefined ? event : { ...event, data: { ...event.data, chainId: found } };
}

/**
 * The invoice with the subscription it bills: a renewal's, or, from its finalize on, the one the
 * first invoice of a recurring series creates (its id derived from the invoice's, so the API and
 * every webhook name it at once, before the billing workflow has created it). Only the read model
 * and the webhooks say so: the invoice's own record keeps `subscriptionId` null, which its decider
 * and the billing workflow read as "not a renewal".
 */
export function withSubscription(invoice: Invoice): Invoice {
  const startsSeries = invoice.invoiceType === 'recurring' && invoice.subscriptionId === null;
  return startsSeries && invoice.finalizedAt !== null
    ? { ...invoice, subscriptionId: subscriptionIdOfInvoice(invoice.id) }
    : invoice;
}

/**
 * The invoice's payment transaction as its chain's tools show it (a Tron txID bare, as on its checkout
 * session); as recorded when the invoice does not know the chain (paid before it was recorded, and its
 * checkout session not found).
 */
export const shownInvoiceHash = (invoice: Pick<Invoice, 'transactionHash' | 'transactionChainId'>): string | null =>
  invoice.transactionHash !== null && invoice.transactionChainId !== undefined
    ? shownHashOn(invoice.transactionChainId, invoice.transactionHash)
    : invoice.transactionHash;

/** The invoice as merchants see it (API responses and webhook payloads), with the reference API's aliases. */
export function publicInvoice(invoice: Invoice & { _id?: string; _revision?: number }) {
  // The chain of its transaction only decides how the hash is shown; its preferred chain is shown in its
  // payment setting; its late transfers counted are its decider's (their money is in its attempts).
  const {
    environment: _environment,
    _id,
    _revision,
    transactionChainId: _chain,
    preferredChainId: _preferred,
    lateTransferIds: _late,
    latePaidTransferIds: _paid,
    ...rest
  } = invoice;
  return {
    ...rest,
    object: 'invoice' as const,
    livemode: invoice.environment === 'live',
    transactionHash: shownInvoiceHash(invoice),
    lastFinalizationError: invoice.lastFinalizationError ?? null,
    invoiceNumber: invoice.number,
    total: invoice.amountDue,
    amountOverpaid: overpaidOf(invoice.amountDue, invoice.amountPaid),
    ...invoiceTaxFields(invoice),
  };
}

/**
 * The reference's tax fields: `subTotal` before exclusive tax (inclusive tax is in the prices),
 * `totalTax` (all of it), the invoice's `taxRateIds`, and each line's `amountSubtotal`, `amountTax`
 * and `taxRates`; with each line's `currency`, as a checkout session's lines show it.
 */
function invoiceTaxFields(invoice: Invoice) {
  const lines = invoice.lineItems.data.map((line) => ({
    ...line,
    // Every line is in the invoice's currency (its price's: an invoice's lines share one).
    currency: invoice.currency,
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
