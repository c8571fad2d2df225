import test, { type ExecutionContext } from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import { createCommandHandler } from '../../src/actors/command-handler.ts';
import { invoicePayments } from '../../src/workflows/invoice-payments.ts';
import type { Workflow } from '../../src/workflows/workflow.ts';
import type { Weir } from '../../src/app/start-weir.ts';
import { openEventStore } from '../../src/event-store/open-event-store.ts';
import { createEmbeddedReadStore } from '../../src/read-store/embedded-read-store.ts';
import { createManualClock, type ManualClock } from '../../src/shared/clock.ts';
import { invoiceSessionClosing } from '../../src/workflows/invoice-session-closing.ts';
import { openStores } from '../../src/app/open-stores.ts';
import { createWorkflowRunner, WORKFLOW_VERSIONS, workflowInstances } from '../../src/workflows/workflow-runner.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';
import {
  cancellations,
  getSession,
  openInvoice,
  openPayPage,
  payInFull,
  payLate,
  payPart,
  receiveHooks,
  reveal,
  sessionEvents,
  untilCanceled,
  workflowSettled,
  type Api,
} from './helpers.ts';

/**
 * An invoice that can no longer take a payment (paid through one session, marked as paid, voided)
 * cancels the other checkout sessions still open for it, so none of them can be paid a second time.
 */

const T0 = Date.parse('2026-03-01T00:00:00.000Z');
const lines = {
  data: [
    { priceData: { currency: 'usdc', unitAmount: '150000000', productData: { name: 'Consulting hour' } }, quantity: 2 },
  ],
};
const HOOKS = [
  'checkout_session.canceled',
  'payment_intent.canceled',
  'checkout_session.late_payment',
  'checkout_session.completed',
  'payment_intent.succeeded',
];

type InvoiceView = {
  id: string;
  status: string;
  amountPaid: string;
  amountOverpaid: string;
  paidAt: string | null;
  checkoutSessionId: string | null;
  paymentAttempts: { checkoutSessionId: string; status: string }[];
};

/** A data dir that outlives a restart, removed when the test ends. */
async function keptDataDir(t: ExecutionContext): Promise<string> {
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-invoice-sessions-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  return dataDir;
}

async function start(t: ExecutionContext, clock: ManualClock, dataDir?: string): Promise<Weir> {
  return startTestWeir(t, dataDir ? { dataDir } : {}, { clock });
}

const getInvoice = async (api: Api, id: string) => (await api.get<InvoiceView>(`/api/v1/invoices/${id}`)).body;
const eventTypes = async (weir: Pick<Weir, 'eventStore'>, id: string) =>
  (await sessionEvents(weir, id)).map((e) => e.type);

/** The log without webhook deliveries and mails (each recorded as its dispatcher gets to it): what the payment records wrote. */
async function recordsLog(weir: Pick<Weir, 'eventStore'>): Promise<string[]> {
  return (await weir.eventStore.readAll(null, 100_000))
    .filter((e) => !e.streamId.startsWith('webhook_delivery-') && !e.streamId.startsWith('mail-'))
    .map((e) => `${e.streamId} ${e.type}`);
}

