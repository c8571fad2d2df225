import { nextInvoiceIdOf } from '../../machines/invoice.decide.ts';
import {
  billLapsesAt,
  letsNextRenewalIssue,
  nextBillToLapse,
  UNPAID_AFTER_DAYS,
} from '../../machines/subscription.decide.ts';
import { addDays, evolveSubscription } from '../../machines/subscription.evolve.ts';
import type { Subscription, SubscriptionBill, SubscriptionEvent } from '../../machines/subscription.types.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { deterministicId } from '../shared/ids.ts';
import { COLLECTIONS, type TimerDoc } from './collections.ts';
import type { Projection } from './projection.ts';
import { foldIntoDocument, type RecordDoc } from './record-document.ts';
import { setTimer } from './set-timer.ts';

export const SUBSCRIPTIONS = 'subscriptions';

export const SUBSCRIPTION_TIMERS = {
  /** The first bill's due time (its checkout session's expiry, or its invoice's due date). */
  expireFirst: 'subscription.expire_first_payment',
  /** The period end: issue the next renewal invoice, or end a subscription canceled at period end. */
  renew: 'subscription.renew',
  /** The earliest due time of the open renewal invoices. */
  pastDue: 'subscription.past_due',
  /** Seven days after it became past due. */
  unpaid: 'subscription.unpaid',
} as const;

/** One pause of a subscription; `resumedAt` is null while it lasts. */
export type SubscriptionPause = { pausedAt: string; resumedAt: string | null };

/**
 * One spell of a renewal unpaid past its due time: from `since` (past due) until nothing was overdue
 * any more (paid, voided, deleted, finalized anew) or the subscription ended, null while it lasts;
 * `unpaidAt` when it was marked unpaid during it, if it was.
 */
export type SubscriptionPastDue = { since: string; unpaidAt: string | null; until: string | null };

/**
 * The read model's subscription: the record, and what the subscriptions report needs of its past
 * that the record does not keep: when its first bill was paid (`startedAt`, null while incomplete or
 * trialing), every pause (the record keeps only the current one's `pausedAt`) and every past-due
 * spell (the record clears `pastDueSince` once it is over). Not shown to merchants.
 */
export type SubscriptionRecord = Subscription & {
  startedAt?: string | null;
  pauses?: SubscriptionPause[];
  pastDues?: SubscriptionPastDue[];
};
export type SubscriptionDoc = RecordDoc<SubscriptionRecord>;

function pausesAfter(pauses: SubscriptionPause[], event: SubscriptionEvent): SubscriptionPause[] {
  if (event.type === 'SubscriptionPaused') return [...pauses, { pausedAt: event.data.at, resumedAt: null }];
  if (event.type === 'SubscriptionResumed')
    return pauses.map((p) => (p.resumedAt === null ? { ...p, resumedAt: event.data.at } : p));
  return pauses;
}

/** The past-due spells once `next` is the subscription: one begins as it goes past due, ends as it leaves past_due or unpaid. */
function pastDuesAfter(spells: SubscriptionPastDue[], next: Subscription): SubscriptionPastDue[] {
  const last = spells.at(-1);
  const open = last?.until === null ? last : null;
  const before = open ? spells.slice(0, -1) : spells;
  if (next.status !== 'past_due' && next.status !== 'unpaid')
    return open ? [...before, { ...open, until: next.updatedAt }] : spells;
  const spell = open ?? { since: next.pastDueSince ?? next.updatedAt, unpaidAt: null, until: null };
  return [...before, { ...spell, unpaidAt: spell.unpaidAt ?? (next.status === 'unpaid' ? next.updatedAt : null) }];
}

/**
 * When its first bill was paid: `SubscriptionStarted`, or for a trial whose first invoice went past
 * due, the `RenewalPaid` that settled it late. Never set for one that ended without paying.
 */
const startedAtAfter = (startedAt: string | null, event: SubscriptionEvent): string | null =>
  startedAt ?? (event.type === 'SubscriptionStarted' || event.type === 'RenewalPaid' ? event.data.at : null);

