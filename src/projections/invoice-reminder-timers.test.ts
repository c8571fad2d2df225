import test from 'ava';
import { invoiceFixture } from '../../machines/invoice.fixture.ts';
import type { Invoice } from '../../machines/invoice.types.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { COLLECTIONS, type TimerDoc } from './collections.ts';
import { pendingReminders, REMINDER_TIMER, reminderSlots, setReminderTimers } from './invoice-reminder-timers.ts';

const DUE = '2026-02-01T00:00:00.000Z';
const at = (iso: string) => Date.parse(iso);
const open = (overrides: Partial<Invoice> = {}): Invoice =>
  invoiceFixture({
    status: 'open',
    dueDate: DUE,
    finalizedAt: '2026-01-01T00:00:00.000Z',
    reminders: { enabled: true, daysBeforeDue: [7, 1], daysAfterDue: [1, 3] },
    ...overrides,
  });
const keys = (slots: { kind: string; days: number }[]) => slots.map((s) => `${s.kind}:${s.days}`);

test('each configured day offset is its own reminder, at the due date minus or plus that many days', (t) => {
  t.deepEqual(reminderSlots(open()), [
    { kind: 'before_due', days: 7, fireAt: at('2026-01-25T00:00:00.000Z') },
    { kind: 'before_due', days: 1, fireAt: at('2026-01-31T00:00:00.000Z') },
    { kind: 'after_due', days: 1, fireAt: at('2026-02-02T00:00:00.000Z') },
    { kind: 'after_due', days: 3, fireAt: at('2026-02-04T00:00:00.000Z') },
  ]);
  t.deepEqual(
    keys(reminderSlots(open({ reminders: { enabled: true, daysBeforeDue: [3, 3], daysAfterDue: [] } }))),
    ['before_due:3'],
    'a repeated offset counts once',
  );
});

test('an open invoice with reminders on has every reminder pending until it is sent or skipped', (t) => {
  t.deepEqual(keys(pendingReminders(open())), ['before_due:7', 'before_due:1', 'after_due:1', 'after_due:3']);
  const sent = open({ remindersSent: [{ kind: 'before_due', days: 7, dueDate: DUE, at: '2026-01-25T00:00:00.000Z' }] });
  t.deepEqual(
    keys(pendingReminders(sent)),
    ['before_due:1', 'after_due:1', 'after_due:3'],
    'the 7-day reminder is sent, the 1-day one still pending',
  );
  const staleSent = open({
    remindersSent: [
      { kind: 'before_due', days: 7, dueDate: '2025-12-01T00:00:00.000Z', at: '2025-11-24T00:00:00.000Z' },
    ],
  });
  t.is(pendingReminders(staleSent).length, 4, 'a reminder sent for another due date does not count');
  const skipped = open({
    remindersSkipped: [{ kind: 'before_due', days: 7, dueDate: DUE, at: '2026-01-31T12:00:00.000Z' }],
    remindersSent: [{ kind: 'before_due', days: 1, dueDate: DUE, at: '2026-01-31T12:00:00.000Z' }],
  });
  t.deepEqual(
    keys(pendingReminders(skipped)),
    ['after_due:1', 'after_due:3'],
    'a reminder skipped for a later one is not pending either',
  );
});

test('nothing is pending for a draft, a closed invoice, or with reminders switched off', (t) => {
  for (const status of ['draft', 'paid', 'void', 'uncollectible'] as const)
    t.deepEqual(pendingReminders(open({ status })), [], status);
  t.deepEqual(pendingReminders(open({ reminders: { enabled: false, daysBeforeDue: [7], daysAfterDue: [1] } })), []);
});

test('reminders whose time had passed when the invoice was finalized are skipped; the rest keep their times', (t) => {
  t.deepEqual(keys(pendingReminders(open({ finalizedAt: '2026-01-28T12:00:00.000Z' }))), [
    'before_due:1',
    'after_due:1',
    'after_due:3',
  ]);
  t.deepEqual(
    keys(pendingReminders(open({ finalizedAt: '2026-02-03T00:00:00.000Z' }))),
    ['after_due:3'],
    'finalized overdue: only the reminder still ahead',
  );
  t.deepEqual(
    keys(pendingReminders(open({ finalizedAt: '2026-01-25T00:00:00.000Z' }))),
    ['before_due:7', 'before_due:1', 'after_due:1', 'after_due:3'],
    'one due at the very moment still fires',
  );
});

test('setReminderTimers keeps one timer per pending reminder and removes the others', async (t) => {
  const timers = createEmbeddedReadStore({}).collection<TimerDoc>(COLLECTIONS.timers);
  const invoice = open();
  await setReminderTimers(timers, invoice, 1);
  const all = await timers.find({}, { sort: { fireAt: 1 } });
  t.deepEqual(
    all.map((d) => d._id),
    ['before_due:7', 'before_due:1', 'after_due:1', 'after_due:3'].map((k) => `${REMINDER_TIMER}:${invoice.id}:${k}`),
  );
  t.like(all[0], {
    kind: REMINDER_TIMER,
    recordId: invoice.id,
    organizationId: 'org-1',
    environment: 'test',
    fireAt: at('2026-01-25T00:00:00.000Z'),
    version: 1,
    args: { kind: 'before_due', days: 7, dueDate: DUE },
  });

  // An unrelated change leaves the timers (and their versions) as they were.
  await setReminderTimers(timers, invoice, 2);
  t.true((await timers.find({})).every((d) => d.version === 1));

  await setReminderTimers(
    timers,
    { ...invoice, remindersSent: [{ kind: 'before_due', days: 7, dueDate: DUE, at: '2026-01-25T00:00:00.000Z' }] },
    3,
  );
  t.is(await timers.count({}), 3);
  await setReminderTimers(timers, { ...invoice, status: 'paid' }, 4);
  t.is(await timers.count({}), 0);
});