test('an invoice paid through one session cancels its other open session, once, with its webhooks; money sent to it later is a late payment, which the paid invoice counts as paid twice; nothing else is touched, nothing repeats after a restart', async (t) => {
  const dataDir = await keptDataDir(t);
  const clock = createManualClock(T0);
  const first = await start(t, clock, dataDir);
  const merchant = await createMerchant(first.url);
  const { api } = merchant;
  const hooks = await receiveHooks(t, api, HOOKS);

  // The payer opens the pay link, and again once the first session has less than ten minutes left.
  const invoiceId = await openInvoice(api, lines);
  const a = await openPayPage(first, invoiceId);
  clock.advanceBy(55 * 60 * 1000);
  const b = await openPayPage(first, invoiceId);
  t.not(a, b);
  const shownOnB = await reveal(first, api, b);
  // Sessions of another invoice of the same merchant, and of another merchant's invoice.
  const otherInvoiceSession = await openPayPage(first, await openInvoice(api, lines));
  const otherMerchant = await createMerchant(first.url, 'Other Shop');
  const otherTenantSession = await openPayPage(first, await openInvoice(otherMerchant.api, lines));

  await payInFull(first, api, await getSession(api, a));
  const canceled = await untilCanceled(api, b);
  t.is(canceled.paymentIntent.status, 'canceled');
  t.deepEqual(await cancellations(first, b), [
    { actor: 'system:invoice-payments', reason: 'the invoice was paid through another checkout session' },
  ]);
  t.is((await getSession(api, a)).status, 'complete', 'the session that paid is left as it is');
  t.deepEqual(await cancellations(first, a), []);
  const paid = await getInvoice(api, invoiceId);
  t.like(paid, { status: 'paid', amountPaid: '300000000', checkoutSessionId: a });
  await hooks.waitFor(b, ['checkout_session.canceled', 'payment_intent.canceled']);
  t.deepEqual(hooks.about(b), ['checkout_session.canceled', 'payment_intent.canceled']);

  // B's page no longer gives out its deposit address; the pay link opens no new session.
  t.is(
    (await apiClient(first.url).post(`/checkout/${b}/payment-method`, { assetId: canceled.addresses[0]!.asset.id }))
      .status,
    400,
  );
  const paidPage = await fetch(`${first.url}/invoices/${invoiceId}/pay`, { redirect: 'manual' });
  t.is(paidPage.status, 200);
  t.true((await paidPage.text()).includes('was paid'));

  // The payer still sends the amount B showed: recorded on B as a late payment, and counted on the
  // invoice as paid twice (the merchant refunds it); the invoice stays paid by A.
  const late = await payLate(first, api, b, shownOnB);
  t.is(late.status, 'canceled');
  t.is(late.amountReceived, '300000000');
  t.true(late.paymentIntent.transactions[0]!.late);
  await hooks.waitFor(b, ['checkout_session.late_payment']);
  t.deepEqual(hooks.about(b), [
    'checkout_session.canceled',
    'checkout_session.late_payment',
    'payment_intent.canceled',
  ]);
  await workflowSettled(first, invoicePayments.name);
  t.like(await getInvoice(api, invoiceId), { status: 'paid', amountPaid: '600000000', checkoutSessionId: a });

  // Sessions of another invoice or tenant are untouched.
  t.deepEqual(await eventTypes(first, otherInvoiceSession), ['CheckoutSessionCreated']);
  t.deepEqual(await eventTypes(first, otherTenantSession), ['CheckoutSessionCreated']);
  t.is((await getSession(api, otherInvoiceSession)).status, 'open');

  // After a restart the workflow is at the head with nothing left to send, and the same workflow
  // run again over the whole log (a redelivery of everything) records nothing.
  const before = await recordsLog(first);
  await first.stop();
  const second = await start(t, clock, dataDir);
  const head = (await second.eventStore.headPosition())!;
  await eventually(
    async () => ((second.workflows.position(invoiceSessionClosing.name) ?? -1n) >= head ? true : undefined),
    'the invoice session closing workflow at the head of the log',
  );
  t.is(await second.readStore.collection(workflowInstances(invoiceSessionClosing.name)).count({ pending: true }), 0);
  const replay = <TState>(workflow: Workflow<TState>) =>
    createWorkflowRunner({
      workflow,
      eventStore: second.eventStore,
      readStore: createEmbeddedReadStore({}),
      commands: second.commands,
      clock,
      log: () => {},
    }).runOnce();
  await replay(invoicePayments);
  await replay(invoiceSessionClosing);
  t.deepEqual(await recordsLog(second), before);
  t.is(hooks.about(b).filter((type) => type === 'checkout_session.canceled').length, 1);
});

