import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import type { InvoiceReminderKind } from '../../machines/invoice.types.ts';
import type { CommandHandler } from '../actors/command-handler.ts';
import { REMINDER_TIMER } from '../projections/invoice-reminder-timers.ts';
import type { TimerHandler } from './timer-runner.ts';

const KINDS: readonly string[] = ['before_due', 'after_due'] satisfies InvoiceReminderKind[];

/**
 * An invoice reminder falls due: the invoice records it (`InvoiceReminderSent`, once per kind, day
 * offset and due date), which removes the timer and queues the reminder mail. A reminder the
 * invoice no longer needs (paid, void, written off) records nothing; one that fell due together
 * with a later one (after downtime) is recorded as `InvoiceReminderSkipped`, with no mail.
 */
export function invoiceTimerHandlers(commands: CommandHandler): Record<string, TimerHandler> {
  return {
    [REMINDER_TIMER]: async (timer, ctx) => {
      const { kind, days, dueDate } = timer.args ?? {};
      if (typeof kind !== 'string' || !KINDS.includes(kind) || typeof days !== 'number' || typeof dueDate !== 'string') return { position: null };
      return commands.handle(invoiceAggregate, timer.recordId, { type: 'SendInvoiceReminder', kind: kind as InvoiceReminderKind, days, dueDate }, ctx);
    },
  };
}
