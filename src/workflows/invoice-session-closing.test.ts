import test from 'ava';
import { sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import { created, finalized, INVOICE_ID, paid, voided } from '../../machines/invoice.fixture.ts';
import type { InvoiceEvent } from '../../machines/invoice.types.ts';
import { createTestLog } from '../projections/test-log.ts';
import { invoiceSessionClosing } from './invoice-session-closing.ts';
import { givenWhenThenWorkflow, type WorkflowCommand } from './workflow.ts';

const AT = '2026-01-03T00:00:00.000Z';
const PAID_THROUGH_ANOTHER = 'the invoice was paid through another checkout session';

/** A little log of one invoice and the sessions opened for it (tenant `org-1` unless told). */
function logOf() {
  const { events, append } = createTestLog(AT);
  const session = (id: string, event: CheckoutSessionEvent) => append(`checkout_session-${id}`, event);
  return {
    events,
    invoice: (event: InvoiceEvent) => append(`invoice-${INVOICE_ID}`, event),
    opened: (id: string, invoiceId: string | null = INVOICE_ID, organizationId = 'org-1') =>
      append(
        `checkout_session-${id}`,
        { type: 'CheckoutSessionCreated', data: { session: sessionFixture({ id, invoiceId, organizationId }) } },
        organizationId,
      ),
    completed: (id: string) =>
      session(id, {
        type: 'CheckoutSessionCompleted',
        data: { amountReceived: '300000000', amountOverpaid: '0', transactionHash: null, partial: false, at: AT },
      }),
    partlyPaid: (id: string) =>
      session(id, { type: 'CheckoutSessionPartiallyPaid', data: { amountReceived: '100000000', at: AT } }),
    expired: (id: string) => session(id, { type: 'CheckoutSessionExpired', data: { at: AT } }),
  };
}

const given = givenWhenThenWorkflow(invoiceSessionClosing);

/** What the commands do, in short: [session, reason] for cancels alone (any other command throws). */
const cancels = (commands: WorkflowCommand[]) =>
  commands.map((c) => {
    if (c.aggregate !== 'checkout_session' || c.command.type !== 'CancelCheckoutSession')
      throw new Error(`unexpected command ${JSON.stringify(c)}`);
    return [c.id, c.command.reason];
  });

/** What the commands do, in short: [command, session, reason]. */
const steps = (commands: WorkflowCommand[]) =>
  commands.map((c) => {
    if (c.aggregate !== 'checkout_session') throw new Error(`unexpected command ${JSON.stringify(c)}`);
    return [c.command.type, c.id, c.command.reason];
  });
const CANCEL = 'CancelCheckoutSession';
const COMPLETE = 'CompletePartialCheckoutSession';

test('a paid invoice cancels its other open sessions and completes its partly paid one as is; never the one that paid, one already ended, nor another invoice’s or tenant’s', (t) => {
  const log = logOf();
  log.invoice(created());
  log.invoice(finalized());
  for (const id of ['a', 'b', 'c', 'd']) log.opened(id);
  log.opened('other-invoice', '33333333-3333-4333-8333-333333333333');
  log.opened('other-tenant', INVOICE_ID, 'org-2');
  log.partlyPaid('c');
  log.expired('d');
  log.completed('a');
  const history = log.events.filter((e) => invoiceSessionClosing.correlate(e) !== false);
  const instanceEvents = history.filter((e) => {
    const c = invoiceSessionClosing.correlate(e);
    return c === INVOICE_ID || c === null;
  });
  const when = log.invoice(paid('a'));
  const commands = given(instanceEvents).when(when);
  t.deepEqual(steps(commands), [
    [CANCEL, 'b', PAID_THROUGH_ANOTHER],
    [COMPLETE, 'c', PAID_THROUGH_ANOTHER],
  ]);
  t.like(commands[0], {
    context: {
      organizationId: 'org-1',
      environment: 'test',
      actor: 'system:invoice-payments',
      causationId: INVOICE_ID,
    },
  });
  t.like(commands[1], { context: { actor: 'system:invoice-payments', causationId: INVOICE_ID } });
  t.deepEqual(given(instanceEvents).whenTwice(when)[1], [], 'the same event again decides nothing');
});

test('voided or marked as paid: each open session is canceled with why', (t) => {
  for (const [event, reason] of [
    [voided(), 'the invoice was voided'],
    [
      { type: 'InvoiceMarkedAsPaid', data: { amountPaid: '300000000', at: AT } } as InvoiceEvent,
      'the invoice was marked as paid',
    ],
  ] as const) {
    const log = logOf();
    log.invoice(created());
    log.invoice(finalized());
    log.opened('s');
    const history = [...log.events];
    t.deepEqual(cancels(given(history).when(log.invoice(event))), [['s', reason]]);
  }
});

test('a session opened for an invoice already settled is canceled at once, once; one of another tenant is not', (t) => {
  const log = logOf();
  log.invoice(created());
  log.invoice(finalized());
  log.invoice(voided());
  const history = [...log.events];
  const late = log.opened('late');
  t.is(invoiceSessionClosing.correlate(late), INVOICE_ID);
  const [first, again] = given(history).whenTwice(late);
  t.deepEqual(cancels(first), [['late', 'the invoice was voided']]);
  t.deepEqual(again, []);
  t.deepEqual(given(history).when(log.opened('stranger', INVOICE_ID, 'org-2')), []);
});

test('an open invoice closes nothing; events of no invoice are not the workflow’s', (t) => {
  const log = logOf();
  log.invoice(created());
  const history = [...log.events];
  t.deepEqual(given(history).when(log.invoice(finalized())), []);
  t.deepEqual(given(history).when(log.opened('s')), []);
  t.false(invoiceSessionClosing.correlate(log.opened('plain', null)));
  t.is(invoiceSessionClosing.correlate(log.completed('s')), null, 'a session end goes where its creation went');
});

test('marked as paid or voided: a partly paid session is completed as is with why, never canceled; one partly paid then ended is left', (t) => {
  for (const [event, reason] of [
    [
      { type: 'InvoiceMarkedAsPaid', data: { amountPaid: '200000000', at: AT } } as InvoiceEvent,
      'the invoice was marked as paid',
    ],
    // Only in a race: a void is refused once the invoice has recorded the part.
    [voided(), 'the invoice was voided'],
  ] as const) {
    const log = logOf();
    log.invoice(created());
    log.invoice(finalized());
    log.opened('part');
    log.partlyPaid('part');
    log.partlyPaid('part');
    log.opened('done');
    log.partlyPaid('done');
    log.completed('done');
    const given_ = given([...log.events]);
    t.deepEqual(given_.state().partlyPaid, ['part']);
    const [first, again] = given_.whenTwice(log.invoice(event));
    t.deepEqual(steps(first), [[COMPLETE, 'part', reason]]);
    t.deepEqual(again, []);
  }
});

test('a session first partly paid after its invoice was settled (its cancel refused) is completed then, once; a later part decides nothing', (t) => {
  const log = logOf();
  log.invoice(created());
  log.invoice(finalized());
  log.opened('racing');
  t.deepEqual(steps(given([...log.events]).when(log.invoice(paid('other')))), [
    [CANCEL, 'racing', PAID_THROUGH_ANOTHER],
  ]);
  const history = [...log.events];
  const part = log.partlyPaid('racing');
  t.is(invoiceSessionClosing.correlate(part), null, 'a part goes where its session’s creation went');
  const [first, again] = given(history).whenTwice(part);
  t.deepEqual(steps(first), [[COMPLETE, 'racing', PAID_THROUGH_ANOTHER]]);
  t.deepEqual(again, [], 'a second part (or the same one again) decides nothing more');
  // The completion it decided is recorded: nothing is left to close.
  const ended = [...history, part, log.completed('racing')];
  t.deepEqual(given(ended).state(), {
    invoiceId: INVOICE_ID,
    tenant: { organizationId: 'org-1', environment: 'test' },
    closedBecause: PAID_THROUGH_ANOTHER,
    open: [],
    partlyPaid: [],
  });
});

test('a session opened on an invoice already settled and partly paid before its cancel landed is completed; one of an open invoice is left waiting for the rest', (t) => {
  const log = logOf();
  log.invoice(created());
  log.invoice(finalized());
  const openInvoice = [...log.events];
  log.opened('waiting');
  t.deepEqual(given([...log.events]).when(log.partlyPaid('waiting')), [], 'an open invoice’s part waits for the rest');
  const settled = logOf();
  settled.invoice(created());
  settled.invoice(finalized());
  settled.invoice(voided());
  const late = settled.opened('late');
  t.deepEqual(steps(given([...settled.events].slice(0, -1)).when(late)), [[CANCEL, 'late', 'the invoice was voided']]);
  t.deepEqual(steps(given([...settled.events]).when(settled.partlyPaid('late'))), [
    [COMPLETE, 'late', 'the invoice was voided'],
  ]);
  t.deepEqual(
    given([...openInvoice, settled.opened('stranger', INVOICE_ID, 'org-2')]).when(settled.partlyPaid('stranger')),
    [],
    'another tenant’s session is not the invoice’s',
  );
});
