import type { CheckoutSession, CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import { nextInvoiceIdOf } from '../../machines/invoice.decide.ts';
import type { InvoiceEvent } from '../../machines/invoice.types.ts';
import { isBillSettled, UNPAID_AFTER_DAYS } from '../../machines/subscription.decide.ts';
import { addDays, evolveSubscription } from '../../machines/subscription.evolve.ts';
import type { Subscription, SubscriptionEvent, SubscriptionStatus } from '../../machines/subscription.types.ts';
import { subscriptionIdOfInvoice } from '../actors/subscription-items.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import type { Collection, ReadDocument, ReadStore } from '../read-store/read-store.ts';
import { deterministicId } from '../shared/ids.ts';
import { COLLECTIONS, type CheckoutSessionDoc, type TimerDoc } from './collections.ts';
import { INVOICES, LEAVES_OPEN, type InvoiceDoc } from './invoices.projection.ts';
import type { Projection } from './projection.ts';
import { foldIntoDocument, type RecordDoc } from './record-document.ts';
import { setTimer } from './set-timer.ts';

export const SUBSCRIPTIONS = 'subscriptions';
/** Bill id (checkout session or invoice) -> the subscription it bills a period of. */
export const SUBSCRIPTION_BILLS = 'subscription_bills';
/** What the subscription billing process manager still has to do (see `subscription-billing.ts`). */
export const SUBSCRIPTION_WORK = 'subscription_work';

export const SUBSCRIPTION_TIMERS = {
  /** The first bill's due time (its checkout session's expiry, or its invoice's due date). */
  expireFirst: 'subscription.expire_first_payment',
  /** The period end: issue the next renewal invoice, or end a subscription canceled at period end. */
  renew: 'subscription.renew',
  /** The open renewal invoice's due time. */
  pastDue: 'subscription.past_due',
  /** Seven days after it became past due. */
  unpaid: 'subscription.unpaid',
} as const;

export type SubscriptionDoc = RecordDoc<Subscription>;
/** `first`: the bill of the first period (the creating checkout session or invoice). */
export type SubscriptionBillDoc = ReadDocument & { subscriptionId: string; first: boolean };
export type SubscriptionWorkDoc = ReadDocument & {
  /**
   * `void_first_invoice` and `close_first_session`: the subscription ended before it started
   * (expired unpaid, or ended by the merchant while incomplete), so its still payable first bill
   * is closed: an invoice is voided, a checkout session still open is expired or canceled.
   * `void_unpaid_invoice`: the subscription ended after it started, so its renewal invoice that
   * can still be paid and has received nothing is voided.
   * `delete_draft_invoice`: the subscription ended after it started, so its renewal invoice left a
   * draft (its issue stopped between creating and sending it) is deleted, as a merchant deletes a draft.
   * `record_deleted_renewal`: the merchant deleted such a draft while the subscription goes on, so
   * the subscription records that the period is not billed (instead of issuing it).
   */
  kind:
    | 'create_from_session'
    | 'create_from_invoice'
    | 'issue_invoice'
    | 'record_payment'
    | 'void_first_invoice'
    | 'close_first_session'
    | 'void_unpaid_invoice'
    | 'delete_draft_invoice'
    | 'record_deleted_renewal';
  subscriptionId: string;
  organizationId: string;
  environment: string;
  /** The checkout session or invoice the work is about. */
  sourceId: string;
  at: string;
};

const SESSION_PREFIX = 'checkout_session-';
const INVOICE_PREFIX = 'invoice-';
const SUBSCRIPTION_PREFIX = 'subscription-';

/** The id of the invoice the next renewal issues: derived from the latest bill, so a retried timer names the same invoice. */
export const renewalInvoiceIdOf = (s: Subscription): string =>
  s.latestInvoice ? nextInvoiceIdOf(s.latestInvoice.id) : deterministicId(`subscription:${s.id}:first-invoice`);

const ONGOING = new Set(['trialing', 'active', 'past_due', 'unpaid']);

/**
 * The timers a subscription in this state waits on, mirroring the decider: each is set only when
 * its command would do something when it falls due, so no spent timer lingers.
 */
export function subscriptionTimers(s: Subscription): { kind: string; fireAt: string; args?: Record<string, string> }[] {
  const timers: { kind: string; fireAt: string; args?: Record<string, string> }[] = [];
  const bill = s.latestInvoice;
  if (s.status === 'incomplete' && bill && bill.status === 'open')
    timers.push({ kind: SUBSCRIPTION_TIMERS.expireFirst, fireAt: bill.dueAt });
  if ((s.status === 'active' || s.status === 'trialing') && bill && bill.kind === 'invoice' && bill.status === 'open') {
    timers.push({ kind: SUBSCRIPTION_TIMERS.pastDue, fireAt: bill.dueAt });
  }
  if (s.status === 'past_due' && s.pastDueSince !== null)
    timers.push({ kind: SUBSCRIPTION_TIMERS.unpaid, fireAt: addDays(s.pastDueSince, UNPAID_AFTER_DAYS) });
  const renews = (s.status === 'active' || s.status === 'trialing') && isBillSettled(bill);
  if (ONGOING.has(s.status) && (renews || s.cancelAtPeriodEnd)) {
    timers.push({
      kind: SUBSCRIPTION_TIMERS.renew,
      fireAt: s.currentPeriodEnd,
      args: { invoiceId: renewalInvoiceIdOf(s) },
    });
  }
  return timers;
}

const voidWorkId = (invoiceId: string): string => `void_first_invoice:${invoiceId}`;
const voidUnpaidWorkId = (invoiceId: string): string => `void_unpaid_invoice:${invoiceId}`;
const deleteDraftWorkId = (invoiceId: string): string => `delete_draft_invoice:${invoiceId}`;
const closeWorkId = (sessionId: string): string => `close_first_session:${sessionId}`;
const issueWorkId = (invoiceId: string): string => `issue_invoice:${invoiceId}`;
const deletedRenewalWorkId = (invoiceId: string): string => `record_deleted_renewal:${invoiceId}`;

async function putWork(store: ReadStore, doc: SubscriptionWorkDoc): Promise<void> {
  await store.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK).put(doc);
}

