import { dueDateAsWritten } from './invoice.due.ts';
import type { Subscription, SubscriptionBill, SubscriptionEvent } from './subscription.types.ts';

export { addInterval, addDays, periodEndAfter } from './billing-calendar.ts';

const settleBill = (
  bill: SubscriptionBill | null,
  id: string,
  change: Partial<SubscriptionBill>,
): SubscriptionBill | null => (bill && bill.id === id ? { ...bill, ...change } : bill);

/** A bill the subscription still follows: owed (open, or lapsed), or a draft to be finalized. */
const owed = (bill: SubscriptionBill): boolean =>
  bill.status === 'open' || bill.status === 'draft' || bill.status === 'missed';

/** The bills a subscription follows, oldest first: those of earlier periods still owed, then the latest. */
export const billsOf = (s: Subscription): SubscriptionBill[] => [
  ...(s.earlierBills ?? []),
  ...(s.latestInvoice ? [s.latestInvoice] : []),
];

/** The bill `id` among those the subscription follows, or null. */
export const billOf = (s: Subscription, id: string): SubscriptionBill | null =>
  billsOf(s).find((bill) => bill.id === id) ?? null;

/** `s` with its bill `id` changed by `change`; an earlier bill settled by it is followed no more. */
function settle(s: Subscription, id: string, change: Partial<SubscriptionBill>): Subscription {
  const { earlierBills, ...rest } = s;
  const earlier = (earlierBills ?? []).map((bill) => (bill.id === id ? { ...bill, ...change } : bill)).filter(owed);
  return {
    ...rest,
    latestInvoice: settleBill(s.latestInvoice, id, change),
    ...(earlier.length > 0 ? { earlierBills: earlier } : {}),
  };
}

/**
 * Once a bill is no longer overdue (paid, voided, deleted, reopened): a past due or unpaid subscription
 * is active again, unless another of its bills is still overdue; any other keeps its status.
 */
function overdueAfter(s: Subscription): Pick<Subscription, 'status' | 'pastDueSince'> {
  const lapsed = s.status === 'past_due' || s.status === 'unpaid';
  if (lapsed && billsOf(s).some((bill) => bill.status === 'missed'))
    return { status: s.status, pastDueSince: s.pastDueSince };
  return { status: lapsed ? 'active' : s.status, pastDueSince: null };
}

/** The bill `invoiceId` paid: the subscription has started (a paused one stays paused), unless another bill is overdue. */
function afterPayment(s: Subscription, invoiceId: string, at: string): Subscription {
  const { notStarted: _started, ...paid } = settle(s, invoiceId, { status: 'paid', paidAt: at });
  const { status, pastDueSince } = overdueAfter(paid);
  const starts = status === 'incomplete' || status === 'trialing';
  return { ...paid, status: starts ? 'active' : status, pastDueSince, updatedAt: at };
}

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
    case 'RenewalPaid':
      return afterPayment(s, event.data.invoiceId, event.data.at);
    case 'FirstBillDiscounted': {
      const { invoiceId, amountDiscount, amountDue, at } = event.data;
      return { ...settle(s, invoiceId, { amountDiscount, amountDue }), updatedAt: at };
    }
    case 'SubscriptionIncompleteExpired':
      return {
        ...(event.data.invoiceId === null
          ? s
          : settle(s, event.data.invoiceId, {
              status: 'expired',
              ...(event.data.amountToRefund !== undefined && { amountToRefund: event.data.amountToRefund }),
            })),
        status: 'incomplete_expired',
        updatedAt: event.data.at,
        endedAt: event.data.at,
      };
    case 'FirstBillLatePaymentReceived': {
      const { invoiceId, transferId, amount, at } = event.data;
      const bill = s.latestInvoice;
      if (bill?.id !== invoiceId) return s;
      const amountToRefund = (BigInt(bill.amountToRefund ?? '0') + BigInt(amount)).toString();
      const lateTransferIds = [...(bill.lateTransferIds ?? []), transferId];
      return { ...settle(s, invoiceId, { amountToRefund, lateTransferIds }), updatedAt: at };
    }
    case 'RenewalInvoiceIssued': {
      const invoice = billAsWritten(event.data.invoice, event.data.dueIsInstant);
      // The bill it succeeds is still followed while owed: it may be paid, or lapse, after this one is issued.
      const earlier = billsOf(s).filter(owed);
      return {
        ...s,
        ...(earlier.length > 0 ? { earlierBills: earlier } : {}),
        updatedAt: event.data.at,
        currentPeriodStart: invoice.periodStart,
        currentPeriodEnd: invoice.periodEnd,
        latestInvoiceId: invoice.id,
        latestInvoice: invoice,
      };
    }
    case 'RenewalInvoiceNotFinalized':
      return { ...settle(s, event.data.invoiceId, { status: 'draft' }), updatedAt: event.data.at };
    case 'RenewalInvoiceFinalized': {
      // A bill missed while never sent (an older Weir) is owed from its finalize: no longer overdue.
      const { invoiceId, dueAt, at } = event.data;
      const opened = settle(s, invoiceId, { status: 'open', dueAt });
      return { ...opened, ...overdueAfter(opened), updatedAt: at };
    }
    case 'RenewalPaymentMissed':
      return {
        ...settle(s, event.data.invoiceId, { status: 'missed' }),
        ...(s.status === 'trialing' ? { notStarted: true as const } : {}),
        status: 'past_due',
        updatedAt: event.data.at,
        pastDueSince: event.data.at,
      };
    case 'RenewalInvoiceDeleted':
    case 'RenewalInvoiceVoided': {
      // That period is not billed: it is overdue no more, and the next period's renewal is issued at its end.
      const status = event.type === 'RenewalInvoiceVoided' ? 'void' : 'deleted';
      const removed = settle(s, event.data.invoiceId, { status });
      return { ...removed, ...overdueAfter(removed), updatedAt: event.data.at };
    }
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
