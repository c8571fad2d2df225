import test from 'ava';
import {
  daysUntilDue,
  dueCountsFrom,
  dueDateAsWritten,
  dueDaysAfter,
  dueEndOfDay,
  isOverdue,
  overdueFrom,
} from './invoice.due.ts';

const at = (iso: string) => Date.parse(iso);

test('a due date given as a day (its last instant) is payable until that UTC day ends', (t) => {
  const invoice = { dueDate: dueEndOfDay(at('2026-06-01T00:00:00.000Z')) };
  t.is(invoice.dueDate, '2026-06-01T23:59:59.999Z');
  t.false(isOverdue(invoice, at('2026-06-01T00:00:00.000Z')), 'not at the start of the due day');
  t.false(isOverdue(invoice, at('2026-06-01T23:59:59.999Z')), 'not at its last moment');
  t.true(isOverdue(invoice, at('2026-06-02T00:00:00.000Z')), 'from the next day on');
  t.is(overdueFrom(invoice.dueDate), at('2026-06-02T00:00:00.000Z'));
  t.is(dueCountsFrom(invoice.dueDate), at('2026-06-01T00:00:00.000Z'), 'days before and after count from its midnight');
  t.is(daysUntilDue(invoice.dueDate, at('2026-05-25T00:00:00.000Z')), 7, 'net 7 from a day a week before');
});

test('a due date at midnight UTC is the instant given, not a day: overdue from that instant', (t) => {
  const invoice = { dueDate: '2026-12-10T00:00:00.000Z' };
  t.false(isOverdue(invoice, at('2026-12-09T23:59:59.999Z')));
  t.true(isOverdue(invoice, at('2026-12-10T00:00:00.000Z')), 'overdue at the instant, not a day later');
  t.is(overdueFrom(invoice.dueDate), at('2026-12-10T00:00:00.000Z'));
  t.is(daysUntilDue(invoice.dueDate, at('2026-12-03T00:00:00.000Z')), 7);
});

test('a due date with a time of day is overdue from that instant', (t) => {
  const invoice = { dueDate: '2026-06-01T08:00:00.000Z' };
  t.false(isOverdue(invoice, at('2026-06-01T07:59:59.999Z')));
  t.true(isOverdue(invoice, at('2026-06-01T08:00:00.000Z')));
  t.is(overdueFrom(invoice.dueDate), at('2026-06-01T08:00:00.000Z'));
  t.is(dueCountsFrom(invoice.dueDate), at('2026-06-01T08:00:00.000Z'));
});

test('a due date in an event an older Weir wrote (not marked an instant) means what it meant then: a midnight is that whole day', (t) => {
  t.is(
    dueDateAsWritten('2026-12-10T00:00:00.000Z', undefined),
    '2026-12-10T23:59:59.999Z',
    'a date, stored as its midnight',
  );
  t.is(
    dueDateAsWritten('2026-12-10T08:00:00.000Z', undefined),
    '2026-12-10T08:00:00.000Z',
    'a time of day: that instant',
  );
  t.is(dueDateAsWritten('2026-12-10T00:00:00.000Z', true), '2026-12-10T00:00:00.000Z', 'marked: the instant');
  t.is(overdueFrom(dueDateAsWritten('2026-12-10T00:00:00.000Z', undefined)), at('2026-12-11T00:00:00.000Z'));
  t.is(daysUntilDue(dueDateAsWritten('2026-12-10T00:00:00.000Z', undefined), at('2026-12-03T00:00:00.000Z')), 7);
});

test('days after an instant: 0 is the end of that UTC day (due on the day, payable all of it); more is that instant so many days on', (t) => {
  const issued = at('2026-04-15T09:00:00.000Z');
  t.is(dueDaysAfter(issued, 0), '2026-04-15T23:59:59.999Z');
  t.false(isOverdue({ dueDate: dueDaysAfter(issued, 0) }, issued + 60_000), 'not a minute after');
  t.true(isOverdue({ dueDate: dueDaysAfter(issued, 0) }, at('2026-04-16T00:00:00.000Z')), 'once the day has ended');
  t.is(dueDaysAfter(issued, 7), '2026-04-22T09:00:00.000Z');
  t.is(daysUntilDue(dueDaysAfter(issued, 0), at('2026-04-15T00:00:00.000Z')), 0, 'read back as 0 days');
});
