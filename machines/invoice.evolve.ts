import { dueDateAsWritten } from './invoice.due.ts';
import type {
  Invoice,
  InvoiceChanges,
  InvoiceEvent,
  InvoiceLineItem,
  InvoicePaymentAttempt,
  InvoiceReminderSent,
  DueIsInstant,
} from './invoice.types.ts';

/** Sum of the line items' totals (10^8), as a digit string. */
export const sumLineItems = (items: InvoiceLineItem[]): string =>
  items.reduce((sum, item) => sum + BigInt(item.amountTotal), 0n).toString();

/** What is still owed: never negative (an overpayment leaves 0). */
export const remainingOf = (amountDue: string, amountPaid: string): string => {
  const rest = BigInt(amountDue) - BigInt(amountPaid);
  return (rest > 0n ? rest : 0n).toString();
};

/**
 * What was received beyond the amount: two sessions of one invoice both paid for it (one partly
 * before the other completed, or one after the invoice was paid), or a session was sent more than it
 * asked. The merchant refunds it.
 */
export const overpaidOf = (amountDue: string, amountPaid: string): string => remainingOf(amountPaid, amountDue);

const changeAttempt = (
  attempts: InvoicePaymentAttempt[],
  checkoutSessionId: string | null,
  change: Partial<InvoicePaymentAttempt>,
): InvoicePaymentAttempt[] =>
  attempts.map((a) => (a.checkoutSessionId === checkoutSessionId ? { ...a, ...change } : a));

/**
 * What of `amountReceived` a session counts toward its invoice: the network fee it charged on top
 * is paid first from the money it received (as the volume report takes it), the rest is the
 * invoice's. So a part short of the fee counts 0, and a session paid exactly its total counts
 * the invoice's amount; an overpayment counts as received.
 */
export const invoicePartOf = (amountReceived: string, amountGasFee = '0'): bigint => {
  const part = BigInt(amountReceived) - BigInt(amountGasFee);
  return part > 0n ? part : 0n;
};

/** What the attempt through `checkoutSessionId` counted toward the invoice so far (0 for none, or an attempt recorded before partial payments were). */
const countedOn = (attempts: InvoicePaymentAttempt[], checkoutSessionId: string | null): bigint => {
  const attempt = attempts.find((a) => a.checkoutSessionId === checkoutSessionId);
  return attempt ? invoicePartOf(attempt.amountReceived, attempt.amountGasFee) : 0n;
};

/** The attempt's fee as an event gives it: absent when the event has none. */
const feeOf = (amountGasFee: string | undefined): Pick<InvoicePaymentAttempt, 'amountGasFee'> =>
  amountGasFee === undefined ? {} : { amountGasFee };

/** The late transfers counted, with the event's (an event of no late payment leaves them as they were). */
const lateOf = (invoice: Invoice, transferId: string | undefined): Pick<Invoice, 'lateTransferIds'> =>
  transferId === undefined ? {} : { lateTransferIds: [...(invoice.lateTransferIds ?? []), transferId] };

/** The late transfers that paid it, with the event's: counted while it was still owed (see `latePaidTransferIds`). */
const latePaidOf = (invoice: Invoice, transferId: string | undefined): Pick<Invoice, 'latePaidTransferIds'> =>
  transferId === undefined ? {} : { latePaidTransferIds: [...(invoice.latePaidTransferIds ?? []), transferId] };

/** A reminder as recorded, keyed by the due date it was for as the invoice reads it (`dueDateAsWritten`). */
const reminderOf = ({ dueIsInstant, ...reminder }: InvoiceReminderSent & DueIsInstant): InvoiceReminderSent => ({
  ...reminder,
  dueDate: dueDateAsWritten(reminder.dueDate, dueIsInstant),
});

/** The invoice with `changes` applied: a `preferredChainId` of null removes it, so none is stored as null. */
export function withChanges(invoice: Invoice, changes: InvoiceChanges): Invoice {
  const { preferredChainId, ...rest } = changes;
  const { preferredChainId: current, ...changed } = { ...invoice, ...rest };
  const preferred = preferredChainId === undefined ? current : (preferredChainId ?? undefined);
  return preferred === undefined ? changed : { ...changed, preferredChainId: preferred };
}