/** A subscription in one of these statuses has ended for good (both are final states of its machine). */
export const ENDED_STATUSES: readonly SubscriptionStatus[] = ['canceled', 'incomplete_expired'];
const ENDED: ReadonlySet<SubscriptionStatus> = new Set(ENDED_STATUSES);
export const hasEnded = (s: Pick<Subscription, 'status'>): boolean => ENDED.has(s.status);

/** Invoice statuses that can still take a payment (the merchant may void both). */
const PAYABLE: ReadonlySet<InvoiceDoc['status']> = new Set<InvoiceDoc['status']>(['open', 'uncollectible']);

/**
 * Whether part of the invoice was paid: a checkout session opened to pay it received less than
 * its amount and waits for the rest (`incomplete`). The money is recorded on that session, and
 * the invoice becomes paid once the session completes.
 */
export async function isPartlyPaid(
  sessions: Collection<CheckoutSessionDoc>,
  invoice: { id: string; organizationId: string; environment: string },
): Promise<boolean> {
  const waiting = await sessions.find(
    {
      organizationId: invoice.organizationId,
      environment: invoice.environment,
      invoiceId: invoice.id,
      status: 'incomplete',
    },
    { limit: 1 },
  );
  return waiting.length > 0;
}

/**
 * The renewal invoice `invoiceId` of the ended subscription `s`, as the invoices read model shows
 * it, is removed the way a merchant removes an invoice: a draft (its issue stopped between creating
 * and sending it, so it was never mailed nor payable) is deleted, since only a draft can be; one
 * that can still be paid and has received nothing is voided; one partly paid stays open (see
 * `isPartlyPaid`).
 */
