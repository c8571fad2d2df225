import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import { type CheckoutSessionCommand, needsCustomerEmail } from '../../machines/checkout-session.decide.ts';
import type {
  CheckoutSession,
  CheckoutSessionEvent,
  CheckoutSessionStatus,
} from '../../machines/checkout-session.types.ts';
import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import type { InvoiceCommand } from '../../machines/invoice.decide.ts';
import type { InvoiceEvent, InvoiceStatus } from '../../machines/invoice.types.ts';
import { subscriptionAggregate } from '../../machines/subscription.aggregate.ts';
import {
  billsServedPeriod as servedBy,
  hasEnded,
  isBillSettled,
  newSubscription,
  subscriptionIdOfInvoice,
  type SubscriptionCommand,
} from '../../machines/subscription.decide.ts';
import { billOf, evolveSubscription } from '../../machines/subscription.evolve.ts';
import type { Subscription, SubscriptionEvent, SubscriptionStatus } from '../../machines/subscription.types.ts';
import { customerAggregate, customerFromDetails } from '../actors/customer.ts';
import { subscriptionItemsOf } from '../actors/subscription-items.ts';
import type { Environment, RecordedEvent } from '../event-store/event-store.ts';
import { deterministicId } from '../shared/ids.ts';
import {
  actingFor,
  commandFor,
  type Correlation,
  type Workflow,
  type WorkflowCommand,
  type WorkflowContext,
  type WorkflowEffect,
  type WorkflowStep,
} from './workflow.ts';

/**
 * An invoice of the subscription: a renewal it issued, or the first of its recurring series
 * (`recurring`: still a recurring invoice, so its finalize creates the subscription).
 */
type BillingInvoice = {
  status: InvoiceStatus | 'deleted';
  renewal: boolean;
  recurring: boolean;
  /** The due date it was finalized with (absent before, and from a finalize of an older Weir). */
  openedDue?: string;
  /** It announces its series' next invoice (`NextRecurringInvoiceScheduled`, not unscheduled nor voided since). */
  scheduled?: true;
};
/** What of a `mode: subscription` session its subscription is made of (see `subscriptionOfSession`). */
type SubscriptionSession = Pick<
  CheckoutSession,
  | 'id'
  | 'organizationId'
  | 'environment'
  | 'mode'
  | 'subscriptionId'
  | 'lineItems'
  | 'customerId'
  | 'customerDetails'
  | 'createdAt'
  | 'expiresAt'
  | 'clientReferenceId'
  | 'metadata'
>;

/**
 * A checkout session of the subscription: its first bill (`invoiceId` null), or a pay page of one
 * of its invoices; `discount`: the promotion code the payer applied to the first bill;
 * `awaitingEmail`: a first bill created with no customer, kept until its page collects the payer's
 * email (the subscription is created then, as from `customerData.email`).
 */
type BillingSession = {
  status: CheckoutSessionStatus;
  invoiceId: string | null;
  discount?: { promotionCodeId: string; amountDiscount: string };
  awaitingEmail?: SubscriptionSession;
  /** Money a first bill received after it ended (its `LatePaymentReceived`): owed back once its subscription ended unstarted. */
  late?: { transferId: string; amount: string }[];
};

/** One subscription as its billing sees it: the subscription (null until created) and the state of its bills. */
export type SubscriptionBillingState = {
  tenant: { organizationId: string; environment: Environment } | null;
  subscription: Subscription | null;
  invoices: Record<string, BillingInvoice>;
  sessions: Record<string, BillingSession>;
};

/** The effects the billing decides: they read the catalog and claim invoice numbers (`subscription-billing.effects.ts`). */
export const SUBSCRIPTION_BILLING_EFFECTS = {
  /** The first invoice of a recurring series was finalized: its subscription is created. */
  createFromInvoice: 'create-subscription-from-invoice',
  /** The subscription issued a renewal: its invoice is created and sent. */
  issueRenewal: 'issue-renewal-invoice',
  /** A subscription session whose lines cannot make a subscription (checked at its creation, so a bug): said to the operator. */
  reportUnbillable: 'report-unbillable-session',
} as const;

/** Days a renewal invoice of a subscription started at checkout may stay unpaid before it is past due. */
export const SESSION_SUBSCRIPTION_DAYS_UNTIL_DUE = 7;

const SUBSCRIPTION_PREFIX = 'subscription-';
const INVOICE_PREFIX = 'invoice-';
const SESSION_PREFIX = 'checkout_session-';