/**
 * The one place that computes an invoice's data from its events. The statechart calls it from
 * its actions and the projection calls it directly, so the write and read sides cannot drift.
 */
export function evolveInvoice(invoice: Invoice | null, event: InvoiceEvent): Invoice | null {
  // An invoice created before reminders could be skipped has no list of them.
  if (event.type === 'InvoiceCreated') {
    const created = event.data.invoice;
    const dueDate = dueDateAsWritten(created.dueDate, event.data.dueIsInstant);
    return { ...created, dueDate, remindersSkipped: created.remindersSkipped ?? [] };
  }
  if (invoice === null) return null;
  switch (event.type) {
    case 'InvoiceUpdated': {
      const { changes, dueIsInstant } = event.data;
      const moved = changes.dueDate === undefined ? {} : { dueDate: dueDateAsWritten(changes.dueDate, dueIsInstant) };
      const next: Invoice = { ...withChanges(invoice, changes), ...moved, updatedAt: event.data.at };
      const amountDue = sumLineItems(next.lineItems.data);
      return { ...next, amountDue, amountRemaining: remainingOf(amountDue, next.amountPaid) };
    }
    case 'InvoiceDeleted':
      return { ...invoice, updatedAt: event.data.at, deletedAt: event.data.at };
    case 'InvoiceFinalized': {
      // Finalized at last: an earlier failure no longer applies (invoices that never failed are as they were).
      const { lastFinalizationError: _failed, ...rest } = invoice;
      return {
        ...rest,
        status: 'open',
        number: event.data.number,
        url: event.data.url,
        issueDate: event.data.issueDate,
        dueDate: event.data.dueDate ?? invoice.dueDate,
        updatedAt: event.data.at,
        finalizedAt: event.data.at,
      };
    }
    case 'InvoiceFinalizationFailed': {
      const { code, field, message, at } = event.data;
      return { ...invoice, updatedAt: at, lastFinalizationError: { code, field, message, at } };
    }
    case 'NextRecurringInvoiceScheduled':
      return {
        ...invoice,
        updatedAt: event.data.at,
        nextInvoice: { id: event.data.nextInvoiceId, issueDate: event.data.issueDate },
      };
    case 'NextRecurringInvoiceUnscheduled':
      return { ...invoice, updatedAt: event.data.at, nextInvoice: null };
    case 'InvoiceSent':
      return { ...invoice, updatedAt: event.data.at, sentAt: event.data.at };
    case 'InvoicePaymentAttemptStarted':
      return {
        ...invoice,
        updatedAt: event.data.at,
        attempted: true,
        attemptCount: invoice.attemptCount + 1,
        checkoutSessionId: event.data.checkoutSessionId,
        paymentAttempts: [
          ...invoice.paymentAttempts,
          {
            checkoutSessionId: event.data.checkoutSessionId,
            status: 'pending',
            startedAt: event.data.at,
            endedAt: null,
            failureReason: null,
            amountReceived: '0',
          },
        ],
      };
    case 'InvoicePartialPaymentReceived': {
      // What the session had counted is counted already: only the difference is new.
      const { amountReceived, amountGasFee, transferId } = event.data;
      const before = countedOn(invoice.paymentAttempts, event.data.checkoutSessionId);
      const amountPaid = (BigInt(invoice.amountPaid) - before + invoicePartOf(amountReceived, amountGasFee)).toString();
      return {
        ...invoice,
        ...lateOf(invoice, transferId),
        ...latePaidOf(invoice, transferId),
        amountPaid,
        amountRemaining: remainingOf(invoice.amountDue, amountPaid),
        paymentAttempts: changeAttempt(invoice.paymentAttempts, event.data.checkoutSessionId, {
          amountReceived,
          ...feeOf(amountGasFee),
        }),
        updatedAt: event.data.at,
      };
    }
    case 'InvoicePaid': {
      // The session's amount is all it received, its partial payments included (counted already).
      const { amountGasFee } = event.data;
      const before = countedOn(invoice.paymentAttempts, event.data.checkoutSessionId);
      const amountPaid = (
        BigInt(invoice.amountPaid) -
        before +
        invoicePartOf(event.data.amountPaid, amountGasFee)
      ).toString();
      // An event without the chain (none, or stored before it was recorded) leaves the field out, as it was.
      return {
        ...invoice,
        ...(event.data.chainId !== undefined && { transactionChainId: event.data.chainId }),
        status: 'paid',
        paid: true,
        amountPaid,
        amountRemaining: remainingOf(invoice.amountDue, amountPaid),
        checkoutSessionId: event.data.checkoutSessionId,
        transactionHash: event.data.transactionHash,
        paymentAttempts: changeAttempt(invoice.paymentAttempts, event.data.checkoutSessionId, {
          status: 'succeeded',
          endedAt: event.data.at,
          // Paid late (after its expiry or cancel): the failure it was recorded with no longer stands.
          failureReason: null,
          amountReceived: event.data.amountPaid,
          ...feeOf(amountGasFee),
        }),
        updatedAt: event.data.at,
        paidAt: event.data.at,
      };
    }
    case 'InvoicePaymentReceivedAfterPaid': {
      // Paid twice: only what the session received beyond what it had counted is new; the invoice
      // stays paid by the payment that paid it.
      const { checkoutSessionId, amountReceived, amountGasFee, completed, transferId, at } = event.data;
      const before = countedOn(invoice.paymentAttempts, checkoutSessionId);
      const amountPaid = (BigInt(invoice.amountPaid) - before + invoicePartOf(amountReceived, amountGasFee)).toString();
      const received = {
        amountReceived,
        ...feeOf(amountGasFee),
        ...(completed && { status: 'succeeded' as const, endedAt: at, failureReason: null }),
      };
      const linked = invoice.paymentAttempts.some((a) => a.checkoutSessionId === checkoutSessionId);
      // A session whose link was lost (a crash in between) is linked by its money.
      const attempts = linked
        ? changeAttempt(invoice.paymentAttempts, checkoutSessionId, received)
        : [
            ...invoice.paymentAttempts,
            {
              checkoutSessionId,
              status: 'pending' as const,
              startedAt: at,
              endedAt: null,
              failureReason: null,
              ...received,
            },
          ];
      return {
        ...invoice,
        ...lateOf(invoice, transferId),
        amountPaid,
        amountRemaining: remainingOf(invoice.amountDue, amountPaid),
        ...(!linked && { attempted: true, attemptCount: invoice.attemptCount + 1 }),
        paymentAttempts: attempts,
        updatedAt: at,
      };
    }
    case 'InvoicePaymentFailed':
      return {
        ...invoice,
        updatedAt: event.data.at,
        paymentAttempts: changeAttempt(invoice.paymentAttempts, event.data.checkoutSessionId, {
          status: 'failed',
          endedAt: event.data.at,
          failureReason: event.data.reason,
        }),
      };
    case 'InvoiceMarkedAsPaid': {
      const amountPaid = (BigInt(invoice.amountPaid) + BigInt(event.data.amountPaid)).toString();
      return {
        ...invoice,
        status: 'paid',
        paid: true,
        paidOutOfBand: true,
        amountPaid,
        amountRemaining: remainingOf(invoice.amountDue, amountPaid),
        updatedAt: event.data.at,
        paidAt: event.data.at,
      };
    }
    case 'InvoiceVoided':
      // Nothing is issued after a void invoice: a subscription issues its next invoice only once its
      // latest one is paid, which a void one never is. It no longer announces a next invoice.
      return { ...invoice, status: 'void', updatedAt: event.data.at, voidedAt: event.data.at, nextInvoice: null };
    case 'InvoiceMarkedUncollectible':
      return { ...invoice, status: 'uncollectible', updatedAt: event.data.at, markedUncollectibleAt: event.data.at };
    case 'InvoiceReminderSent':
      return {
        ...invoice,
        updatedAt: event.data.at,
        remindersSent: [...invoice.remindersSent, reminderOf(event.data)],
      };
    case 'InvoiceReminderSkipped':
      return {
        ...invoice,
        updatedAt: event.data.at,
        remindersSkipped: [...invoice.remindersSkipped, reminderOf(event.data)],
      };
  }
}
