import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import type { Weir } from '../../src/app/start-weir.ts';
import { COLLECTIONS, type TimerDoc } from '../../src/projections/collections.ts';
import { MAIL_RETRY_TIMER, PENDING_MAILS, type PendingMailDoc } from '../../src/projections/mails.projection.ts';
import { invoicePayUrl } from '../../src/hosted/urls.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { recordingMailer } from '../support/recording-mailer.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';
import { createCustomer } from './helpers.ts';

type Invoice = { id: string; number: string; status: string; sentAt: string | null };

const T0 = Date.parse('2026-03-01T00:00:00.000Z');
const lines = {
  data: [
    { priceData: { currency: 'usdc', unitAmount: '150000000', productData: { name: 'Consulting hour' } }, quantity: 2 },
  ],
};

/** What the subscriptions engine does for a renewal invoice: send it as the system, for the dispatcher to mail. */
const systemSend = (weir: Weir, organizationId: string, invoiceId: string, to: string | null = null) =>
  weir.commands.handle(
    invoiceAggregate,
    invoiceId,
    { type: 'SendInvoice', to, url: invoicePayUrl(weir.url, invoiceId), mailed: false },
    {
      organizationId,
      environment: 'test',
      actor: 'system:test',
    },
  );

const mailEvents = async (weir: Weir) =>
  (await weir.eventStore.readAll(null, 100_000))
    .filter((e) => e.streamId.startsWith('mail-'))
    .map((e) => ({ stream: e.streamId, type: e.type, data: e.data as Record<string, unknown> }));

test('an invoice the system sends (mailed: false) is mailed by the dispatcher, once; without a customer address nothing is pending', async (t) => {
  const { mailer, sent } = recordingMailer();
  const weir = await startTestWeir(t, {}, { clock: createManualClock(T0), mailer });
  const { api, organizationId } = await createMerchant(weir.url, 'Acme Studio');
  const customer = (await api.post<{ id: string }>('/api/v1/customers', { email: 'ada@example.com', name: 'Ada' }))
    .body;
  const draft = (
    await api.post<Invoice>('/api/v1/invoices', { customerId: customer.id, dueDate: '2026-03-31', lineItems: lines })
  ).body;

  const result = await systemSend(weir, organizationId, draft.id);
  t.deepEqual(
    result.events.map((e) => e.type),
    ['InvoiceFinalized', 'InvoiceSent'],
  );
  t.like(result.events[1]!.data, { to: null, mailed: false });
  const mail = await eventually(async () => sent[0], 'the invoice mail');
  t.is(mail.to, 'ada@example.com');
  t.is(mail.subject, `Invoice ${draft.number} from Acme Studio: 3.00 USDC due 2026-03-31`);
  t.true(mail.text.includes(`Pay online: ${weir.url}/invoices/${draft.id}`));
  t.like((await api.get<Invoice>(`/api/v1/invoices/${draft.id}`)).body, {
    status: 'open',
    sentAt: '2026-03-01T00:00:00.000Z',
  });

  // The system sending it again records nothing, so nothing is mailed twice.
  t.deepEqual((await systemSend(weir, organizationId, draft.id)).events, []);
  await eventually(async () => ((await mailEvents(weir)).length === 1 ? true : undefined), 'MailSent');
  t.is(sent.length, 1);

  // An invoice whose customer has no address on record (deleted since): sent, but no mail is pending.
  const gone = await createCustomer(api, 'gone@example.com');
  const orphan = (await api.post<Invoice>('/api/v1/invoices', { customerId: gone, lineItems: lines })).body;
  await api.delete(`/api/v1/customers/${gone}`);
  const orphanSent = await systemSend(weir, organizationId, orphan.id);
  await weir.projections.waitFor(orphanSent.position!);
  t.is(await weir.readStore.collection<PendingMailDoc>(PENDING_MAILS).count({ invoiceId: orphan.id }), 0);
  t.is((await api.get<Invoice>(`/api/v1/invoices/${orphan.id}`)).body.status, 'open');
});

