import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import type { InvoiceReminderKind } from '../../machines/invoice.types.ts';
import type { CheckoutSessionStatus } from '../../machines/checkout-session.types.ts';
import type { CommandHandler } from '../actors/command-handler.ts';
import { COLLECTIONS, type CheckoutSessionDoc, type TimerDoc } from '../projections/collections.ts';
import { REMINDER_TIMER } from '../projections/invoice-reminder-timers.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { ChainReadGate } from './chain-read-gate.ts';
import type { TimerHandler } from './timer-runner.ts';

const KINDS: readonly string[] = ['before_due', 'after_due'] satisfies InvoiceReminderKind[];
/** Sessions that can still take a payment: open, or partially paid (`incomplete`). */
const PAYABLE: CheckoutSessionStatus[] = ['open', 'incomplete'];

/**
 * An invoice reminder falls due: the invoice records it (`InvoiceReminderSent`, once per kind, day
 * offset and due date), which removes the timer and queues the reminder mail. A reminder the
 * invoice no longer needs (paid, void, written off) records nothing; one that fell due together
 * with a later one (after downtime) is recorded as `InvoiceReminderSkipped`, with no mail. While
 * the invoice has a checkout session (opened on its pay page) that can still be paid, the reminder
 * first waits, like that session's expiry, for the chain followers of the session's networks to
 * have read up to the reminder's time (see `createChainReadGate`): the invoice may have been paid
 * in time in blocks not read yet (after downtime), and then no reminder is owed.
 */
export function invoiceTimerHandlers(
  commands: CommandHandler,
  chains?: { readStore: ReadStore; gate: ChainReadGate },
): Record<string, TimerHandler> {
  const unread = async (timer: TimerDoc): Promise<boolean> => {
    if (!chains) return false;
    const sessions = await chains.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).find({
      organizationId: timer.organizationId,
      environment: timer.environment,
      invoiceId: timer.recordId,
      status: { $in: PAYABLE },
    });
    return chains.gate.holds(
      sessions.flatMap((session) => session.addresses.map((address) => address.network)),
      timer.fireAt,
    );
  };
  return {
    [REMINDER_TIMER]: async (timer, ctx) => {
      const { kind, days, dueDate } = timer.args ?? {};
      if (typeof kind !== 'string' || !KINDS.includes(kind) || typeof days !== 'number' || typeof dueDate !== 'string')
        return { position: null };
      if (await unread(timer)) return { notYet: true };
      return commands.handle(
        invoiceAggregate,
        timer.recordId,
        { type: 'SendInvoiceReminder', kind: kind as InvoiceReminderKind, days, dueDate },
        ctx,
      );
    },
  };
}
