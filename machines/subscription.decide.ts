import type { Environment } from '../src/event-store/event-store.ts';
import { InvalidStateError, ValidationError } from '../src/shared/errors.ts';
import { deterministicId } from '../src/shared/ids.ts';
import { addDays, addInterval, periodEndAfter } from './billing-calendar.ts';
import { dueDaysAfter, overdueFrom } from './invoice.due.ts';
import type { SubscriptionSnapshot } from './subscription.aggregate.ts';
import { billOf, billsOf } from './subscription.evolve.ts';
import type {
  Subscription,
  SubscriptionBill,
  SubscriptionEvent,
  SubscriptionItem,
  SubscriptionStatus,
} from './subscription.types.ts';

/**
 * Commands of a subscription. Merchant operations (cancel, end, resume, pause) are refused with
 * `InvalidStateError` when the status does not allow them. Payments and timers report facts from
 * elsewhere: they never fail on status, they produce nothing when they no longer apply (a timer
 * that fires early or twice, a payment that arrives after the end).
 */
export type SubscriptionCommand =
  | { type: 'CreateSubscription'; subscription: Subscription }
  /**
   * The payer applied a promotion code to the checkout session of the first bill: the bill asks
   * what the session asks, less `amountDiscount` (renewals are billed in full).
   */
  | { type: 'RecordFirstBillDiscount'; invoiceId: string; promotionCodeId: string; amountDiscount: string }
  /** A bill (first checkout session or invoice, or a renewal invoice, the latest or an earlier one still owed) was paid. */
  | { type: 'RecordSubscriptionPayment'; invoiceId: string }
  /**
   * Money reached the first checkout session `invoiceId` after it ended (a late payment of that session,
   * `transferId`, `amount` 10^8-scaled). Recorded as owed back only while the subscription has ended without
   * starting (that session still its bill, unpaid): it never revives it; otherwise it is nothing here.
   */
  | { type: 'RecordFirstBillLatePayment'; invoiceId: string; transferId: string; amount: string }
  /**
   * Timer at the first bill's due time (the checkout session's expiry). The timer sends it only once
   * no payment to the first bill is pending on chain or paid but unrecorded (see `subscription-timers.ts`):
   * the bill's state is in the logs of its checkout sessions, not in the subscription's. `amountReceived`:
   * what a part-paid first checkout session received (10^8), recorded on the expired bill as owed back.
   */
  | { type: 'ExpireFirstPayment'; amountReceived?: string }
  /** Timer at currentPeriodEnd: issue the next period's invoice, or end a subscription canceled at period end. */
  | { type: 'RenewSubscription'; invoiceId: string }
  /**
   * The merchant deleted the latest renewal's invoice while it was a draft (its issue stopped
   * between creating and sending it): that period is not billed.
   */
  | { type: 'RecordRenewalInvoiceDeleted'; invoiceId: string }
  /**
   * The merchant voided the latest renewal's open invoice while the subscription goes on: that
   * period is not billed, as for a deleted draft (else a past due subscription would wait for ever
   * on an invoice no one can pay).
   */
  | { type: 'RecordRenewalInvoiceVoided'; invoiceId: string }
  /**
   * Weir could not finalize the latest renewal's invoice (it stays a draft, see `InvoiceFinalizationFailed`):
   * the customer was sent no bill, so it does not lapse, and no `past_due` follows it.
   */
  | { type: 'RecordRenewalInvoiceNotFinalized'; invoiceId: string }
  /**
   * The merchant finalized that draft: the bill is owed from then on, due at `dueAt` (the invoice's due
   * date then). Also for a bill missed while its invoice was such a draft (never sent): it is owed again,
   * not overdue, and the subscription is active again.
   */
  | { type: 'RecordRenewalInvoiceFinalized'; invoiceId: string; dueAt: string }
  /** Timer at the earliest due time of the open renewal invoices. */
  | { type: 'MarkRenewalPaymentMissed' }
  /** Timer at pastDueSince + UNPAID_AFTER_DAYS. */
  | { type: 'MarkSubscriptionUnpaid' }
  /** Cancel at the end of the current period. */
  | { type: 'CancelSubscription'; comment: string | null }
  /** Cancel at once. */
  | { type: 'EndSubscription'; comment: string | null }
  /** Revoke a pending cancel-at-period-end, or resume a paused subscription. */
  | { type: 'ResumeSubscription' }
  | { type: 'PauseSubscription' };