/** What a session's event makes of its status (the events that move it; the others leave it). */
const SESSION_STATUS: Partial<Record<CheckoutSessionEvent['type'], CheckoutSessionStatus>> = {
  CheckoutSessionPartiallyPaid: 'incomplete',
  CheckoutSessionCompleted: 'complete',
  CheckoutSessionExpired: 'expired',
  CheckoutSessionCanceled: 'canceled',
};
/** What an invoice's event makes of its status (InvoiceCreated takes the status it was created with). */
const INVOICE_STATUS: Partial<Record<InvoiceEvent['type'], BillingInvoice['status']>> = {
  InvoiceFinalized: 'open',
  InvoicePaid: 'paid',
  InvoiceMarkedAsPaid: 'paid',
  InvoiceVoided: 'void',
  InvoiceMarkedUncollectible: 'uncollectible',
  InvoiceDeleted: 'deleted',
};
/** The invoice events that make it announce its series' next invoice, or no longer. */
const SCHEDULE_CHANGES: ReadonlySet<InvoiceEvent['type']> = new Set<InvoiceEvent['type']>([
  'NextRecurringInvoiceScheduled',
  'NextRecurringInvoiceUnscheduled',
]);
/** Invoice statuses that can still take a payment (the merchant may void both). */
const PAYABLE: ReadonlySet<BillingInvoice['status']> = new Set<BillingInvoice['status']>(['open', 'uncollectible']);

const idIn = (event: RecordedEvent, prefix: string): string => event.streamId.slice(prefix.length);
const sameTenant = (state: SubscriptionBillingState, event: RecordedEvent): boolean =>
  state.tenant !== null &&
  state.tenant.organizationId === event.metadata.organizationId &&
  state.tenant.environment === event.metadata.environment;

/**
 * How the billing process closes the checkout session that was the first bill of a subscription
 * that ended before it started: still open, expired with it (`incomplete_expired`, at or after the
 * session's own expiry) or canceled (ended by the merchant); partly paid (`incomplete`: it neither
 * expires nor can be canceled, its money stays accounted for), completed with what it received, as
 * the merchant's complete-partial does and as a settled invoice's partly paid pay page is, so its
 * page no longer asks for the rest of a subscription that will not start (money sent after is late).
 */
export function firstSessionClosing(
  status: SubscriptionStatus,
  session: CheckoutSessionStatus = 'open',
): CheckoutSessionCommand {
  if (session === 'incomplete')
    return {
      type: 'CompletePartialCheckoutSession',
      reason: status === 'incomplete_expired' ? 'the subscription expired' : 'the subscription was canceled',
    };
  return status === 'incomplete_expired'
    ? { type: 'ExpireCheckoutSession' }
    : { type: 'CancelCheckoutSession', reason: 'the subscription was canceled' };
}

/** Who acts for the tenant of `tenant` (a subscription, a session), and because of what. */
const contextOf = (
  tenant: { organizationId: string; environment: Environment },
  actor: string,
  causationId: string,
): WorkflowContext => ({ organizationId: tenant.organizationId, environment: tenant.environment, actor, causationId });

/** A payment or a deletion of the bill `billId` reported to the subscription (on behalf of the bill). */
const toSubscription = (s: Subscription, billId: string, command: SubscriptionCommand): WorkflowCommand =>
  commandFor(subscriptionAggregate, s.id, command, contextOf(s, 'system:subscriptions', billId));

/** A bill of the ended subscription `s` closed with its own command, by the billing process because of that subscription. */
const closeInvoice = (s: Subscription, invoiceId: string, command: InvoiceCommand): WorkflowCommand =>
  commandFor(invoiceAggregate, invoiceId, command, contextOf(s, 'system:subscription-billing', s.id));
const closeSession = (s: Subscription, sessionId: string, command: CheckoutSessionCommand): WorkflowCommand =>
  commandFor(checkoutSessionAggregate, sessionId, command, contextOf(s, 'system:subscription-billing', s.id));

/** Whether the bill `billId` was paid in full: its checkout session complete, or its invoice paid. */
const isPaid = (state: SubscriptionBillingState, billId: string): boolean =>
  state.sessions[billId]?.status === 'complete' || state.invoices[billId]?.status === 'paid';

/**
 * A bill of the subscription was paid: the subscription records it, when it follows the bill (its latest, or an earlier one still owed)
 * and not recorded yet. A subscription that has ended (expired while incomplete, or canceled)
 * records no payment (its decider would ignore it).
 */
function paymentOf(s: Subscription | null, billId: string): WorkflowCommand[] {
  const bill = s && billOf(s, billId);
  if (!s || !bill || bill.status === 'paid' || bill.status === 'expired' || hasEnded(s)) return [];
  return [toSubscription(s, billId, { type: 'RecordSubscriptionPayment', invoiceId: billId })];
}

/**
 * The payer applied a promotion code to the first bill's checkout session: the subscription
 * records what that bill asks now, when the subscription exists (else at its creation) and has
 * not recorded it yet. An ended subscription records nothing more (its decider would ignore it).
 */