async function closeRenewal(store: ReadStore, s: Subscription, invoiceId: string, at: string): Promise<void> {
  const invoice = await store.collection<InvoiceDoc>(INVOICES).get(invoiceId);
  if (!invoice || invoice.deletedAt !== null) return;
  const draft = invoice.status === 'draft';
  if (
    !draft &&
    (!PAYABLE.has(invoice.status) ||
      (await isPartlyPaid(store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions), invoice)))
  )
    return;
  await putWork(store, {
    _id: draft ? deleteDraftWorkId(invoiceId) : voidUnpaidWorkId(invoiceId),
    kind: draft ? 'delete_draft_invoice' : 'void_unpaid_invoice',
    subscriptionId: s.id,
    organizationId: s.organizationId,
    environment: s.environment,
    sourceId: invoiceId,
    at,
  });
}

/** The invoice was paid or voided, or took a part payment: no void is left to do for it. */
async function dropVoidWork(store: ReadStore, invoiceId: string): Promise<void> {
  const work = store.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK);
  await work.delete(voidWorkId(invoiceId));
  await work.delete(voidUnpaidWorkId(invoiceId));
}

/** A bill of a subscription was paid: the subscription records it, unless it already has. */
async function billPaid(store: ReadStore, billId: string, at: string): Promise<void> {
  const link = await store.collection<SubscriptionBillDoc>(SUBSCRIPTION_BILLS).get(billId);
  if (!link) return;
  const subscription = await store.collection<SubscriptionDoc>(SUBSCRIPTIONS).get(link.subscriptionId);
  const bill = subscription?.latestInvoice;
  // A subscription that has ended (expired while incomplete, or canceled at any point) records no
  // payment (the decider ignores it): no work that would stay on the list for good.
  if (!subscription || bill?.id !== billId || bill.status === 'paid' || bill.status === 'expired') return;
  if (hasEnded(subscription)) return;
  await putWork(store, {
    _id: `record_payment:${billId}`,
    kind: 'record_payment',
    subscriptionId: subscription.id,
    organizationId: subscription.organizationId,
    environment: subscription.environment,
    sourceId: billId,
    at,
  });
}

async function applySessionEvent(event: RecordedEvent, store: ReadStore): Promise<void> {
  const typed = event as unknown as CheckoutSessionEvent;
  if (typed.type === 'CheckoutSessionCreated') {
    const session: CheckoutSession = typed.data.session;
    if (session.mode !== 'subscription' || !session.subscriptionId || session.invoiceId) return;
    if (await store.collection<SubscriptionDoc>(SUBSCRIPTIONS).get(session.subscriptionId)) return;
    await putWork(store, {
      _id: `create:${session.subscriptionId}`,
      kind: 'create_from_session',
      subscriptionId: session.subscriptionId,
      organizationId: session.organizationId,
      environment: session.environment,
      sourceId: session.id,
      at: session.createdAt,
    });
    return;
  }
  const id = event.streamId.slice(SESSION_PREFIX.length);
  // Paid (even partly), expired or canceled before the billing process closed it: nothing left to close.
  if (LEAVES_OPEN.has(typed.type))
    await store.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK).delete(closeWorkId(id));
  if (typed.type === 'CheckoutSessionPartiallyPaid') {
    // Part of an invoice paid before the billing process voided it: it stays open, with that money.
    const invoiceId = (await store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(id))?.invoiceId;
    if (invoiceId) await store.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK).delete(voidUnpaidWorkId(invoiceId));
  }
  if (typed.type === 'CheckoutSessionCompleted') await billPaid(store, id, typed.data.at);
}