export type SubscriptionCommandType = SubscriptionCommand['type'];
export type SubscriptionDecideContext = { now: string };

/** Days a subscription stays past due before it is marked unpaid. */
export const UNPAID_AFTER_DAYS = 7;

/**
 * Whether nothing is owed on the latest bill: none yet (trialing), paid, or a renewal whose
 * invoice the merchant deleted (a draft) or voided. Only then is the next period's renewal issued.
 */
export const isBillSettled = (bill: SubscriptionBill | null): boolean =>
  !bill || bill.status === 'paid' || bill.status === 'deleted' || bill.status === 'void';

/**
 * Whether the next period's renewal is issued at the period end: unless the latest bill went unpaid
 * (missed, or expired). Neither an open bill within its terms nor a draft Weir could not finalize
 * stops the calendar (Stripe's rule): each period gets its own invoice at its end, even with terms
 * longer than a period, and the earlier bill stays owed (`earlierBills`); a draft stays the merchant's to finalize.
 */
export const letsNextRenewalIssue = (bill: SubscriptionBill | null): boolean =>
  bill?.status !== 'missed' && bill?.status !== 'expired';

/** The earliest of the subscription's open invoice bills to lapse (the past-due timer's), or null. */
export const nextBillToLapse = (s: Subscription): SubscriptionBill | null =>
  billsOf(s)
    .filter((bill) => bill.kind === 'invoice' && bill.status === 'open')
    .reduce<SubscriptionBill | null>(
      (first, bill) => (first && Date.parse(billLapsesAt(first)) <= Date.parse(billLapsesAt(bill)) ? first : bill),
      null,
    );

/** A subscription in one of these statuses has ended for good (both are final states of its machine). */
export const ENDED_STATUSES: readonly SubscriptionStatus[] = ['canceled', 'incomplete_expired'];
const ENDED: ReadonlySet<SubscriptionStatus> = new Set(ENDED_STATUSES);
export const hasEnded = (s: Pick<Subscription, 'status'>): boolean => ENDED.has(s.status);

/**
 * Whether `bill` bills a period the subscription served: one that began before its end (every bill
 * of a subscription that goes on). Such a renewal stays owed at the end, so one still being issued then is issued.
 */
export const billsServedPeriod = (
  s: Pick<Subscription, 'endedAt'>,
  bill: Pick<SubscriptionBill, 'periodStart'>,
): boolean => s.endedAt === null || Date.parse(bill.periodStart) < Date.parse(s.endedAt);

/** The subscription a recurring invoice (the first of its series) creates. */
export const subscriptionIdOfInvoice = (invoiceId: string): string =>
  deterministicId(`subscription:invoice:${invoiceId}`);

/** Statuses in which a renewal's invoice may be issued, or finalized by the merchant after Weir could not. */
const BILLING: ReadonlySet<SubscriptionStatus> = new Set<SubscriptionStatus>(['trialing', 'active', 'paused']);

/** Statuses in which a subscription can be canceled at period end (the dashboard offers it only then). */
export const CANCELABLE_AT_PERIOD_END: ReadonlySet<SubscriptionStatus> = new Set<SubscriptionStatus>([
  'trialing',
  'active',
  'past_due',
  'unpaid',
]);

const statusOf = (snapshot: SubscriptionSnapshot): SubscriptionStatus | 'new' =>
  snapshot.value as SubscriptionStatus | 'new';
const reached = (now: string, at: string): boolean => Date.parse(now) >= Date.parse(at);

/**
 * When an unpaid bill makes the subscription past due (renewal) or incomplete_expired (first): a
 * checkout session at its expiry, an invoice once it is overdue (`overdueFrom`): at its due instant,
 * whatever the time of day, so a renewal at midnight lapses as one at noon does.
 */
export const billLapsesAt = (bill: Pick<SubscriptionBill, 'kind' | 'dueAt'>): string =>
  bill.kind === 'invoice' ? new Date(overdueFrom(bill.dueAt)).toISOString() : bill.dueAt;

function requireSubscription(snapshot: SubscriptionSnapshot): Subscription {
  const subscription = snapshot.context.subscription;
  if (!subscription) throw new InvalidStateError('subscription does not exist', 'resource_missing');
  return subscription;
}

const refuse = (status: string, why: string): never => {
  throw new InvalidStateError(`subscription is ${status}; ${why}`);
};