function discountOf(state: SubscriptionBillingState, s: Subscription | null, billId: string): WorkflowCommand[] {
  const discount = state.sessions[billId]?.discount;
  const bill = s?.latestInvoice;
  if (!s || !discount || bill?.id !== billId || bill.kind !== 'checkout_session' || bill.amountDiscount !== undefined)
    return [];
  if (hasEnded(s)) return [];
  return [toSubscription(s, billId, { type: 'RecordFirstBillDiscount', invoiceId: billId, ...discount })];
}

/**
 * Whether part of the invoice was paid: a checkout session opened to pay it received less than
 * its amount and waits for the rest (`incomplete`); the invoice becomes paid once it completes.
 * This state may not have seen the partial payment yet (a race, a replay of the log): the
 * invoice's decider, which records it, refuses the void then, and the runner drops it.
 */
const isPartlyPaid = (state: SubscriptionBillingState, invoiceId: string): boolean =>
  Object.values(state.sessions).some((session) => session.invoiceId === invoiceId && session.status === 'incomplete');

/**
 * Whether the renewal `invoiceId` of the ended subscription `s` bills a period it served (one that
 * started before the end): every renewal but the latest bills an earlier period, and the latest
 * one's period is on the subscription's bill.
 */
function billsServedPeriod(s: Subscription, invoiceId: string): boolean {
  const bill = s.latestInvoice;
  return bill?.id !== invoiceId || servedBy(s, bill);
}

/**
 * The renewal invoice `invoiceId` of the ended subscription, as Stripe leaves a canceled
 * subscription's invoices: one for a period the subscription served stays as it is, owed and
 * payable, a draft too (its issue, under way at the end, or retried after a crash, sends it: the
 * period is owed all the same; one Weir could not finalize stays the merchant's); a draft for a
 * period from the end on is deleted, since only a draft can be (the merchant may void it; a payment is
 * recorded on it and does not restart the subscription); one for a period it will not serve (from
 * the end on) that can still be paid and has received nothing is voided; one partly paid stays
 * open, the merchant's to settle.
 */
function closeRenewal(state: SubscriptionBillingState, s: Subscription, invoiceId: string): WorkflowCommand[] {
  const invoice = state.invoices[invoiceId];
  if (!invoice?.renewal) return [];
  if (billsServedPeriod(s, invoiceId)) return [];
  if (invoice.status === 'draft') return [closeInvoice(s, invoiceId, { type: 'DeleteInvoice' })];
  if (!PAYABLE.has(invoice.status) || isPartlyPaid(state, invoiceId)) return [];
  return [closeInvoice(s, invoiceId, { type: 'VoidInvoice' })];
}

/** Why an invoice of the ended subscription `s` no longer announces a next invoice. */
const UNSCHEDULED_BECAUSE: Partial<Record<SubscriptionStatus, string>> = {
  canceled: 'the subscription was canceled',
  incomplete_expired: 'the subscription expired',
};

/**
 * An invoice of the ended subscription `s` that announces its series' next invoice: none will be
 * issued, so it announces none (its page and the API name no next invoice date that will never come).
 */
function unschedule(state: SubscriptionBillingState, s: Subscription, invoiceId: string): WorkflowCommand[] {
  if (!hasEnded(s) || !state.invoices[invoiceId]?.scheduled) return [];
  const reason = UNSCHEDULED_BECAUSE[s.status] ?? 'the subscription ended';
  return [closeInvoice(s, invoiceId, { type: 'UnscheduleNextRecurringInvoice', reason })];
}
const unscheduleAll = (state: SubscriptionBillingState, s: Subscription): WorkflowCommand[] =>
  Object.keys(state.invoices).flatMap((id) => unschedule(state, s, id));

/**
 * The first checkout session `sessionId` of the subscription `s` that ended before it started,
 * closed while it can still be paid (open, or partly paid; see `firstSessionClosing`). One that
 * is over (paid, expired, canceled) is left as it is; a payment of it is ignored by the subscription.
 */
function closeFirstSession(state: SubscriptionBillingState, s: Subscription, sessionId: string): WorkflowCommand[] {
  const status = state.sessions[sessionId]?.status;
  if (status !== 'open' && status !== 'incomplete') return [];
  return [closeSession(s, sessionId, firstSessionClosing(s.status, status))];
}

/**
 * Money the first checkout session of the subscription `s` that ended without starting received after
 * the session ended (late): owed back, recorded on the subscription's bill (`RecordFirstBillLatePayment`;
 * its decider records each transfer once, and nothing on a bill that was paid), so the subscription says
 * so; it does not start it. Late money that came before the subscription's end is recorded at the end.
 */
