import test, { type ExecutionContext } from 'ava';
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

type Invoice = {
  id: string;
  number: string;
  status: string;
  remindersSent: { kind: string; days: number; dueDate: string }[];
};

const at = (iso: string) => Date.parse(iso);
const reminderTimes = async (readStore: ReadStore, invoiceId: string) =>
  (
    await readStore
      .collection<TimerDoc>(COLLECTIONS.timers)
      .find({ kind: REMINDER_TIMER, recordId: invoiceId }, { sort: { fireAt: 1 } })
  ).map((timer) => new Date(timer.fireAt).toISOString());

/** Weir on a manual clock from 2026-03-01 and a recording mailer, started (and restarted) on one data dir removed when the test ends. */
async function weirOnDisk(t: ExecutionContext) {
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-reminders-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const clock = createManualClock(at('2026-03-01T00:00:00.000Z'));
  const { mailer, sent } = recordingMailer();
  return { clock, sent, start: () => startTestWeir(t, { dataDir }, { clock, mailer }) };
}

test('reminders before and after the due date are mailed at their clock times, once each, across a restart, and none after payment', async (t) => {
  const { clock, sent, start } = await weirOnDisk(t);
  const first = await start();
  const merchant = await createMerchant(first.url, 'Acme Studio');
  const { api } = merchant;
  t.is(
    (
      await api.put('/api/v1/organization', {
        supportEmail: 'help@acme.example',
        websiteUrl: 'https://acme.example',
        addressDetails: { line1: '1 Main Street', city: 'Lisbon', country: 'PT' },
      })
    ).status,
    200,
  );
  t.is((await api.put('/api/v1/organization/brand', { brandColor: '#ff6600' })).status, 200);
  const customer = (await api.post<{ id: string }>('/api/v1/customers', { email: 'ada@example.com', name: 'Ada' }))
    .body;
  const invoice = (
    await api.post<Invoice>('/api/v1/invoices', {
      customerId: customer.id,
      dueDate: '2026-03-10',
      lineItems: {
        data: [
          {
            priceData: { currency: 'usdc', unitAmount: '150000000', productData: { name: 'Consulting hour' } },
            quantity: 2,
          },
        ],
      },
      reminders: { enabled: true, daysBeforeDue: [14, 7, 1], daysAfterDue: [1, 3] },
    })
  ).body;
  t.is((await api.post(`/api/v1/invoices/${invoice.id}/send`, {})).status, 200);
  t.is(sent.length, 1, 'the invoice itself, mailed by the send request');

  // 14 days before due was already past when the invoice was finalized on 03-01: skipped, not sent at once.
  t.deepEqual(await reminderTimes(first.readStore, invoice.id), [
    '2026-03-03T00:00:00.000Z',
    '2026-03-09T00:00:00.000Z',
    '2026-03-11T00:00:00.000Z',
    '2026-03-13T00:00:00.000Z',
  ]);

  clock.advanceTo(at('2026-03-02T23:59:59.999Z'));
  t.is(sent.length, 1, 'nothing before its time');
  clock.advanceTo(at('2026-03-03T00:00:00.000Z'));
  const weekBefore = await eventually(async () => sent[1], 'the 7-day reminder');
  t.is(weekBefore.to, 'ada@example.com');
  t.is(weekBefore.subject, `Reminder: invoice ${invoice.number} from Acme Studio is due 2026-03-10`);
  for (const part of [
    'Hello Ada,',
    'help@acme.example',
    '1 Main Street',
    'https://acme.example',
    `/invoices/${invoice.id}`,
  ])
    t.true(weekBefore.text.includes(part), part);
  t.true(weekBefore.html.includes('#ff6600'), 'the brand color');
  t.deepEqual(await reminderTimes(first.readStore, invoice.id), [
    '2026-03-09T00:00:00.000Z',
    '2026-03-11T00:00:00.000Z',
    '2026-03-13T00:00:00.000Z',
  ]);

  clock.advanceTo(at('2026-03-09T00:00:00.000Z'));
  await eventually(async () => sent[2], 'the 1-day reminder');
  t.regex(sent[2]!.subject, /^Reminder: .* is due 2026-03-10$/);
  const afterTwo = (await api.get<Invoice>(`/api/v1/invoices/${invoice.id}`)).body;
  t.deepEqual(
    afterTwo.remindersSent.map((r) => [r.kind, r.days, r.dueDate]),
    [
      ['before_due', 7, '2026-03-10T23:59:59.999Z'],
      ['before_due', 1, '2026-03-10T23:59:59.999Z'],
    ],
  );
  await eventually(
    async () => ((await first.readStore.collection(PENDING_MAILS).count({})) === 0 ? true : undefined),
    'the sent mails to be recorded',
  );

  // A restart on the same data: the read models are rebuilt from the log; nothing is sent again.
  await first.stop();
  const second = await start();
  t.is(await second.readStore.collection(PENDING_MAILS).count({}), 0);
  t.deepEqual(await reminderTimes(second.readStore, invoice.id), [
    '2026-03-11T00:00:00.000Z',
    '2026-03-13T00:00:00.000Z',
  ]);

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
  await eventually(
    async () => ((await second.readStore.collection(PENDING_MAILS).count({})) === 0 ? true : undefined),
    'the receipt to be recorded',
  );
  t.is(sent.length, 5);
  t.deepEqual(
    sent.map((m) => m.subject.split(' ')[0]),
    ['Invoice', 'Reminder:', 'Reminder:', 'Reminder:', 'Receipt'],
  );
});