/**
 * The renewal invoice of the period that contains `now`, counting from the current period's end.
 * Normally that is the period starting at the current period's end; periods that passed without
 * a renewal (the subscription was past due or unpaid until its overdue bill was paid) are not
 * billed after the fact. The invoice is due `daysUntilDue` days after it is issued (0: the end of that
 * day, see `dueDaysAfter`; a renewal issued before this was due at its issue instant and keeps it).
 */
function renewalInvoice(s: Subscription, invoiceId: string, now: string): SubscriptionBill {
  let periodStart = s.currentPeriodEnd;
  let periodEnd = periodEndAfter(s.billingCycleAnchor, s.interval, s.intervalCount, periodStart);
  while (reached(now, periodEnd)) {
    periodStart = periodEnd;
    periodEnd = periodEndAfter(s.billingCycleAnchor, s.interval, s.intervalCount, periodStart);
  }
  return {
    id: invoiceId,
    kind: 'invoice',
    amountDue: s.periodAmountDue ?? s.amountTotal,
    periodStart,
    periodEnd,
    issuedAt: now,
    dueAt: dueDaysAfter(Date.parse(now), s.daysUntilDue),
    status: 'open',
    paidAt: null,
  };
}

function decidePayment(
  s: Subscription,
  status: SubscriptionStatus,
  invoiceId: string,
  now: string,
): SubscriptionEvent[] {
  const bill = billOf(s, invoiceId);
  if (
    !bill ||
    bill.status === 'paid' ||
    bill.status === 'expired' ||
    bill.status === 'deleted' ||
    bill.status === 'void'
  )
    return [];
  // A trialing subscription that went past due before it was paid starts at its first payment.
  if (s.notStarted && status !== 'incomplete_expired' && status !== 'canceled')
    return [{ type: 'SubscriptionStarted', data: { invoiceId, at: now } }];
  switch (status) {
    case 'incomplete':
    case 'trialing':
      return [{ type: 'SubscriptionStarted', data: { invoiceId, at: now } }];
    case 'active':
    case 'past_due':
    case 'unpaid':
    case 'paused':
      return [{ type: 'RenewalPaid', data: { invoiceId, at: now } }];
    case 'incomplete_expired':
    case 'canceled':
      // Too late: the checkout session or invoice records it as a late payment.
      return [];
  }
}

/** Statuses in which the first bill can still be the latest (it is paid before any renewal). */
const DISCOUNTABLE: ReadonlySet<SubscriptionStatus> = new Set<SubscriptionStatus>(['incomplete', 'active', 'paused']);

/**
 * The first bill's discount, once: only while that checkout session is still the latest bill of a
 * subscription that has not ended (an ended one records nothing more; its machine is final).
 * Exported for the `customer.subscription.created` payload, which shows a code applied before the creation.
 */
export function decideFirstBillDiscount(
  s: Subscription,
  status: SubscriptionStatus,
  command: Extract<SubscriptionCommand, { type: 'RecordFirstBillDiscount' }>,
  now: string,
): SubscriptionEvent[] {
  const bill = s.latestInvoice;
  if (!DISCOUNTABLE.has(status) || !bill || bill.id !== command.invoiceId || bill.kind !== 'checkout_session')
    return [];
  if (bill.amountDiscount !== undefined) return [];
  if (!DIGITS.test(command.amountDiscount))
    throw new ValidationError('amountDiscount', 'must be a non-negative integer string, scaled by 10^8');
  const left = BigInt(bill.amountDue) - BigInt(command.amountDiscount);
  const amountDue = (left > 0n ? left : 0n).toString();
  const { invoiceId, promotionCodeId, amountDiscount } = command;
  return [{ type: 'FirstBillDiscounted', data: { invoiceId, promotionCodeId, amountDiscount, amountDue, at: now } }];
}

function decideRenewal(
  s: Subscription,
  status: SubscriptionStatus,
  invoiceId: string,
  now: string,
): SubscriptionEvent[] {
  if (!reached(now, s.currentPeriodEnd)) return [];
  const ongoing = status === 'trialing' || status === 'active' || status === 'past_due' || status === 'unpaid';
  if (!ongoing) return [];
  if (s.cancelAtPeriodEnd)
    return [{ type: 'SubscriptionCanceled', data: { atPeriodEnd: true, comment: null, at: now } }];
  // Past due and unpaid subscriptions get no new invoice until the overdue one is paid. An active one
  // bills each period at its end, an earlier bill still open within its terms or not; one that has just
  // lapsed waits for its past-due timer (the period is billed once the subscription is active again).
  if (status === 'past_due' || status === 'unpaid') return [];
  if (!letsNextRenewalIssue(s.latestInvoice)) return [];
  const lapsing = nextBillToLapse(s);
  if (lapsing && reached(now, billLapsesAt(lapsing))) return [];
  return [
    { type: 'RenewalInvoiceIssued', data: { invoice: renewalInvoice(s, invoiceId, now), at: now, dueIsInstant: true } },
  ];
}

