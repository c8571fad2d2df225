import { dueDateAsWritten } from './invoice.due.ts';
import type { Subscription, SubscriptionBill, SubscriptionEvent } from './subscription.types.ts';

export { addInterval, addDays, periodEndAfter } from './billing-calendar.ts';

const settleBill = (
  bill: SubscriptionBill | null,
  id: string,
  change: Partial<SubscriptionBill>,
): SubscriptionBill | null => (bill && bill.id === id ? { ...bill, ...change } : bill);

/** An invoice bill due as its event meant it (`dueDateAsWritten`); a checkout session's expiry is always an instant. */
const billAsWritten = (bill: SubscriptionBill, dueIsInstant: boolean | undefined): SubscriptionBill =>
  bill.kind === 'invoice' ? { ...bill, dueAt: dueDateAsWritten(bill.dueAt, dueIsInstant) } : bill;

/**
 * The one place that computes a subscription's data from its events. The statechart calls it
 * from its actions and the projection calls it directly, so the write and read sides cannot drift.
 */
export function evolveSubscription(subscription: Subscription | null, event: SubscriptionEvent): Subscription | null {
  if (event.type === 'SubscriptionCreated') {
    const { subscription: created, dueIsInstant } = event.data;
    return created.latestInvoice
      ? { ...created, latestInvoice: billAsWritten(created.latestInvoice, dueIsInstant) }
      : created;
  }
  if (subscription === null) return null;
  const s = subscription;
  switch (event.type) {
    case 'SubscriptionStarted':
      return {
        ...s,
        status: 'active',
        updatedAt: event.data.at,
        pastDueSince: null,
        latestInvoice: settleBill(s.latestInvoice, event.data.invoiceId, { status: 'paid', paidAt: event.data.at }),
      };
    case 'FirstBillDiscounted': {
      const { invoiceId, amountDiscount, amountDue, at } = event.data;
      return {
        ...s,
        updatedAt: at,
        latestInvoice: settleBill(s.latestInvoice, invoiceId, { amountDiscount, amountDue }),
      };
    }
    case 'SubscriptionIncompleteExpired':
      return {
        ...s,
        status: 'incomplete_expired',
        updatedAt: event.data.at,
        endedAt: event.data.at,
        latestInvoice:
          event.data.invoiceId === null
            ? s.latestInvoice
            : settleBill(s.latestInvoice, event.data.invoiceId, { status: 'expired' }),
      };
    case 'RenewalInvoiceIssued': {
      const invoice = billAsWritten(event.data.invoice, event.data.dueIsInstant);
      return {
        ...s,
        updatedAt: event.data.at,
        currentPeriodStart: invoice.periodStart,
        currentPeriodEnd: invoice.periodEnd,
        latestInvoiceId: invoice.id,
        latestInvoice: invoice,
      };
    }
    case 'RenewalPaid':
      return {
        ...s,
        // A bill left open when the subscription was paused may be paid while it stays paused.
        status: s.status === 'paused' ? 'paused' : 'active',
        updatedAt: event.data.at,
        pastDueSince: null,
        latestInvoice: settleBill(s.latestInvoice, event.data.invoiceId, { status: 'paid', paidAt: event.data.at }),
      };
    case 'RenewalInvoiceNotFinalized':
      return {
        ...s,
        updatedAt: event.data.at,
        latestInvoice: settleBill(s.latestInvoice, event.data.invoiceId, { status: 'draft' }),
      };
    case 'RenewalInvoiceFinalized': {
      const { invoiceId, dueAt, at } = event.data;
      // A bill missed while never sent (an older Weir) is owed from its finalize: nothing is overdue any more.
      const lapsed = s.status === 'past_due' || s.status === 'unpaid';
      return {
        ...s,
        ...(lapsed ? { status: 'active' as const, pastDueSince: null } : {}),
        updatedAt: at,
        latestInvoice: settleBill(s.latestInvoice, invoiceId, { status: 'open', dueAt }),
      };
    }
    case 'RenewalPaymentMissed':
      return {
        ...s,
        status: 'past_due',
        updatedAt: event.data.at,
        pastDueSince: event.data.at,
        latestInvoice: settleBill(s.latestInvoice, event.data.invoiceId, { status: 'missed' }),
      };
    case 'RenewalInvoiceDeleted':
    case 'RenewalInvoiceVoided':
      // That period is not billed: nothing is overdue, and the next period's renewal is issued at its end.
      return {
        ...s,
        status: s.status === 'past_due' || s.status === 'unpaid' ? 'active' : s.status,
        updatedAt: event.data.at,
        pastDueSince: null,
        latestInvoice: settleBill(s.latestInvoice, event.data.invoiceId, {
          status: event.type === 'RenewalInvoiceVoided' ? 'void' : 'deleted',
        }),
      };
    case 'SubscriptionMarkedUnpaid':
      return { ...s, status: 'unpaid', updatedAt: event.data.at };
    case 'SubscriptionCancelScheduled':
      return {
        ...s,
        updatedAt: event.data.at,
        cancelAtPeriodEnd: true,
        cancelAt: event.data.cancelAt,
        canceledAt: event.data.at,
        cancellationReason: 'cancellation_requested',
        cancellationComment: event.data.comment,
      };
    case 'SubscriptionCancelRevoked':
      return {
        ...s,
        updatedAt: event.data.at,
        cancelAtPeriodEnd: false,
        cancelAt: null,
        canceledAt: null,
        cancellationReason: null,
        cancellationComment: null,
      };
    case 'SubscriptionCanceled':
      return {
        ...s,
        status: 'canceled',
        updatedAt: event.data.at,
        endedAt: event.data.at,
        cancelAt: event.data.atPeriodEnd ? s.cancelAt : null,
        canceledAt: s.canceledAt ?? event.data.at,
        cancellationReason: 'cancellation_requested',
        cancellationComment: event.data.comment ?? s.cancellationComment,
      };
    case 'SubscriptionPaused':
      return { ...s, status: 'paused', updatedAt: event.data.at, pausedAt: event.data.at };
    case 'SubscriptionResumed':
      return {
        ...s,
        status: 'active',
        updatedAt: event.data.at,
        pausedAt: null,
        currentPeriodEnd: event.data.currentPeriodEnd,
        billingCycleAnchor: event.data.billingCycleAnchor,
      };
  }
}
