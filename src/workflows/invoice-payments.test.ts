import test, { type ExecutionContext } from 'ava';
import { detected, sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionEvent, SessionPayment } from '../../machines/checkout-session.types.ts';
import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import type { InvoiceCommand } from '../../machines/invoice.decide.ts';
import type { InvoiceEvent } from '../../machines/invoice.types.ts';
import { attemptStarted, created, finalized, INVOICE_ID, invoiceFixture } from '../../machines/invoice.fixture.ts';
import { createCommandHandler } from '../actors/command-handler.ts';
import { givenWhenThen } from '../actors/given-when-then.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { createSqliteReadStore } from '../read-store/sqlite-read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { InvalidStateError } from '../shared/errors.ts';
import { createTestLog } from '../projections/test-log.ts';
import { invoicePayments } from './invoice-payments.ts';
import { eventsOfInstance, givenWhenThenWorkflow, type WorkflowCommand } from './workflow.ts';
import { createWorkflowRunner } from './workflow-runner.ts';

const AT = '2026-01-03T00:00:00.000Z';
const given = givenWhenThenWorkflow(invoicePayments);
const givenInvoice = givenWhenThen(invoiceAggregate);

/** Checkout session `id` of tenant `organizationId`, opened to pay `invoiceId` (or a plain one), and its events. */
function sessionOf(id: string, invoiceId: string | null = INVOICE_ID, organizationId = 'org-1') {
  const { events, append } = createTestLog(AT);
  const session = (event: CheckoutSessionEvent) => append(`checkout_session-${id}`, event, organizationId);
  session({ type: 'CheckoutSessionCreated', data: { session: sessionFixture({ id, invoiceId, organizationId }) } });
  return {
    history: () => eventsOfInstance(invoicePayments, events, id),
    session,
    completed: () =>
      session({
        type: 'CheckoutSessionCompleted',
        data: { amountReceived: '300000000', amountOverpaid: '0', transactionHash: '0xfeed', partial: false, at: AT },
      }),
  };
}

/** The commands in short: [invoice, type, actor, cause, tenant]. */
const short = (commands: WorkflowCommand[]) =>
  commands.map((c) => [c.id, c.command.type, c.context.actor, c.context.causationId, c.context.organizationId]);

test('a pay page that completes records the payment on its invoice, with what it received and its transaction; once', (t) => {
  const pay = sessionOf('cs-a');
  pay.session({ type: 'CheckoutSessionPartiallyPaid', data: { amountReceived: '100000000', at: AT } });
  const history = pay.history();
  const [first, again] = given(history).whenTwice(pay.completed());
  t.deepEqual(short(first), [[INVOICE_ID, 'RecordInvoicePayment', 'system:invoice-payments', 'cs-a', 'org-1']]);
  t.deepEqual(first[0]!.command, {
    type: 'RecordInvoicePayment',
    checkoutSessionId: 'cs-a',
    transactionHash: '0xfeed',
    amountReceived: '300000000',
  });
  t.deepEqual(again, [], 'a repeat decides nothing');
});

test('the payment carries the chain of the transaction that completed the session; a hash it saw no transfer of, none', (t) => {
  const pay = sessionOf('cs-tron');
  pay.session(detected('2', '100000000'));
  const tron = { network: 'tron-mainnet', chainId: 728126428, transactionHash: '0xfeed' };
  const { payment } = detected('1', '200000000').data as { payment: SessionPayment };
  pay.session({ type: 'PaymentDetected', data: { payment: { ...payment, ...tron } } });
  t.like(given(pay.history()).when(pay.completed())[0]!.command, { transactionHash: '0xfeed', chainId: 728126428 });

  const unseen = sessionOf('cs-unseen');
  t.false('chainId' in given(unseen.history()).when(unseen.completed())[0]!.command, 'no chain guessed');
});