/**
 * Decide which facts a command produces. Repeating a command that already took effect produces
 * no events, so redelivered messages and timers that fire twice change nothing.
 */
export function decideSubscription(
  snapshot: SubscriptionSnapshot,
  command: SubscriptionCommand,
  ctx: SubscriptionDecideContext,
): SubscriptionEvent[] {
  const current = statusOf(snapshot);
  if (command.type === 'CreateSubscription') {
    if (current !== 'new') return [];
    const { status } = command.subscription;
    if (status !== 'incomplete' && status !== 'trialing')
      throw new ValidationError('status', `a new subscription is incomplete or trialing, not ${status}`);
    return [{ type: 'SubscriptionCreated', data: { subscription: command.subscription, dueIsInstant: true } }];
  }
  const s = requireSubscription(snapshot);
  const status = current as SubscriptionStatus;
  const now = ctx.now;
  switch (command.type) {
    case 'RecordSubscriptionPayment':
      return decidePayment(s, status, command.invoiceId, now);
    case 'RecordFirstBillDiscount':
      return decideFirstBillDiscount(s, status, command, now);
    case 'RecordFirstBillLatePayment': {
      const bill = s.latestInvoice;
      if (!hasEnded(s) || bill?.id !== command.invoiceId || bill.kind !== 'checkout_session' || bill.status === 'paid')
        return [];
      if (!DIGITS.test(command.amount) || BigInt(command.amount) === 0n)
        throw new ValidationError('amount', 'must be a positive integer string, scaled by 10^8');
      if (bill.lateTransferIds?.includes(command.transferId)) return [];
      const { invoiceId, transferId, amount } = command;
      return [{ type: 'FirstBillLatePaymentReceived', data: { invoiceId, transferId, amount, at: now } }];
    }
    case 'ExpireFirstPayment': {
      if (status !== 'incomplete') return [];
      const bill = s.latestInvoice;
      if (bill && !reached(now, billLapsesAt(bill))) return [];
      const part = command.amountReceived;
      if (part !== undefined && !DIGITS.test(part))
        throw new ValidationError('amountReceived', 'must be a non-negative integer string, scaled by 10^8');
      // Only a first checkout session's part is owed back here: a first invoice keeps its part, the merchant's to settle.
      const refund =
        bill?.kind === 'checkout_session' && part !== undefined && BigInt(part) > 0n ? { amountToRefund: part } : {};
      return [{ type: 'SubscriptionIncompleteExpired', data: { invoiceId: bill?.id ?? null, ...refund, at: now } }];
    }
    case 'RenewSubscription':
      return decideRenewal(s, status, command.invoiceId, now);
    case 'RecordRenewalInvoiceDeleted':
    case 'RecordRenewalInvoiceVoided': {
      // Only an unpaid renewal of a subscription that goes on (a first invoice is finalized before
      // its subscription exists, so it is never a draft; an ended one's drafts are its own to delete).
      const bill = billOf(s, command.invoiceId);
      if (status === 'incomplete' || status === 'incomplete_expired' || status === 'canceled') return [];
      if (
        !bill ||
        bill.kind !== 'invoice' ||
        (bill.status !== 'open' && bill.status !== 'missed' && bill.status !== 'draft')
      )
        return [];
      const type = command.type === 'RecordRenewalInvoiceVoided' ? 'RenewalInvoiceVoided' : 'RenewalInvoiceDeleted';
      return [{ type, data: { invoiceId: bill.id, at: now } }];
    }
    case 'RecordRenewalInvoiceNotFinalized':
    case 'RecordRenewalInvoiceFinalized': {
      const bill = billOf(s, command.invoiceId);
      const from = command.type === 'RecordRenewalInvoiceNotFinalized' ? 'open' : 'draft';
      if (bill?.kind !== 'invoice') return [];
      // A bill an older Weir let lapse while its invoice was a draft Weir could not finalize (never sent):
      // its finalize reopens it too (the billing workflow reports only the finalize of a draft), when
      // re-dated to a due date still ahead (one already past would only lapse again).
      const lapsedDraft = command.type === 'RecordRenewalInvoiceFinalized' && bill.status === 'missed';
      // Past due over an earlier bill, a later one still goes from open to draft and back.
      const overdue = status === 'past_due' || status === 'unpaid';
      if (lapsedDraft ? !overdue : !(BILLING.has(status) || overdue) || bill.status !== from) return [];
      if (lapsedDraft && reached(now, billLapsesAt({ kind: 'invoice', dueAt: command.dueAt }))) return [];
      if (command.type === 'RecordRenewalInvoiceNotFinalized')
        return [{ type: 'RenewalInvoiceNotFinalized', data: { invoiceId: bill.id, at: now } }];
      if (Number.isNaN(Date.parse(command.dueAt))) throw new ValidationError('dueAt', 'must be an ISO 8601 timestamp');
      return [{ type: 'RenewalInvoiceFinalized', data: { invoiceId: bill.id, dueAt: command.dueAt, at: now } }];
    }
    case 'MarkRenewalPaymentMissed': {
      // A draft bill (Weir could not finalize it) was never sent: it does not lapse until finalized.
      const bill = nextBillToLapse(s);
      if (status !== 'active' && status !== 'trialing') return [];
      if (!bill || !reached(now, billLapsesAt(bill))) return [];
      return [{ type: 'RenewalPaymentMissed', data: { invoiceId: bill.id, at: now } }];
    }
    case 'MarkSubscriptionUnpaid': {
      if (status !== 'past_due' || s.pastDueSince === null) return [];
      if (!reached(now, addDays(s.pastDueSince, UNPAID_AFTER_DAYS))) return [];
      return [{ type: 'SubscriptionMarkedUnpaid', data: { at: now } }];
    }
    case 'CancelSubscription': {
      if (status === 'canceled') return [];
      if (!CANCELABLE_AT_PERIOD_END.has(status)) {
        return refuse(
          status,
          'only a trialing, active, past_due or unpaid subscription can be canceled at period end (end it at once instead)',
        );
      }
      if (s.cancelAtPeriodEnd) return [];
      // A past due or unpaid subscription bills no new period, so its period may have ended already:
      // it then ends now (its renewal timer is due), not at a moment already past.
      const cancelAt = reached(now, s.currentPeriodEnd) ? now : s.currentPeriodEnd;
      return [{ type: 'SubscriptionCancelScheduled', data: { cancelAt, comment: command.comment, at: now } }];
    }
    case 'EndSubscription': {
      if (status === 'canceled') return [];
      if (status === 'incomplete_expired') return refuse(status, 'it has already ended');
      return [{ type: 'SubscriptionCanceled', data: { atPeriodEnd: false, comment: command.comment, at: now } }];
    }
    case 'ResumeSubscription': {
      if (status === 'paused') {
        // Periods that passed while paused are not billed: the calendar restarts at the resume.
        const restart = !reached(s.currentPeriodEnd, now);
        return [
          {
            type: 'SubscriptionResumed',
            data: {
              currentPeriodEnd: restart ? now : s.currentPeriodEnd,
              billingCycleAnchor: restart ? now : s.billingCycleAnchor,
              at: now,
            },
          },
        ];
      }
      if (status !== 'trialing' && status !== 'active' && status !== 'past_due' && status !== 'unpaid') {
        return refuse(status, 'only a paused subscription or one canceled at period end can be resumed');
      }
      if (!s.cancelAtPeriodEnd) return [];
      return [{ type: 'SubscriptionCancelRevoked', data: { at: now } }];
    }
    case 'PauseSubscription': {
      if (status === 'paused') return [];
      if (status !== 'active') return refuse(status, 'only an active subscription can be paused');
      if (s.cancelAtPeriodEnd) return refuse(status, 'it is canceled at period end; resume it before pausing');
      return [{ type: 'SubscriptionPaused', data: { at: now } }];
    }
  }
}