async function applyInvoiceEvent(event: RecordedEvent, store: ReadStore): Promise<void> {
  const typed = event as unknown as InvoiceEvent;
  const id = event.streamId.slice(INVOICE_PREFIX.length);
  switch (typed.type) {
    case 'InvoiceCreated':
      return changedAfterEnd(store, id, event.metadata.occurredAt);
    case 'InvoiceFinalized': {
      // The first invoice of a recurring series creates its subscription; later ones belong to it.
      const invoice = await store.collection<InvoiceDoc>(INVOICES).get(id);
      if (invoice?.subscriptionId) {
        // No longer a draft: it can no longer be deleted (voided instead when its subscription has ended).
        await store.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK).delete(deleteDraftWorkId(id));
        return changedAfterEnd(store, id, typed.data.at);
      }
      if (!invoice || invoice.invoiceType !== 'recurring') return;
      const subscriptionId = subscriptionIdOfInvoice(id);
      if (await store.collection<SubscriptionDoc>(SUBSCRIPTIONS).get(subscriptionId)) return;
      await putWork(store, {
        _id: `create:${subscriptionId}`,
        kind: 'create_from_invoice',
        subscriptionId,
        organizationId: invoice.organizationId,
        environment: invoice.environment,
        sourceId: id,
        at: typed.data.at,
      });
      return;
    }
    case 'InvoiceSent':
      await store.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK).delete(issueWorkId(id));
      return;
    case 'InvoicePaid':
    case 'InvoiceMarkedAsPaid':
      // A renewal paid at its finalize (nothing to pay) is never sent: its issue is done.
      await store.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK).delete(issueWorkId(id));
      // Paid before the void of an ended subscription's invoice was done: it is not voided.
      await dropVoidWork(store, id);
      await billPaid(store, id, typed.data.at);
      return;
    case 'InvoiceVoided':
      await dropVoidWork(store, id);
      return;
    case 'InvoiceDeleted':
      await store.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK).delete(deleteDraftWorkId(id));
      return renewalDeleted(store, id, event.metadata.occurredAt);
    default:
      return;
  }
}

/**
 * A subscription left `incomplete`. The machine (`subscription.machine.ts`) takes three ways out,
 * each decided in `subscription.decide.ts`; no other command changes an incomplete subscription
 * (cancel at period end, resume and pause are refused; the renewal, past due and unpaid timers
 * answer nothing):
 * - `SubscriptionStarted` → `active`: the first bill was paid (`RecordSubscriptionPayment`);
 * - `SubscriptionIncompleteExpired` → `incomplete_expired`: its due time passed unpaid (the
 *   `ExpireFirstPayment` timer);
 * - `SubscriptionCanceled` → `canceled`: the merchant ended it at once (`EndSubscription`,
 *   `POST /subscriptions/:id/end`).
 * Stripe's rule for the two final ones: the first invoice of a subscription that never started is
 * voided, so the customer cannot pay for a subscription that will never start; a payment recorded
 * but not yet applied is dropped (the decider ignores it). A checkout session as first bill that
 * is still `open` is closed the same way (the billing process expires or cancels it); one that
 * has left `open` (paid, partly paid, expired) is left as it is.
 */
async function leftIncomplete(store: ReadStore, next: Subscription): Promise<void> {
  const bill = next.latestInvoice;
  if (next.status === 'active' || next.status === 'trialing' || !bill) return;
  await store.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK).delete(`record_payment:${bill.id}`);
  const close = (kind: SubscriptionWorkDoc['kind'], _id: string): Promise<void> =>
    putWork(store, {
      _id,
      kind,
      subscriptionId: next.id,
      organizationId: next.organizationId,
      environment: next.environment,
      sourceId: bill.id,
      at: next.updatedAt,
    });
  if (bill.kind === 'invoice') {
    const status = (await store.collection<InvoiceDoc>(INVOICES).get(bill.id))?.status;
    if (status && PAYABLE.has(status)) await close('void_first_invoice', voidWorkId(bill.id));
  } else if (
    (await store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(bill.id))?.status === 'open'
  ) {
    await close('close_first_session', closeWorkId(bill.id));
  }
}

/**
 * A renewal invoice was created, or opened (finalized, by the billing process's send or by the
 * merchant), after its subscription ended: its issue was under way when the end came (the billing
 * process had read the work before the end was projected). It is closed as if it had been there at
 * the end: a draft (the issue crashed before its send) is deleted, an open one voided.
 */
async function changedAfterEnd(store: ReadStore, invoiceId: string, at: string): Promise<void> {
  const link = await store.collection<SubscriptionBillDoc>(SUBSCRIPTION_BILLS).get(invoiceId);
  if (!link || link.first) return;
  const subscription = await store.collection<SubscriptionDoc>(SUBSCRIPTIONS).get(link.subscriptionId);
  if (subscription && hasEnded(subscription)) await closeRenewal(store, subscription, invoiceId, at);
}

