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

/** What the commands do, in short: [session, reason]. */
const cancels = (commands: WorkflowCommand[]) =>
  commands.map((c) => {
    if (c.aggregate !== 'checkout_session' || c.command.type !== 'CancelCheckoutSession')
      throw new Error(`unexpected command ${JSON.stringify(c)}`);
    return [c.id, c.command.reason];
  });

test('a paid invoice cancels its other open sessions, never the one that paid, one already ended, nor another invoice’s or tenant’s', (t) => {
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
  t.deepEqual(cancels(commands), [['b', PAID_THROUGH_ANOTHER]]);
  t.like(commands[0], {
    context: {
      organizationId: 'org-1',
      environment: 'test',
      actor: 'system:invoice-payments',
      causationId: INVOICE_ID,
    },
  });
  t.deepEqual(cancels(given(instanceEvents).whenTwice(when)[1]), [], 'the same event again decides nothing');
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
