import { isSameReminder } from '../../machines/invoice.decide.ts';
import type { Invoice, InvoiceReminderKind } from '../../machines/invoice.types.ts';
import type { Collection } from '../read-store/read-store.ts';
import type { TimerDoc } from './collections.ts';
import { setTimer } from './set-timer.ts';

export const REMINDER_TIMER = 'invoice.reminder';
const DAY_MS = 24 * 60 * 60 * 1000;

/** One configured reminder: `days` before or after the due date, due at `fireAt` (ms). */
export type ReminderSlot = { kind: InvoiceReminderKind; days: number; fireAt: number };

type ReminderInvoice = Pick<Invoice, 'status' | 'dueDate' | 'reminders' | 'remindersSent' | 'finalizedAt' | 'issueDate'>;

export const reminderTimerId = (invoiceId: string, slot: Pick<ReminderSlot, 'kind' | 'days'>): string =>
  `${REMINDER_TIMER}:${invoiceId}:${slot.kind}:${slot.days}`;

/** Every reminder the invoice's settings name (each day offset once), with its time: the due date ∓ that many days. */
export function reminderSlots(invoice: Pick<Invoice, 'dueDate' | 'reminders'>): ReminderSlot[] {
  const due = Date.parse(invoice.dueDate);
  const slots = (kind: InvoiceReminderKind, days: number[], sign: -1 | 1) =>
    [...new Set(days)].map((d): ReminderSlot => ({ kind, days: d, fireAt: due + sign * d * DAY_MS }));
  return [...slots('before_due', invoice.reminders.daysBeforeDue, -1), ...slots('after_due', invoice.reminders.daysAfterDue, 1)];
}

/**
 * The reminders still to come for an invoice: none unless it is open with reminders switched on
 * (a paid, void or uncollectible invoice is reminded of nothing), and not one already sent for
 * this due date. A reminder whose time had already passed when the invoice was finalized is
 * skipped, on either side of the due date: it would reach the customer together with the invoice
 * itself (and with every other missed one), so reminders only ever fire at the moments they were
 * set for, from the invoice's issue on. An invoice finalized 2 days before its due date with
 * reminders 7, 3 and 1 days before gets only the 1-day one.
 */
export function pendingReminders(invoice: ReminderInvoice): ReminderSlot[] {
  if (invoice.status !== 'open' || !invoice.reminders.enabled) return [];
  const issuedAt = Date.parse(invoice.finalizedAt ?? invoice.issueDate ?? invoice.dueDate);
  return reminderSlots(invoice).filter((slot) =>
    slot.fireAt >= issuedAt && !invoice.remindersSent.some((sent) => isSameReminder(sent, { ...slot, dueDate: invoice.dueDate })));
}

/**
 * Keep one timer per pending reminder of the invoice and none for the others (sent, closed,
 * missed): the invoices projection calls this after each change of the invoice.
 */
export async function setReminderTimers(timers: Collection<TimerDoc>, invoice: ReminderInvoice & Pick<Invoice, 'id' | 'organizationId' | 'environment'>, version: number): Promise<void> {
  const pending = pendingReminders(invoice);
  for (const slot of reminderSlots(invoice)) {
    const wanted = pending.some((p) => p.kind === slot.kind && p.days === slot.days);
    await setTimer(timers, reminderTimerId(invoice.id, slot), wanted ? {
      kind: REMINDER_TIMER, recordId: invoice.id, organizationId: invoice.organizationId, environment: invoice.environment,
      fireAt: slot.fireAt, version, args: { kind: slot.kind, days: slot.days, dueDate: invoice.dueDate },
    } : null);
  }
}