function lateToFirstBill(
  state: SubscriptionBillingState,
  s: Subscription,
  sessionId: string,
  late = state.sessions[sessionId]?.late ?? [],
): WorkflowCommand[] {
  const bill = s.latestInvoice;
  if (!hasEnded(s) || state.sessions[sessionId]?.invoiceId !== null || bill?.id !== sessionId) return [];
  // Paid, the subscription started: that money is the session's own to refund, nothing of the subscription's.
  if (bill.status === 'paid') return [];
  return late.map(({ transferId, amount }) =>
    toSubscription(s, sessionId, { type: 'RecordFirstBillLatePayment', invoiceId: sessionId, transferId, amount }),
  );
}

/**
 * The subscription left `incomplete` without starting: it expired unpaid (`incomplete_expired`)
 * or the merchant ended it (`canceled`). Stripe's rule: the first bill of a subscription that
 * never started is closed, so the customer cannot pay for it: a first invoice still payable is
 * voided, unless partly paid; a first checkout session still open or partly paid is closed
 * (`closeFirstSession`).
 */
function leftIncomplete(state: SubscriptionBillingState, s: Subscription): WorkflowCommand[] {
  const bill = s.latestInvoice;
  if (!bill || !hasEnded(s)) return [];
  if (bill.kind === 'invoice') {
    const status = state.invoices[bill.id]?.status;
    // Partly paid, it stays open with the money on it, the merchant's to settle (as a renewal does).
    if (!status || !PAYABLE.has(status) || isPartlyPaid(state, bill.id)) return [];
    return [closeInvoice(s, bill.id, { type: 'VoidInvoice' })];
  }
  return [...closeFirstSession(state, s, bill.id), ...lateToFirstBill(state, s, bill.id)];
}

/** An effect of the billing, acting for the tenant of `event` because of `causationId`. */
const effect = (
  name: string,
  input: WorkflowEffect['input'],
  event: RecordedEvent,
  causationId: string,
): WorkflowEffect => ({
  effect: name,
  input,
  context: actingFor(event, 'system:subscriptions', causationId),
});

/** The renewal `invoiceId` the subscription issued becomes an invoice, as its series' first invoice when it has one. */
function issueRenewal(state: SubscriptionBillingState, s: Subscription, invoiceId: string): WorkflowEffect {
  const template = Object.entries(state.invoices).find(([, invoice]) => !invoice.renewal)?.[0] ?? null;
  return {
    effect: SUBSCRIPTION_BILLING_EFFECTS.issueRenewal,
    input: { subscriptionId: s.id, invoiceId, templateId: template },
    context: contextOf(s, 'system:subscriptions', invoiceId),
  };
}

/**
 * A `mode: subscription` checkout session creates its subscription, the session collecting the
 * first period; with no `customerId`, the payer's email (collected by a payment link page or the
 * checkout page, or the API's `customerData`) becomes its customer first, so renewal invoices reach them.
 */
function subscriptionOfSession(session: SubscriptionSession): WorkflowStep[] {
  const subscriptionId = session.subscriptionId;
  if (session.mode !== 'subscription' || !subscriptionId) return [];
  const context = contextOf(session, 'system:subscriptions', session.id);
  let items: ReturnType<typeof subscriptionItemsOf>;
  try {
    items = subscriptionItemsOf(session.lineItems.data);
  } catch (error) {
    // Checked by the same rule when the session was created: one that fails it bills nothing, and a
    // pure decide cannot log, so an effect says so.
    const reason = error instanceof Error ? error.message : String(error);
    const input = { checkoutSessionId: session.id, subscriptionId, reason };
    return [{ effect: SUBSCRIPTION_BILLING_EFFECTS.reportUnbillable, input, context }];
  }
  const steps: WorkflowCommand[] = [];
  let customerId = session.customerId;
  const details = session.customerDetails;
  if (!customerId && details?.email) {
    customerId = deterministicId(`customer:subscription:${subscriptionId}`);
    const create = customerFromDetails(customerId, session, { ...details, email: details.email });
    steps.push(commandFor(customerAggregate, customerId, create, context));
  }
  const subscription = newSubscription({
    id: subscriptionId,
    organizationId: session.organizationId,
    environment: session.environment,
    customerId,
    items,
    createdAt: session.createdAt,
    daysUntilDue: SESSION_SUBSCRIPTION_DAYS_UNTIL_DUE,
    firstBill: { id: session.id, kind: 'checkout_session', dueAt: session.expiresAt },
    clientReferenceId: session.clientReferenceId,
    metadata: session.metadata,
  });
  steps.push(commandFor(subscriptionAggregate, subscriptionId, { type: 'CreateSubscription', subscription }, context));
  return steps;
}

