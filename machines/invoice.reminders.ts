import { dueCountsFrom } from './invoice.due.ts';
import type { Invoice, InvoiceReminderKind, InvoiceReminderSent } from './invoice.types.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** One configured reminder: `days` before or after the due date, due at `fireAt` (ms). */
export type ReminderSlot = { kind: InvoiceReminderKind; days: number; fireAt: number };

type ReminderKey = Pick<InvoiceReminderSent, 'kind' | 'days' | 'dueDate'>;
/** A reminder is one kind, one day offset, one due date: [7, 1] days before due are two reminders. */
export const isSameReminder = (a: ReminderKey, b: ReminderKey): boolean =>
  a.kind === b.kind && a.days === b.days && a.dueDate === b.dueDate;

/** Whether the invoice has recorded this reminder already, as sent or as skipped. */
export const isReminderRecorded = (
  invoice: Pick<Invoice, 'remindersSent' | 'remindersSkipped'>,
  reminder: ReminderKey,
): boolean => [...invoice.remindersSent, ...invoice.remindersSkipped].some((done) => isSameReminder(done, reminder));

/**
 * Every reminder the invoice's settings name (each day offset once), with its time: the due date ∓
 * that many days (a due day counted from its midnight, see `dueCountsFrom`).
 */
export function reminderSlots(invoice: Pick<Invoice, 'dueDate' | 'reminders'>): ReminderSlot[] {
  const due = dueCountsFrom(invoice.dueDate);
  const slots = (kind: InvoiceReminderKind, days: number[], sign: -1 | 1) =>
    [...new Set(days)].map((d): ReminderSlot => ({ kind, days: d, fireAt: due + sign * d * DAY_MS }));
  return [
    ...slots('before_due', invoice.reminders.daysBeforeDue, -1),
    ...slots('after_due', invoice.reminders.daysAfterDue, 1),
  ];
}

/**
 * The reminders scheduled for the invoice: those of its settings whose time had not passed when
 * it was finalized. One already past then, on either side of the due date, is never scheduled: it
 * would reach the customer together with the invoice itself (and with every other missed one).
 */
export function scheduledReminders(
  invoice: Pick<Invoice, 'dueDate' | 'reminders' | 'finalizedAt' | 'issueDate'>,
): ReminderSlot[] {
  const issuedAt = Date.parse(invoice.finalizedAt ?? invoice.issueDate ?? invoice.dueDate);
  return reminderSlots(invoice).filter((slot) => slot.fireAt >= issuedAt);
}

/**
 * Whether a reminder falling due at `now` is superseded: a later scheduled reminder has come due
 * too (Weir was down, or its clock jumped, over both times). Only the latest reminder due is
 * mailed; the earlier ones are recorded as skipped, so the customer gets one mail, not a burst.
 */
export function isReminderSuperseded(
  invoice: Pick<Invoice, 'dueDate' | 'reminders' | 'finalizedAt' | 'issueDate'>,
  reminder: Pick<ReminderSlot, 'kind' | 'days'>,
  now: number,
): boolean {
  const scheduled = scheduledReminders(invoice);
  const own = reminderSlots(invoice).find((slot) => slot.kind === reminder.kind && slot.days === reminder.days);
  return own !== undefined && scheduled.some((later) => later.fireAt > own.fireAt && later.fireAt <= now);
}