type Reminders = { enabled: boolean; daysBeforeDue: number[]; daysAfterDue: number[] };
type InvoiceWithSkips = Invoice & { remindersSkipped: Invoice['remindersSent'] };
const reminderKeys = (reminders: Invoice['remindersSent']) => reminders.map((r) => `${r.kind}:${r.days}`);

/** A merchant with customer Ada, and a way to open (finalize, without mailing) an invoice due 2026-03-10 with given reminders. */
async function merchantWithCustomer(url: string) {
  const { api, testSecretKey } = await createMerchant(url, 'Acme Studio');
  const customer = (await api.post<{ id: string }>('/api/v1/customers', { email: 'ada@example.com', name: 'Ada' }))
    .body;
  const openInvoice = async (reminders: Reminders) => {
    const draft = (
      await api.post<Invoice>('/api/v1/invoices', {
        customerId: customer.id,
        dueDate: '2026-03-10',
        reminders,
        lineItems: {
          data: [
            {
              priceData: { currency: 'usdc', unitAmount: '150000000', productData: { name: 'Consulting hour' } },
              quantity: 2,
            },
          ],
        },
      })
    ).body;
    const opened = await api.post<Invoice>(`/api/v1/invoices/${draft.id}/finalize`, {});
    if (opened.status !== 200) throw new Error(`finalize failed: ${JSON.stringify(opened.body)}`);
    return opened.body;
  };
  /** The invoice as the API shows it, from this Weir or (after a restart) another on the same data. */
  const read = async (id: string, at = url) =>
    (await apiClient(at, testSecretKey).get<InvoiceWithSkips>(`/api/v1/invoices/${id}`)).body;
  return { api, openInvoice, read };
}

const EVERY_SIDE: Reminders = { enabled: true, daysBeforeDue: [7, 1], daysAfterDue: [1, 3] };
const settled = async (readStore: ReadStore, invoiceId: string, times: string[]) =>
  eventually(
    async () => {
      const left = await reminderTimes(readStore, invoiceId);
      const unsent = await readStore.collection(PENDING_MAILS).count({});
      return unsent === 0 && JSON.stringify(left) === JSON.stringify(times) ? true : undefined;
    },
    `the reminders of ${invoiceId} to settle on ${times.join(', ') || 'none'}`,
  );