export type NewSubscriptionInput = {
  id: string;
  organizationId: string;
  environment: Environment;
  customerId: string | null;
  items: SubscriptionItem[];
  createdAt: string;
  /** Days a renewal invoice may stay unpaid before the subscription is past due. */
  daysUntilDue: number;
  /** What each period's invoice asks when it adds tax to the items' amount (a recurring series). */
  periodAmountDue?: string;
  /** Trial variant: no first payment; the first invoice is issued at trialEnd. */
  trialEnd?: string | null;
  /** Without a trial: the checkout session or invoice that collects the first period, and when it expires. */
  firstBill?: { id: string; kind: 'checkout_session' | 'invoice'; dueAt: string } | null;
  clientReferenceId?: string | null;
  description?: string | null;
  metadata?: Record<string, string>;
};

const DIGITS = /^(0|[1-9][0-9]*)$/;

/**
 * A new subscription record (incomplete, or trialing with a trial end), with its first period
 * and amount computed from its items. Throws `ValidationError` for items that cannot bill together.
 */
export function newSubscription(input: NewSubscriptionInput): Subscription {
  const [first] = input.items;
  if (!first) throw new ValidationError('items', 'a subscription needs at least one recurring item');
  for (const item of input.items) {
    if (item.currency !== first.currency) throw new ValidationError('items', 'all items must share one currency');
    if (item.interval !== first.interval || item.intervalCount !== first.intervalCount)
      throw new ValidationError('items', 'all items must share one billing interval');
    if (!Number.isSafeInteger(item.quantity) || item.quantity < 1)
      throw new ValidationError('items.quantity', 'must be a positive integer');
    if (!DIGITS.test(item.unitAmount))
      throw new ValidationError('items.unitAmount', 'must be a non-negative integer string, scaled by 10^8');
  }
  if (!Number.isSafeInteger(first.intervalCount) || first.intervalCount < 1)
    throw new ValidationError('items.intervalCount', 'must be a positive integer');
  if (!Number.isSafeInteger(input.daysUntilDue) || input.daysUntilDue < 0)
    throw new ValidationError('daysUntilDue', 'must be a non-negative integer');
  const amountTotal = input.items
    .reduce((sum, item) => sum + BigInt(item.unitAmount) * BigInt(item.quantity), 0n)
    .toString();
  const { periodAmountDue } = input;
  if (periodAmountDue !== undefined && !DIGITS.test(periodAmountDue))
    throw new ValidationError('periodAmountDue', 'must be a non-negative integer string, scaled by 10^8');
  const trialEnd = input.trialEnd ?? null;
  if (trialEnd !== null && !(Date.parse(trialEnd) > Date.parse(input.createdAt)))
    throw new ValidationError('trialEnd', 'must be after the start');
  if (trialEnd === null && !input.firstBill)
    throw new ValidationError(
      'firstBill',
      'a subscription without a trial needs the checkout session or invoice of its first payment',
    );
  const anchor = trialEnd ?? input.createdAt;
  const periodEnd = trialEnd ?? addInterval(anchor, first.interval, first.intervalCount);
  const bill: SubscriptionBill | null =
    trialEnd === null && input.firstBill
      ? {
          ...input.firstBill,
          amountDue: periodAmountDue ?? amountTotal,
          periodStart: input.createdAt,
          periodEnd,
          issuedAt: input.createdAt,
          status: 'open',
          paidAt: null,
        }
      : null;
  return {
    id: input.id,
    organizationId: input.organizationId,
    environment: input.environment,
    createdAt: input.createdAt,
    updatedAt: input.createdAt,
    status: trialEnd === null ? 'incomplete' : 'trialing',
    customerId: input.customerId,
    clientReferenceId: input.clientReferenceId ?? null,
    description: input.description ?? null,
    metadata: input.metadata ?? {},
    collectionMethod: 'send_invoice',
    currency: first.currency,
    interval: first.interval,
    intervalCount: first.intervalCount,
    items: input.items,
    amountTotal,
    ...(periodAmountDue !== undefined ? { periodAmountDue } : {}),
    daysUntilDue: input.daysUntilDue,
    startDate: input.createdAt,
    billingCycleAnchor: anchor,
    currentPeriodStart: input.createdAt,
    currentPeriodEnd: periodEnd,
    trialStart: trialEnd === null ? null : input.createdAt,
    trialEnd,
    cancelAtPeriodEnd: false,
    cancelAt: null,
    canceledAt: null,
    cancellationReason: null,
    cancellationComment: null,
    endedAt: null,
    pausedAt: null,
    pastDueSince: null,
    checkoutSessionId: bill?.kind === 'checkout_session' ? bill.id : null,
    latestInvoiceId: bill?.kind === 'invoice' ? bill.id : null,
    latestInvoice: bill,
  };
}
