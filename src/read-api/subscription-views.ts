import type { InvoiceStatus } from '../../machines/invoice.types.ts';
import { INVOICES, type InvoiceDoc } from '../projections/invoices.projection.ts';
import { publicSubscription, type SubscriptionDoc } from '../projections/subscriptions.projection.ts';
import type { ReadStore } from '../read-store/read-store.ts';

/** Invoice statuses that settle a bill for good, whatever the subscription's record last heard of it. */
const SETTLED: ReadonlySet<InvoiceStatus> = new Set<InvoiceStatus>(['paid', 'void', 'uncollectible']);

/**
 * Subscriptions as the API answers them, their `latestInvoice.status` the invoice's own once it is
 * settled: a subscription records nothing after its end, so the renewal or first invoice its
 * billing voided then (or one paid or marked uncollectible) would otherwise read `open` for ever.
 */
export function subscriptionViews(readStore: ReadStore) {
  const invoices = readStore.collection<InvoiceDoc>(INVOICES);

  const present = (doc: SubscriptionDoc, settled: ReadonlyMap<string, InvoiceDoc>) => {
    const view = publicSubscription(doc);
    const bill = view.latestInvoice;
    const invoice = bill?.id ? settled.get(bill.id) : undefined;
    if (!bill || !invoice || invoice.status === bill.status) return view;
    return { ...view, latestInvoice: { ...bill, status: invoice.status, paidAt: bill.paidAt ?? invoice.paidAt } };
  };

  /** The tenant's settled invoices among the subscriptions' latest bills, by id. */
  async function settledInvoices(docs: readonly SubscriptionDoc[]): Promise<Map<string, InvoiceDoc>> {
    const first = docs[0];
    const ids = docs.flatMap((d) => (d.latestInvoice?.kind === 'invoice' ? [d.latestInvoice.id] : []));
    if (!first || ids.length === 0) return new Map();
    const found = await invoices.find({
      organizationId: first.organizationId,
      environment: first.environment,
      id: { $in: ids },
    });
    return new Map(found.filter((i) => SETTLED.has(i.status)).map((i) => [i.id, i]));
  }

  return {
    async one(doc: SubscriptionDoc) {
      return present(doc, await settledInvoices([doc]));
    },
    /** Subscriptions of one tenant (a list page). */
    async many(docs: readonly SubscriptionDoc[]) {
      const settled = await settledInvoices(docs);
      return docs.map((doc) => present(doc, settled));
    },
  };
}
