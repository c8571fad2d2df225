import { exclusiveTaxOf, taxOf } from '../src/shared/tax.ts';
import { InvalidStateError, ValidationError } from '../src/shared/errors.ts';
import { deterministicId } from '../src/shared/ids.ts';
import { AmountError, MAX_AMOUNT, parseAmount } from '../src/shared/money.ts';
import { evolveInvoice, sumLineItems, withChanges } from './invoice.evolve.ts';
import type { InvoiceSnapshot } from './invoice.aggregate.ts';
import { addInterval } from './billing-calendar.ts';
import { isOverdue } from './invoice.due.ts';
import { isReminderRecorded, isReminderSuperseded } from './invoice.reminders.ts';
import type { Invoice, InvoiceChanges, InvoiceEvent, InvoiceLineItem, InvoiceReminderKind } from './invoice.types.ts';

export type InvoiceCommand =
  | { type: 'CreateInvoice'; invoice: Invoice }
  | { type: 'UpdateInvoice'; changes: InvoiceChanges }
  | { type: 'DeleteInvoice' }
  /**
   * `url` is the hosted payment page. `nextIssueDate`: when the next invoice of a recurring series
   * is due to be issued, for a caller that keeps its own calendar (a subscription counts periods
   * from its anchor); by default the issue date plus the interval; null: none, the series ends with
   * it (a renewal of a subscription that has ended). `dueDate`: a new due date it
   * opens with (a renewal finalized after its own). A draft with nothing to pay is paid at once (see `finalize`).
   */
  | { type: 'FinalizeInvoice'; url: string; nextIssueDate?: string | null; dueDate?: string }
  /**
   * Email the invoice (`to` null: the customer's address); a draft is finalized first. `mailed`
   * says who mails it: true when the caller already did (the API's send, which mails inline, so
   * every send is recorded); false when the system sends it and the mail dispatcher mails it
   * from the recorded `InvoiceSent` (once: an invoice already sent is not sent again this way).
   * A draft with nothing to pay is only finalized, which settles it: nothing is sent. `nextIssueDate`
   * and `dueDate` as for `FinalizeInvoice`, when it finalizes a draft.
   */
  | {
      type: 'SendInvoice';
      to: string | null;
      url: string;
      mailed: boolean;
      nextIssueDate?: string | null;
      dueDate?: string;
    }
  /**
   * The subscription of a recurring invoice ended: the next invoice it announced will never be issued,
   * so it announces none (nothing when it announces none: a repeat, a void or unscheduled one).
   */
  | { type: 'UnscheduleNextRecurringInvoice'; reason: string }
  /**
   * Weir could not finalize a draft it was to finalize (a renewal): the refusal is recorded on it
   * (once: the same refusal again records nothing, so a redelivery or a replay changes nothing).
   */
  | { type: 'RecordInvoiceFinalizationFailure'; code: string; field: string | null; message: string }
  | { type: 'StartInvoicePaymentAttempt'; checkoutSessionId: string }
  /**
   * A linked checkout session completed; `amountReceived` is what it received, 10^8-scaled;
   * `chainId` the chain of `transactionHash` (absent when the session has no transfer of it).
   * `amountGasFee`: the network fee the session charged on top of the invoice (absent or "0":
   * none), which the invoice does not count (see `invoicePartOf`). An invoice paid already (through
   * another session, or marked paid) records what the session received beyond what it recorded
   * (`InvoicePaymentReceivedAfterPaid`), as a partial payment does; a void one records nothing.
   */
  | {
      type: 'RecordInvoicePayment';
      checkoutSessionId: string;
      transactionHash: string | null;
      chainId?: number;
      amountReceived: string;
      amountGasFee?: string;
    }
  /**
   * A linked checkout session received part of its amount and waits for the rest; `amountReceived`
   * is all it has received so far (10^8-scaled), so a repeat, or an older amount, records nothing.
   * `amountGasFee` as for `RecordInvoicePayment`. An invoice paid already counts it all the same
   * (`InvoicePaymentReceivedAfterPaid`); a void one records nothing.
   */
  | { type: 'RecordInvoicePartialPayment'; checkoutSessionId: string; amountReceived: string; amountGasFee?: string }
  | { type: 'RecordInvoicePaymentFailure'; checkoutSessionId: string; reason: string }
  /**
   * A linked checkout session that expired or was canceled received money after (a late payment), or one
   * complete received money past its total after its completion (an overpayment):
   * `amount` is that transfer's (10^8-scaled), `transactionHash` and `chainId` its transaction's.
   * The merchant's wallet holds it, so the invoice counts it as a part of what its session received
   * (`amountGasFee` as for `RecordInvoicePayment`): an open or uncollectible invoice it pays once it
   * covers what is owed, a paid one counts it as an overpayment, a void one records nothing. Once
   * per transfer: a repeat (a redelivery, a replay of the log) records nothing.
   */
  | {
      type: 'RecordInvoiceLatePayment';
      checkoutSessionId: string;
      transferId: string;
      amount: string;
      transactionHash: string | null;
      chainId?: number;
      amountGasFee?: string;
    }
  | { type: 'MarkInvoicePaid' }
  | { type: 'VoidInvoice' }
  | { type: 'MarkInvoiceUncollectible' }
  /**
   * One configured reminder: `days` before or after `dueDate` (the due date it was scheduled for).
   * Recorded as skipped instead of sent when a later reminder has come due too (see `isReminderSuperseded`).
   */
  | { type: 'SendInvoiceReminder'; kind: InvoiceReminderKind; days: number; dueDate: string };

