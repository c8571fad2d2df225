import type { Environment } from '../src/event-store/event-store.ts';
import type { AppliedTaxRate } from '../src/shared/tax.ts';

/**
 * Invoice statuses of the reference API (`InvoiceStatus`). The spec spells the last one
 * `uncollectable`; Weir stores and answers the reference spelling `uncollectible`.
 */
export type InvoiceStatus = 'draft' | 'open' | 'paid' | 'void' | 'uncollectible';
export type InvoiceType = 'one_time' | 'recurring';
export type InvoiceCollectionMethod = 'charge_automatically' | 'send_invoice';
export type InvoiceBillingReason =
  | 'subscription_cycle'
  | 'subscription_create'
  | 'subscription_update'
  | 'subscription'
  | 'manual'
  | 'upcoming'
  | 'subscription_threshold';

/** Dashboard intervals: monthly, quarterly, half-yearly, annually. */
export type RecurringIntervalCount = 1 | 3 | 6 | 12;
export type InvoiceRecurring = { interval: 'month'; intervalCount: RecurringIntervalCount };

export type InvoiceLineItem = {
  description: string | null;
  /** The catalog price this item was billed from, when there is one. */
  priceId: string | null;
  quantity: number;
  /** 10^8-scaled amount per unit. */
  unitAmount: string;
  /** quantity × unitAmount, plus the line's exclusive tax, 10^8-scaled. */
  amountTotal: string;
  /** All the line's tax (inclusive and exclusive); absent on invoices without tax rates. */
  amountTax?: string;
  /** The tax rates applied to the line, each with its amount; absent on invoices without tax rates. */
  taxRates?: AppliedTaxRate[];
};

/** What the payer may pay with; empty lists mean everything the organization accepts. */
export type InvoicePaymentMethods = { chainIds: number[]; assetIds: string[] };

export type InvoiceReminderKind = 'before_due' | 'after_due';
export type InvoiceReminderSettings = { enabled: boolean; daysBeforeDue: number[]; daysAfterDue: number[] };
/** One reminder sent: identified by its kind, its day offset from the due date and that due date. */
export type InvoiceReminderSent = { kind: InvoiceReminderKind; days: number; dueDate: string; at: string };
/**
 * One reminder recorded as skipped, never mailed: it fell due together with a later one (Weir was
 * down, or its clock jumped, over both times), and only that latest one was sent.
 */
export type InvoiceReminderSkipped = InvoiceReminderSent;

/**
 * Why Weir could not finalize a draft it was to finalize itself (a renewal subscription billing
 * issued): the refusal the finalize route answers for it (`code`, `field`, `message`), and when.
 * Stripe's `last_finalization_error`; the reference has no such field.
 */
export type InvoiceFinalizationError = { code: string; field: string | null; message: string; at: string };

/** A checkout session opened to pay the invoice. */
export type InvoicePaymentAttempt = {
  checkoutSessionId: string;
  status: 'pending' | 'succeeded' | 'failed';
  startedAt: string;
  endedAt: string | null;
  failureReason: string | null;
  /** What the session has received so far, 10^8-scaled: part of the amount while it waits for the rest, all of it once paid. */
  amountReceived: string;
  /**
   * The network fee the session charged on top of the invoice (`applyGasFee`), 10^8-scaled: paid
   * first from what it received, so not counted toward the invoice. Absent without one, and on
   * attempts recorded before it was (their whole amount counted).
   */
  amountGasFee?: string;
};

