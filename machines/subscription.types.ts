import type { Environment } from '../src/event-store/event-store.ts';
import type { BillingInterval } from './billing-calendar.ts';
import type { DueIsInstant } from './invoice.types.ts';

/** Subscription statuses of the reference API (`SubscriptionStatus`). */
export type SubscriptionStatus =
  | 'incomplete'
  | 'incomplete_expired'
  | 'trialing'
  | 'active'
  | 'past_due'
  | 'unpaid'
  | 'canceled'
  | 'paused';

/** One recurring price the subscription bills each period. */
export type SubscriptionItem = {
  priceId: string;
  productId: string;
  /** The product's name when the subscription began (absent on subscriptions recorded before it was kept). */
  productName?: string;
  quantity: number;
  /** 10^8-scaled amount per unit per period. */
  unitAmount: string;
  currency: string;
  interval: BillingInterval;
  intervalCount: number;
};

/**
 * What collects one period's payment: the checkout session (or invoice) that created the
 * subscription, then one renewal invoice per period.
 */
export type SubscriptionBill = {
  id: string;
  kind: 'checkout_session' | 'invoice';
  /** 10^8-scaled: what the bill asks, after the discount of a promotion code on the first bill. */
  amountDue: string;
  /**
   * What a promotion code took off the first bill (its checkout session), 10^8-scaled; absent when
   * none did. A code discounts the first payment only: renewals are billed in full.
   */
  amountDiscount?: string;
  periodStart: string;
  periodEnd: string;
  issuedAt: string;
  /** The bill's due time (an invoice's `dueDate`, as finalized); it lapses unpaid at `billLapsesAt`. */
  dueAt: string;
  /**
   * `draft`: a renewal whose invoice Weir could not finalize (the customer was sent nothing): it does
   * not lapse until the merchant finalizes it. `deleted`: a renewal whose invoice the merchant deleted
   * while a draft; `void`: one whose open invoice the merchant voided while the subscription went on.
   * Either way its period is not billed.
   */
  status: 'open' | 'draft' | 'paid' | 'missed' | 'expired' | 'deleted' | 'void';
  paidAt: string | null;
  /**
   * Money the first checkout session of a subscription that ended without starting received and keeps
   * (10^8-scaled), owed back to the payer: a part received by its due time (the subscription expired
   * unpaid), and any money sent to it after the end (`FirstBillLatePaymentReceived`). Absent otherwise.
   */
  amountToRefund?: string;
  /** The late transfers counted in `amountToRefund` (each once); absent when none. Not shown. */
  lateTransferIds?: string[];
};

export type Subscription = {
  id: string;
  organizationId: string;
  environment: Environment;
  createdAt: string;
  updatedAt: string;
  status: SubscriptionStatus;
  customerId: string | null;
  clientReferenceId: string | null;
  description: string | null;
  metadata: Record<string, string>;
  /** Wallet payments are collected by sending an invoice (or a checkout session) each period. */
  collectionMethod: 'send_invoice';
  currency: string;
  interval: BillingInterval;
  intervalCount: number;
  items: SubscriptionItem[];
  /** Sum of quantity × unitAmount: what each period bills before tax, 10^8-scaled. */
  amountTotal: string;
  /**
   * What each period's bill asks, 10^8-scaled: amountTotal with the tax of a recurring series'
   * invoices. Absent means amountTotal (a checkout subscription bills no tax; older records).
   */
  periodAmountDue?: string;
  /** Days a renewal invoice may stay unpaid before the subscription is past due. */
  daysUntilDue: number;
  startDate: string;
  /** Period boundaries are counted from here (the start, or the trial end), so month ends do not drift. */
  billingCycleAnchor: string;
  currentPeriodStart: string;
  currentPeriodEnd: string;
  trialStart: string | null;
  trialEnd: string | null;
  cancelAtPeriodEnd: boolean;
  /** When a scheduled cancellation takes effect (the period end), or null. */
  cancelAt: string | null;
  /** When the cancellation was requested (at once or at period end). */
  canceledAt: string | null;
  cancellationReason: 'cancellation_requested' | null;
  cancellationComment: string | null;
  endedAt: string | null;
  pausedAt: string | null;
  /** When the latest renewal went unpaid past its due time; null when nothing is overdue. */
  pastDueSince: string | null;
  checkoutSessionId: string | null;
  /** The latest invoice (null while the latest bill is the creating checkout session). */
  latestInvoiceId: string | null;
  latestInvoice: SubscriptionBill | null;
  /**
   * Bills of earlier periods still owed (open, or a draft Weir could not finalize) when a later
   * period's renewal was issued, oldest first: each period is billed at its end even while an
   * earlier bill is open within its terms. Gone once settled; absent when there are none.
   */
  earlierBills?: SubscriptionBill[];
  /**
   * A trialing subscription that went past due before any bill was paid: it left `trialing` without
   * starting, so its first payment is still its `SubscriptionStarted`. Absent otherwise; not shown.
   */
  notStarted?: true;
};