export type DecideContext = { now: string };

/** Machine state: an invoice status, or `new` (no invoice yet) or `deleted` (a discarded draft). */
export type InvoiceState = Invoice['status'] | 'new' | 'deleted';

const statusOf = (snapshot: InvoiceSnapshot) => snapshot.value as InvoiceState;

const INTERVAL_COUNTS: readonly number[] = [1, 3, 6, 12];

/**
 * `iso` plus `months` calendar months (UTC), keeping the time of day. A day past the end of the
 * target month clamps to its last day: Jan 31 + 1 month is Feb 28 (Feb 29 in a leap year).
 */
export function addMonthsClamped(iso: string, months: number): string {
  if (Number.isNaN(Date.parse(iso))) throw new ValidationError('issueDate', 'must be an ISO 8601 date');
  return addInterval(iso, 'month', months);
}

/** The id of the next invoice of a recurring series: derived, so a retried finalize names the same one. */
export const nextInvoiceIdOf = (invoiceId: string): string => deterministicId(`invoice:${invoiceId}:next`);

function amount(value: string, field: string): bigint {
  try {
    return parseAmount(value);
  } catch (error) {
    if (error instanceof AmountError) throw new ValidationError(field, error.message);
    throw error;
  }
}

/** A session's network fee as its payment event carries it: left out when there is none, as events of sessions without one always were. */
function gasFeeOf(value: string | undefined): { amountGasFee?: string } {
  const fee = value === undefined ? 0n : amount(value, 'amountGasFee');
  return fee === 0n ? {} : { amountGasFee: fee.toString() };
}