/** What an event of the subscription's own log calls for, given the subscription before (`was`) and after it. */
function decideSubscriptionEvent(
  state: SubscriptionBillingState,
  next: SubscriptionBillingState,
  event: RecordedEvent,
): WorkflowStep[] {
  const was = state.subscription;
  const s = next.subscription;
  if (!s) return [];
  const typed = event as unknown as SubscriptionEvent;
  if (typed.type === 'RenewalInvoiceIssued')
    return was?.latestInvoice?.id === typed.data.invoice.id ? [] : [issueRenewal(next, s, typed.data.invoice.id)];
  if (typed.type === 'RenewalInvoiceNotFinalized') return reopening(next, s, typed.data.invoiceId);
  // Discounted or paid before the subscription existed (a fast payer, a lagging workflow, a crash in between): recorded now.
  if (event.type === 'SubscriptionCreated') {
    const bill = s.latestInvoice;
    if (was !== null || !bill) return [];
    return [...discountOf(next, s, bill.id), ...(isPaid(next, bill.id) ? paymentOf(s, bill.id) : [])];
  }
  if (was === null || was.status === s.status) return [];
  // Ended, its invoices that announce a next one announce none (after the closes: a void one announces none already).
  if (was.status === 'incomplete') return [...leftIncomplete(next, s), ...unscheduleAll(next, s)];
  // Ended after it started (at once, or at period end): its renewals are closed (`closeRenewal`).
  if (!hasEnded(was) && hasEnded(s))
    return [...Object.keys(next.invoices).flatMap((id) => closeRenewal(next, s, id)), ...unscheduleAll(next, s)];
  return [];
}

function decideInvoiceEvent(
  state: SubscriptionBillingState,
  next: SubscriptionBillingState,
  event: RecordedEvent,
): WorkflowStep[] {
  const id = idIn(event, INVOICE_PREFIX);
  const before = state.invoices[id];
  const after = next.invoices[id];
  const s = next.subscription;
  // A renewal finalized after its subscription ended (its issue under way, or an older Weir's) announcing a next invoice: none.
  if (event.type === 'NextRecurringInvoiceScheduled') return s && !before?.scheduled ? unschedule(next, s, id) : [];
  if (!after || before?.status === after.status) return [];
  // The first invoice of a recurring series finalized: its subscription is created (the effect reads the catalog).
  if (!s && after.status === 'open' && after.recurring && !after.renewal)
    return [
      effect(
        SUBSCRIPTION_BILLING_EFFECTS.createFromInvoice,
        { invoiceId: id, subscriptionId: subscriptionIdOfInvoice(id) },
        event,
        id,
      ),
    ];
  if (!s) return [];
  if (after.status === 'paid') return paymentOf(s, id);
  if (!after.renewal) return [];
  // Created (a draft) or opened after its subscription ended: its issue was under way at the end.
  if (hasEnded(s)) return after.status === 'draft' || after.status === 'open' ? closeRenewal(next, s, id) : [];
  // The merchant deleted the draft of a renewal still owed while the subscription goes on: that period is not billed.
  const bill = billOf(s, id);
  if (after.status === 'deleted' && bill && !isBillSettled(bill))
    return [toSubscription(s, id, { type: 'RecordRenewalInvoiceDeleted', invoiceId: id })];
  // Voided or written off (uncollectible: the merchant gave up on it, as Stripe settles it) by the merchant while the
  // subscription goes on: neither is that period billed, and the next one bills (else it would lapse past due for ever).
  if ((after.status === 'void' || after.status === 'uncollectible') && bill && !isBillSettled(bill))
    return [toSubscription(s, id, { type: 'RecordRenewalInvoiceVoided', invoiceId: id })];
  return before?.status === 'draft' && after.status === 'open' ? reopening(next, s, id, true) : [];
}

/**
 * A renewal draft Weir could not finalize, since finalized by the merchant: its subscription's bill
 * opens, due at the due date it was finalized with. Decided at the finalize, or at the subscription's
 * record of the draft when that came after it (the merchant finalized while Weir recorded the refusal).
 * At the finalize (`finalized`), a bill an older Weir let lapse while the invoice was that draft (never
 * sent, so it could not be missed) reopens too.
 */
function reopening(
  state: SubscriptionBillingState,
  s: Subscription,
  invoiceId: string,
  finalized = false,
): WorkflowCommand[] {
  const bill = billOf(s, invoiceId);
  const dueAt = state.invoices[invoiceId]?.openedDue;
  const reopens = bill?.status === 'draft' || (finalized && bill?.status === 'missed');
  if (!bill || !reopens || dueAt === undefined || hasEnded(s)) return [];
  return [toSubscription(s, invoiceId, { type: 'RecordRenewalInvoiceFinalized', invoiceId, dueAt })];
}

