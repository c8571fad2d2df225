import {
  isReminderRecorded,
  reminderSlots,
  scheduledReminders,
  type ReminderSlot,
} from '../../machines/invoice.reminders.ts';
import type { Invoice } from '../../machines/invoice.types.ts';
import type { Collection } from '../read-store/read-store.ts';
import type { TimerDoc } from './collections.ts';
import { setTimer } from './set-timer.ts';

export { reminderSlots, type ReminderSlot };

export const REMINDER_TIMER = 'invoice.reminder';

type ReminderInvoice = Pick<
  Invoice,
  'status' | 'dueDate' | 'reminders' | 'remindersSent' | 'remindersSkipped' | 'finalizedAt' | 'issueDate'
>;

export const reminderTimerId = (invoiceId: string, slot: Pick<ReminderSlot, 'kind' | 'days'>): string =>
  `${REMINDER_TIMER}:${invoiceId}:${slot.kind}:${slot.days}`;

/**
 * The reminders still to come for an invoice: none unless it is open with reminders switched on
 * (a paid, void or uncollectible invoice is reminded of nothing), and not one already sent or
 * skipped for this due date. A reminder whose time had already passed when the invoice was
 * finalized is never scheduled (see `scheduledReminders`): reminders only ever fire at the moments
 * they were set for, from the invoice's issue on. An invoice finalized 2 days before its due date
 * with reminders 7, 3 and 1 days before gets only the 1-day one. Reminders that fall due together
 * (after downtime) fire together, and the invoice mails only the latest (see `isReminderSuperseded`).
 */
export function pendingReminders(invoice: ReminderInvoice): ReminderSlot[] {
  if (invoice.status !== 'open' || !invoice.reminders.enabled) return [];
  return scheduledReminders(invoice).filter(
    (slot) => !isReminderRecorded(invoice, { ...slot, dueDate: invoice.dueDate }),
  );
}

/**
 * Keep one timer per pending reminder of the invoice and none for the others (sent, skipped,
 * closed, never scheduled): the invoices projection calls this after each change of the invoice.
 */
export async function setReminderTimers(
  timers: Collection<TimerDoc>,
  invoice: ReminderInvoice & Pick<Invoice, 'id' | 'organizationId' | 'environment'>,
  version: number,
): Promise<void> {
  const pending = pendingReminders(invoice);
  for (const slot of reminderSlots(invoice)) {
    const wanted = pending.some((p) => p.kind === slot.kind && p.days === slot.days);
    await setTimer(
      timers,
      reminderTimerId(invoice.id, slot),
      wanted
        ? {
            kind: REMINDER_TIMER,
            recordId: invoice.id,
            organizationId: invoice.organizationId,
            environment: invoice.environment,
            fireAt: slot.fireAt,
            version,
            args: { kind: slot.kind, days: slot.days, dueDate: invoice.dueDate },
          }
        : null,
    );
  }
}