/** The domain events of a subscription, as stored in the log (`type` + `data`). */
export type SubscriptionEvent =
  /** `dueIsInstant`: its bill's due time is an instant (older events: an invoice due at midnight is due all that day). */
  | { type: 'SubscriptionCreated'; data: { subscription: Subscription } & DueIsInstant }
  | { type: 'SubscriptionStarted'; data: { invoiceId: string; at: string } }
  /** The payer applied a promotion code to the first bill's checkout session: the bill asks `amountDue`. */
  | {
      type: 'FirstBillDiscounted';
      data: { invoiceId: string; promotionCodeId: string; amountDiscount: string; amountDue: string; at: string };
    }
  /** `amountToRefund`: what the first checkout session received of its amount (part-paid), owed back; absent when nothing. */
  | { type: 'SubscriptionIncompleteExpired'; data: { invoiceId: string | null; amountToRefund?: string; at: string } }
  /**
   * Money reached the first checkout session `invoiceId` after the subscription ended without starting
   * (a late payment of that session): it does not start it; `amount` (10^8) is owed back, added to the bill's `amountToRefund`.
   */
  | {
      type: 'FirstBillLatePaymentReceived';
      data: { invoiceId: string; transferId: string; amount: string; at: string };
    }
  | { type: 'RenewalInvoiceIssued'; data: { invoice: SubscriptionBill; at: string } & DueIsInstant }
  | { type: 'RenewalPaid'; data: { invoiceId: string; at: string } }
  /** Weir could not finalize the renewal's invoice (its `InvoiceFinalizationFailed`): the bill is a draft, not owed yet. */
  | { type: 'RenewalInvoiceNotFinalized'; data: { invoiceId: string; at: string } }
  /**
   * The merchant finalized that draft at last: the bill is open, due at `dueAt` (the invoice's due date then, an
   * instant). From `past_due` or `unpaid` (a bill an older Weir let lapse while a draft): active again.
   */
  | { type: 'RenewalInvoiceFinalized'; data: { invoiceId: string; dueAt: string; at: string } }
  | { type: 'RenewalPaymentMissed'; data: { invoiceId: string; at: string } }
  | { type: 'RenewalInvoiceDeleted'; data: { invoiceId: string; at: string } }
  | { type: 'RenewalInvoiceVoided'; data: { invoiceId: string; at: string } }
  | { type: 'SubscriptionMarkedUnpaid'; data: { at: string } }
  | { type: 'SubscriptionCancelScheduled'; data: { cancelAt: string; comment: string | null; at: string } }
  | { type: 'SubscriptionCancelRevoked'; data: { at: string } }
  | { type: 'SubscriptionCanceled'; data: { atPeriodEnd: boolean; comment: string | null; at: string } }
  | { type: 'SubscriptionPaused'; data: { at: string } }
  | { type: 'SubscriptionResumed'; data: { currentPeriodEnd: string; billingCycleAnchor: string; at: string } };

export type SubscriptionEventType = SubscriptionEvent['type'];

/** The public webhook event each domain event announces (the others announce none). */
export const SUBSCRIPTION_WEBHOOK_EVENTS: Partial<Record<SubscriptionEventType, `customer.subscription.${string}`>> = {
  SubscriptionCreated: 'customer.subscription.created',
  SubscriptionStarted: 'customer.subscription.started',
  SubscriptionIncompleteExpired: 'customer.subscription.incomplete_expired',
  RenewalPaymentMissed: 'customer.subscription.past_due',
  SubscriptionMarkedUnpaid: 'customer.subscription.unpaid',
  SubscriptionCanceled: 'customer.subscription.deleted',
};