function evolveInvoice(state: SubscriptionBillingState, event: RecordedEvent): SubscriptionBillingState {
  const id = idIn(event, INVOICE_PREFIX);
  const typed = event as unknown as InvoiceEvent;
  const known = state.invoices[id];
  let invoice: BillingInvoice | undefined;
  if (typed.type === 'InvoiceCreated') {
    const created = typed.data.invoice;
    invoice = {
      status: created.status,
      renewal: created.subscriptionId !== null,
      recurring: created.invoiceType === 'recurring',
    };
  } else if (typed.type === 'InvoiceUpdated') {
    const type = typed.data.changes.invoiceType;
    invoice = known ?? { status: 'draft', renewal: false, recurring: false };
    if (type !== undefined && invoice.recurring !== (type === 'recurring'))
      invoice = { ...invoice, recurring: type === 'recurring' };
  } else {
    const status = INVOICE_STATUS[typed.type];
    invoice = known && status ? { ...known, status } : known;
    if (invoice && typed.type === 'InvoiceFinalized' && typed.data.dueDate !== undefined)
      invoice = { ...invoice, openedDue: typed.data.dueDate };
    if (known && typed.type === 'NextRecurringInvoiceScheduled') invoice = { ...known, scheduled: true };
    // Unscheduled, or void (which announces none): it no longer names a next invoice.
    if (invoice?.scheduled && (typed.type === 'NextRecurringInvoiceUnscheduled' || typed.type === 'InvoiceVoided')) {
      const { scheduled: _announced, ...rest } = invoice;
      invoice = rest;
    }
  }
  return invoice === known || !invoice ? state : { ...state, invoices: { ...state.invoices, [id]: invoice } };
}

function evolveSession(state: SubscriptionBillingState, event: RecordedEvent): SubscriptionBillingState {
  const id = idIn(event, SESSION_PREFIX);
  const typed = event as unknown as CheckoutSessionEvent;
  if (typed.type === 'CheckoutSessionCreated') {
    // A pay page of one of the subscription's invoices counts only within the subscription's tenant.
    const session = typed.data.session;
    const invoiceId = session.invoiceId ?? null;
    if (state.sessions[id] || (invoiceId !== null && !sameTenant(state, event))) return state;
    const billing: BillingSession = { status: 'open', invoiceId };
    if (invoiceId === null && needsCustomerEmail(session)) billing.awaitingEmail = subscriptionSession(session);
    return { ...state, sessions: { ...state.sessions, [id]: billing } };
  }
  const known = state.sessions[id];
  // Given its email (or over without it), the session no longer waits: its subscription was decided then.
  if (known?.awaitingEmail && (typed.type === 'CustomerEmailCollected' || SESSION_STATUS[typed.type])) {
    const { awaitingEmail: _decided, ...rest } = known;
    return evolveSession({ ...state, sessions: { ...state.sessions, [id]: rest } }, event);
  }
  if (typed.type === 'DiscountApplied') {
    if (!known || known.invoiceId !== null || known.discount) return state;
    const { promotionCodeId, amountDiscount } = typed.data.discount;
    return {
      ...state,
      sessions: { ...state.sessions, [id]: { ...known, discount: { promotionCodeId, amountDiscount } } },
    };
  }
  if (typed.type === 'LatePaymentReceived') {
    if (known?.invoiceId !== null) return state;
    const { transferId, amount } = typed.data;
    if (known.late?.some((late) => late.transferId === transferId)) return state;
    const late = [...(known.late ?? []), { transferId, amount }];
    return { ...state, sessions: { ...state.sessions, [id]: { ...known, late } } };
  }
  const status = SESSION_STATUS[typed.type];
  if (!known || !status) return state;
  // A pay page matters only while it may hold part of a payment: one that ended is forgotten.
  if (known.invoiceId !== null && status !== 'incomplete') {
    const { [id]: _ended, ...sessions } = state.sessions;
    return { ...state, sessions };
  }
  return { ...state, sessions: { ...state.sessions, [id]: { ...known, status } } };
}

const subscriptionSession = (s: CheckoutSession): SubscriptionSession => ({
  id: s.id,
  organizationId: s.organizationId,
  environment: s.environment,
  mode: s.mode,
  subscriptionId: s.subscriptionId,
  lineItems: s.lineItems,
  customerId: s.customerId,
  ...(s.customerDetails ? { customerDetails: s.customerDetails } : {}),
  createdAt: s.createdAt,
  expiresAt: s.expiresAt,
  clientReferenceId: s.clientReferenceId,
  metadata: s.metadata,
});

/**
 * A first bill that waited for its email: given it, the subscription is created with its customer
 * from it; paid without one (a 100% promotion code needs no payment method), it is created without
 * a customer rather than lost (it then records the payment).
 */
