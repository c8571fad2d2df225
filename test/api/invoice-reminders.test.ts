import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COLLECTIONS, type TimerDoc } from '../../src/projections/collections.ts';
import { REMINDER_TIMER } from '../../src/projections/invoice-reminder-timers.ts';
import { PENDING_MAILS } from '../../src/projections/mails.projection.ts';
import type { ReadStore } from '../../src/read-store/read-store.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { recordingMailer } from '../support/recording-mailer.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';

type Invoice = { id: string; number: string; status: string; remindersSent: { kind: string; days: number; dueDate: string }[] };

const at = (iso: string) => Date.parse(iso);
const reminderTimes = async (readStore: ReadStore, invoiceId: string) =>
  (await readStore.collection<TimerDoc>(COLLECTIONS.timers).find({ kind: REMINDER_TIMER, recordId: invoiceId }, { sort: { fireAt: 1 } }))
    .map((timer) => new Date(timer.fireAt).toISOString());

test('reminders before and after the due date are mailed at their clock times, once each, across a restart, and none after payment', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-reminders-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const clock = createManualClock(at('2026-03-01T00:00:00.000Z'));
  const { mailer, sent } = recordingMailer();
  const first = await startTestWeir(t, { dataDir }, { clock, mailer });
  const merchant = await createMerchant(first.url, 'Acme Studio');
  const { api } = merchant;
  t.is((await api.put('/api/v1/organization', { supportEmail: 'help@acme.example', websiteUrl: 'https://acme.example', addressDetails: { line1: '1 Main Street', city: 'Lisbon', country: 'PT' } })).status, 200);
  t.is((await api.put('/api/v1/organization/brand', { brandColor: '#ff6600' })).status, 200);
  const customer = (await api.post<{ id: string }>('/api/v1/customers', { email: 'ada@example.com', name: 'Ada' })).body;
  const invoice = (await api.post<Invoice>('/api/v1/invoices', {
    customerId: customer.id, dueDate: '2026-03-10',
    lineItems: { data: [{ priceData: { currency: 'usdc', unitAmount: '150000000', productData: { name: 'Consulting hour' } }, quantity: 2 }] },
    reminders: { enabled: true, daysBeforeDue: [14, 7, 1], daysAfterDue: [1, 3] },
  })).body;
  t.is((await api.post(`/api/v1/invoices/${invoice.id}/send`, {})).status, 200);
  t.is(sent.length, 1, 'the invoice itself, mailed by the send request');

  // 14 days before due was already past when the invoice was finalized on 03-01: skipped, not sent at once.
  t.deepEqual(await reminderTimes(first.readStore, invoice.id), [
    '2026-03-03T00:00:00.000Z', '2026-03-09T00:00:00.000Z', '2026-03-11T00:00:00.000Z', '2026-03-13T00:00:00.000Z',
  ]);

  clock.advanceTo(at('2026-03-02T23:59:59.999Z'));
  t.is(sent.length, 1, 'nothing before its time');
  clock.advanceTo(at('2026-03-03T00:00:00.000Z'));
  const weekBefore = await eventually(async () => sent[1], 'the 7-day reminder');
  t.is(weekBefore.to, 'ada@example.com');
  t.is(weekBefore.subject, `Reminder: invoice ${invoice.number} from Acme Studio is due 2026-03-10`);
  for (const part of ['Hello Ada,', 'help@acme.example', '1 Main Street', 'https://acme.example', `/invoices/${invoice.id}/pay`]) t.true(weekBefore.text.includes(part), part);
  t.true(weekBefore.html.includes('#ff6600'), 'the brand color');
  t.deepEqual(await reminderTimes(first.readStore, invoice.id), ['2026-03-09T00:00:00.000Z', '2026-03-11T00:00:00.000Z', '2026-03-13T00:00:00.000Z']);

  clock.advanceTo(at('2026-03-09T00:00:00.000Z'));
  await eventually(async () => sent[2], 'the 1-day reminder');
  t.regex(sent[2]!.subject, /^Reminder: .* is due 2026-03-10$/);
  const afterTwo = (await api.get<Invoice>(`/api/v1/invoices/${invoice.id}`)).body;
  t.deepEqual(afterTwo.remindersSent.map((r) => [r.kind, r.days, r.dueDate]), [['before_due', 7, '2026-03-10T00:00:00.000Z'], ['before_due', 1, '2026-03-10T00:00:00.000Z']]);
  await eventually(async () => ((await first.readStore.collection(PENDING_MAILS).count({})) === 0 ? true : undefined), 'the sent mails to be recorded');

  // A restart on the same data: the read models are rebuilt from the log; nothing is sent again.
  await first.stop();
  const second = await startTestWeir(t, { dataDir }, { clock, mailer });
  t.is(await second.readStore.collection(PENDING_MAILS).count({}), 0);
  t.deepEqual(await reminderTimes(second.readStore, invoice.id), ['2026-03-11T00:00:00.000Z', '2026-03-13T00:00:00.000Z']);

  clock.advanceTo(at('2026-03-11T00:00:00.000Z'));
  await eventually(async () => sent[3], 'the 1-day overdue reminder');
  t.is(sent[3]!.subject, `Reminder: invoice ${invoice.number} from Acme Studio was due 2026-03-10`);

  // Paid out of band before the 3-day overdue reminder: a receipt, and no more reminders.
  const paid = await apiClient(second.url, merchant.testSecretKey).post<Invoice>(`/api/v1/invoices/${invoice.id}/pay`);
  t.is(paid.body.status, 'paid');
  await eventually(async () => sent[4], 'the receipt');
  t.regex(sent[4]!.subject, /^Receipt for invoice/);
  t.deepEqual(await reminderTimes(second.readStore, invoice.id), []);
  clock.advanceTo(at('2026-03-20T00:00:00.000Z'));
  await eventually(async () => ((await second.readStore.collection(PENDING_MAILS).count({})) === 0 ? true : undefined), 'the receipt to be recorded');
  t.is(sent.length, 5);
  t.deepEqual(sent.map((m) => m.subject.split(' ')[0]), ['Invoice', 'Reminder:', 'Reminder:', 'Reminder:', 'Receipt']);
});
