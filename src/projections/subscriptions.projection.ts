import type { CheckoutSession, CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import { nextInvoiceIdOf } from '../../machines/invoice.decide.ts';
import type { InvoiceEvent } from '../../machines/invoice.types.ts';
import {
  ENDED_STATUSES,
  isBillSettled,
  subscriptionIdOfInvoice,
  UNPAID_AFTER_DAYS,
} from '../../machines/subscription.decide.ts';
import { addDays, evolveSubscription } from '../../machines/subscription.evolve.ts';
import type { Subscription, SubscriptionEvent, SubscriptionStatus } from '../../machines/subscription.types.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import type { ReadDocument, ReadStore } from '../read-store/read-store.ts';
import { deterministicId } from '../shared/ids.ts';
import { COLLECTIONS, type TimerDoc } from './collections.ts';
import { INVOICES, type InvoiceDoc } from './invoices.projection.ts';
import type { Projection } from './projection.ts';
import { foldIntoDocument, type RecordDoc } from './record-document.ts';
import { setTimer } from './set-timer.ts';

export const SUBSCRIPTIONS = 'subscriptions';
/** Bill id (checkout session or invoice) -> the subscription it bills a period of. */
export const SUBSCRIPTION_BILLS = 'subscription_bills';
/** What the subscription billing work queue still has to do (see `actors/subscription-billing.ts`). */
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
  kind: 'create_from_session' | 'create_from_invoice' | 'issue_invoice';
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

const issueWorkId = (invoiceId: string): string => `issue_invoice:${invoiceId}`;

async function putWork(store: ReadStore, doc: SubscriptionWorkDoc): Promise<void> {
  await store.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK).put(doc);
}

const ENDED: ReadonlySet<SubscriptionStatus> = new Set(ENDED_STATUSES);

async function applySessionEvent(event: RecordedEvent, store: ReadStore): Promise<void> {
  const typed = event as unknown as CheckoutSessionEvent;
  if (typed.type !== 'CheckoutSessionCreated') return;
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
}

async function applyInvoiceEvent(event: RecordedEvent, store: ReadStore): Promise<void> {
  const typed = event as unknown as InvoiceEvent;
  const id = event.streamId.slice(INVOICE_PREFIX.length);
  switch (typed.type) {
    case 'InvoiceFinalized': {
      // The first invoice of a recurring series creates its subscription; later ones belong to it.
      const invoice = await store.collection<InvoiceDoc>(INVOICES).get(id);
      if (!invoice || invoice.subscriptionId || invoice.invoiceType !== 'recurring') return;
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
    // Sent, paid at its finalize (nothing to pay: never sent), or deleted as a draft by the merchant:
    // its issue is done (the subscription billing workflow records a deletion on the subscription).
    case 'InvoiceSent':
    case 'InvoicePaid':
    case 'InvoiceMarkedAsPaid':
    case 'InvoiceDeleted':
      await store.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK).delete(issueWorkId(id));
      return;
    default:
      return;
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
      if (bill) await bills.put({ _id: bill.id, subscriptionId: id, first: true });
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
    default:
      break;
  }
  // Ended: a renewal not issued yet is not issued (the subscription billing workflow removes those issued).
  if (before !== undefined && !ENDED.has(before) && ENDED.has(next.status))
    for (const bill of await bills.find({ subscriptionId: id, first: false })) await work.delete(issueWorkId(bill._id));

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
 * subscription billing work queue: subscriptions to create (from a `mode: subscription` checkout
 * session, or the first invoice of a recurring series) and renewal invoices to issue. What the
 * subscription's bills and its end call for (payments to record, bills to close) is the
 * subscription billing workflow's (`workflows/subscription-billing.ts`).
 * Must run after the invoices projection (it reads their documents).
 */
export const subscriptionsProjection: Projection = {
  name: 'subscriptions',
  // 2: an ended subscription's unpaid renewal invoices are work to void, and no longer to issue.
  // 3: its renewal drafts are work to delete.
  // 4: a renewal draft the merchant deleted is no longer work to issue, but a deletion to record on its going subscription.
  // 5: a paid renewal invoice is no longer work to issue (one with nothing to pay is paid at its finalize, never sent).
  // 6: payments to record and bills to close are the subscription billing workflow's, no longer work.
  version: 6,
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
