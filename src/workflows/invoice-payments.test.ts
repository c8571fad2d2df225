import test from 'ava';
import { sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import type { InvoiceCommand } from '../../machines/invoice.decide.ts';
import { attemptStarted, created, finalized, INVOICE_ID } from '../../machines/invoice.fixture.ts';
import { givenWhenThen } from '../actors/given-when-then.ts';
import { createTestLog } from '../projections/test-log.ts';
import { invoicePayments } from './invoice-payments.ts';
import { eventsOfInstance, givenWhenThenWorkflow, type WorkflowCommand } from './workflow.ts';

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
  t.false(
    invoicePayments.correlate(
      late.session({ type: 'LatePaymentReceived', data: { transferId: 't-1', amount: '1', at: AT } }),
    ),
  );
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