export type Invoice = {
  id: string;
  organizationId: string;
  environment: Environment;
  createdAt: string;
  updatedAt: string;
  /** Invoice number: auto-generated or entered by hand; frozen when the invoice is finalized. */
  number: string;
  customerId: string;
  description: string | null;
  currency: string;
  lineItems: { object: 'list'; data: InvoiceLineItem[] };
  /** The tax rates of lines that name none of their own; absent on invoices created without. */
  taxRateIds?: string[];
  /** Sum of the line items (with their exclusive tax), 10^8-scaled. */
  amountDue: string;
  /**
   * Received so far, 10^8-scaled: on chain (a session's partial payment counts while the invoice is
   * still open), or the rest when marked paid out of band.
   */
  amountPaid: string;
  /** max(0, amountDue − amountPaid), 10^8-scaled. */
  amountRemaining: string;
  dueDate: string;
  /** The date the invoice is (or will be) issued; a recurring series counts from it. Set on finalization when still null. */
  issueDate: string | null;
  memo: string | null;
  footer: string | null;
  invoiceType: InvoiceType;
  recurring: InvoiceRecurring | null;
  collectionMethod: InvoiceCollectionMethod;
  billingReason: InvoiceBillingReason;
  /** The subscription this invoice bills a period of (its first invoice, or a renewal), or null. */
  subscriptionId: string | null;
  paymentMethods: InvoicePaymentMethods;
  /** The network its pay page's session prefers, among its networks; absent: the organization's preferred one. */
  preferredChainId?: number;
  reminders: InvoiceReminderSettings;
  metadata: Record<string, string>;
  status: InvoiceStatus;
  /** Hosted payment page; set when the invoice is finalized. */
  url: string | null;
  paid: boolean;
  paidOutOfBand: boolean;
  attempted: boolean;
  attemptCount: number;
  /** The latest checkout session opened to pay the invoice. */
  checkoutSessionId: string | null;
  paymentAttempts: InvoicePaymentAttempt[];
  transactionHash: string | null;
  /**
   * The chain `transactionHash` is on, which decides how it is shown (a Tron txID bare). Absent
   * without a transaction, and on invoices paid before the payment recorded it.
   */
  transactionChainId?: number;
  /**
   * The late payments counted (money one of its sessions received after it expired or was canceled),
   * by transfer: each is counted once. Absent until one is. Not shown by the API: the attempt's
   * `amountReceived` holds the money.
   */
  lateTransferIds?: string[];
  /**
   * Of `lateTransferIds`, those counted while it was open or uncollectible (`InvoicePartialPaymentReceived`):
   * they paid it, so their session has nothing to settle for them. One counted once it was paid is its
   * overpayment, still to refund. Absent until one is.
   */
  latePaidTransferIds?: string[];
  remindersSent: InvoiceReminderSent[];
  /** Reminders that came due together with a later one and were skipped in its favour (see `InvoiceReminderSkipped`). */
  remindersSkipped: InvoiceReminderSkipped[];
  /**
   * The next invoice of a recurring series, scheduled when this one was finalized; null again once it
   * is void, or its subscription ended (`NextRecurringInvoiceUnscheduled`): none will be issued.
   */
  nextInvoice: { id: string; issueDate: string } | null;
  finalizedAt: string | null;
  /** The last failure of Weir's own finalize of this draft; gone once it is finalized. Absent: none (and on invoices before it). */
  lastFinalizationError?: InvoiceFinalizationError;
  sentAt: string | null;
  paidAt: string | null;
  voidedAt: string | null;
  markedUncollectibleAt: string | null;
  deletedAt: string | null;
};

/** The fields a draft may change; a `preferredChainId` of null clears it (the organization's applies again). */
export type InvoiceChanges = Partial<
  Pick<
    Invoice,
    | 'number'
    | 'customerId'
    | 'description'
    | 'currency'
    | 'lineItems'
    | 'taxRateIds'
    | 'dueDate'
    | 'issueDate'
    | 'memo'
    | 'footer'
    | 'invoiceType'
    | 'recurring'
    | 'collectionMethod'
    | 'paymentMethods'
    | 'reminders'
    | 'metadata'
  >
> & { preferredChainId?: number | null };

/**
 * On an event carrying a due date: that due date is an instant (a midnight is that instant). Events
 * stored before it read a midnight due date as that whole UTC day (see `dueDateAsWritten`).
 */
export type DueIsInstant = { dueIsInstant?: true };