test('voiding an invoice cancels its open session; the pay link opens no new one; money sent later is a late payment and the invoice stays void', async (t) => {
  const clock = createManualClock(T0);
  const weir = await start(t, clock);
  const { api } = await createMerchant(weir.url);
  const hooks = await receiveHooks(t, api, HOOKS);
  const invoiceId = await openInvoice(api, lines);
  const session = await openPayPage(weir, invoiceId);
  const shown = await reveal(weir, api, session);

  t.is((await api.post<InvoiceView>(`/api/v1/invoices/${invoiceId}/void`)).body.status, 'void');
  t.is((await untilCanceled(api, session)).paymentIntent.status, 'canceled');
  t.deepEqual(await cancellations(weir, session), [
    { actor: 'system:invoice-payments', reason: 'the invoice was voided' },
  ]);
  await hooks.waitFor(session, ['checkout_session.canceled', 'payment_intent.canceled']);

  const before = await recordsLog(weir);
  t.is((await fetch(`${weir.url}/invoices/${invoiceId}/pay`, { redirect: 'manual' })).status, 410);
  t.deepEqual(await recordsLog(weir), before, 'the pay link of a void invoice opens no session');

  const late = await payLate(weir, api, session, shown);
  t.is(late.status, 'canceled');
  t.true(late.paymentIntent.transactions[0]!.late);
  await hooks.waitFor(session, ['checkout_session.late_payment']);
  const invoice = await getInvoice(api, invoiceId);
  t.like(invoice, { status: 'void', amountPaid: '0' });
  t.deepEqual(
    invoice.paymentAttempts.map((p) => [p.checkoutSessionId, p.status]),
    [[session, 'pending']],
  );
});

test('marking an invoice as paid cancels its open session', async (t) => {
  const clock = createManualClock(T0);
  const weir = await start(t, clock);
  const { api } = await createMerchant(weir.url);
  const invoiceId = await openInvoice(api, lines);
  const session = await openPayPage(weir, invoiceId);

  t.is((await api.post<InvoiceView>(`/api/v1/invoices/${invoiceId}/pay`)).body.status, 'paid');
  await untilCanceled(api, session);
  t.deepEqual(await cancellations(weir, session), [
    { actor: 'system:invoice-payments', reason: 'the invoice was marked as paid' },
  ]);
  t.like(await getInvoice(api, invoiceId), { status: 'paid', amountPaid: '300000000' });
});

test('an invoice voided while Weir was down has its open session canceled at the next start', async (t) => {
  const dataDir = await keptDataDir(t);
  const clock = createManualClock(T0);
  const first = await start(t, clock, dataDir);
  const merchant = await createMerchant(first.url);
  const invoiceId = await openInvoice(merchant.api, lines);
  const session = await openPayPage(first, invoiceId);
  await first.stop();

  // The void is in the log, but no linker ran after it (a crash right after the append).
  const eventStore = await openEventStore({ dataDir });
  await createCommandHandler({ eventStore, clock }).handle(
    invoiceAggregate,
    invoiceId,
    { type: 'VoidInvoice' },
    {
      organizationId: merchant.organizationId,
      environment: 'test',
      actor: 'test',
    },
  );
  await eventStore.close();

  const second = await start(t, clock, dataDir);
  const api = apiClient(second.url, merchant.testSecretKey);
  await untilCanceled(api, session);
  t.deepEqual(await cancellations(second, session), [
    { actor: 'system:invoice-payments', reason: 'the invoice was voided' },
  ]);
});

/** What the pay page tells the payer (the page polls it). */
type PayerView = {
  status: string;
  state: string;
  title: string;
  detail: string;
  amountToSend: string;
  payment: unknown;
};
const payerView = async (weir: Pick<Weir, 'url'>, id: string) =>
  (await apiClient(weir.url).get<PayerView>(`/checkout/${id}/status`)).body;

/** The `CheckoutSessionCompleted` events of a session, with who recorded them and why. */
async function completions(weir: Pick<Weir, 'eventStore'>, id: string) {
  return (await sessionEvents(weir, id))
    .filter((e) => e.type === 'CheckoutSessionCompleted')
    .map((e) => {
      const { amountReceived, partial, reason } = e.data as {
        amountReceived: string;
        partial: boolean;
        reason?: string;
      };
      return { actor: e.metadata.actor, amountReceived, partial, reason };
    });
}