function awaitedSubscription(state: SubscriptionBillingState, id: string, event: CheckoutSessionEvent): WorkflowStep[] {
  const waiting = state.sessions[id]?.awaitingEmail;
  if (!waiting || state.subscription) return [];
  if (event.type === 'CustomerEmailCollected') {
    const details = waiting.customerDetails ?? { name: null, email: null, phone: null, address: null };
    return subscriptionOfSession({ ...waiting, customerDetails: { ...details, email: event.data.email } });
  }
  return event.type === 'CheckoutSessionCompleted' ? subscriptionOfSession(waiting) : [];
}

const tenantOf = (state: SubscriptionBillingState, event: RecordedEvent): SubscriptionBillingState =>
  state.tenant
    ? state
    : { ...state, tenant: { organizationId: event.metadata.organizationId, environment: event.metadata.environment } };

/**
 * Subscription billing, per subscription: the subscription is created from its first bill, its
 * renewals become invoices, what happens to its bills (its first checkout session or the first
 * invoice of its recurring series, and its renewal invoices) is reported to the subscription, and
 * what the subscription's end means is done to its bills, each with its own command (its decider
 * answers nothing for a repeat, so a redelivery or a replay of the log does nothing twice):
 * - a `mode: subscription` checkout session creates its subscription (and first its customer from
 *   the payer's email when it names none); the first invoice of a recurring series, once
 *   finalized, creates its subscription (an effect: its items' products are in the catalog);
 * - a renewal the subscription issues is created as an invoice and sent (an effect: an invoice
 *   number claimed, its lines named from the catalog; see `subscription-billing.effects.ts`); one
 *   the finalize route would refuse (`assertPayableAtFinalize`) stays a draft with why on it, and its
 *   subscription records its bill a draft (`RecordRenewalInvoiceNotFinalized`: it does not lapse, and the next period renews at its end); once
 *   the merchant finalizes it, the bill opens due at the due date it opened with (`RecordRenewalInvoiceFinalized`);
 * - a promotion code applied to the first checkout session is recorded on the subscription's first
 *   bill (`RecordFirstBillDiscount`), at its creation when it was applied before: the bill asks
 *   what the session asks; renewals are billed in full;
 * - a paid bill (a checkout session completed, an invoice paid or marked as paid) is recorded on
 *   the subscription (`RecordSubscriptionPayment`), at its creation when it was paid before;
 * - the first bill of a subscription that never started (it expired unpaid, or the merchant ended
 *   it while incomplete) is closed: a payable invoice voided, a session still open expired or
 *   canceled, one partly paid completed as is, also when its part came after the end (see `firstSessionClosing`);
 * - the renewal invoices of a subscription that ended after it started, and those created or
 *   opened after the end (their issue was under way): a draft deleted; one billing a period the
 *   subscription served left owed and payable; one billing a period from the end on, payable and
 *   paid nothing, voided (see `closeRenewal`);
 * - an invoice of a subscription that has ended that announces its series' next invoice (finalized before
 *   the end, or a renewal of a served period issued after it by an older Weir) announces none
 *   (`UnscheduleNextRecurringInvoice`): that invoice will never be issued;
 * - money the first checkout session of a subscription that ended without starting received late is
 *   recorded on its bill as owed back (`RecordFirstBillLatePayment`), at the end when it came before:
 *   the subscription is not revived, the merchant sees what to refund;
 * - a renewal draft the merchant deleted while its subscription goes on is recorded on it
 *   (`RecordRenewalInvoiceDeleted`): that period is not billed; so is one whose open invoice the
 *   merchant voided or marked uncollectible (`RecordRenewalInvoiceVoided`).
 * A bill that moved on first (paid before its void, a session paid before its close) refuses the
 * command, which is then dropped.
 */