/** The domain events of an invoice, as stored in the log (`type` + `data`). */
export type InvoiceEvent =
  | { type: 'InvoiceCreated'; data: { invoice: Invoice } & DueIsInstant }
  /** `dueIsInstant` on those that change the due date. */
  | { type: 'InvoiceUpdated'; data: { changes: InvoiceChanges; at: string } & DueIsInstant }
  | { type: 'InvoiceDeleted'; data: { at: string } }
  /**
   * `dueDate`: the due date it opens with, an instant: the draft's, or a new one its finalize set (a
   * renewal finalized after its due date). Absent from events of an older Weir: the draft's then.
   */
  | { type: 'InvoiceFinalized'; data: { number: string; url: string; issueDate: string; dueDate?: string; at: string } }
  /**
   * Weir could not finalize the draft (a renewal): it stays a draft, with the refusal recorded, until
   * the merchant fixes the organization or the draft and finalizes it.
   */
  /**
   * `announced`: sent as the `invoice.finalization_failed` webhook. Events recorded before that webhook
   * existed lack it, so a replay of an older log (a rebuilt read store) does not send them now.
   */
  | { type: 'InvoiceFinalizationFailed'; data: InvoiceFinalizationError & { announced?: true } }
  | { type: 'NextRecurringInvoiceScheduled'; data: { nextInvoiceId: string; issueDate: string; at: string } }
  /** Its subscription ended: the next invoice it announced will never be issued (`reason` says why). */
  | { type: 'NextRecurringInvoiceUnscheduled'; data: { nextInvoiceId: string; reason: string; at: string } }
  /**
   * `mailed`: whether the sender already mailed it (the API's send does, inline); false when the
   * system sent it and the mail dispatcher mails it. Events stored before the flag mean true.
   */
  | { type: 'InvoiceSent'; data: { to: string | null; at: string; mailed?: boolean } }
  | { type: 'InvoicePaymentAttemptStarted'; data: { checkoutSessionId: string; at: string } }
  /**
   * A checkout session of the invoice received part of its amount and waits for the rest;
   * `amountReceived` is all it has received so far (10^8-scaled). Money has arrived: the invoice
   * can no longer be voided, only paid (completed, or marked paid) or written off. `amountGasFee`:
   * the network fee the session charged on top, paid first from that money, so the invoice counts
   * the rest (see `invoicePartOf`); absent without one, and in events stored before it was recorded.
   * `transferId`: a late payment, the transfer that reached the session after it expired or was
   * canceled (its attempt failed, its money counts all the same: it is in the merchant's wallet);
   * absent for a session still open.
   */
  | {
      type: 'InvoicePartialPaymentReceived';
      data: {
        checkoutSessionId: string;
        amountReceived: string;
        amountGasFee?: string;
        transferId?: string;
        at: string;
      };
    }
  /**
   * `checkoutSessionId` null: paid at its finalize, having nothing to pay (amountPaid 0). `chainId`:
   * the chain of `transactionHash`; absent without one, and in events stored before it was recorded.
   * `amountPaid` is all the session received; `amountGasFee` the network fee it charged on top,
   * which the invoice does not count (as for a partial payment).
   */
  | {
      type: 'InvoicePaid';
      data: {
        checkoutSessionId: string | null;
        transactionHash: string | null;
        chainId?: number;
        amountPaid: string;
        amountGasFee?: string;
        at: string;
      };
    }
  /**
   * A checkout session of an invoice already paid received money for it: the payer paid twice (the
   * pay link opened twice, both sessions paid), and the invoice counts it (`amountOverpaid`, which the
   * merchant refunds). `amountReceived` is all the session has received so far (its partial payments
   * before included), `amountGasFee` its network fee on top (not counted, as for a partial payment);
   * `completed`: the session is paid (its attempt succeeded, `transactionHash` and `chainId` its
   * transaction's, when it has one), else it received part and waits for the rest. The invoice stays
   * paid, its own payment (`checkoutSessionId`, `transactionHash`) the one that paid it. `transferId`:
   * a late payment, as for a partial payment (never `completed`).
   */
  | {
      type: 'InvoicePaymentReceivedAfterPaid';
      data: {
        checkoutSessionId: string;
        amountReceived: string;
        amountGasFee?: string;
        completed: boolean;
        transactionHash: string | null;
        chainId?: number;
        transferId?: string;
        at: string;
      };
    }
  | { type: 'InvoicePaymentFailed'; data: { checkoutSessionId: string; reason: string; at: string } }
  | { type: 'InvoiceMarkedAsPaid'; data: { amountPaid: string; at: string } }
  | { type: 'InvoiceVoided'; data: { at: string } }
  | { type: 'InvoiceMarkedUncollectible'; data: { at: string } }
  | { type: 'InvoiceReminderSent'; data: InvoiceReminderSent & DueIsInstant }
  | { type: 'InvoiceReminderSkipped'; data: InvoiceReminderSkipped & DueIsInstant };

export type InvoiceEventType = InvoiceEvent['type'];