test('a mail server failure is recorded and retried on the clock until it takes the mail; across a restart; a bouncing address holds up no other mail', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-mail-retry-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const clock = createManualClock(T0);
  const down = recordingMailer(() => true);
  const first = await startTestWeir(t, { dataDir }, { clock, mailer: down.mailer });
  const merchant = await createMerchant(first.url, 'Acme Studio');
  const customer = (
    await merchant.api.post<{ id: string }>('/api/v1/customers', { email: 'ada@example.com', name: 'Ada' })
  ).body;
  const invoice = (
    await merchant.api.post<Invoice>('/api/v1/invoices', {
      customerId: customer.id,
      dueDate: '2026-03-31',
      lineItems: lines,
    })
  ).body;
  await systemSend(first, merchant.organizationId, invoice.id);

  const failed = await eventually(async () => (await mailEvents(first))[0], 'the failed attempt');
  t.is(failed.type, 'MailDeliveryFailed');
  t.like(failed.data, { to: 'ada@example.com', attempt: 1, retryAt: '2026-03-01T00:01:00.000Z' });
  t.regex(String(failed.data.error), /connection refused/);
  t.is(down.calls(), 1);
  await first.stop();

  // Back up, except for one address the server keeps refusing.
  const up = recordingMailer((message) => message.to === 'bounce@example.com');
  const second = await startTestWeir(t, { dataDir }, { clock, mailer: up.mailer });
  const api = apiClient(second.url, merchant.testSecretKey);
  const pending = second.readStore.collection<PendingMailDoc>(PENDING_MAILS);
  t.like((await pending.find({ invoiceId: invoice.id }))[0], {
    to: 'ada@example.com',
    attempts: 1,
    retryAt: '2026-03-01T00:01:00.000Z',
  });
  const bouncing = (
    await api.post<Invoice>('/api/v1/invoices', { customerId: customer.id, dueDate: '2026-03-31', lineItems: lines })
  ).body;
  await systemSend(second, merchant.organizationId, bouncing.id, 'bounce@example.com');
  await eventually(
    async () => ((await pending.find({ invoiceId: bouncing.id }))[0]?.attempts === 1 ? true : undefined),
    'the bounce',
  );
  t.is(up.sent.length, 0, 'the failed mail waits for its retry time, even after a restart');
  const retries = await second.readStore
    .collection<TimerDoc>(COLLECTIONS.timers)
    .find({ kind: MAIL_RETRY_TIMER }, { sort: { fireAt: 1 } });
  t.deepEqual(
    retries.map((r) => new Date(r.fireAt).toISOString()),
    ['2026-03-01T00:01:00.000Z', '2026-03-01T00:01:00.000Z'],
  );

  // Renamed while the mail waits: the retry says what the mail said when the invoice was sent.
  t.is((await api.put(`/api/v1/customers/${customer.id}`, { name: 'Ada Lovelace' })).status, 200);
  t.is((await api.put('/api/v1/organization', { name: 'Acme Ltd' })).status, 200);
  clock.advanceTo(T0 + 60_000);
  const delivered = await eventually(async () => up.sent[0], 'the retried mail');
  t.is(delivered.to, 'ada@example.com');
  t.regex(delivered.subject, new RegExp(`^Invoice ${invoice.number} from Acme Studio`));
  t.true(delivered.text.startsWith('Hello Ada,\n'), delivered.text);
  t.truthy(delivered.key);
  t.is(delivered.key, down.attempts[0]!.key, 'the retry is the same message (one Message-ID), not a new one');
  t.is(delivered.key, failed.stream.slice('mail-'.length), 'keyed by the mail');
  await eventually(
    async () => ((await pending.find({ invoiceId: bouncing.id }))[0]?.attempts === 2 ? true : undefined),
    'the second bounce',
  );
  t.like((await pending.find({ invoiceId: bouncing.id }))[0], { retryAt: '2026-03-01T00:03:00.000Z' });
  // Off the pending list once its MailSent is projected (the bounce may be projected first).
  await eventually(
    async () => ((await pending.count({ invoiceId: invoice.id })) === 0 ? true : undefined),
    'the delivered mail off the pending list',
  );

  clock.advanceTo(T0 + 3 * 60_000);
  await eventually(
    async () => ((await pending.find({ invoiceId: bouncing.id }))[0]?.attempts === 3 ? true : undefined),
    'the third bounce',
  );
  t.is(up.sent.length, 1, 'sent once, never again');
  const adaStream = (await mailEvents(second)).filter((e) => e.data.to === 'ada@example.com');
  t.deepEqual(
    adaStream.map((e) => e.type),
    ['MailDeliveryFailed', 'MailSent'],
  );
});