/** Check the items and compute each total as quantity × unitAmount. */
function normalizeLineItems(items: InvoiceLineItem[]): InvoiceLineItem[] {
  if (items.length === 0) throw new ValidationError('lineItems.data', 'must hold at least one item');
  const normalized = items.map((item, i) => {
    if (!Number.isSafeInteger(item.quantity) || item.quantity < 1)
      throw new ValidationError(`lineItems.data[${i}].quantity`, 'must be a positive integer');
    // Exclusive tax (computed with the line, see `taxLine`) is added; inclusive tax is in the price.
    const total =
      amount(item.unitAmount, `lineItems.data[${i}].unitAmount`) * BigInt(item.quantity) +
      exclusiveTaxOf(item.taxRates);
    return {
      description: item.description,
      priceId: item.priceId,
      quantity: item.quantity,
      unitAmount: item.unitAmount,
      amountTotal: total.toString(),
      ...(item.taxRates ? { amountTax: taxOf(item.taxRates).toString(), taxRates: item.taxRates } : {}),
    };
  });
  if (BigInt(sumLineItems(normalized)) > MAX_AMOUNT)
    throw new ValidationError('lineItems.data', 'the total is larger than 9223372036854775807');
  return normalized;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const utcDay = (ms: number): number => Math.floor(ms / DAY_MS);

/**
 * A merchant's due date must fall on or after the day the invoice is issued (its `issueDate`, else
 * the day it is finalized, today at the earliest): one before would open the invoice overdue. A due
 * date in the past is refused as Stripe refuses it. Days are UTC days, so "due today" is allowed.
 * Checked by the API when the dates are set and again at finalize; not by the decider, since a
 * renewal Weir issues late (after downtime) keeps the due date of its period. Throws naming `field`.
 */
export function assertDueDateFits(
  invoice: Pick<Invoice, 'dueDate' | 'issueDate'>,
  now: string,
  field: 'dueDate' | 'daysUntilDue' = 'dueDate',
): void {
  const due = Date.parse(invoice.dueDate);
  const issue = invoice.issueDate === null ? Number.NaN : Date.parse(invoice.issueDate);
  if (Number.isNaN(due)) return;
  if (!Number.isNaN(issue) && utcDay(due) < utcDay(issue))
    throw new ValidationError(
      field,
      `is ${invoice.dueDate.slice(0, 10)}, before the issue date ${invoice.issueDate!.slice(0, 10)}: an invoice cannot fall due before it is issued; set a due date on or after the issue date`,
    );
  if (utcDay(due) < utcDay(Date.parse(now)))
    throw new ValidationError(
      field,
      `is ${invoice.dueDate.slice(0, 10)}, in the past (today is ${now.slice(0, 10)}): the invoice would be overdue the day it is issued; set a due date from today on`,
    );
}

/** The rules every draft must satisfy, whether created or edited. */
function validate(invoice: Invoice): void {
  if (Number.isNaN(Date.parse(invoice.dueDate)))
    throw new ValidationError('dueDate', 'must be a date or an ISO 8601 timestamp');
  if (invoice.issueDate !== null && Number.isNaN(Date.parse(invoice.issueDate)))
    throw new ValidationError('issueDate', 'must be a date or an ISO 8601 timestamp');
  if (invoice.invoiceType === 'recurring') {
    if (!invoice.recurring)
      throw new ValidationError('recurring', 'is required for a recurring invoice', 'parameter_missing');
    if (invoice.recurring.interval !== 'month') throw new ValidationError('recurring.interval', "must be 'month'");
    if (!INTERVAL_COUNTS.includes(invoice.recurring.intervalCount))
      throw new ValidationError('recurring.intervalCount', 'must be 1, 3, 6 or 12');
  } else if (invoice.recurring !== null) {
    throw new ValidationError('recurring', 'is only allowed on a recurring invoice');
  }
}

function requireInvoice(snapshot: InvoiceSnapshot): Invoice {
  const invoice = snapshot.context.invoice;
  if (!invoice) throw new InvalidStateError('invoice does not exist (status new)', 'resource_missing');
  return invoice;
}

const refuse = (status: InvoiceState, rule: string): never => {
  throw new InvalidStateError(`invoice is ${status}; ${rule}`);
};

/**
 * Whether money has arrived for the invoice (a session's partial payment, while it is open or
 * uncollectible): it cannot be voided then, as Stripe refuses to void an invoice with a partial
 * payment; it is paid (its session completed, or marked paid) or written off instead.
 */
/**
 * Whether money reached the invoice through a checkout session: counted toward it, or only a part
 * short of the network fee its session charged on top (which counts 0 toward the invoice).
 */
export const hasReceivedPayment = (invoice: Pick<Invoice, 'amountPaid' | 'paymentAttempts'>): boolean =>
  BigInt(invoice.amountPaid) > 0n || invoice.paymentAttempts.some((a) => BigInt(a.amountReceived) > 0n);

/**
 * Money a session of a paid invoice received (the payer paid twice): recorded when the session's
 * amount grows past what its attempt holds (`received` is all it received so far), so the invoice
 * counts it and shows the overpayment. A repeat, an older redelivery, the payment that paid the
 * invoice, or a session completed as is with the part it had (counted when it came) is nothing, so
 * a replay of the log changes nothing. `completion`: the session is paid, with its transaction.
 */
function receivedAfterPaid(
  invoice: Invoice,
  checkoutSessionId: string,
  received: bigint,
  fee: { amountGasFee?: string },
  now: string,
  completion: { transactionHash: string | null; chainId?: number } | null,
): InvoiceEvent[] {
  const attempt = invoice.paymentAttempts.find((a) => a.checkoutSessionId === checkoutSessionId);
  if (received === 0n || (attempt && BigInt(attempt.amountReceived) >= received)) return [];
  return [
    {
      type: 'InvoicePaymentReceivedAfterPaid',
      data: {
        checkoutSessionId,
        amountReceived: received.toString(),
        ...fee,
        completed: completion !== null,
        transactionHash: completion?.transactionHash ?? null,
        ...(completion?.chainId !== undefined && { chainId: completion.chainId }),
        at: now,
      },
    },
  ];
}

/**
 * Money a session received after it expired or was canceled, counted on its invoice (see
 * `RecordInvoiceLatePayment`): added to what its attempt received, as a partial payment is, so the
 * session's network fee is still paid first from all of it. An open or uncollectible invoice it
 * covers is paid by it (`InvoicePaid`: its webhook, receipt and subscription follow as for any
 * payment); a paid one counts it as paid twice (`InvoicePaymentReceivedAfterPaid`).
 */
function latePayment(
  invoice: Invoice,
  status: 'open' | 'uncollectible' | 'paid',
  command: Extract<InvoiceCommand, { type: 'RecordInvoiceLatePayment' }>,
  now: string,
): InvoiceEvent[] {
  const { checkoutSessionId, transferId } = command;
  const late = amount(command.amount, 'amount');
  // Counted already, or dust the 10^8 scale reads as nothing (it stays on the session).
  if (late === 0n || invoice.lateTransferIds?.includes(transferId)) return [];
  const attempt = invoice.paymentAttempts.find((a) => a.checkoutSessionId === checkoutSessionId);
  const amountReceived = ((attempt ? BigInt(attempt.amountReceived) : 0n) + late).toString();
  const fee = gasFeeOf(command.amountGasFee);
  if (status === 'paid')
    return [
      {
        type: 'InvoicePaymentReceivedAfterPaid',
        data: {
          checkoutSessionId,
          amountReceived,
          ...fee,
          completed: false,
          transactionHash: null,
          transferId,
          at: now,
        },
      },
    ];
  const counted: InvoiceEvent[] = [
    ...(attempt ? [] : [{ type: 'InvoicePaymentAttemptStarted' as const, data: { checkoutSessionId, at: now } }]),
    { type: 'InvoicePartialPaymentReceived', data: { checkoutSessionId, amountReceived, ...fee, transferId, at: now } },
  ];
  const after = counted.reduce<Invoice | null>(evolveInvoice, invoice)!;
  if (BigInt(after.amountRemaining) > 0n) return counted;
  return [
    ...counted,
    {
      type: 'InvoicePaid',
      data: {
        checkoutSessionId,
        transactionHash: command.transactionHash,
        ...(command.chainId !== undefined && { chainId: command.chainId }),
        amountPaid: amountReceived,
        ...fee,
        at: now,
      },
    },
  ];
}

/** Whether the invoice has nothing to pay: its finalize settles it (see `finalize`). */
const isZeroTotal = (invoice: Invoice): boolean => BigInt(invoice.amountDue) === 0n;

/** An invoice its finalize settled because it had nothing to pay: a repeated finalize or system send is nothing. */
const settledAtFinalize = (invoice: Invoice, status: InvoiceState): boolean =>
  status === 'paid' && isZeroTotal(invoice) && !invoice.paidOutOfBand;

/**
 * Finalizing: the invoice opens for payment and a recurring one schedules its successor. One with
 * nothing to pay is paid at once, as Stripe does: no payment can ever be made to it (a checkout
 * session needs an amount), so it would stay open for good. It is paid like any other
 * (`InvoicePaid`: the `invoice.paid` webhook, the receipt mail, its subscription starts or renews),
 * through no checkout session and for 0.
 */
function finalize(
  draft: Invoice,
  url: string,
  now: string,
  terms: { nextIssueDate?: string | null | undefined; dueDate?: string | undefined },
): InvoiceEvent[] {
  const { nextIssueDate } = terms;
  if (terms.dueDate !== undefined && Number.isNaN(Date.parse(terms.dueDate)))
    throw new ValidationError('dueDate', 'must be an ISO 8601 timestamp');
  const invoice = terms.dueDate === undefined ? draft : { ...draft, dueDate: terms.dueDate };
  // The first invoice of a series bills its subscription's first period, which expires unpaid once
  // the invoice is overdue: one overdue already would open, then be voided with its subscription at once.
  const startsSeries = invoice.invoiceType === 'recurring' && invoice.subscriptionId === null;
  if (startsSeries && !isZeroTotal(invoice) && isOverdue(invoice, Date.parse(now)))
    throw new ValidationError(
      'dueDate',
      `is ${invoice.dueDate}, already past: the subscription of a recurring invoice ends unpaid once its first invoice is overdue, so it would end at once; set a later due date`,
    );
  const issueDate = invoice.issueDate ?? now;
  const events: InvoiceEvent[] = [
    { type: 'InvoiceFinalized', data: { number: invoice.number, url, issueDate, dueDate: invoice.dueDate, at: now } },
  ];
  if (invoice.invoiceType === 'recurring' && invoice.recurring && nextIssueDate !== null) {
    events.push({
      type: 'NextRecurringInvoiceScheduled',
      data: {
        nextInvoiceId: nextInvoiceIdOf(invoice.id),
        issueDate: nextIssueDate ?? addMonthsClamped(issueDate, invoice.recurring.intervalCount),
        at: now,
      },
    });
  }
  if (isZeroTotal(invoice))
    events.push({
      type: 'InvoicePaid',
      data: { checkoutSessionId: null, transactionHash: null, amountPaid: '0', at: now },
    });
  return events;
}

/** The changed fields only, so an edit that changes nothing produces no event. */
function effectiveChanges(invoice: Invoice, changes: InvoiceChanges): InvoiceChanges {
  const changed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    // Absent is as null: clearing a preferred chain the invoice does not have changes nothing.
    if (JSON.stringify(value) !== JSON.stringify(invoice[key as keyof Invoice] ?? null)) changed[key] = value;
  }
  return changed as InvoiceChanges;
}