test('a pay page that charges the network fee on top tells its invoice the fee with what it received, the fee of the method chosen last; one without a fee, none', (t) => {
  const pay = sessionOf('cs-fee');
  const chosen = (amountGasFee: string) =>
    pay.session({
      type: 'PaymentMethodSelected',
      data: { addressId: 'addr-usdc', amountDue: '3010000', amountGasFee, at: AT },
    });
  chosen('2000000');
  chosen('1000000');
  const part = given(pay.history()).when(
    pay.session({ type: 'CheckoutSessionPartiallyPaid', data: { amountReceived: '100000000', at: AT } }),
  );
  t.deepEqual(part[0]!.command, {
    type: 'RecordInvoicePartialPayment',
    checkoutSessionId: 'cs-fee',
    amountReceived: '100000000',
    amountGasFee: '1000000',
  });
  const history = pay.history();
  const payment = given(history).when(pay.completed())[0]!.command;
  t.like(payment, { type: 'RecordInvoicePayment', amountReceived: '300000000', amountGasFee: '1000000' });

  // Folded into the invoice (3.00, paid 3.00 + 0.01 by its session): it counts 3.00, not 3.01.
  const opened = [created(), finalized(), attemptStarted('cs-fee')];
  const command = { ...(payment as unknown as InvoiceCommand), amountReceived: '301000000' } as InvoiceCommand;
  const paidEvents = givenInvoice(opened).when(command, AT);
  t.like(givenInvoice([...opened, ...paidEvents]).state().context.invoice, {
    amountDue: '300000000',
    amountPaid: '300000000',
    amountRemaining: '0',
  });

  const free = sessionOf('cs-free');
  free.session({
    type: 'PaymentMethodSelected',
    data: { addressId: 'addr-usdc', amountDue: '3000000', amountGasFee: '0', at: AT },
  });
  t.false('amountGasFee' in given(free.history()).when(free.completed())[0]!.command);
});

test('a pay page that expires or is canceled records a failed attempt on its invoice, saying why; once', (t) => {
  for (const [ending, reason] of [
    [{ type: 'CheckoutSessionExpired', data: { at: AT } }, 'the checkout session expired before it was paid'],
    [
      { type: 'CheckoutSessionCanceled', data: { reason: 'the merchant canceled it', at: AT } },
      'the checkout session was canceled',
    ],
  ] as [CheckoutSessionEvent, string][]) {
    const pay = sessionOf('cs-b');
    const history = pay.history();
    const [first, again] = given(history).whenTwice(pay.session(ending));
    t.deepEqual(first[0]?.command, { type: 'RecordInvoicePaymentFailure', checkoutSessionId: 'cs-b', reason });
    t.deepEqual(again, [], `${ending.type}: a repeat decides nothing`);
  }
});

test('a session of no invoice is not the workflow’s; an invoice’s session acts for its own tenant; what follows its end decides nothing', (t) => {
  const plain = sessionOf('cs-plain', null);
  t.is(invoicePayments.correlate(plain.completed()), null, 'its stream decides: one never correlated');
  t.deepEqual(plain.history(), []);

  const other = sessionOf('cs-other', INVOICE_ID, 'org-2');
  t.deepEqual(short(given(other.history()).when(other.completed())), [
    [INVOICE_ID, 'RecordInvoicePayment', 'system:invoice-payments', 'cs-other', 'org-2'],
  ]);

  const late = sessionOf('cs-late');
  late.session({ type: 'CheckoutSessionCanceled', data: { reason: 'the invoice was voided', at: AT } });
  t.deepEqual(given(late.history()).when(late.completed()), [], 'canceled first: its end was decided then');
  // A confirmation alone is not the workflow's (what follows it is); an overpayment is, since version 8 (see below).
  t.false(invoicePayments.correlate(late.session({ type: 'PaymentConfirmed', data: { transferId: 't-1', at: AT } })));
});

