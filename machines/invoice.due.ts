import type { Invoice } from './invoice.types.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The instant (ms) an invoice due at `dueDate` becomes overdue. A due date at midnight UTC is a
 * day (`2026-06-01`, the way dates are stored): payable to the end of that UTC day. Any other
 * time of day is an explicit deadline, overdue from that instant.
 */
export function overdueFrom(dueDate: string): number {
  const due = Date.parse(dueDate);
  return due % DAY_MS === 0 ? due + DAY_MS : due;
}

/** Whether the invoice is overdue at `nowMs`: its due day (or explicit due time) has passed. */
export const isOverdue = (invoice: Pick<Invoice, 'dueDate'>, nowMs: number): boolean =>
  nowMs >= overdueFrom(invoice.dueDate);