/**
 * Decide which facts a command produces. Repeating a command that already took effect (a second
 * finalize, the same payment twice, the same reminder) produces no events, so redelivered messages
 * change nothing; a command the status forbids is refused with an error naming the status.
 */
export function decideInvoice(snapshot: InvoiceSnapshot, command: InvoiceCommand, ctx: DecideContext): InvoiceEvent[] {
  const status = statusOf(snapshot);
  const { now } = ctx;
  if (command.type === 'CreateInvoice') {
    if (status !== 'new') return [];
    const lineItems = normalizeLineItems(command.invoice.lineItems.data);
    const amountDue = sumLineItems(lineItems);
    const invoice: Invoice = {
      ...command.invoice,
      status: 'draft',
      lineItems: { object: 'list', data: lineItems },
      amountDue,
      amountPaid: '0',
      amountRemaining: amountDue,
    };
    validate(invoice);
    return [{ type: 'InvoiceCreated', data: { invoice, dueIsInstant: true } }];
  }
  const invoice = requireInvoice(snapshot);
  switch (command.type) {
    case 'UpdateInvoice': {
      if (status !== 'draft') return refuse(status, 'only a draft invoice can be updated');
      const changes: InvoiceChanges = { ...command.changes };
      if (changes.lineItems) changes.lineItems = { object: 'list', data: normalizeLineItems(changes.lineItems.data) };
      validate(withChanges(invoice, changes));
      const changed = effectiveChanges(invoice, changes);
      if (Object.keys(changed).length === 0) return [];
      const marked = changed.dueDate === undefined ? {} : { dueIsInstant: true as const };
      return [{ type: 'InvoiceUpdated', data: { changes: changed, at: now, ...marked } }];
    }
    case 'DeleteInvoice': {
      if (status === 'deleted') return [];
      if (status !== 'draft') return refuse(status, 'only a draft invoice can be deleted (void an open one)');
      return [{ type: 'InvoiceDeleted', data: { at: now } }];
    }
    case 'FinalizeInvoice': {
      if (status === 'open' || settledAtFinalize(invoice, status)) return [];
      if (status !== 'draft') return refuse(status, 'only a draft invoice can be finalized');
      return finalize(invoice, command.url, now, command);
    }
    case 'RecordInvoiceFinalizationFailure': {
      if (status !== 'draft') return refuse(status, 'only a draft invoice fails to finalize');
      const { code, field, message } = command;
      const last = invoice.lastFinalizationError;
      if (last && last.code === code && last.field === field && last.message === message) return [];
      return [{ type: 'InvoiceFinalizationFailed', data: { code, field, message, at: now, announced: true } }];
    }
    case 'SendInvoice': {
      if (!command.mailed && (invoice.sentAt !== null || settledAtFinalize(invoice, status))) return [];
      const sent: InvoiceEvent = { type: 'InvoiceSent', data: { to: command.to, at: now, mailed: command.mailed } };
      // Nothing to pay: finalizing settles it, and there is no invoice to send (its receipt follows the payment).
      if (status === 'draft' && isZeroTotal(invoice)) return finalize(invoice, command.url, now, command);
      if (status === 'draft') return [...finalize(invoice, command.url, now, command), sent];
      if (status === 'open') return [sent];
      return refuse(status, 'only a draft or open invoice can be sent');
    }
    case 'UnscheduleNextRecurringInvoice': {
      if (invoice.nextInvoice === null) return [];
      const data = { nextInvoiceId: invoice.nextInvoice.id, reason: command.reason, at: now };
      return [{ type: 'NextRecurringInvoiceUnscheduled', data }];
    }
    case 'StartInvoicePaymentAttempt': {
      if (status !== 'open' && status !== 'uncollectible')
        return refuse(status, 'a payment can only start while the invoice is open or uncollectible');
      if (invoice.paymentAttempts.some((a) => a.checkoutSessionId === command.checkoutSessionId)) return [];
      return [
        { type: 'InvoicePaymentAttemptStarted', data: { checkoutSessionId: command.checkoutSessionId, at: now } },
      ];
    }
    case 'RecordInvoicePayment': {
      const received = amount(command.amountReceived, 'amountReceived').toString();
      const fee = gasFeeOf(command.amountGasFee);
      if (status === 'paid')
        return receivedAfterPaid(invoice, command.checkoutSessionId, BigInt(received), fee, now, {
          transactionHash: command.transactionHash,
          ...(command.chainId !== undefined && { chainId: command.chainId }),
        });
      // A void invoice takes no money: a payment to one stays recorded on its checkout session alone.
      if (status === 'void') return [];
      if (status !== 'open' && status !== 'uncollectible')
        return refuse(status, 'a payment can only be recorded while the invoice is open or uncollectible');
      const paid: InvoiceEvent = {
        type: 'InvoicePaid',
        data: {
          checkoutSessionId: command.checkoutSessionId,
          transactionHash: command.transactionHash,
          ...(command.chainId !== undefined && { chainId: command.chainId }),
          amountPaid: received,
          ...fee,
          at: now,
        },
      };
      const linked = invoice.paymentAttempts.some((a) => a.checkoutSessionId === command.checkoutSessionId);
      // A session whose link was never recorded (a crash in between) is linked now rather than dropped.
      return linked
        ? [paid]
        : [
            { type: 'InvoicePaymentAttemptStarted', data: { checkoutSessionId: command.checkoutSessionId, at: now } },
            paid,
          ];
    }
    case 'RecordInvoicePartialPayment': {
      const received = amount(command.amountReceived, 'amountReceived');
      const fee = gasFeeOf(command.amountGasFee);
      if (status === 'paid') return receivedAfterPaid(invoice, command.checkoutSessionId, received, fee, now, null);
      // Void meanwhile: the money stays recorded on its checkout session, as a payment does.
      if (status === 'void') return [];
      if (status !== 'open' && status !== 'uncollectible')
        return refuse(status, 'a payment can only be recorded while the invoice is open or uncollectible');
      const attempt = invoice.paymentAttempts.find((a) => a.checkoutSessionId === command.checkoutSessionId);
      // A repeat, or a redelivery older than what is recorded.
      if (received === 0n || (attempt && BigInt(attempt.amountReceived) >= received)) return [];
      const partial: InvoiceEvent = {
        type: 'InvoicePartialPaymentReceived',
        data: { checkoutSessionId: command.checkoutSessionId, amountReceived: received.toString(), ...fee, at: now },
      };
      return attempt
        ? [partial]
        : [
            { type: 'InvoicePaymentAttemptStarted', data: { checkoutSessionId: command.checkoutSessionId, at: now } },
            partial,
          ];
    }
    case 'RecordInvoiceLatePayment': {
      // A void invoice takes no money: late money stays recorded on its checkout session alone.
      if (status === 'void') return [];
      if (status !== 'open' && status !== 'uncollectible' && status !== 'paid')
        return refuse(status, 'a late payment can only be recorded while the invoice is open, uncollectible or paid');
      return latePayment(invoice, status, command, now);
    }
    case 'RecordInvoicePaymentFailure': {
      if (status === 'paid' || status === 'void') return [];
      if (status !== 'open' && status !== 'uncollectible')
        return refuse(status, 'a payment can only fail while the invoice is open or uncollectible');
      const attempt = invoice.paymentAttempts.find((a) => a.checkoutSessionId === command.checkoutSessionId);
      if (!attempt || attempt.status !== 'pending') return [];
      return [
        {
          type: 'InvoicePaymentFailed',
          data: { checkoutSessionId: command.checkoutSessionId, reason: command.reason, at: now },
        },
      ];
    }
    case 'MarkInvoicePaid': {
      if (status === 'paid') return [];
      if (status !== 'open' && status !== 'uncollectible')
        return refuse(status, 'only an open or uncollectible invoice can be marked as paid');
      return [{ type: 'InvoiceMarkedAsPaid', data: { amountPaid: invoice.amountRemaining, at: now } }];
    }
    case 'VoidInvoice': {
      if (status === 'void') return [];
      if (status !== 'open' && status !== 'uncollectible') {
        return refuse(
          status,
          status === 'draft'
            ? 'a draft invoice is deleted, not voided'
            : 'only an open or uncollectible invoice can be voided',
        );
      }
      if (hasReceivedPayment(invoice))
        throw new InvalidStateError(
          `invoice is ${status} and has received ${
            BigInt(invoice.amountPaid) > 0n
              ? `${invoice.amountPaid} of its ${invoice.amountDue} (10^8 units)`
              : 'a payment no larger than the network fee its session charged on top (nothing counted toward it yet)'
          } through a checkout session; an invoice with a partial payment cannot be voided: mark it paid or uncollectible instead`,
          'invoice_partially_paid',
        );
      return [{ type: 'InvoiceVoided', data: { at: now } }];
    }
    case 'MarkInvoiceUncollectible': {
      if (status === 'uncollectible') return [];
      if (status !== 'open') return refuse(status, 'only an open invoice can be marked uncollectible');
      return [{ type: 'InvoiceMarkedUncollectible', data: { at: now } }];
    }
    case 'SendInvoiceReminder': {
      // A reminder timer that outlived its reason (paid, voided, written off) does nothing.
      if (status === 'paid' || status === 'void' || status === 'uncollectible') return [];
      if (status !== 'open') return refuse(status, 'reminders are only sent for an open invoice');
      // A reminder the invoice does not ask for (another due date, switched off, not configured) does nothing.
      if (command.dueDate !== invoice.dueDate || !invoice.reminders.enabled) return [];
      const configured =
        command.kind === 'before_due' ? invoice.reminders.daysBeforeDue : invoice.reminders.daysAfterDue;
      if (!configured.includes(command.days)) return [];
      if (isReminderRecorded(invoice, command)) return [];
      const reminder = { kind: command.kind, days: command.days, dueDate: command.dueDate, at: now };
      // Fallen due together with a later reminder (after downtime): that one is mailed, this one skipped.
      if (isReminderSuperseded(invoice, command, Date.parse(now)))
        return [{ type: 'InvoiceReminderSkipped', data: { ...reminder, dueIsInstant: true } }];
      return [{ type: 'InvoiceReminderSent', data: { ...reminder, dueIsInstant: true } }];
    }
  }
}

