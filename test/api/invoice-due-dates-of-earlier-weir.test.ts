import { randomUUID } from 'node:crypto';
import test from 'ava';
import { COLLECTIONS, type TimerDoc } from '../../src/projections/collections.ts';
import { REMINDER_TIMER } from '../../src/projections/invoice-reminder-timers.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { eventually } from '../support/api-client.ts';
import { recordingMailer } from '../support/recording-mailer.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';
import { appendAsEarlierWeir, createCustomer } from './helpers.ts';

type Invoice = {
  id: string;
  number: string;
  status: string;
  dueDate: string;
  url: string | null;
  remindersSent: { kind: string; days: number; dueDate: string }[];
};

const at = (iso: string) => Date.parse(iso);

// An older Weir stored a due date sent as a date (`2026-12-10`) as its midnight and read every midnight
// as that whole day; its events say nothing more. They keep that meaning: the log is never rewritten.
test('an invoice an earlier Weir wrote due on a date (its midnight) stays due all that day, its reminders at their old times and none sent twice; a new one due at midnight is due at that instant', async (t) => {
  const clock = createManualClock(at('2026-12-01T12:00:00.000Z'));
  const { mailer, sent } = recordingMailer();
  const weir = await startTestWeir(t, {}, { clock, mailer });
  const { api, organizationId } = await createMerchant(weir.url);
  const customerId = await createCustomer(api, 'ada@example.com');
  const body = {
    customerId,
    lineItems: {
      data: [{ priceData: { currency: 'usdc', unitAmount: '150000000', productData: { name: 'Hour' } }, quantity: 1 }],
    },
    reminders: { enabled: true, daysBeforeDue: [1], daysAfterDue: [1] },
  };
  const atMidnight = (await api.post<Invoice>('/api/v1/invoices', { ...body, dueDate: '2026-12-10T00:00:00Z' })).body;
  const opened = (await api.post<Invoice>(`/api/v1/invoices/${atMidnight.id}/finalize`)).body;
  t.is(opened.dueDate, '2026-12-10T00:00:00.000Z', 'a new timestamp at midnight: that instant');

  // The same invoice as an earlier Weir wrote it, due on 10 December sent as a date, one reminder already sent.
  const [createdEvent] = await weir.eventStore.readStream(`invoice-${atMidnight.id}`);
  const { invoice: template } = createdEvent!.data as { invoice: Record<string, unknown> };
  const id = randomUUID();
  const stream = `invoice-${id}`;
  const earlier = (type: string, data: object) => appendAsEarlierWeir(weir, organizationId, stream, type, data);
  await earlier('InvoiceCreated', {
    invoice: { ...template, id, number: 'OLD-0001', dueDate: '2026-12-10T00:00:00.000Z' },
  });
  await earlier('InvoiceFinalized', {
    number: 'OLD-0001',
    url: opened.url!.replace(atMidnight.id, id),
    issueDate: '2026-11-20T00:00:00.000Z',
  });
  await earlier('InvoiceReminderSent', {
    kind: 'before_due',
    days: 1,
    dueDate: '2026-12-10T00:00:00.000Z',
  });

  const old = (await api.get<Invoice>(`/api/v1/invoices/${id}`)).body;
  t.is(old.status, 'open');
  t.is(old.dueDate, '2026-12-10T23:59:59.999Z', 'due on 10 December, written as a date is now');
  t.deepEqual(
    old.remindersSent.map((r) => [r.kind, r.days, r.dueDate]),
    [['before_due', 1, '2026-12-10T23:59:59.999Z']],
  );
  // Its 1-day reminders at the old times: the one before due already sent (not again), one a day after the due day.
  const timers = async (invoiceId: string) =>
    (
      await weir.readStore
        .collection<TimerDoc>(COLLECTIONS.timers)
        .find({ kind: REMINDER_TIMER, recordId: invoiceId }, { sort: { fireAt: 1 } })
    ).map((timer) => new Date(timer.fireAt).toISOString());
  t.deepEqual(await timers(id), ['2026-12-11T00:00:00.000Z']);
  t.deepEqual(await timers(atMidnight.id), ['2026-12-09T00:00:00.000Z', '2026-12-11T00:00:00.000Z']);

  const badge = async (url: string) =>
    /id="status"><span class="badge">([^<]+)<\/span>/.exec(await (await fetch(url)).text())?.[1];
  clock.set(at('2026-12-10T00:00:00.000Z'));
  t.is(await badge(opened.url!), 'Overdue', 'the new one: from the instant it was due');
  t.is(await badge(old.url!), 'Due', 'the old one: payable all of its due day, as its merchant was told');
  clock.set(at('2026-12-10T23:59:59.999Z'));
  t.is(await badge(old.url!), 'Due');
  clock.set(at('2026-12-11T00:00:00.000Z'));
  t.is(await badge(old.url!), 'Overdue');

  // Its 1-day overdue reminder is mailed then, saying it was due on 10 December. (The reminder appended above
  // is mailed too, as the mail queue meets it only now: an earlier Weir had mailed it.)
  await eventually(
    async () => sent.find((mail) => mail.subject.includes('OLD-0001 from Acme Test Shop was due')),
    'the overdue reminder of the old invoice',
  );
  t.deepEqual(
    sent.filter((mail) => mail.subject.includes('OLD-0001')).map((mail) => mail.subject),
    [
      'Reminder: invoice OLD-0001 from Acme Test Shop is due 2026-12-10',
      'Reminder: invoice OLD-0001 from Acme Test Shop was due 2026-12-10',
    ],
  );
  t.deepEqual(
    (await api.get<Invoice>(`/api/v1/invoices/${id}`)).body.remindersSent.map((r) => [r.kind, r.days]),
    [
      ['before_due', 1],
      ['after_due', 1],
    ],
  );
});