/**
 * A renewal invoice was deleted while a draft (only a draft can be). By the merchant while its
 * subscription goes on (its issue stopped between creating and sending it, and the merchant
 * removed the draft): its issue work goes, it is never issued again, and the subscription records
 * that the period is not billed (`RecordRenewalInvoiceDeleted`: no past due for it, the next
 * period is billed at its end). The subscription of a deleted first bill, or one that has ended
 * (the billing process deletes its drafts itself), has nothing to record.
 */
async function renewalDeleted(store: ReadStore, invoiceId: string, at: string): Promise<void> {
  const work = store.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK);
  await work.delete(issueWorkId(invoiceId));
  const link = await store.collection<SubscriptionBillDoc>(SUBSCRIPTION_BILLS).get(invoiceId);
  if (!link || link.first) return;
  const subscription = await store.collection<SubscriptionDoc>(SUBSCRIPTIONS).get(link.subscriptionId);
  const bill = subscription?.latestInvoice;
  if (!subscription || hasEnded(subscription) || bill?.id !== invoiceId || isBillSettled(bill)) return;
  await putWork(store, {
    _id: deletedRenewalWorkId(invoiceId),
    kind: 'record_deleted_renewal',
    subscriptionId: subscription.id,
    organizationId: subscription.organizationId,
    environment: subscription.environment,
    sourceId: invoiceId,
    at,
  });
}

/**
 * A subscription that had started ended: canceled at once by the merchant (`EndSubscription`,
 * `POST /subscriptions/:id/end`, from trialing, active, past_due, unpaid or paused) or at the end
 * of its period (`CancelSubscription` then the renewal timer's `RenewSubscription`). Its renewal
 * invoices are billed for periods that will not be served: one not issued yet is not issued (its
 * work goes), one left a draft by a crash of its issue is deleted, and each that can still be paid
 * and has received nothing is voided (by the billing process, with the invoice's own delete or void
 * command). Only the latest can be unpaid (a renewal is issued once its predecessor is paid), but
 * every renewal is looked at.
 */
async function endedAfterStart(store: ReadStore, next: Subscription): Promise<void> {
  const work = store.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK);
  for (const bill of await store
    .collection<SubscriptionBillDoc>(SUBSCRIPTION_BILLS)
    .find({ subscriptionId: next.id, first: false })) {
    await work.delete(issueWorkId(bill._id));
    await work.delete(deletedRenewalWorkId(bill._id));
    await closeRenewal(store, next, bill._id, next.updatedAt);
  }
}

async function applySubscriptionEvent(event: RecordedEvent, store: ReadStore): Promise<void> {
  const subscriptions = store.collection<SubscriptionDoc>(SUBSCRIPTIONS);
  const work = store.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK);
  const bills = store.collection<SubscriptionBillDoc>(SUBSCRIPTION_BILLS);
  const typed = event as unknown as SubscriptionEvent;
  const id = event.streamId.slice(SUBSCRIPTION_PREFIX.length);
  const before = (await subscriptions.get(id))?.status;
  const next = await foldIntoDocument<Subscription, SubscriptionEvent>(subscriptions, id, event, evolveSubscription);
  if (!next) return;

  switch (typed.type) {
    case 'SubscriptionCreated': {
      await work.delete(`create:${id}`);
      const bill = next.latestInvoice;
      if (bill) {
        await bills.put({ _id: bill.id, subscriptionId: id, first: true });
        // Paid before the subscription existed (a fast payer, or a crash in between): record it now.
        const paid =
          bill.kind === 'checkout_session'
            ? (await store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(bill.id))?.status ===
              'complete'
            : (await store.collection<InvoiceDoc>(INVOICES).get(bill.id))?.status === 'paid';
        if (paid) await billPaid(store, bill.id, next.createdAt);
      }
      break;
    }
    case 'RenewalInvoiceIssued':
      await bills.put({ _id: typed.data.invoice.id, subscriptionId: id, first: false });
      await work.put({
        _id: issueWorkId(typed.data.invoice.id),
        kind: 'issue_invoice',
        subscriptionId: id,
        organizationId: next.organizationId,
        environment: next.environment,
        sourceId: typed.data.invoice.id,
        at: typed.data.at,
      });
      break;
    case 'SubscriptionStarted':
    case 'RenewalPaid':
      await work.delete(`record_payment:${typed.data.invoiceId}`);
      break;
    case 'RenewalInvoiceDeleted':
      await work.delete(deletedRenewalWorkId(typed.data.invoiceId));
      break;
    default:
      break;
  }
  if (before === 'incomplete' && next.status !== 'incomplete') await leftIncomplete(store, next);
  else if (before !== undefined && !ENDED.has(before) && ENDED.has(next.status)) await endedAfterStart(store, next);
  // Ended with a payment of its latest bill not yet recorded: the decider would ignore it now.
  if (typed.type === 'SubscriptionCanceled' && next.latestInvoice)
    await work.delete(`record_payment:${next.latestInvoice.id}`);

  const timers = store.collection<TimerDoc>(COLLECTIONS.timers);
  const wanted = subscriptionTimers(next);
  for (const kind of Object.values(SUBSCRIPTION_TIMERS)) {
    const timer = wanted.find((w) => w.kind === kind);
    await setTimer(
      timers,
      `${kind}:${id}`,
      timer
        ? {
            kind,
            recordId: id,
            organizationId: next.organizationId,
            environment: next.environment,
            fireAt: Date.parse(timer.fireAt),
            version: event.revision,
            ...(timer.args ? { args: timer.args } : {}),
          }
        : null,
    );
  }
}