/**
 * A draft invoice with every field at its default (no lines, due now, one-time, manual): callers
 * spread what they know over it, and CreateInvoice checks the result.
 */
export function newInvoiceDraft(input: Pick<Invoice, 'id' | 'organizationId' | 'environment' | 'createdAt'>): Invoice {
  const now = input.createdAt;
  return {
    ...input,
    updatedAt: now,
    number: 'INV-PENDING',
    customerId: '',
    description: null,
    currency: 'usdc',
    lineItems: { object: 'list', data: [] },
    amountDue: '0',
    amountPaid: '0',
    amountRemaining: '0',
    dueDate: now,
    issueDate: null,
    memo: null,
    footer: null,
    invoiceType: 'one_time',
    recurring: null,
    collectionMethod: 'send_invoice',
    billingReason: 'manual',
    subscriptionId: null,
    paymentMethods: { chainIds: [], assetIds: [] },
    reminders: { enabled: false, daysBeforeDue: [], daysAfterDue: [] },
    metadata: {},
    status: 'draft',
    url: null,
    paid: false,
    paidOutOfBand: false,
    attempted: false,
    attemptCount: 0,
    checkoutSessionId: null,
    paymentAttempts: [],
    transactionHash: null,
    remindersSent: [],
    remindersSkipped: [],
    nextInvoice: null,
    finalizedAt: null,
    sentAt: null,
    paidAt: null,
    voidedAt: null,
    markedUncollectibleAt: null,
    deletedAt: null,
  };
}