const evolveRecord = (record: SubscriptionRecord | null, event: SubscriptionEvent): SubscriptionRecord | null => {
  const next = evolveSubscription(record, event);
  return (
    next && {
      ...next,
      startedAt: startedAtAfter(record?.startedAt ?? null, event),
      pauses: pausesAfter(record?.pauses ?? [], event),
      pastDues: pastDuesAfter(record?.pastDues ?? [], next),
    }
  );
};

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
    timers.push({ kind: SUBSCRIPTION_TIMERS.expireFirst, fireAt: billLapsesAt(bill) });
  const lapsing = nextBillToLapse(s);
  if ((s.status === 'active' || s.status === 'trialing') && lapsing)
    timers.push({ kind: SUBSCRIPTION_TIMERS.pastDue, fireAt: billLapsesAt(lapsing) });
  if (s.status === 'past_due' && s.pastDueSince !== null)
    timers.push({ kind: SUBSCRIPTION_TIMERS.unpaid, fireAt: addDays(s.pastDueSince, UNPAID_AFTER_DAYS) });
  const renews = (s.status === 'active' || s.status === 'trialing') && letsNextRenewalIssue(bill);
  if (ONGOING.has(s.status) && (renews || s.cancelAtPeriodEnd)) {
    timers.push({
      kind: SUBSCRIPTION_TIMERS.renew,
      fireAt: s.currentPeriodEnd,
      args: { invoiceId: renewalInvoiceIdOf(s) },
    });
  }
  return timers;
}

async function applySubscriptionEvent(event: RecordedEvent, store: ReadStore): Promise<void> {
  const subscriptions = store.collection<SubscriptionDoc>(SUBSCRIPTIONS);
  const id = event.streamId.slice(SUBSCRIPTION_PREFIX.length);
  await foldIntoDocument<SubscriptionRecord, SubscriptionEvent>(subscriptions, id, event, evolveRecord, (next) =>
    setSubscriptionTimers(store, id, next, event.revision),
  );
}

async function setSubscriptionTimers(store: ReadStore, id: string, next: Subscription, version: number) {
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
            version,
            ...(timer.args ? { args: timer.args } : {}),
          }
        : null,
    );
  }
}

/**
 * Subscriptions (one document per subscription, the `evolveSubscription` result) and their durable
 * timers. Creating subscriptions, issuing renewals and what a subscription's bills and its end call
 * for are the subscription billing workflow's (`workflows/subscription-billing.ts`).
 */
export const subscriptionsProjection: Projection = {
  name: 'subscriptions',
  // 2: an ended subscription's unpaid renewal invoices are work to void, and no longer to issue.
  // 3: its renewal drafts are work to delete.
  // 4: a renewal draft the merchant deleted is no longer work to issue, but a deletion to record on its going subscription.
  // 5: a paid renewal invoice is no longer work to issue (one with nothing to pay is paid at its finalize, never sent).
  // 6: payments to record and bills to close are the subscription billing workflow's, no longer work.
  // 7: subscriptions to create and renewals to issue are the workflow's too (no work list, no bill index).
  // 8: each subscription keeps its pauses (for the subscriptions report).
  // 9: an invoice bill's expiry and past-due timers fire once the invoice is overdue (its due day ended).
  // 10: ... at its due instant, midnight included (only a due date given as a day lasts all that day).
  // 11: ... except an invoice bill of events an older Weir wrote (no `dueIsInstant`): due at midnight, due all that day.
  // 12: each subscription keeps when its first bill was paid (`startedAt`) and its past-due spells (for the report).
  // 13: a subscription follows the earlier bills still owed when a later period is billed: the past-due timer is their earliest due.
  version: 13,
  collections: [SUBSCRIPTIONS],
  categories: ['subscription'],
  async apply(event, store) {
    if (event.streamId.startsWith(SUBSCRIPTION_PREFIX)) return applySubscriptionEvent(event, store);
  },
};

/**
 * A bill as merchants see it: `id` an invoice's, as `latestInvoiceId` (null for the first checkout
 * session, which the invoices route does not know), the session named as `checkoutSessionId`.
 */
// The late transfers it counted are the subscription's bookkeeping (each once), not shown.
function publicBill({ id, lateTransferIds: _counted, ...bill }: SubscriptionBill) {
  return bill.kind === 'invoice'
    ? { id, checkoutSessionId: null, ...bill }
    : { id: null, checkoutSessionId: id, ...bill };
}

/** The subscription as merchants see it (API responses and webhook payloads), with the reference API's names. */
export function publicSubscription(subscription: SubscriptionRecord & { _id?: string; _revision?: number }) {
  const {
    environment: _environment,
    _id,
    _revision,
    startedAt: _startedAt,
    pauses: _pauses,
    pastDues: _pastDues,
    periodAmountDue: _due,
    earlierBills: _earlier,
    notStarted: _notStarted,
    items,
    ...rest
  } = subscription;
  return {
    ...rest,
    latestInvoice: subscription.latestInvoice && publicBill(subscription.latestInvoice),
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