/**
 * Subscriptions (one document per subscription, the `evolveSubscription` result), the index from
 * each bill to its subscription, the subscription's durable timers, and the work list of the
 * subscription billing process manager: subscriptions to create (from a `mode: subscription`
 * checkout session, or the first invoice of a recurring series), renewal invoices to issue,
 * paid bills to record, the first bill of a subscription that never started to close (its
 * invoice to void, its checkout session to expire or cancel), and the unpaid renewal invoices of a
 * subscription that ended after it started to void (or, left a draft, to delete), and the
 * renewal drafts the merchant deleted while their subscription went on, to record on it.
 * Must run after the checkout sessions and invoices projections (it reads their documents).
 */
export const subscriptionsProjection: Projection = {
  name: 'subscriptions',
  // 2: an ended subscription's unpaid renewal invoices are work to void, and no longer to issue.
  // 3: its renewal drafts are work to delete.
  // 4: a renewal draft the merchant deleted is no longer work to issue, but a deletion to record on its going subscription.
  // 5: a paid renewal invoice is no longer work to issue (one with nothing to pay is paid at its finalize, never sent).
  version: 5,
  collections: [SUBSCRIPTIONS, SUBSCRIPTION_BILLS, SUBSCRIPTION_WORK],
  categories: ['subscription', 'checkout_session', 'invoice'],
  async apply(event, store) {
    if (event.streamId.startsWith(SUBSCRIPTION_PREFIX)) return applySubscriptionEvent(event, store);
    if (event.streamId.startsWith(SESSION_PREFIX)) return applySessionEvent(event, store);
    if (event.streamId.startsWith(INVOICE_PREFIX)) return applyInvoiceEvent(event, store);
  },
};

/** The subscription as merchants see it (API responses and webhook payloads), with the reference API's names. */
export function publicSubscription(subscription: Subscription & { _id?: string; _revision?: number }) {
  const { environment: _environment, _id, _revision, items, ...rest } = subscription;
  return {
    ...rest,
    object: 'subscription' as const,
    livemode: subscription.environment === 'live',
    paymentMethodTypes: ['wallet'],
    lineItems: {
      object: 'list' as const,
      data: items.map((item) => ({
        quantity: item.quantity,
        price: {
          id: item.priceId,
          productId: item.productId,
          type: 'recurring' as const,
          currency: item.currency,
          unitAmount: item.unitAmount,
          interval: item.interval,
          intervalCount: item.intervalCount,
          // As the reference nests it; the name is the one the subscription began with.
          product: { id: item.productId, name: item.productName ?? null },
        },
        amountSubtotal: (BigInt(item.unitAmount) * BigInt(item.quantity)).toString(),
        amountTotal: (BigInt(item.unitAmount) * BigInt(item.quantity)).toString(),
        currency: item.currency,
      })),
    },
    items,
  };
}