export const subscriptionBilling: Workflow<SubscriptionBillingState> = {
  name: 'subscription-billing',
  // 2: it creates subscriptions and issues renewals (it follows whether a first invoice is still recurring).
  // 3: a renewal voided while its subscription goes on is recorded on it; folded again, past ones are too.
  // 4: it keeps the promotion code applied to a first checkout session, recorded on the subscription's first bill; folded
  // again, past ones are too (while that session is still the latest bill of a subscription that goes on).
  // 5: a renewal draft the merchant finalizes reopens its subscription's bill; folded again, the issues of
  // renewals still drafts Weir could not finalize tell their subscriptions so (those not past due yet).
  // 6: a first session created with no customer nor email is kept until its page collects the email.
  // 7: a renewal billing a served period stays owed at the end; a partly paid first session of an ended
  // subscription is completed as is; a renewal written off is recorded on its subscription (folded again,
  // past ones are too: a first session left partly paid, a subscription stuck past due on a write-off).
  // 8: a renewal of a served period still a draft at the end (its issue under way) is left to its issue, not deleted.
  // 9: an invoice of an ended subscription announces no next invoice (it follows which do); money a first session
  // received late is owed back on the bill of its subscription that ended unstarted (it follows that money); folded
  // again, past ones are too (those of subscriptions that ended before, renewals issued after their end).
  version: 9,
  categories: ['subscription', 'invoice', 'checkout_session'],
  aggregates: [subscriptionAggregate, invoiceAggregate, checkoutSessionAggregate, customerAggregate],
  effects: Object.values(SUBSCRIPTION_BILLING_EFFECTS),
  correlate(event): Correlation {
    if (event.streamId.startsWith(SUBSCRIPTION_PREFIX)) return idIn(event, SUBSCRIPTION_PREFIX);
    if (event.streamId.startsWith(INVOICE_PREFIX)) {
      const typed = event as unknown as InvoiceEvent;
      const id = idIn(event, INVOICE_PREFIX);
      if (typed.type === 'InvoiceCreated') {
        const invoice = typed.data.invoice;
        if (invoice.subscriptionId) return invoice.subscriptionId;
        return invoice.invoiceType === 'recurring' ? subscriptionIdOfInvoice(id) : false;
      }
      // A draft made recurring becomes the first invoice of a series, and so of its subscription.
      if (typed.type === 'InvoiceUpdated')
        return typed.data.changes.invoiceType === 'recurring' ? subscriptionIdOfInvoice(id) : null;
      return INVOICE_STATUS[typed.type] || SCHEDULE_CHANGES.has(typed.type) ? null : false;
    }
    const typed = event as unknown as CheckoutSessionEvent;
    if (typed.type === 'CheckoutSessionCreated') {
      const session = typed.data.session;
      if (session.invoiceId) return { sameAs: `${INVOICE_PREFIX}${session.invoiceId}` };
      return session.mode === 'subscription' && session.subscriptionId ? session.subscriptionId : false;
    }
    return SESSION_STATUS[typed.type] ||
      typed.type === 'DiscountApplied' ||
      typed.type === 'CustomerEmailCollected' ||
      typed.type === 'LatePaymentReceived'
      ? null
      : false;
  },
  initialState: () => ({ tenant: null, subscription: null, invoices: {}, sessions: {} }),
  evolve(state, event) {
    if (event.streamId.startsWith(SUBSCRIPTION_PREFIX)) {
      const subscription = evolveSubscription(state.subscription, event as unknown as SubscriptionEvent);
      return { ...tenantOf(state, event), subscription };
    }
    if (event.streamId.startsWith(INVOICE_PREFIX)) return evolveInvoice(tenantOf(state, event), event);
    const typed = event as unknown as CheckoutSessionEvent;
    return evolveSession(
      typed.type === 'CheckoutSessionCreated' && !typed.data.session.invoiceId ? tenantOf(state, event) : state,
      event,
    );
  },
  decide(event, state) {
    const next = subscriptionBilling.evolve(state, event);
    if (event.streamId.startsWith(SUBSCRIPTION_PREFIX)) return decideSubscriptionEvent(state, next, event);
    if (event.streamId.startsWith(INVOICE_PREFIX)) return decideInvoiceEvent(state, next, event);
    const id = idIn(event, SESSION_PREFIX);
    const typed = event as unknown as CheckoutSessionEvent;
    if (typed.type === 'CheckoutSessionCreated')
      return state.sessions[id] || state.subscription || typed.data.session.invoiceId
        ? []
        : // One with no customer and no email waits for the email its page asks (`awaitedSubscription`).
          needsCustomerEmail(typed.data.session)
          ? []
          : subscriptionOfSession(typed.data.session);
    // Money sent to the first checkout session after it ended: owed back, once its subscription ended unstarted.
    if (typed.type === 'LatePaymentReceived') {
      const s = next.subscription;
      const seen = state.sessions[id]?.late?.some((late) => late.transferId === typed.data.transferId);
      return s && !seen ? lateToFirstBill(next, s, id, [typed.data]) : [];
    }
    const awaited = awaitedSubscription(state, id, typed);
    if (awaited.length > 0) return awaited;
    // A promotion code applied to the first checkout session: what its bill asks.
    if (typed.type === 'DiscountApplied')
      return state.sessions[id]?.discount ? [] : discountOf(next, next.subscription, id);
    // A first checkout session partly paid after its subscription ended (the cancel lost the race): closed as is.
    const ended = next.subscription;
    if (typed.type === 'CheckoutSessionPartiallyPaid' && state.sessions[id]?.status === 'open' && ended)
      return hasEnded(ended) && ended.latestInvoice?.id === id ? closeFirstSession(next, ended, id) : [];
    // A first checkout session paid in full: a payment of the subscription.
    const paid = state.sessions[id]?.status !== 'complete' && next.sessions[id]?.status === 'complete';
    return paid && next.sessions[id]!.invoiceId === null ? paymentOf(next.subscription, id) : [];
  },
};