test('a clock jump over several reminder times mails only the latest one due, records the earlier ones as skipped, and keeps the later schedule', async (t) => {
  const { clock, sent, start } = await weirOnDisk(t);
  const weir = await start();
  const { api, openInvoice, read } = await merchantWithCustomer(weir.url);
  const three = await openInvoice(EVERY_SIDE);
  const one = await openInvoice({ enabled: true, daysBeforeDue: [2], daysAfterDue: [5] });
  const voided = await openInvoice(EVERY_SIDE);
  const writtenOff = await openInvoice(EVERY_SIDE);
  t.is((await api.post(`/api/v1/invoices/${voided.id}/void`, {})).status, 200);
  t.is((await api.post(`/api/v1/invoices/${writtenOff.id}/mark-uncollectible`, {})).status, 200);
  t.deepEqual(await reminderTimes(weir.readStore, three.id), [
    '2026-03-03T00:00:00.000Z',
    '2026-03-09T00:00:00.000Z',
    '2026-03-11T00:00:00.000Z',
    '2026-03-13T00:00:00.000Z',
  ]);

  // Over 03-03, 03-09 and 03-11 at once: the first invoice's 7-day, 1-day and 1-day-overdue reminders, and the other's 2-day one.
  clock.advanceTo(at('2026-03-11T12:00:00.000Z'));
  await settled(weir.readStore, three.id, ['2026-03-13T00:00:00.000Z']);
  await settled(weir.readStore, one.id, ['2026-03-15T00:00:00.000Z']);
  const mailOf = (invoice: Invoice) => sent.filter((m) => m.subject.includes(` ${invoice.number} `));
  t.is(sent.length, 2, 'one reminder mail per open invoice');
  t.deepEqual(
    mailOf(three).map((m) => m.subject),
    [`Reminder: invoice ${three.number} from Acme Studio was due 2026-03-10`],
    'the latest one due: overdue',
  );
  t.true(
    mailOf(three)[0]!.text.includes(
      `This is a reminder that invoice ${three.number} for 3.00 USDC was due on 2026-03-10.`,
    ),
  );
  t.deepEqual(
    mailOf(one).map((m) => m.subject),
    [`Reminder: invoice ${one.number} from Acme Studio was due 2026-03-10`],
    'a single reminder jumped over is sent',
  );
  const afterJump = await read(three.id);
  t.deepEqual(reminderKeys(afterJump.remindersSent), ['after_due:1']);
  t.deepEqual(reminderKeys(afterJump.remindersSkipped), ['before_due:7', 'before_due:1']);
  t.deepEqual(reminderKeys((await read(one.id)).remindersSent), ['before_due:2']);
  t.deepEqual(reminderKeys((await read(one.id)).remindersSkipped), []);
  for (const closed of [voided, writtenOff]) {
    t.deepEqual(mailOf(closed), [], `${closed.number} is closed`);
    t.deepEqual(reminderKeys((await read(closed.id)).remindersSent), []);
  }

  // The schedule goes on: one more reminder time, one more mail.
  clock.advanceTo(at('2026-03-13T00:00:00.000Z'));
  await settled(weir.readStore, three.id, []);
  t.is(sent.length, 3);
  t.is(sent[2]!.subject, `Reminder: invoice ${three.number} from Acme Studio was due 2026-03-10`);
  t.deepEqual(reminderKeys((await read(three.id)).remindersSent), ['after_due:1', 'after_due:3']);
  t.deepEqual(reminderKeys((await read(three.id)).remindersSkipped), ['before_due:7', 'before_due:1']);
});

test('reminders that came due while Weir was down are one mail at the next start, and none again at the start after', async (t) => {
  const { clock, sent, start } = await weirOnDisk(t);
  const first = await start();
  const { openInvoice, read } = await merchantWithCustomer(first.url);
  const invoice = await openInvoice(EVERY_SIDE);
  await first.stop();

  // Down over the 7-day and the 1-day reminder times.
  clock.advanceTo(at('2026-03-09T08:00:00.000Z'));
  const second = await start();
  await settled(second.readStore, invoice.id, ['2026-03-11T00:00:00.000Z', '2026-03-13T00:00:00.000Z']);
  t.deepEqual(
    sent.map((m) => m.subject),
    [`Reminder: invoice ${invoice.number} from Acme Studio is due 2026-03-10`],
  );
  const caughtUp = await read(invoice.id, second.url);
  t.deepEqual(reminderKeys(caughtUp.remindersSent), ['before_due:1']);
  t.deepEqual(reminderKeys(caughtUp.remindersSkipped), ['before_due:7']);
  await second.stop();

  // Restarted right after: the log holds the sent and the skipped reminder and the mail; nothing is sent again.
  const third = await start();
  await settled(third.readStore, invoice.id, ['2026-03-11T00:00:00.000Z', '2026-03-13T00:00:00.000Z']);
  t.is(sent.length, 1);
  clock.advanceTo(at('2026-03-11T00:00:00.000Z'));
  await settled(third.readStore, invoice.id, ['2026-03-13T00:00:00.000Z']);
  t.is(sent.length, 2);
  t.is(sent[1]!.subject, `Reminder: invoice ${invoice.number} from Acme Studio was due 2026-03-10`);
  t.deepEqual(reminderKeys((await read(invoice.id, third.url)).remindersSent), ['before_due:1', 'after_due:1']);
});