test('marking an invoice paid completes its partly paid session with what it received: its page asks for no more, the invoice keeps what it recorded, money sent later is late and counted by the paid invoice as overpaid', async (t) => {
  const clock = createManualClock(T0);
  const weir = await start(t, clock);
  const { api } = await createMerchant(weir.url);
  const hooks = await receiveHooks(t, api, HOOKS);
  const invoiceId = await openInvoice(api, lines);
  const session = await openPayPage(weir, invoiceId);
  const shown = await reveal(weir, api, session);

  // A third reaches the pay page's address: the session waits for the rest, the invoice counts the part.
  await payPart(weir, api, session);
  await eventually(
    async () => ((await getInvoice(api, invoiceId)).amountPaid === '100000000' ? true : undefined),
    'the part payment to reach the invoice',
  );
  t.like(await payerView(weir, session), { state: 'partly_paid', amountToSend: '200000000' });

  // The merchant is paid the rest another way and marks the invoice paid.
  const paid = (await api.post<InvoiceView>(`/api/v1/invoices/${invoiceId}/pay`)).body;
  t.like(paid, { status: 'paid', amountPaid: '300000000' });
  await workflowSettled(weir, invoiceSessionClosing.name);
  await workflowSettled(weir, invoicePayments.name);

  const done = await getSession(api, session);
  t.like(done, { status: 'complete', paymentStatus: 'paid', amountReceived: '100000000', amountOverpaid: '0' });
  t.is(done.paymentIntent.status, 'succeeded');
  t.deepEqual(await completions(weir, session), [
    {
      actor: 'system:invoice-payments',
      amountReceived: '100000000',
      partial: true,
      reason: 'the invoice was marked as paid',
    },
  ]);
  t.deepEqual(await cancellations(weir, session), []);
  const page = await payerView(weir, session);
  t.like(page, { status: 'complete', state: 'paid', amountToSend: '0', payment: null });
  t.notRegex(page.detail, /remaining|send/i);
  // The invoice counted the part when it came and the rest when marked: it records nothing more.
  t.deepEqual(await getInvoice(api, invoiceId), paid);
  await hooks.waitFor(session, ['checkout_session.completed', 'payment_intent.succeeded']);
  t.deepEqual(hooks.about(session), ['checkout_session.completed', 'payment_intent.succeeded']);

  // The payer sends the rest it was asked for before anyway: late money on the session, which the paid
  // invoice counts as overpaid (the merchant now holds more than it was owed, to refund).
  const late = await payLate(weir, api, session, {
    ...shown,
    amountDueRaw: ((BigInt(shown.amountDueRaw) * 2n) / 3n).toString(),
  });
  t.is(late.status, 'complete');
  await hooks.waitFor(session, ['checkout_session.late_payment']);
  const overpaid = await eventually(async () => {
    const invoice = await getInvoice(api, invoiceId);
    return invoice.amountOverpaid === '200000000' ? invoice : undefined;
  }, 'the paid invoice to count the late money as overpaid');
  t.like(overpaid, { status: 'paid', amountPaid: '500000000', paidAt: paid.paidAt });
});

