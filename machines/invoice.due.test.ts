import test from 'ava';
import { isOverdue, overdueFrom } from './invoice.due.ts';

const at = (iso: string) => Date.parse(iso);

test('a due date given as a day is payable until that UTC day ends', (t) => {
  const invoice = { dueDate: '2026-06-01T00:00:00.000Z' };
  t.false(isOverdue(invoice, at('2026-06-01T00:00:00.000Z')), 'not at the start of the due day');
  t.false(isOverdue(invoice, at('2026-06-01T23:59:59.999Z')), 'not at its last moment');
  t.true(isOverdue(invoice, at('2026-06-02T00:00:00.000Z')), 'from the next day on');
  t.is(overdueFrom(invoice.dueDate), at('2026-06-02T00:00:00.000Z'));
});

test('a due date with a time of day is overdue from that instant', (t) => {
  const invoice = { dueDate: '2026-06-01T08:00:00.000Z' };
  t.false(isOverdue(invoice, at('2026-06-01T07:59:59.999Z')));
  t.true(isOverdue(invoice, at('2026-06-01T08:00:00.000Z')));
  t.is(overdueFrom(invoice.dueDate), at('2026-06-01T08:00:00.000Z'));
});