test('a pay page that expired or was canceled, then received money, tells its invoice each late transfer: its amount, its transaction and chain, the session’s network fee; so does one completed short (complete-partial); a session of no invoice tells nothing', (t) => {
  for (const ending of [
    { type: 'CheckoutSessionExpired', data: { at: AT } },
    {
      type: 'CheckoutSessionCanceled',
      data: { reason: 'the invoice was paid through another checkout session', at: AT },
    },
  ] as CheckoutSessionEvent[]) {
    const pay = sessionOf('cs-late');
    pay.session({
      type: 'PaymentMethodSelected',
      data: { addressId: 'addr-usdc', amountDue: '3010000', amountGasFee: '1000000', at: AT },
    });
    // Seen before the close (a cancel does not wait for it), final after it.
    pay.session(detected('t-1', '301000000'));
    pay.session(ending);
    const late = pay.session({ type: 'LatePaymentReceived', data: { transferId: 't-1', amount: '301000000', at: AT } });
    t.is(invoicePayments.correlate(late), null, 'its stream decides');
    const commands = given(pay.history().slice(0, -1)).when(late);
    t.deepEqual(short(commands), [
      [INVOICE_ID, 'RecordInvoiceLatePayment', 'system:invoice-payments', 'cs-late', 'org-1'],
    ]);
    t.deepEqual(
      commands[0]!.command,
      {
        type: 'RecordInvoiceLatePayment',
        checkoutSessionId: 'cs-late',
        transferId: 't-1',
        amount: '301000000',
        transactionHash: `0x${'t-1'.padStart(64, '0')}`,
        chainId: 7357,
        amountGasFee: '1000000',
      },
      ending.type,
    );
  }

  const shortPaid = sessionOf('cs-short');
  shortPaid.session({
    type: 'CheckoutSessionCompleted',
    data: { amountReceived: '100000000', amountOverpaid: '0', transactionHash: null, partial: true, at: AT },
  });
  const afterShort = shortPaid.session({
    type: 'LatePaymentReceived',
    data: { transferId: 't-2', amount: '100000000', at: AT },
  });
  t.like(
    given(shortPaid.history().slice(0, -1)).when(afterShort)[0]?.command,
    { type: 'RecordInvoiceLatePayment', checkoutSessionId: 'cs-short', transferId: 't-2', amount: '100000000' },
    'completed short: its invoice counts what came after',
  );

  const plain = sessionOf('cs-plain', null);
  plain.session({ type: 'CheckoutSessionExpired', data: { at: AT } });
  const latePlain = plain.session({ type: 'LatePaymentReceived', data: { transferId: 't-3', amount: '1', at: AT } });
  t.deepEqual(given(plain.history()).when(latePlain), []);
});

test('a pay page complete that receives money past its total after its completion tells its invoice each such transfer (its overpayment), once; the overpayment its completion came with is counted with what the completion received; a negative one of an older log is late money', (t) => {
  const pay = sessionOf('cs-over');
  pay.session(detected('t-1', '350000000'));
  // Completed past the total by one transfer: its completion received it all, its overpayment is no more.
  const completed = pay.session({
    type: 'CheckoutSessionCompleted',
    data: {
      amountReceived: '350000000',
      amountOverpaid: '50000000',
      transactionHash: '0xfeed',
      partial: false,
      at: AT,
    },
  });
  t.like(given(pay.history().slice(0, -1)).when(completed)[0]?.command, { amountReceived: '350000000' });
  const atCompletion = pay.session({
    type: 'OverpaymentReceived',
    data: { transferId: 't-1', amount: '350000000', amountOverpaid: '50000000', at: AT },
  });
  t.is(invoicePayments.correlate(atCompletion), null, 'its stream decides');
  t.deepEqual(given(pay.history().slice(0, -1)).when(atCompletion), [], 'the completion counted it');
  // Another transfer once complete: the invoice counts it, with its transaction.
  pay.session(detected('t-2', '100000000'));
  const after = pay.session({
    type: 'OverpaymentReceived',
    data: { transferId: 't-2', amount: '100000000', amountOverpaid: '150000000', at: AT },
  });
  const [first, again] = given(pay.history().slice(0, -1)).whenTwice(after);
  t.deepEqual(short(first), [[INVOICE_ID, 'RecordInvoiceLatePayment', 'system:invoice-payments', 'cs-over', 'org-1']]);
  t.deepEqual(first[0]!.command, {
    type: 'RecordInvoiceLatePayment',
    checkoutSessionId: 'cs-over',
    transferId: 't-2',
    amount: '100000000',
    transactionHash: `0x${'t-2'.padStart(64, '0')}`,
    chainId: 7357,
  });
  t.deepEqual(again, [], 'folded, no more than it counted');

  // An older Weir took late money after a short completion as over it (a negative excess): late money all the same.
  const older = sessionOf('cs-older');
  older.session({
    type: 'CheckoutSessionCompleted',
    data: { amountReceived: '100000000', amountOverpaid: '0', transactionHash: null, partial: true, at: AT },
  });
  const negative = older.session({
    type: 'OverpaymentReceived',
    data: { transferId: 't-3', amount: '100000000', amountOverpaid: '-100000000', at: AT },
  });
  t.like(given(older.history().slice(0, -1)).when(negative)[0]?.command, {
    type: 'RecordInvoiceLatePayment',
    transferId: 't-3',
    amount: '100000000',
  });
});