test('an invoice paid through another session completes its partly paid session as is: the part counted once, the invoice records nothing more, the pay link opens nothing', async (t) => {
  const clock = createManualClock(T0);
  const weir = await start(t, clock);
  const { api } = await createMerchant(weir.url);
  const invoiceId = await openInvoice(api, lines);
  const a = await openPayPage(weir, invoiceId);
  clock.advanceBy(55 * 60 * 1000);
  const b = await openPayPage(weir, invoiceId);
  t.not(a, b);
  await payPart(weir, api, a);
  await workflowSettled(weir, invoicePayments.name);
  await payInFull(weir, api, await getSession(api, b));
  await workflowSettled(weir, invoiceSessionClosing.name);
  await workflowSettled(weir, invoicePayments.name);

  t.like(await getSession(api, a), { status: 'complete', paymentStatus: 'paid', amountReceived: '100000000' });
  t.deepEqual(await completions(weir, a), [
    {
      actor: 'system:invoice-payments',
      amountReceived: '100000000',
      partial: true,
      reason: 'the invoice was paid through another checkout session',
    },
  ]);
  t.like(await payerView(weir, a), { state: 'paid', amountToSend: '0', payment: null });
  // The part was counted when it came, B's payment when it paid: A's completion adds nothing.
  const invoice = await getInvoice(api, invoiceId);
  t.like(invoice, { status: 'paid', amountPaid: '400000000', checkoutSessionId: b });
  t.deepEqual(
    (await weir.eventStore.readStream(`invoice-${invoiceId}`)).map((e) => e.type),
    [
      'InvoiceCreated',
      'InvoiceFinalized',
      'InvoicePaymentAttemptStarted',
      'InvoicePaymentAttemptStarted',
      'InvoicePartialPaymentReceived',
      'InvoicePaid',
    ],
  );
  const paidPage = await fetch(`${weir.url}/invoices/${invoiceId}/pay`, { redirect: 'manual' });
  t.is(paidPage.status, 200);
});

test('a Weir before partly paid sessions were completed left one on an invoice marked paid: the new version, folded from the log at start, completes it and records nothing else', async (t) => {
  const dataDir = await keptDataDir(t);
  const clock = createManualClock(T0);
  const first = await start(t, clock, dataDir);
  const merchant = await createMerchant(first.url);
  const { api } = merchant;
  const invoiceId = await openInvoice(api, lines);
  const stuck = await openPayPage(first, invoiceId);
  await payPart(first, api, stuck);
  // Another invoice closed already: its session canceled once, never again at the replay.
  const voidedId = await openInvoice(api, lines);
  const canceled = await openPayPage(first, voidedId);
  await api.post(`/api/v1/invoices/${voidedId}/void`);
  await untilCanceled(api, canceled);
  await workflowSettled(first, invoicePayments.name);
  await workflowSettled(first, invoiceSessionClosing.name);
  await first.stop();

  // The mark as an earlier Weir recorded it: its workflow (version 1) folded it and left the partly paid session.
  const eventStore = await openEventStore({ dataDir });
  const tenant = { organizationId: merchant.organizationId, environment: 'test' as const, actor: 'test' };
  await createCommandHandler({ eventStore, clock }).handle(
    invoiceAggregate,
    invoiceId,
    { type: 'MarkInvoicePaid' },
    tenant,
  );
  await eventStore.close();
  const stores = await openStores({ dataDir });
  await stores.readStore.setCheckpoint(
    `workflow:${invoiceSessionClosing.name}`,
    await stores.eventStore.headPosition(),
  );
  await stores.readStore.collection(WORKFLOW_VERSIONS).put({ _id: invoiceSessionClosing.name, version: 1 });
  const before = await recordsLog(stores);
  await stores.readStore.close();
  await stores.eventStore.close();

  const second = await start(t, clock, dataDir);
  await workflowSettled(second, invoiceSessionClosing.name);
  await workflowSettled(second, invoicePayments.name);
  t.deepEqual(await recordsLog(second), [...before, `checkout_session-${stuck} CheckoutSessionCompleted`]);
  const secondApi = apiClient(second.url, merchant.testSecretKey);
  t.like(await getSession(secondApi, stuck), { status: 'complete', amountReceived: '100000000' });
  t.deepEqual(await completions(second, stuck), [
    {
      actor: 'system:invoice-payments',
      amountReceived: '100000000',
      partial: true,
      reason: 'the invoice was marked as paid',
    },
  ]);
  t.deepEqual(await cancellations(second, canceled), [
    { actor: 'system:invoice-payments', reason: 'the invoice was voided' },
  ]);
  t.like(await getInvoice(secondApi, invoiceId), { status: 'paid', amountPaid: '300000000' });
});