test('a pay page partly paid records what it has received on its invoice, each time more arrives; the invoice’s decider answers nothing for a repeat', (t) => {
  const pay = sessionOf('cs-part');
  const partial = (amountReceived: string) =>
    pay.session({ type: 'CheckoutSessionPartiallyPaid', data: { amountReceived, at: AT } });
  const first = given(pay.history()).when(partial('100000000'));
  t.deepEqual(short(first), [
    [INVOICE_ID, 'RecordInvoicePartialPayment', 'system:invoice-payments', 'cs-part', 'org-1'],
  ]);
  t.deepEqual(first[0]!.command, {
    type: 'RecordInvoicePartialPayment',
    checkoutSessionId: 'cs-part',
    amountReceived: '100000000',
  });
  t.deepEqual(
    given(pay.history()).when(partial('250000000'))[0]?.command,
    { type: 'RecordInvoicePartialPayment', checkoutSessionId: 'cs-part', amountReceived: '250000000' },
    'all it has received so far',
  );

  // Folded into the invoice, the same command again (a redelivery, a replay of the log) is nothing.
  const opened = [created(), finalized(), attemptStarted('cs-part')];
  const command = first[0]!.command as unknown as InvoiceCommand;
  const recorded = givenInvoice(opened).when(command, AT);
  t.deepEqual(
    recorded.map((e) => e.type),
    ['InvoicePartialPaymentReceived'],
  );
  t.deepEqual(givenInvoice([...opened, ...recorded]).when(command, AT), []);
});

/**
 * A log in memory with invoices of org-1 (`handle` a command to one), the sessions' events as an
 * earlier Weir recorded them (`record`), the workflow folding the whole log from its start as a new
 * version does at the next start (`fold`), and an invoice's events after its creation and finalize with its state.
 */
function realLog(t: ExecutionContext) {
  const clock = createManualClock(Date.parse(AT));
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  t.teardown(() => eventStore.close());
  const commands = createCommandHandler({ eventStore, clock });
  const ctx = { organizationId: 'org-1', environment: 'test' as const, actor: 'test' };
  let n = 0;
  return {
    handle: (command: InvoiceCommand, invoiceId = INVOICE_ID) =>
      commands.handle(invoiceAggregate, invoiceId, command, ctx),
    record: (id: string, events: CheckoutSessionEvent[]) =>
      eventStore.append(
        `checkout_session-${id}`,
        events.map((event) => ({
          id: `00000000-0000-4000-8000-${String(n++).padStart(12, '0')}`,
          type: event.type,
          data: event.data as unknown as RecordedEvent['data'],
          metadata: { ...ctx, correlationId: 'c', occurredAt: AT },
        })),
        'any',
      ),
    fold: () =>
      createWorkflowRunner({
        workflow: invoicePayments,
        eventStore,
        readStore: createSqliteReadStore({ path: ':memory:', indexedFields: ['pending'] }),
        commands,
        clock,
        log: () => {},
      }).runOnce(),
    invoice: async (invoiceId = INVOICE_ID) => {
      const stream = await eventStore.readStream(`invoice-${invoiceId}`);
      return {
        types: stream.map((e) => e.type).slice(2),
        invoice: givenInvoice(stream as unknown as InvoiceEvent[]).state().context.invoice!,
      };
    },
  };
}

const sessionCreated = (id: string, invoiceId = INVOICE_ID): CheckoutSessionEvent => ({
  type: 'CheckoutSessionCreated',
  data: { session: sessionFixture({ id, invoiceId }) },
});
const sessionCompleted = (transactionHash: string): CheckoutSessionEvent => ({
  type: 'CheckoutSessionCompleted',
  data: { amountReceived: '300000000', amountOverpaid: '0', transactionHash, partial: false, at: AT },
});

test('over the real log: a session partly paid before its invoice recorded partial payments is recorded when the workflow folds the log again (as its version 2 does at the next start), once; the invoice then refuses its void', async (t) => {
  const log = realLog(t);
  await log.handle({ type: 'CreateInvoice', invoice: invoiceFixture() });
  await log.handle({ type: 'FinalizeInvoice', url: 'http://weir.test/pay' });
  // The session's events, as recorded before: the invoice was never told of the part payment.
  await log.record('cs-old', [
    sessionCreated('cs-old'),
    { type: 'CheckoutSessionPartiallyPaid', data: { amountReceived: '100000000', at: AT } },
  ]);

  await log.fold();
  t.deepEqual((await log.invoice()).types, ['InvoicePaymentAttemptStarted', 'InvoicePartialPaymentReceived']);
  await log.fold();
  t.is((await log.invoice()).types.length, 2, 'folded again from the start: nothing more');
  await t.throwsAsync(log.handle({ type: 'VoidInvoice' }), {
    instanceOf: InvalidStateError,
    message: /partial payment cannot be voided/,
  });
});

test('over the real log: an invoice paid through one session whose other session was paid too (its payer paid twice) counts that money when the workflow folds the log again (as its version 5 does at the next start), once; the paying session adds nothing', async (t) => {
  const log = realLog(t);
  await log.handle({ type: 'CreateInvoice', invoice: invoiceFixture() });
  await log.handle({ type: 'FinalizeInvoice', url: 'http://weir.test/pay' });
  await log.handle({ type: 'StartInvoicePaymentAttempt', checkoutSessionId: 'cs-a' });
  await log.handle({ type: 'StartInvoicePaymentAttempt', checkoutSessionId: 'cs-b' });
  // Both sessions paid in full: B part first, then its rest, after A paid the invoice.
  await log.record('cs-a', [sessionCreated('cs-a')]);
  await log.record('cs-b', [sessionCreated('cs-b')]);
  await log.record('cs-a', [sessionCompleted('0xaaaa')]);
  await log.fold();
  await log.record('cs-b', [
    { type: 'CheckoutSessionPartiallyPaid', data: { amountReceived: '100000000', at: AT } },
    sessionCompleted('0xbbbb'),
  ]);

  await log.fold();
  const told = await log.invoice();
  t.deepEqual(told.types.slice(2), [
    'InvoicePaid',
    'InvoicePaymentReceivedAfterPaid',
    'InvoicePaymentReceivedAfterPaid',
  ]);
  t.like(told.invoice, {
    status: 'paid',
    amountPaid: '600000000',
    checkoutSessionId: 'cs-a',
    transactionHash: '0xaaaa',
  });
  t.like(told.invoice.paymentAttempts[1], {
    checkoutSessionId: 'cs-b',
    status: 'succeeded',
    amountReceived: '300000000',
  });
  await log.fold();
  t.deepEqual((await log.invoice()).types, told.types, 'folded again from the start: nothing more');
  t.true(invoicePayments.version >= 5, 'a new version: the log is folded again at the next start');
});

test('over the real log: an invoice whose session expired and was then paid late, left open by an earlier Weir, is paid when the workflow folds the log again (as its version 6 does at the next start): one InvoicePaid, the fee not counted; one paid since through another session counts the late money as paid twice; folded again, nothing more', async (t) => {
  const log = realLog(t);
  const OTHER = 'inv-other';
  for (const id of [INVOICE_ID, OTHER]) {
    await log.handle({ type: 'CreateInvoice', invoice: invoiceFixture({ id }) }, id);
    await log.handle({ type: 'FinalizeInvoice', url: 'http://weir.test/pay' }, id);
  }
  /** Session `id` of `invoiceId`: its payer chose USDC (0.01 network fee on top), it expired, and 3.01 reached it after. */
  const expiredThenPaidLate = async (id: string, invoiceId: string) => {
    await log.handle({ type: 'StartInvoicePaymentAttempt', checkoutSessionId: id }, invoiceId);
    await log.record(id, [
      sessionCreated(id, invoiceId),
      {
        type: 'PaymentMethodSelected',
        data: { addressId: 'addr-usdc', amountDue: '3010000', amountGasFee: '1000000', at: AT },
      },
      { type: 'CheckoutSessionExpired', data: { at: AT } },
      // What the earlier Weir's workflow recorded of it: the failed attempt, nothing of the money.
    ]);
    await log.handle(
      {
        type: 'RecordInvoicePaymentFailure',
        checkoutSessionId: id,
        reason: 'the checkout session expired before it was paid',
      },
      invoiceId,
    );
    await log.record(id, [
      detected(`t-${id}`, '301000000'),
      { type: 'PaymentConfirmed', data: { transferId: `t-${id}`, at: AT } },
      { type: 'LatePaymentReceived', data: { transferId: `t-${id}`, amount: '301000000', at: AT } },
    ]);
  };
  await expiredThenPaidLate('cs-x', INVOICE_ID);
  await expiredThenPaidLate('cs-y', OTHER);
  // The other invoice's payer, asked again, paid it through a new session.
  await log.handle({ type: 'StartInvoicePaymentAttempt', checkoutSessionId: 'cs-z' }, OTHER);
  await log.handle(
    { type: 'RecordInvoicePayment', checkoutSessionId: 'cs-z', transactionHash: '0xzzzz', amountReceived: '300000000' },
    OTHER,
  );
  await log.record('cs-z', [sessionCreated('cs-z', OTHER), sessionCompleted('0xzzzz')]);

  await log.fold();
  const paidLate = await log.invoice();
  t.deepEqual(paidLate.types, [
    'InvoicePaymentAttemptStarted',
    'InvoicePaymentFailed',
    'InvoicePartialPaymentReceived',
    'InvoicePaid',
  ]);
  t.like(paidLate.invoice, {
    status: 'paid',
    amountPaid: '300000000',
    amountRemaining: '0',
    checkoutSessionId: 'cs-x',
    transactionHash: `0x${'t-cs-x'.padStart(64, '0')}`,
    transactionChainId: 7357,
  });
  const paidTwice = await log.invoice(OTHER);
  t.deepEqual(paidTwice.types.slice(-2), ['InvoicePaid', 'InvoicePaymentReceivedAfterPaid']);
  t.is(paidTwice.types.filter((type) => type === 'InvoicePaid').length, 1);
  t.like(paidTwice.invoice, { status: 'paid', amountPaid: '600000000', checkoutSessionId: 'cs-z' });

  await log.fold();
  t.deepEqual((await log.invoice()).types, paidLate.types, 'folded again from the start: nothing more');
  t.deepEqual((await log.invoice(OTHER)).types, paidTwice.types);
  t.true(invoicePayments.version >= 6, 'a new version: the log is folded again at the next start');
});
