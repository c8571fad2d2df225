import test from 'ava';
import { IllegalEventError } from '../src/actors/aggregate.ts';
import { givenWhenThen } from '../src/actors/given-when-then.ts';
import { InvalidStateError, ValidationError } from '../src/shared/errors.ts';
import { deterministicId } from '../src/shared/ids.ts';
import { invoiceAggregate } from './invoice.aggregate.ts';
import { addMonthsClamped, nextInvoiceIdOf, type InvoiceCommand, type InvoiceState } from './invoice.decide.ts';
import { evolveInvoice, overpaidOf } from './invoice.evolve.ts';
import {
  DUE_DATE,
  FINALIZED_AT,
  HOSTED_URL,
  INVOICE_ID,
  attemptStarted,
  created,
  deleted,
  finalized,
  invoiceFixture,
  markedUncollectible,
  paid,
  partlyPaid,
  receivedAfterPaid,
  recurringInvoiceFixture,
  voided,
} from './invoice.fixture.ts';
import { invoiceMachine } from './invoice.machine.ts';
import type { Invoice, InvoiceEvent, InvoiceEventType } from './invoice.types.ts';

const given = givenWhenThen(invoiceAggregate);
const NOW = '2026-01-05T00:00:00.000Z';

/** One history per machine state; the open ones have a pending payment attempt through `cs-1`. */
const HISTORIES: Record<InvoiceState, InvoiceEvent[]> = {
  new: [],
  draft: [created()],
  open: [created(), finalized(), attemptStarted('cs-1')],
  paid: [created(), finalized(), attemptStarted('cs-1'), paid('cs-1')],
  void: [created(), finalized(), attemptStarted('cs-1'), voided()],
  uncollectible: [created(), finalized(), attemptStarted('cs-1'), markedUncollectible()],
  deleted: [created(), deleted()],
};
const STATES = Object.keys(HISTORIES) as InvoiceState[];

const COMMANDS = {
  create: { type: 'CreateInvoice', invoice: invoiceFixture() },
  update: { type: 'UpdateInvoice', changes: { memo: 'Updated memo' } },
  delete: { type: 'DeleteInvoice' },
  finalize: { type: 'FinalizeInvoice', url: HOSTED_URL },
  send: { type: 'SendInvoice', to: null, url: HOSTED_URL, mailed: true },
  startPaymentAttempt: { type: 'StartInvoicePaymentAttempt', checkoutSessionId: 'cs-2' },
  recordPayment: {
    type: 'RecordInvoicePayment',
    checkoutSessionId: 'cs-1',
    transactionHash: `0x${'b'.repeat(64)}`,
    amountReceived: '300000000',
  },
  recordPartialPayment: { type: 'RecordInvoicePartialPayment', checkoutSessionId: 'cs-1', amountReceived: '100000000' },
  recordLatePayment: {
    type: 'RecordInvoiceLatePayment',
    checkoutSessionId: 'cs-1',
    transferId: 'transfer-late',
    amount: '100000000',
    transactionHash: `0x${'c'.repeat(64)}`,
  },
  recordPaymentFailure: {
    type: 'RecordInvoicePaymentFailure',
    checkoutSessionId: 'cs-1',
    reason: 'checkout session expired',
  },
  markPaid: { type: 'MarkInvoicePaid' },
  void: { type: 'VoidInvoice' },
  markUncollectible: { type: 'MarkInvoiceUncollectible' },
  sendReminder: { type: 'SendInvoiceReminder', kind: 'before_due', days: 3, dueDate: DUE_DATE },
  recordFinalizationFailure: {
    type: 'RecordInvoiceFinalizationFailure',
    code: 'payment_method_not_available',
    field: 'paymentMethods.chainIds[0]',
    message: 'paymentMethods.chainIds[0]: chain 84532 has no payment method of this organization',
  },
} satisfies Record<string, InvoiceCommand>;
type CommandName = keyof typeof COMMANDS;

/** Allowed: the event types produced and the state they lead to. Refused: an InvalidStateError naming the state. */
type Outcome = { events: InvoiceEventType[]; next: InvoiceState } | 'refused';
const same = (state: InvoiceState): Outcome => ({ events: [], next: state });
const R = 'refused' as const;

const TABLE: Record<CommandName, Record<InvoiceState, Outcome>> = {
  create: {
    new: { events: ['InvoiceCreated'], next: 'draft' },
    draft: same('draft'),
    open: same('open'),
    paid: same('paid'),
    void: same('void'),
    uncollectible: same('uncollectible'),
    deleted: same('deleted'),
  },
  update: {
    new: R,
    draft: { events: ['InvoiceUpdated'], next: 'draft' },
    open: R,
    paid: R,
    void: R,
    uncollectible: R,
    deleted: R,
  },
  delete: {
    new: R,
    draft: { events: ['InvoiceDeleted'], next: 'deleted' },
    open: R,
    paid: R,
    void: R,
    uncollectible: R,
    deleted: same('deleted'),
  },
  finalize: {
    new: R,
    draft: { events: ['InvoiceFinalized'], next: 'open' },
    open: same('open'),
    paid: R,
    void: R,
    uncollectible: R,
    deleted: R,
  },
  send: {
    new: R,
    draft: { events: ['InvoiceFinalized', 'InvoiceSent'], next: 'open' },
    open: { events: ['InvoiceSent'], next: 'open' },
    paid: R,
    void: R,
    uncollectible: R,
    deleted: R,
  },
  startPaymentAttempt: {
    new: R,
    draft: R,
    open: { events: ['InvoicePaymentAttemptStarted'], next: 'open' },
    paid: R,
    void: R,
    uncollectible: { events: ['InvoicePaymentAttemptStarted'], next: 'uncollectible' },
    deleted: R,
  },
  recordPayment: {
    new: R,
    draft: R,
    open: { events: ['InvoicePaid'], next: 'paid' },
    paid: same('paid'),
    void: same('void'),
    uncollectible: { events: ['InvoicePaid'], next: 'paid' },
    deleted: R,
  },
  recordPartialPayment: {
    new: R,
    draft: R,
    open: { events: ['InvoicePartialPaymentReceived'], next: 'open' },
    paid: same('paid'),
    void: same('void'),
    uncollectible: { events: ['InvoicePartialPaymentReceived'], next: 'uncollectible' },
    deleted: R,
  },
  recordLatePayment: {
    new: R,
    draft: R,
    open: { events: ['InvoicePartialPaymentReceived'], next: 'open' },
    paid: { events: ['InvoicePaymentReceivedAfterPaid'], next: 'paid' },
    void: same('void'),
    uncollectible: { events: ['InvoicePartialPaymentReceived'], next: 'uncollectible' },
    deleted: R,
  },
  recordPaymentFailure: {
    new: R,
    draft: R,
    open: { events: ['InvoicePaymentFailed'], next: 'open' },
    paid: same('paid'),
    void: same('void'),
    uncollectible: { events: ['InvoicePaymentFailed'], next: 'uncollectible' },
    deleted: R,
  },
  markPaid: {
    new: R,
    draft: R,
    open: { events: ['InvoiceMarkedAsPaid'], next: 'paid' },
    paid: same('paid'),
    void: R,
    uncollectible: { events: ['InvoiceMarkedAsPaid'], next: 'paid' },
    deleted: R,
  },
  void: {
    new: R,
    draft: R,
    open: { events: ['InvoiceVoided'], next: 'void' },
    paid: R,
    void: same('void'),
    uncollectible: { events: ['InvoiceVoided'], next: 'void' },
    deleted: R,
  },
  markUncollectible: {
    new: R,
    draft: R,
    open: { events: ['InvoiceMarkedUncollectible'], next: 'uncollectible' },
    paid: R,
    void: R,
    uncollectible: same('uncollectible'),
    deleted: R,
  },
  sendReminder: {
    new: R,
    draft: R,
    open: { events: ['InvoiceReminderSent'], next: 'open' },
    paid: same('paid'),
    void: same('void'),
    uncollectible: same('uncollectible'),
    deleted: R,
  },
  recordFinalizationFailure: {
    new: R,
    draft: { events: ['InvoiceFinalizationFailed'], next: 'draft' },
    open: R,
    paid: R,
    void: R,
    uncollectible: R,
    deleted: R,
  },
};

test('given a draft Weir could not finalize, the refusal is on it once (the same again records nothing, another does), and finalizing it clears it', (t) => {
  const failure = COMMANDS.recordFinalizationFailure;
  const [failed] = given([created()]).when(failure, NOW);
  t.deepEqual(failed, {
    type: 'InvoiceFinalizationFailed',
    data: { code: failure.code, field: failure.field, message: failure.message, at: NOW, announced: true },
  });
  t.deepEqual(given([created(), failed!]).when(failure, NOW), [], 'the same refusal: nothing');
  const other = { ...failure, field: null, message: 'cannot be finalized: no wallet' };
  t.is(given([created(), failed!]).when(other, NOW).length, 1, 'another refusal is recorded');
  // The error as the API shows it: without the log's `announced` (which tells webhooks it is sent).
  const { announced: _announced, ...error } = (failed as Extract<InvoiceEvent, { type: 'InvoiceFinalizationFailed' }>)
    .data;
  t.deepEqual(given([created(), failed!]).state().context.invoice?.lastFinalizationError, error);
  t.like(given([created(), failed!]).state().context.invoice, { status: 'draft' });
  const open = given([created(), failed!, finalized()]).state().context.invoice!;
  t.is(open.status, 'open');
  t.false('lastFinalizationError' in open, 'finalized: the failure no longer applies');
});

for (const name of Object.keys(TABLE) as CommandName[]) {
  for (const state of STATES) {
    const outcome = TABLE[name][state];
    const command: InvoiceCommand = COMMANDS[name];
    if (outcome === 'refused') {
      test(`given a ${state} invoice, when ${name}, then refused naming the status`, (t) => {
        t.is(given(HISTORIES[state]).state().value, state);
        const error = t.throws(() => given(HISTORIES[state]).when(command, NOW), { instanceOf: InvalidStateError });
        t.true(error.message.includes(state), error.message);
        t.is(error.statusCode, 400);
      });
    } else {
      test(`given a ${state} invoice, when ${name}, then ${outcome.events.join(' + ') || 'nothing'} and it is ${outcome.next}`, (t) => {
        const events = given(HISTORIES[state]).when(command, NOW);
        t.deepEqual(
          events.map((e) => e.type),
          outcome.events,
        );
        const after = given([...HISTORIES[state], ...events]).state();
        t.is(after.value, outcome.next);
        if (outcome.next !== 'new' && outcome.next !== 'deleted') t.is(after.context.invoice?.status, outcome.next);
      });
    }
  }
}

test('given nothing, when created, then the draft carries totals computed from its line items', (t) => {
  const input = invoiceFixture({
    lineItems: {
      object: 'list',
      data: [
        { description: 'a', priceId: null, quantity: 3, unitAmount: '9007199254740993', amountTotal: 'ignored' },
        { description: 'b', priceId: 'price-1', quantity: 1, unitAmount: '1', amountTotal: '0' },
      ],
    },
    amountDue: '0',
    amountPaid: '5',
    amountRemaining: '0',
    status: 'open',
  });
  const [event] = given([]).when({ type: 'CreateInvoice', invoice: input }, NOW);
  const invoice = (event as Extract<InvoiceEvent, { type: 'InvoiceCreated' }>).data.invoice;
  t.is(invoice.status, 'draft');
  t.deepEqual(
    invoice.lineItems.data.map((i) => i.amountTotal),
    ['27021597764222979', '1'],
  );
  t.is(invoice.amountDue, '27021597764222980');
  t.is(invoice.amountPaid, '0');
  t.is(invoice.amountRemaining, '27021597764222980');
});

test('given the fixture, when created, then the event is exactly the fixture (its amounts are consistent)', (t) => {
  t.deepEqual(given([]).when({ type: 'CreateInvoice', invoice: invoiceFixture() }), [created()]);
});

test('when created with bad input, then a validation error naming the field', (t) => {
  const item = invoiceFixture().lineItems.data[0]!;
  const cases: [Partial<Invoice>, RegExp][] = [
    [{ lineItems: { object: 'list', data: [] } }, /lineItems\.data/],
    [{ lineItems: { object: 'list', data: [{ ...item, quantity: 0 }] } }, /quantity/],
    [{ lineItems: { object: 'list', data: [{ ...item, quantity: 1.5 }] } }, /quantity/],
    [{ lineItems: { object: 'list', data: [{ ...item, unitAmount: '1.5' }] } }, /unitAmount/],
    [{ lineItems: { object: 'list', data: [{ ...item, unitAmount: '9223372036854775807', quantity: 2 }] } }, /larger/],
    [{ invoiceType: 'recurring', recurring: null }, /recurring/],
    [{ invoiceType: 'one_time', recurring: { interval: 'month', intervalCount: 1 } }, /recurring/],
    [{ invoiceType: 'recurring', recurring: { interval: 'month', intervalCount: 2 as 1 } }, /intervalCount/],
    [{ dueDate: 'next tuesday' }, /dueDate/],
  ];
  for (const [overrides, message] of cases) {
    t.throws(() => given([]).when({ type: 'CreateInvoice', invoice: invoiceFixture(overrides) }), {
      instanceOf: ValidationError,
      message,
    });
  }
});

test('given a draft, when its line items change, then InvoiceUpdated carries only the changes and the amounts follow', (t) => {
  const lineItems = {
    object: 'list' as const,
    data: [{ description: 'Audit', priceId: null, quantity: 4, unitAmount: '250000000', amountTotal: '0' }],
  };
  const events = given([created()]).when({ type: 'UpdateInvoice', changes: { lineItems, memo: 'Thank you' } }, NOW);
  t.deepEqual(events, [
    {
      type: 'InvoiceUpdated',
      data: {
        changes: { lineItems: { object: 'list', data: [{ ...lineItems.data[0]!, amountTotal: '1000000000' }] } },
        at: NOW,
      },
    },
  ]);
  const invoice = given([created(), ...events]).state().context.invoice!;
  t.is(invoice.amountDue, '1000000000');
  t.is(invoice.amountRemaining, '1000000000');
  t.is(invoice.memo, 'Thank you');
  t.is(invoice.updatedAt, NOW);
});

test('given a draft preferring a chain, when the update clears it (null), then none is kept; clearing none changes nothing', (t) => {
  const preferring = created({ ...invoiceFixture(), preferredChainId: 84_532 });
  const events = given([preferring]).when({ type: 'UpdateInvoice', changes: { preferredChainId: null } }, NOW);
  t.deepEqual(events, [{ type: 'InvoiceUpdated', data: { changes: { preferredChainId: null }, at: NOW } }]);
  t.false('preferredChainId' in given([preferring, ...events]).state().context.invoice!, 'no null stored');
  t.deepEqual(given([created()]).when({ type: 'UpdateInvoice', changes: { preferredChainId: null } }), []);
});

test('given a draft, when an update changes nothing, then nothing', (t) => {
  t.deepEqual(given([created()]).when({ type: 'UpdateInvoice', changes: { memo: 'Thank you', currency: 'usdc' } }), []);
});

test('given a draft, when an update would make it inconsistent, then a validation error', (t) => {
  t.throws(() => given([created()]).when({ type: 'UpdateInvoice', changes: { invoiceType: 'recurring' } }), {
    instanceOf: ValidationError,
    message: /recurring/,
  });
});

test('given a draft, when finalized, then it is open with its number, hosted URL and issue date', (t) => {
  const events = given([created()]).when({ type: 'FinalizeInvoice', url: HOSTED_URL }, FINALIZED_AT);
  t.deepEqual(events, [finalized()]);
  const invoice = given([created(), ...events]).state().context.invoice!;
  t.like(invoice, {
    status: 'open',
    number: 'INV-0001',
    url: HOSTED_URL,
    issueDate: FINALIZED_AT,
    finalizedAt: FINALIZED_AT,
    nextInvoice: null,
  });
});

test('given a recurring draft, when finalized, then the next invoice is scheduled one interval after the issue date', (t) => {
  const events = given([created(recurringInvoiceFixture(1, { dueDate: '2028-02-10T00:00:00.000Z' }))]).when(
    { type: 'FinalizeInvoice', url: HOSTED_URL },
    '2028-01-31T09:30:00.000Z',
  );
  const nextInvoiceId = deterministicId(`invoice:${INVOICE_ID}:next`);
  t.is(nextInvoiceIdOf(INVOICE_ID), nextInvoiceId);
  t.deepEqual(events, [
    finalized('2028-01-31T09:30:00.000Z', undefined, '2028-02-10T00:00:00.000Z'),
    {
      type: 'NextRecurringInvoiceScheduled',
      data: { nextInvoiceId, issueDate: '2028-02-29T09:30:00.000Z', at: '2028-01-31T09:30:00.000Z' },
    },
  ]);
  const invoice = given([
    created(recurringInvoiceFixture(1, { dueDate: '2028-02-10T00:00:00.000Z' })),
    ...events,
  ]).state().context.invoice!;
  t.deepEqual(invoice.nextInvoice, { id: nextInvoiceId, issueDate: '2028-02-29T09:30:00.000Z' });
  // Finalizing again is a no-op and schedules nothing twice.
  t.deepEqual(
    given([created(recurringInvoiceFixture(1, { dueDate: '2028-02-10T00:00:00.000Z' })), ...events]).when({
      type: 'FinalizeInvoice',
      url: HOSTED_URL,
    }),
    [],
  );
});

test('given a recurring invoice announcing its next one, when voided (open or uncollectible), then it announces none; paid, it still does', (t) => {
  const scheduled = [
    created(recurringInvoiceFixture(1, { dueDate: '2028-02-10T00:00:00.000Z' })),
    ...given([created(recurringInvoiceFixture(1, { dueDate: '2028-02-10T00:00:00.000Z' }))]).when(
      { type: 'FinalizeInvoice', url: HOSTED_URL },
      FINALIZED_AT,
    ),
  ];
  const after = (events: InvoiceEvent[]) => given([...scheduled, ...events]).state().context.invoice!;
  t.truthy(after([]).nextInvoice);
  t.like(after([voided()]), { status: 'void', voidedAt: '2026-01-04T00:00:00.000Z', nextInvoice: null });
  t.like(after([markedUncollectible(), voided()]), { status: 'void', nextInvoice: null });
  t.deepEqual(after([attemptStarted('cs-1'), paid('cs-1')]).nextInvoice, after([]).nextInvoice);
});

test('given the first draft of a series already overdue, when finalized or sent, then it is refused naming dueDate (its subscription would end at once); one due today, a renewal or one with nothing to pay is not', (t) => {
  // Due on a date (stored as the day's last instant): payable to the end of that UTC day, so its subscription lapses only then.
  const due = recurringInvoiceFixture(1, { dueDate: '2026-03-01T23:59:59.999Z' });
  for (const command of [
    { type: 'FinalizeInvoice', url: HOSTED_URL },
    { type: 'SendInvoice', to: null, url: HOSTED_URL, mailed: false },
  ] as const)
    t.throws(() => given([created(due)]).when(command, '2026-03-02T00:00:00.000Z'), {
      message: /^dueDate: .*subscription/,
    });
  t.is(
    given([created(due)]).when({ type: 'FinalizeInvoice', url: HOSTED_URL }, '2026-03-01T23:59:59.999Z')[0]!.type,
    'InvoiceFinalized',
  );
  // A timestamp, midnight as any other time of day, is overdue from that instant.
  for (const dueDate of ['2026-03-01T12:00:00.000Z', '2026-03-01T00:00:00.000Z'])
    t.throws(
      () =>
        given([created(recurringInvoiceFixture(1, { dueDate }))]).when(
          { type: 'FinalizeInvoice', url: HOSTED_URL },
          dueDate,
        ),
      { message: /^dueDate: .*subscription/ },
    );
  const renewal = recurringInvoiceFixture(1, { dueDate: '2026-03-01T00:00:00.000Z', subscriptionId: 'sub-1' });
  t.is(
    given([created(renewal)]).when({ type: 'FinalizeInvoice', url: HOSTED_URL }, '2026-03-02T00:00:00.000Z')[0]!.type,
    'InvoiceFinalized',
  );
});

test('given a scheduled recurring invoice with its issue date, when finalized late, then the series counts from the issue date', (t) => {
  const draft = recurringInvoiceFixture(3, {
    issueDate: '2026-11-30T00:00:00.000Z',
    dueDate: '2026-12-12T00:00:00.000Z',
  });
  const events = given([created(draft)]).when({ type: 'FinalizeInvoice', url: HOSTED_URL }, '2026-12-02T00:00:00.000Z');
  t.is((events[0]!.data as { issueDate: string }).issueDate, '2026-11-30T00:00:00.000Z');
  t.is((events[1]!.data as { issueDate: string }).issueDate, '2027-02-28T00:00:00.000Z');
});

test("given a subscription's renewal draft, when sent with the subscription's next period start, then that is the next issue date", (t) => {
  // Anchored on Jan 31: the renewal issued Feb 28 is followed on Mar 31, not Mar 28.
  const draft = recurringInvoiceFixture(1, { issueDate: '2026-02-28T10:00:00.000Z', subscriptionId: 'sub-1' });
  const events = given([created(draft)]).when(
    { type: 'SendInvoice', to: null, url: HOSTED_URL, mailed: false, nextIssueDate: '2026-03-31T10:00:00.000Z' },
    '2026-02-28T10:00:00.000Z',
  );
  t.is((events[1]!.data as { issueDate: string }).issueDate, '2026-03-31T10:00:00.000Z');
  const byDefault = given([created(draft)]).when(
    { type: 'FinalizeInvoice', url: HOSTED_URL },
    '2026-02-28T10:00:00.000Z',
  );
  t.is((byDefault[1]!.data as { issueDate: string }).issueDate, '2026-03-28T10:00:00.000Z');
});

test('given a recurring draft, when sent, then finalized, next invoice scheduled, and sent, in that order', (t) => {
  const events = given([created(recurringInvoiceFixture(12))]).when(
    { type: 'SendInvoice', to: 'payer@example.com', url: HOSTED_URL, mailed: true },
    NOW,
  );
  t.deepEqual(
    events.map((e) => e.type),
    ['InvoiceFinalized', 'NextRecurringInvoiceScheduled', 'InvoiceSent'],
  );
  t.is((events[1]!.data as { issueDate: string }).issueDate, '2027-01-05T00:00:00.000Z');
  const invoice = given([created(recurringInvoiceFixture(12)), ...events]).state().context.invoice!;
  t.is(invoice.sentAt, NOW);
  t.is(invoice.status, 'open');
});

/** A draft of a free item: nothing to pay. */
const zeroTotal = (overrides: Partial<Invoice> = {}): Invoice =>
  invoiceFixture({
    lineItems: {
      object: 'list',
      data: [{ description: 'Free plan', priceId: null, quantity: 1, unitAmount: '0', amountTotal: '0' }],
    },
    amountDue: '0',
    amountRemaining: '0',
    ...overrides,
  });
const paidAtFinalize = (at: string): InvoiceEvent => ({
  type: 'InvoicePaid',
  data: { checkoutSessionId: null, transactionHash: null, amountPaid: '0', at },
});

test('given a draft with nothing to pay (a price of 0), when finalized, then it is paid at once, for 0 and through no checkout session', (t) => {
  const events = given([created(zeroTotal())]).when({ type: 'FinalizeInvoice', url: HOSTED_URL }, FINALIZED_AT);
  t.deepEqual(events, [finalized(), paidAtFinalize(FINALIZED_AT)]);
  const state = given([created(zeroTotal()), ...events]).state();
  t.is(state.value, 'paid');
  t.like(state.context.invoice!, {
    status: 'paid',
    paid: true,
    paidOutOfBand: false,
    amountDue: '0',
    amountPaid: '0',
    amountRemaining: '0',
    url: HOSTED_URL,
    finalizedAt: FINALIZED_AT,
    paidAt: FINALIZED_AT,
    checkoutSessionId: null,
    transactionHash: null,
    paymentAttempts: [],
  });
  // Finalizing again, or the system sending it, is nothing; the merchant cannot send or void a paid invoice.
  const history = [created(zeroTotal()), ...events];
  t.deepEqual(given(history).when({ type: 'FinalizeInvoice', url: HOSTED_URL }), []);
  t.deepEqual(given(history).when({ type: 'SendInvoice', to: null, url: HOSTED_URL, mailed: false }), []);
  t.deepEqual(given(history).when({ type: 'MarkInvoicePaid' }), []);
  t.throws(() => given(history).when({ type: 'SendInvoice', to: null, url: HOSTED_URL, mailed: true }), {
    instanceOf: InvalidStateError,
  });
  t.throws(() => given(history).when({ type: 'VoidInvoice' }), { instanceOf: InvalidStateError });
});

test('given a renewal draft with nothing to pay, when the system sends it, then finalized, next scheduled and paid; nothing is sent; a repeat is nothing', (t) => {
  const draft = zeroTotal({ invoiceType: 'recurring', recurring: { interval: 'month', intervalCount: 1 } });
  const send: InvoiceCommand = { type: 'SendInvoice', to: null, url: HOSTED_URL, mailed: false };
  const events = given([created(draft)]).when(send, NOW);
  t.deepEqual(
    events.map((e) => e.type),
    ['InvoiceFinalized', 'NextRecurringInvoiceScheduled', 'InvoicePaid'],
  );
  t.deepEqual(events[2], paidAtFinalize(NOW));
  const invoice = given([created(draft), ...events]).state().context.invoice!;
  t.like(invoice, { status: 'paid', sentAt: null, amountPaid: '0' });
  t.truthy(invoice.nextInvoice);
  t.deepEqual(given([created(draft), ...events]).when(send), [], 'a repeated system send is nothing');
  // The API's send of such a draft only finalizes it too: it has no invoice to mail.
  t.deepEqual(
    given([created(zeroTotal())]).when(
      { type: 'SendInvoice', to: 'payer@example.com', url: HOSTED_URL, mailed: true },
      NOW,
    ),
    [finalized(NOW), paidAtFinalize(NOW)],
  );
});

test('given an invoice with something to pay, when finalized, then it stays open (only a zero total is paid at once)', (t) => {
  const oneUnit = zeroTotal({
    lineItems: {
      object: 'list',
      data: [{ description: 'Almost free', priceId: null, quantity: 1, unitAmount: '1', amountTotal: '1' }],
    },
    amountDue: '1',
    amountRemaining: '1',
  });
  t.deepEqual(given([created(oneUnit)]).when({ type: 'FinalizeInvoice', url: HOSTED_URL }, FINALIZED_AT), [
    finalized(),
  ]);
});

test('month arithmetic clamps to the last day of the target month', (t) => {
  t.is(addMonthsClamped('2028-01-31T00:00:00.000Z', 1), '2028-02-29T00:00:00.000Z');
  t.is(addMonthsClamped('2027-01-31T00:00:00.000Z', 1), '2027-02-28T00:00:00.000Z');
  t.is(addMonthsClamped('2026-03-31T12:00:00.000Z', 1), '2026-04-30T12:00:00.000Z');
  t.is(addMonthsClamped('2026-12-15T08:00:00.000Z', 1), '2027-01-15T08:00:00.000Z');
  // quarterly
  t.is(addMonthsClamped('2026-11-30T00:00:00.000Z', 3), '2027-02-28T00:00:00.000Z');
  t.is(addMonthsClamped('2027-11-30T00:00:00.000Z', 3), '2028-02-29T00:00:00.000Z');
  t.is(addMonthsClamped('2026-01-31T00:00:00.000Z', 3), '2026-04-30T00:00:00.000Z');
  // half-yearly
  t.is(addMonthsClamped('2026-08-31T00:00:00.000Z', 6), '2027-02-28T00:00:00.000Z');
  t.is(addMonthsClamped('2026-12-31T23:59:59.999Z', 6), '2027-06-30T23:59:59.999Z');
  // annual
  t.is(addMonthsClamped('2028-02-29T00:00:00.000Z', 12), '2029-02-28T00:00:00.000Z');
  t.is(addMonthsClamped('2026-05-17T10:00:00.000Z', 12), '2027-05-17T10:00:00.000Z');
  t.throws(() => addMonthsClamped('not a date', 1), { instanceOf: ValidationError });
});

test('given an open invoice, when the same checkout session is linked again, then nothing', (t) => {
  t.deepEqual(given(HISTORIES.open).when({ type: 'StartInvoicePaymentAttempt', checkoutSessionId: 'cs-1' }), []);
});

test('given an open invoice, when a payment attempt starts, then it is linked and counted', (t) => {
  const invoice = given(HISTORIES.open).state().context.invoice!;
  t.like(invoice, { checkoutSessionId: 'cs-1', attempted: true, attemptCount: 1 });
  t.like(invoice.paymentAttempts[0], { checkoutSessionId: 'cs-1', status: 'pending' });
});

test('given an open invoice, when its linked session pays, then paid with the session, tx hash and amounts', (t) => {
  const command: InvoiceCommand = {
    type: 'RecordInvoicePayment',
    checkoutSessionId: 'cs-1',
    transactionHash: '0xfeed',
    amountReceived: '300000000',
  };
  const events = given(HISTORIES.open).when(command, NOW);
  t.deepEqual(events, [
    {
      type: 'InvoicePaid',
      data: { checkoutSessionId: 'cs-1', transactionHash: '0xfeed', amountPaid: '300000000', at: NOW },
    },
  ]);
  const invoice = given([...HISTORIES.open, ...events]).state().context.invoice!;
  t.like(invoice, {
    status: 'paid',
    paid: true,
    paidOutOfBand: false,
    amountPaid: '300000000',
    amountRemaining: '0',
    transactionHash: '0xfeed',
    paidAt: NOW,
  });
  t.is(invoice.paymentAttempts[0]!.status, 'succeeded');
  // The same payment again changes nothing.
  t.deepEqual(given([...HISTORIES.open, ...events]).when(command), []);
});

test('given an open invoice, when its session pays on a chain, then the chain of the transaction is recorded; an older payment event without it records none', (t) => {
  const command: InvoiceCommand = {
    type: 'RecordInvoicePayment',
    checkoutSessionId: 'cs-1',
    transactionHash: '0xfeed',
    chainId: 728126428,
    amountReceived: '300000000',
  };
  const events = given(HISTORIES.open).when(command, NOW);
  t.like(events[0]!.data, { transactionHash: '0xfeed', chainId: 728126428 });
  t.like(given([...HISTORIES.open, ...events]).state().context.invoice, {
    transactionHash: '0xfeed',
    transactionChainId: 728126428,
  });
  const before = given([...HISTORIES.open, paid('cs-1')]).state().context.invoice!;
  t.false('transactionChainId' in before, 'an old log replays to what it did');
});

test('given an open invoice, when a session it never linked pays, then the session is linked and the payment recorded', (t) => {
  const events = given([created(), finalized()]).when(
    { type: 'RecordInvoicePayment', checkoutSessionId: 'cs-9', transactionHash: null, amountReceived: '300000000' },
    NOW,
  );
  t.deepEqual(
    events.map((e) => e.type),
    ['InvoicePaymentAttemptStarted', 'InvoicePaid'],
  );
  t.is(given([created(), finalized(), ...events]).state().value, 'paid');
});

test('given an open invoice, when the session received more or less than due, then the amounts say so', (t) => {
  const over = given(HISTORIES.open).when(
    { type: 'RecordInvoicePayment', checkoutSessionId: 'cs-1', transactionHash: null, amountReceived: '350000000' },
    NOW,
  );
  t.like(given([...HISTORIES.open, ...over]).state().context.invoice, {
    amountPaid: '350000000',
    amountRemaining: '0',
  });
  const short = given(HISTORIES.open).when(
    { type: 'RecordInvoicePayment', checkoutSessionId: 'cs-1', transactionHash: null, amountReceived: '100000000' },
    NOW,
  );
  t.like(given([...HISTORIES.open, ...short]).state().context.invoice, {
    status: 'paid',
    amountPaid: '100000000',
    amountRemaining: '200000000',
  });
});

test('when a payment amount is not an integer string, then a validation error', (t) => {
  t.throws(
    () =>
      given(HISTORIES.open).when({
        type: 'RecordInvoicePayment',
        checkoutSessionId: 'cs-1',
        transactionHash: null,
        amountReceived: '1.5',
      }),
    {
      instanceOf: ValidationError,
      message: /amountReceived/,
    },
  );
});

test('given a void invoice, when a linked session pays or is partly paid, then nothing (the session keeps the money on record)', (t) => {
  const command: InvoiceCommand = {
    type: 'RecordInvoicePayment',
    checkoutSessionId: 'cs-1',
    transactionHash: null,
    amountReceived: '300000000',
  };
  t.deepEqual(given(HISTORIES.void).when(command), []);
  t.deepEqual(
    given(HISTORIES.void).when({ type: 'RecordInvoicePartialPayment', checkoutSessionId: 'cs-1', amountReceived: '1' }),
    [],
  );
});

/** An invoice of 3.00 paid in full through `cs-1`, with a second session `cs-2` opened while it was open. */
const PAID_WITH_ANOTHER_SESSION = [...HISTORIES.open, attemptStarted('cs-2'), paid('cs-1')];

test('given an invoice paid through one session, when another of its sessions completes, then the invoice counts that money too: amountPaid twice its amount, overpaid by it; still paid as before; a repeat, a smaller amount or the paying session again is nothing', (t) => {
  const command: InvoiceCommand = {
    type: 'RecordInvoicePayment',
    checkoutSessionId: 'cs-2',
    transactionHash: '0xbeef',
    chainId: 728126428,
    amountReceived: '300000000',
  };
  const events = given(PAID_WITH_ANOTHER_SESSION).when(command, NOW);
  t.deepEqual(events, [
    {
      type: 'InvoicePaymentReceivedAfterPaid',
      data: {
        checkoutSessionId: 'cs-2',
        amountReceived: '300000000',
        completed: true,
        transactionHash: '0xbeef',
        chainId: 728126428,
        at: NOW,
      },
    },
  ]);
  const before = given(PAID_WITH_ANOTHER_SESSION).state().context.invoice!;
  const history = [...PAID_WITH_ANOTHER_SESSION, ...events];
  const state = given(history).state();
  t.is(state.value, 'paid');
  const invoice = state.context.invoice!;
  t.like(invoice, {
    status: 'paid',
    amountDue: '300000000',
    amountPaid: '600000000',
    amountRemaining: '0',
    // The payment that paid it stays the invoice's own.
    checkoutSessionId: 'cs-1',
    transactionHash: before.transactionHash,
    paidAt: before.paidAt,
    attemptCount: 2,
  });
  t.is(overpaidOf(invoice.amountDue, invoice.amountPaid), '300000000');
  t.like(invoice.paymentAttempts[1], {
    checkoutSessionId: 'cs-2',
    status: 'succeeded',
    endedAt: NOW,
    amountReceived: '300000000',
  });
  t.deepEqual(given(history).when(command), [], 'a repeat');
  t.deepEqual(given(history).when({ ...command, amountReceived: '200000000' }), [], 'an older amount');
  t.deepEqual(
    given(history).when({
      type: 'RecordInvoicePartialPayment',
      checkoutSessionId: 'cs-2',
      amountReceived: '100000000',
    }),
    [],
    'a part it had before',
  );
  t.deepEqual(
    given(history).when({ ...command, checkoutSessionId: 'cs-1', transactionHash: `0x${'a'.repeat(64)}` }),
    [],
    'the session that paid it, again',
  );
  t.deepEqual(given(history).when({ ...command, amountReceived: '0' }), [], 'nothing received');
});

test('given a paid invoice, when another session receives part, then its rest, then each is counted once as it comes (the attempt waits, then succeeds); one partly paid before the invoice was paid adds only what came after', (t) => {
  const part: InvoiceCommand = {
    type: 'RecordInvoicePartialPayment',
    checkoutSessionId: 'cs-2',
    amountReceived: '100000000',
  };
  const first = given(PAID_WITH_ANOTHER_SESSION).when(part, NOW);
  t.deepEqual(first, [
    {
      type: 'InvoicePaymentReceivedAfterPaid',
      data: {
        checkoutSessionId: 'cs-2',
        amountReceived: '100000000',
        completed: false,
        transactionHash: null,
        at: NOW,
      },
    },
  ]);
  const partly = [...PAID_WITH_ANOTHER_SESSION, ...first];
  t.like(given(partly).state().context.invoice, { status: 'paid', amountPaid: '400000000', amountRemaining: '0' });
  t.like(given(partly).state().context.invoice!.paymentAttempts[1], {
    status: 'pending',
    endedAt: null,
    amountReceived: '100000000',
  });
  t.deepEqual(given(partly).when(part), [], 'a repeat');
  t.deepEqual(given(partly).when({ ...part, amountReceived: '50000000' }), [], 'an older amount');

  const rest = given(partly).when(
    { type: 'RecordInvoicePayment', checkoutSessionId: 'cs-2', transactionHash: '0xbeef', amountReceived: '300000000' },
    NOW,
  );
  t.is(rest.length, 1);
  const done = given([...partly, ...rest]).state().context.invoice!;
  t.like(done, { status: 'paid', amountPaid: '600000000', amountRemaining: '0' });
  t.like(done.paymentAttempts[1], { status: 'succeeded', endedAt: NOW, amountReceived: '300000000' });
  t.deepEqual(
    given([...partly, ...rest]).when({ ...part, amountReceived: '250000000' }),
    [],
    'an older part, redelivered',
  );

  // Partly paid (1.00) while open, then the invoice was paid through cs-1: its rest adds 2.00, not 3.00.
  const earlier = [...HISTORIES.open, attemptStarted('cs-2'), partlyPaid('cs-2', '100000000'), paid('cs-1')];
  t.like(given(earlier).state().context.invoice, { amountPaid: '400000000' });
  const after = given(earlier).when(
    { type: 'RecordInvoicePayment', checkoutSessionId: 'cs-2', transactionHash: '0xbeef', amountReceived: '300000000' },
    NOW,
  );
  t.like(given([...earlier, ...after]).state().context.invoice, { amountPaid: '600000000' });
  // Completed as is with the part it had (its invoice paid meanwhile): nothing new.
  t.deepEqual(
    given(earlier).when({
      type: 'RecordInvoicePayment',
      checkoutSessionId: 'cs-2',
      transactionHash: null,
      amountReceived: '100000000',
    }),
    [],
  );
});

test('given a paid invoice, when a session that charged a network fee on top pays again, then the fee is not counted; a session never linked is linked by the payment; marked paid out of band, a session paid after counts too', (t) => {
  const fee = '1000000';
  const events = given(PAID_WITH_ANOTHER_SESSION).when(
    {
      type: 'RecordInvoicePayment',
      checkoutSessionId: 'cs-2',
      transactionHash: '0xbeef',
      amountReceived: '301000000',
      amountGasFee: fee,
    },
    NOW,
  );
  t.like(events[0]!.data, { amountReceived: '301000000', amountGasFee: fee });
  const withFee = given([...PAID_WITH_ANOTHER_SESSION, ...events]).state().context.invoice!;
  t.like(withFee, { amountPaid: '600000000' });
  t.like(withFee.paymentAttempts[1], { amountReceived: '301000000', amountGasFee: fee });

  // A session whose link was lost (a crash in between) is linked, not dropped; the invoice still names its payer.
  const unlinked = [...HISTORIES.open, paid('cs-1')];
  const linked = given(unlinked).when(
    { type: 'RecordInvoicePayment', checkoutSessionId: 'cs-7', transactionHash: null, amountReceived: '300000000' },
    NOW,
  );
  t.deepEqual(
    linked.map((e) => e.type),
    ['InvoicePaymentReceivedAfterPaid'],
  );
  const relinked = given([...unlinked, ...linked]).state().context.invoice!;
  t.like(relinked, { amountPaid: '600000000', checkoutSessionId: 'cs-1', attemptCount: 2 });
  t.like(relinked.paymentAttempts[1], {
    checkoutSessionId: 'cs-7',
    status: 'succeeded',
    startedAt: NOW,
    amountReceived: '300000000',
  });
  t.deepEqual(
    given([...unlinked, ...linked]).when({
      type: 'RecordInvoicePayment',
      checkoutSessionId: 'cs-7',
      transactionHash: null,
      amountReceived: '300000000',
    }),
    [],
  );

  // Partly paid 1.00 on chain, the rest (2.00) marked paid; then the payer sent that rest on chain too.
  const marked = [
    ...HISTORIES.open,
    partlyPaid('cs-1', '100000000'),
    { type: 'InvoiceMarkedAsPaid', data: { amountPaid: '200000000', at: NOW } } as InvoiceEvent,
  ];
  t.deepEqual(
    given(marked).when({
      type: 'RecordInvoicePayment',
      checkoutSessionId: 'cs-1',
      transactionHash: null,
      amountReceived: '100000000',
    }),
    [],
    'completed as is: counted already',
  );
  const sentAgain = given(marked).when(
    { type: 'RecordInvoicePayment', checkoutSessionId: 'cs-1', transactionHash: '0xbeef', amountReceived: '300000000' },
    NOW,
  );
  t.like(given([...marked, ...sentAgain]).state().context.invoice, {
    status: 'paid',
    paidOutOfBand: true,
    amountPaid: '500000000',
  });
});

test('given an open invoice, when its payment attempt expires, then InvoicePaymentFailed, it stays open, and a repeat changes nothing', (t) => {
  const events = given(HISTORIES.open).when(
    { type: 'RecordInvoicePaymentFailure', checkoutSessionId: 'cs-1', reason: 'expired' },
    NOW,
  );
  t.deepEqual(events, [
    { type: 'InvoicePaymentFailed', data: { checkoutSessionId: 'cs-1', reason: 'expired', at: NOW } },
  ]);
  const state = given([...HISTORIES.open, ...events]).state();
  t.is(state.value, 'open');
  t.like(state.context.invoice!.paymentAttempts[0], { status: 'failed', failureReason: 'expired', endedAt: NOW });
  t.deepEqual(
    given([...HISTORIES.open, ...events]).when({
      type: 'RecordInvoicePaymentFailure',
      checkoutSessionId: 'cs-1',
      reason: 'expired',
    }),
    [],
  );
  t.deepEqual(
    given(HISTORIES.open).when({
      type: 'RecordInvoicePaymentFailure',
      checkoutSessionId: 'unknown',
      reason: 'expired',
    }),
    [],
  );
});

/** Money `transferId` reached session `checkoutSessionId` after it expired or was canceled. */
const latePayment = (
  checkoutSessionId: string,
  transferId: string,
  amount: string,
  more: { amountGasFee?: string; chainId?: number } = {},
): InvoiceCommand => ({
  type: 'RecordInvoiceLatePayment',
  checkoutSessionId,
  transferId,
  amount,
  transactionHash: `0x${transferId.padStart(64, '0')}`,
  ...more,
});

/** An open invoice of 3.00 whose session `cs-1` expired with nothing paid. */
const EXPIRED = [
  ...HISTORIES.open,
  { type: 'InvoicePaymentFailed', data: { checkoutSessionId: 'cs-1', reason: 'expired', at: NOW } },
] satisfies InvoiceEvent[];

test('given an open invoice whose session expired, when money reaches that session after, then the invoice counts it as a part (it stays open, owing the rest; its attempt stays failed), then is paid once the rest comes late too, once: each transfer counted once', (t) => {
  const first = given(EXPIRED).when(latePayment('cs-1', 'a1', '100000000'), NOW);
  t.deepEqual(first, [
    {
      type: 'InvoicePartialPaymentReceived',
      data: { checkoutSessionId: 'cs-1', amountReceived: '100000000', transferId: 'a1', at: NOW },
    },
  ]);
  const partly = [...EXPIRED, ...first];
  t.is(given(partly).state().value, 'open');
  t.like(given(partly).state().context.invoice, { amountPaid: '100000000', amountRemaining: '200000000' });
  t.like(given(partly).state().context.invoice!.paymentAttempts[0], { status: 'failed', amountReceived: '100000000' });
  t.deepEqual(given(partly).when(latePayment('cs-1', 'a1', '100000000')), [], 'the same transfer again');
  t.throws(() => given(partly).when({ type: 'VoidInvoice' }), { instanceOf: InvalidStateError });

  const rest = given(partly).when(latePayment('cs-1', 'a2', '200000000', { chainId: 728126428 }), NOW);
  t.deepEqual(
    rest.map((e) => e.type),
    ['InvoicePartialPaymentReceived', 'InvoicePaid'],
  );
  t.deepEqual(rest[1]!.data, {
    checkoutSessionId: 'cs-1',
    transactionHash: `0x${'a2'.padStart(64, '0')}`,
    chainId: 728126428,
    amountPaid: '300000000',
    at: NOW,
  });
  const paidLate = [...partly, ...rest];
  t.is(given(paidLate).state().value, 'paid');
  const invoice = given(paidLate).state().context.invoice!;
  t.like(invoice, { status: 'paid', paid: true, amountPaid: '300000000', amountRemaining: '0', paidAt: NOW });
  t.is(overpaidOf(invoice.amountDue, invoice.amountPaid), '0', 'counted once, not twice');
  t.like(invoice.paymentAttempts[0], { checkoutSessionId: 'cs-1', status: 'succeeded', amountReceived: '300000000' });
  t.is(invoice.paymentAttempts[0]!.failureReason, null, 'paid: its expiry is no failure any more');
  for (const transfer of ['a1', 'a2'])
    t.deepEqual(given(paidLate).when(latePayment('cs-1', transfer, '200000000')), [], `${transfer} again, once paid`);
  t.deepEqual(given(EXPIRED).when(latePayment('cs-1', 'dust', '0')), [], 'dust the 10^8 scale reads as 0');
  // Both paid it, so their session has nothing to settle for them; one after it was paid is its overpayment.
  t.deepEqual(invoice.latePaidTransferIds, ['a1', 'a2']);
  const twice = given(paidLate).when(latePayment('cs-1', 'a3', '100000000'), NOW);
  t.deepEqual(
    twice.map((e) => e.type),
    ['InvoicePaymentReceivedAfterPaid'],
  );
  const after = given([...paidLate, ...twice]).state().context.invoice!;
  t.deepEqual(after.lateTransferIds, ['a1', 'a2', 'a3']);
  t.deepEqual(after.latePaidTransferIds, ['a1', 'a2'], 'paid twice: still to refund on its session');
});

test('given an open invoice whose session expired, when all of it arrives late in one transfer, then paid at once (one InvoicePaid); uncollectible too; a session it never linked is linked first', (t) => {
  const whole = latePayment('cs-1', 'b1', '300000000');
  t.deepEqual(
    given(EXPIRED)
      .when(whole)
      .map((e) => e.type),
    ['InvoicePartialPaymentReceived', 'InvoicePaid'],
  );
  const uncollectible = [...EXPIRED, markedUncollectible()];
  const events = given(uncollectible).when(whole);
  t.deepEqual(
    events.map((e) => e.type),
    ['InvoicePartialPaymentReceived', 'InvoicePaid'],
  );
  t.is(given([...uncollectible, ...events]).state().value, 'paid');
  t.deepEqual(
    given(HISTORIES.open)
      .when(latePayment('cs-9', 'b2', '100000000'))
      .map((e) => e.type),
    ['InvoicePaymentAttemptStarted', 'InvoicePartialPaymentReceived'],
  );
});

test('given an open invoice of 3.00 whose session charged a network fee of 0.01 on top, when its money arrives late, then the fee is paid first from it, as for a partial payment: 3.01 late pays 3.00, not 3.01; a part short of the fee counts nothing yet', (t) => {
  const fee = { amountGasFee: '1000000' };
  const short = given(EXPIRED).when(latePayment('cs-1', 'c1', '500000', fee), NOW);
  t.like(short[0]!.data, { amountReceived: '500000', amountGasFee: '1000000' });
  const shortHistory = [...EXPIRED, ...short];
  t.like(given(shortHistory).state().context.invoice, { amountPaid: '0', amountRemaining: '300000000' });
  const rest = given(shortHistory).when(latePayment('cs-1', 'c2', '300500000', fee), NOW);
  t.deepEqual(
    rest.map((e) => e.type),
    ['InvoicePartialPaymentReceived', 'InvoicePaid'],
  );
  t.like(rest[1]!.data, { amountPaid: '301000000', amountGasFee: '1000000' });
  t.like(given([...shortHistory, ...rest]).state().context.invoice, {
    status: 'paid',
    amountPaid: '300000000',
    amountRemaining: '0',
  });
});

test('given an invoice paid through another session, when a session canceled or expired receives money after, then it counts as paid twice (overpaid by it, less its fee), once per transfer; a void invoice records nothing', (t) => {
  const events = given(PAID_WITH_ANOTHER_SESSION).when(
    latePayment('cs-2', 'd1', '301000000', { amountGasFee: '1000000' }),
    NOW,
  );
  t.deepEqual(events, [
    {
      type: 'InvoicePaymentReceivedAfterPaid',
      data: {
        checkoutSessionId: 'cs-2',
        amountReceived: '301000000',
        amountGasFee: '1000000',
        completed: false,
        transactionHash: null,
        transferId: 'd1',
        at: NOW,
      },
    },
  ]);
  const history = [...PAID_WITH_ANOTHER_SESSION, ...events];
  const invoice = given(history).state().context.invoice!;
  t.like(invoice, { status: 'paid', amountPaid: '600000000', checkoutSessionId: 'cs-1' });
  t.is(overpaidOf(invoice.amountDue, invoice.amountPaid), '300000000');
  t.deepEqual(given(history).when(latePayment('cs-2', 'd1', '301000000')), [], 'the same transfer again');
  const second = given(history).when(latePayment('cs-2', 'd2', '100000000', { amountGasFee: '1000000' }));
  t.like(second[0]!.data, { amountReceived: '401000000', transferId: 'd2' });
  t.deepEqual(given(HISTORIES.void).when(latePayment('cs-1', 'd3', '300000000')), []);
  t.throws(() => given(HISTORIES.draft).when(latePayment('cs-1', 'd4', '1')), { instanceOf: InvalidStateError });
});

test('given an uncollectible invoice, when marked paid out of band, then paid with the remainder counted as paid', (t) => {
  const events = given(HISTORIES.uncollectible).when({ type: 'MarkInvoicePaid' }, NOW);
  t.deepEqual(events, [{ type: 'InvoiceMarkedAsPaid', data: { amountPaid: '300000000', at: NOW } }]);
  t.like(given([...HISTORIES.uncollectible, ...events]).state().context.invoice, {
    status: 'paid',
    paid: true,
    paidOutOfBand: true,
    amountPaid: '300000000',
    amountRemaining: '0',
    paidAt: NOW,
    markedUncollectibleAt: '2026-01-04T00:00:00.000Z',
  });
});

test('given an open invoice, when voided or written off, then the time is recorded', (t) => {
  t.is(given([...HISTORIES.open, voided(NOW)]).state().context.invoice!.voidedAt, NOW);
  t.is(given([...HISTORIES.open, markedUncollectible(NOW)]).state().context.invoice!.markedUncollectibleAt, NOW);
});

test('given an open invoice, when its session is partly paid, then the amount received counts as paid, it stays open, and a repeat or an older amount changes nothing', (t) => {
  const command: InvoiceCommand = {
    type: 'RecordInvoicePartialPayment',
    checkoutSessionId: 'cs-1',
    amountReceived: '100000000',
  };
  const events = given(HISTORIES.open).when(command, NOW);
  t.deepEqual(events, [
    {
      type: 'InvoicePartialPaymentReceived',
      data: { checkoutSessionId: 'cs-1', amountReceived: '100000000', at: NOW },
    },
  ]);
  const history = [...HISTORIES.open, ...events];
  const state = given(history).state();
  t.is(state.value, 'open');
  t.like(state.context.invoice, {
    status: 'open',
    paid: false,
    paidAt: null,
    amountPaid: '100000000',
    amountRemaining: '200000000',
  });
  t.like(state.context.invoice!.paymentAttempts[0], { status: 'pending', amountReceived: '100000000' });
  t.deepEqual(given(history).when(command), [], 'a repeat');
  t.deepEqual(given(history).when({ ...command, amountReceived: '50000000' }), [], 'an older, smaller amount');
  t.deepEqual(given(HISTORIES.open).when({ ...command, amountReceived: '0' }), [], 'nothing received');
  t.throws(() => given(HISTORIES.open).when({ ...command, amountReceived: '1.5' }), {
    instanceOf: ValidationError,
    message: /amountReceived/,
  });

  // More arrives on the same session: only the difference is new.
  const more = given(history).when({ ...command, amountReceived: '250000000' }, NOW);
  t.like(given([...history, ...more]).state().context.invoice, {
    amountPaid: '250000000',
    amountRemaining: '50000000',
  });
});

test('given a partly paid invoice, when its session completes, then paid for what the session received in all, not counted twice', (t) => {
  const history = [...HISTORIES.open, partlyPaid('cs-1', '100000000')];
  const events = given(history).when(
    { type: 'RecordInvoicePayment', checkoutSessionId: 'cs-1', transactionHash: '0xfeed', amountReceived: '300000000' },
    NOW,
  );
  const invoice = given([...history, ...events]).state().context.invoice!;
  t.like(invoice, { status: 'paid', amountPaid: '300000000', amountRemaining: '0' });
  t.like(invoice.paymentAttempts[0], { status: 'succeeded', amountReceived: '300000000' });
  // Paid through another session (the rest): both sessions' money counts.
  const other = [...history, attemptStarted('cs-2'), paid('cs-2', '200000000')];
  t.like(given(other).state().context.invoice, { status: 'paid', amountPaid: '300000000', amountRemaining: '0' });
});

test('given an open invoice of 3.00, when two sessions that each charged a network fee on top pay it, then it counts what each received less its fee: exactly 3.00 paid; events without a fee count as they did', (t) => {
  const fee = '1000000'; // 0.01 on top of each session's amount
  const history = HISTORIES.open;
  // Session 1 asks 1.01 for 1.00 and receives 0.50 of it: the fee is paid first, 0.49 counts.
  const part = given(history).when(
    { type: 'RecordInvoicePartialPayment', checkoutSessionId: 'cs-1', amountReceived: '50000000', amountGasFee: fee },
    NOW,
  );
  t.like(part.at(-1)!.data, { amountReceived: '50000000', amountGasFee: fee });
  const partly = [...history, ...part];
  t.like(given(partly).state().context.invoice, { amountPaid: '49000000', amountRemaining: '251000000' });
  t.like(given(partly).state().context.invoice!.paymentAttempts[0], { amountReceived: '50000000', amountGasFee: fee });
  // Then all of its 1.01: 1.00 counts, not 0.49 twice.
  const more = given(partly).when(
    { type: 'RecordInvoicePartialPayment', checkoutSessionId: 'cs-1', amountReceived: '101000000', amountGasFee: fee },
    NOW,
  );
  t.like(given([...partly, ...more]).state().context.invoice, { amountPaid: '100000000' });
  // Session 2 asks the rest, 2.00 + 0.01, and receives exactly that: the invoice reads its amount due.
  const after = [...partly, ...more, attemptStarted('cs-2')];
  const done = given(after).when(
    {
      type: 'RecordInvoicePayment',
      checkoutSessionId: 'cs-2',
      transactionHash: '0xfeed',
      amountReceived: '201000000',
      amountGasFee: fee,
    },
    NOW,
  );
  t.like(done[0]!.data, { amountPaid: '201000000', amountGasFee: fee });
  t.like(given([...after, ...done]).state().context.invoice, {
    status: 'paid',
    amountDue: '300000000',
    amountPaid: '300000000',
    amountRemaining: '0',
  });
  // A part short of the fee counts nothing; a payment with no fee carries none, as before.
  const short = given(history).when(
    { type: 'RecordInvoicePartialPayment', checkoutSessionId: 'cs-3', amountReceived: '500000', amountGasFee: fee },
    NOW,
  );
  t.like(given([...history, ...short]).state().context.invoice, { amountPaid: '0' });
  const plain = given(history).when(
    {
      type: 'RecordInvoicePayment',
      checkoutSessionId: 'cs-4',
      transactionHash: null,
      amountReceived: '300000000',
      amountGasFee: '0',
    },
    NOW,
  );
  t.false('amountGasFee' in plain.at(-1)!.data);
  // Events recorded before the fee was (none on them) count all the session received, as they did.
  t.like(given([...history, partlyPaid('cs-1', '101000000'), paid('cs-1', '301000000')]).state().context.invoice, {
    amountPaid: '301000000',
  });
});

test('given an open invoice, when a session it never linked is partly paid, then the session is linked and the payment recorded', (t) => {
  const events = given([created(), finalized()]).when(
    { type: 'RecordInvoicePartialPayment', checkoutSessionId: 'cs-9', amountReceived: '1' },
    NOW,
  );
  t.deepEqual(
    events.map((e) => e.type),
    ['InvoicePaymentAttemptStarted', 'InvoicePartialPaymentReceived'],
  );
  t.like(given([created(), finalized(), ...events]).state().context.invoice, {
    amountPaid: '1',
    checkoutSessionId: 'cs-9',
  });
});

test('given an invoice whose session received only part of the network fee it charged on top, when voided, then refused: money reached it though nothing counts toward it yet', (t) => {
  const short: InvoiceEvent = {
    type: 'InvoicePartialPaymentReceived',
    data: { checkoutSessionId: 'cs-1', amountReceived: '400000', amountGasFee: '1000000', at: NOW },
  };
  const history = [...HISTORIES.open, attemptStarted('cs-1'), short];
  t.like(given(history).state().context.invoice, { amountPaid: '0', amountRemaining: '300000000' });
  const error = t.throws(() => given(history).when({ type: 'VoidInvoice' }, NOW), { instanceOf: InvalidStateError });
  t.is(error.code, 'invoice_partially_paid');
  t.regex(error.message, /no larger than the network fee its session charged on top/);
});

test('given a partly paid invoice, open or uncollectible, when voided, then refused saying it received part of its amount; it can be marked paid (the rest) or uncollectible', (t) => {
  for (const history of [
    [...HISTORIES.open, partlyPaid('cs-1')],
    [...HISTORIES.open, partlyPaid('cs-1'), markedUncollectible()],
    [...HISTORIES.uncollectible, partlyPaid('cs-1')],
  ]) {
    const status = given(history).state().value as string;
    const error = t.throws(() => given(history).when({ type: 'VoidInvoice' }, NOW), { instanceOf: InvalidStateError });
    t.is(error.statusCode, 400);
    t.is(error.code, 'invoice_partially_paid');
    t.regex(error.message, new RegExp(`invoice is ${status} and has received 100000000 of its 300000000`));
    t.regex(error.message, /partial payment cannot be voided: mark it paid or uncollectible instead/);

    const marked = given(history).when({ type: 'MarkInvoicePaid' }, NOW);
    t.deepEqual(marked, [{ type: 'InvoiceMarkedAsPaid', data: { amountPaid: '200000000', at: NOW } }], 'the rest');
    t.like(given([...history, ...marked]).state().context.invoice, { status: 'paid', amountPaid: '300000000' });
  }
  t.deepEqual(
    given([...HISTORIES.open, partlyPaid('cs-1')])
      .when({ type: 'MarkInvoiceUncollectible' }, NOW)
      .map((e) => e.type),
    ['InvoiceMarkedUncollectible'],
  );
});

test('given a draft, when voided, then refused with a hint to delete it', (t) => {
  t.throws(() => given(HISTORIES.draft).when({ type: 'VoidInvoice' }), {
    instanceOf: InvalidStateError,
    message: /draft.*deleted/,
  });
});

test('given a reminder sent, when the same reminder is asked again, then nothing; another offset, another kind, a stale due date', (t) => {
  const history = [...HISTORIES.open];
  const remind = (kind: 'before_due' | 'after_due', days: number, dueDate = DUE_DATE): InvoiceCommand => ({
    type: 'SendInvoiceReminder',
    kind,
    days,
    dueDate,
  });
  const events = given(history).when(remind('before_due', 3), NOW);
  t.deepEqual(events, [
    {
      type: 'InvoiceReminderSent',
      data: { kind: 'before_due', days: 3, dueDate: DUE_DATE, at: NOW, dueIsInstant: true },
    },
  ]);
  history.push(...events);
  t.deepEqual(given(history).state().context.invoice!.remindersSent, [
    { kind: 'before_due', days: 3, dueDate: DUE_DATE, at: NOW },
  ]);
  t.deepEqual(given(history).when(remind('before_due', 3)), []);
  // The fixture asks for 1 and 7 days after due: two reminders of one kind, each sent once.
  const one = given(history).when(remind('after_due', 1), '2026-02-02T00:00:00.000Z');
  t.deepEqual(
    one.map((e) => e.type),
    ['InvoiceReminderSent'],
  );
  history.push(...one);
  const seven = given(history).when(remind('after_due', 7), '2026-02-08T00:00:00.000Z');
  t.deepEqual(seven, [
    {
      type: 'InvoiceReminderSent',
      data: { kind: 'after_due', days: 7, dueDate: DUE_DATE, at: '2026-02-08T00:00:00.000Z', dueIsInstant: true },
    },
  ]);
  history.push(...seven);
  t.deepEqual(given(history).when(remind('after_due', 1)), []);
  t.deepEqual(given(history).when(remind('after_due', 7)), []);
  t.deepEqual(
    given(history)
      .state()
      .context.invoice!.remindersSent.map((r) => `${r.kind}:${r.days}`),
    ['before_due:3', 'after_due:1', 'after_due:7'],
  );
  t.deepEqual(given(history).when(remind('after_due', 1, '2026-03-01T00:00:00.000Z')), [], 'a stale due date');
});

test('given reminders that came due together (downtime, a clock jump), when they fire, then only the latest is sent and the earlier ones are skipped, once', (t) => {
  // The fixture, finalized 2026-01-02 and due 2026-02-01, asks for 3 days before (01-29) and 1 and 7 days after (02-02, 02-08).
  const history = [...HISTORIES.open];
  const remind = (kind: 'before_due' | 'after_due', days: number): InvoiceCommand => ({
    type: 'SendInvoiceReminder',
    kind,
    days,
    dueDate: DUE_DATE,
  });
  const late = '2026-02-03T06:00:00.000Z';
  const skipped = given(history).when(remind('before_due', 3), late);
  t.deepEqual(
    skipped,
    [
      {
        type: 'InvoiceReminderSkipped',
        data: { kind: 'before_due', days: 3, dueDate: DUE_DATE, at: late, dueIsInstant: true },
      },
    ],
    'the 1-day overdue one is due too',
  );
  history.push(...skipped);
  t.deepEqual(given(history).when(remind('before_due', 3), late), [], 'skipped once, never sent later');
  const latest = given(history).when(remind('after_due', 1), late);
  t.deepEqual(latest, [
    {
      type: 'InvoiceReminderSent',
      data: { kind: 'after_due', days: 1, dueDate: DUE_DATE, at: late, dueIsInstant: true },
    },
  ]);
  history.push(...latest);
  t.like(given(history).state().context.invoice, {
    remindersSent: [{ kind: 'after_due', days: 1, dueDate: DUE_DATE, at: late }],
    remindersSkipped: [{ kind: 'before_due', days: 3, dueDate: DUE_DATE, at: late }],
  });
  t.deepEqual(
    given(history)
      .when(remind('after_due', 7), '2026-02-08T00:00:00.000Z')
      .map((e) => e.type),
    ['InvoiceReminderSent'],
    'the later schedule goes on',
  );

  // Over all three at once, in any order: the 7-day overdue one is the latest.
  const allLate = '2026-02-09T00:00:00.000Z';
  t.deepEqual(
    given(HISTORIES.open)
      .when(remind('after_due', 7), allLate)
      .map((e) => e.type),
    ['InvoiceReminderSent'],
  );
  t.deepEqual(
    given(HISTORIES.open)
      .when(remind('after_due', 1), allLate)
      .map((e) => e.type),
    ['InvoiceReminderSkipped'],
  );
  t.deepEqual(
    given(HISTORIES.open)
      .when(remind('before_due', 3), allLate)
      .map((e) => e.type),
    ['InvoiceReminderSkipped'],
  );
  // A reminder already past at finalization is never scheduled, so it supersedes nothing.
  const finalizedLate = [created(), finalized('2026-01-30T00:00:00.000Z')];
  t.deepEqual(
    given(finalizedLate)
      .when(remind('after_due', 1), '2026-02-02T00:00:00.000Z')
      .map((e) => e.type),
    ['InvoiceReminderSent'],
  );
  // Closed in the meantime: nothing at all.
  for (const closed of [HISTORIES.paid, HISTORIES.void, HISTORIES.uncollectible])
    t.deepEqual(given(closed).when(remind('after_due', 7), allLate), []);
});

test('an invoice created before reminders could be skipped has an empty list of skipped reminders', (t) => {
  const { remindersSkipped: _skipped, ...legacy } = invoiceFixture();
  const invoice = evolveInvoice(null, { type: 'InvoiceCreated', data: { invoice: legacy as Invoice } });
  t.deepEqual(invoice?.remindersSkipped, []);
});

test('given an invoice, when a reminder it does not ask for is due, then nothing', (t) => {
  t.deepEqual(
    given(HISTORIES.open).when({ type: 'SendInvoiceReminder', kind: 'before_due', days: 7, dueDate: DUE_DATE }),
    [],
    'not configured',
  );
  const off = [
    created(invoiceFixture({ reminders: { enabled: false, daysBeforeDue: [3], daysAfterDue: [1] } })),
    finalized(),
  ];
  t.deepEqual(
    given(off).when({ type: 'SendInvoiceReminder', kind: 'before_due', days: 3, dueDate: DUE_DATE }),
    [],
    'switched off',
  );
});

test('given an invoice, when the system sends it (mailed false), then InvoiceSent says so, once; the API sends every time', (t) => {
  const system: InvoiceCommand = { type: 'SendInvoice', to: null, url: HOSTED_URL, mailed: false };
  const events = given([created()]).when(system, NOW);
  t.deepEqual(events, [finalized(NOW), { type: 'InvoiceSent', data: { to: null, at: NOW, mailed: false } }]);
  const history = [created(), ...events];
  t.is(given(history).state().context.invoice!.sentAt, NOW);
  t.deepEqual(given(history).when(system), [], 'a repeated system send is nothing');
  t.deepEqual(
    given(history).when({ type: 'SendInvoice', to: 'payer@example.com', url: HOSTED_URL, mailed: true }, NOW),
    [{ type: 'InvoiceSent', data: { to: 'payer@example.com', at: NOW, mailed: true } }],
    'a merchant resend is recorded every time',
  );
  // An event stored before the flag existed folds the same way.
  t.is(
    given([...HISTORIES.open, { type: 'InvoiceSent', data: { to: null, at: NOW } }]).state().context.invoice!.sentAt,
    NOW,
  );
});

test('given a recurring invoice that announces its next one, when its subscription ended (UnscheduleNextRecurringInvoice), then it announces none, once; finalized with nextIssueDate null (a renewal of an ended subscription), it announces none at all', (t) => {
  const at = '2026-01-20T00:00:00.000Z';
  const finalize: InvoiceCommand = { type: 'FinalizeInvoice', url: HOSTED_URL };
  const scheduledEvents = given([created(recurringInvoiceFixture())]).when(finalize);
  const unschedule: InvoiceCommand = {
    type: 'UnscheduleNextRecurringInvoice',
    reason: 'the subscription was canceled',
  };
  for (const later of [
    [],
    [paid('cs-1')],
    [{ type: 'InvoiceMarkedUncollectible', data: { at } }],
  ] as InvoiceEvent[][]) {
    const history = [created(recurringInvoiceFixture()), ...scheduledEvents, ...later];
    const events = given(history).when(unschedule, at);
    t.deepEqual(events, [
      {
        type: 'NextRecurringInvoiceUnscheduled',
        data: { nextInvoiceId: nextInvoiceIdOf(INVOICE_ID), reason: 'the subscription was canceled', at },
      },
    ]);
    t.is(given([...history, ...events]).state().context.invoice!.nextInvoice, null);
    t.deepEqual(given([...history, ...events]).when(unschedule, at), [], 'a repeat is nothing');
  }
  t.deepEqual(given([created(recurringInvoiceFixture()), ...scheduledEvents, voided()]).when(unschedule), []);
  t.deepEqual(given([created()]).when(unschedule), [], 'a draft announces nothing');
  const ended = given([created(recurringInvoiceFixture())]).when({ ...finalize, nextIssueDate: null });
  t.deepEqual(
    ended.map((e) => e.type),
    ['InvoiceFinalized'],
  );
  const sent = given([created(recurringInvoiceFixture())]).when({
    type: 'SendInvoice',
    to: null,
    url: HOSTED_URL,
    mailed: false,
    nextIssueDate: null,
  });
  t.deepEqual(
    sent.map((e) => e.type),
    ['InvoiceFinalized', 'InvoiceSent'],
  );
});

test('given a deleted draft, then the record remembers when', (t) => {
  const state = given(HISTORIES.deleted).state();
  t.is(state.value, 'deleted');
  t.is(state.context.invoice!.deletedAt, '2026-01-01T01:00:00.000Z');
  t.is(state.context.invoice!.status, 'draft');
});

test('the machine refuses facts its state cannot take', (t) => {
  const scheduled: InvoiceEvent = {
    type: 'NextRecurringInvoiceScheduled',
    data: { nextInvoiceId: 'next', issueDate: '2026-02-02T00:00:00.000Z', at: NOW },
  };
  const sent: InvoiceEvent = { type: 'InvoiceSent', data: { to: null, at: NOW, mailed: true } };
  const illegal: InvoiceEvent[][] = [
    [finalized()],
    [created(), created()],
    [created(), paid('cs-1')],
    [created(), sent],
    [created(), voided()],
    [created(), finalized(), finalized()],
    [created(), finalized(), { type: 'InvoiceUpdated', data: { changes: { memo: 'x' }, at: NOW } }],
    [created(), finalized(), deleted()],
    [created(), finalized(), scheduled],
    [created(recurringInvoiceFixture()), finalized(), scheduled, scheduled],
    [...HISTORIES.paid, voided()],
    [...HISTORIES.void, paid('cs-1')],
    [...HISTORIES.void, partlyPaid('cs-1')],
    [...HISTORIES.open, receivedAfterPaid('cs-1')],
    [...HISTORIES.void, receivedAfterPaid('cs-1')],
    [...HISTORIES.uncollectible, receivedAfterPaid('cs-1')],
    [created(), partlyPaid('cs-1')],
    [...HISTORIES.uncollectible, markedUncollectible()],
    [...HISTORIES.deleted, finalized()],
  ];
  for (const events of illegal)
    t.throws(() => given(events).state(), { instanceOf: IllegalEventError }, events.map((e) => e.type).join(', '));
});

test('evolve keeps every amount an integer string, exactly', (t) => {
  const big = '9007199254740993';
  const events: InvoiceEvent[] = [
    created(
      invoiceFixture({
        lineItems: {
          object: 'list',
          data: [{ description: null, priceId: null, quantity: 1, unitAmount: big, amountTotal: big }],
        },
        amountDue: big,
        amountRemaining: big,
      }),
    ),
    {
      type: 'InvoiceUpdated',
      data: {
        changes: {
          lineItems: {
            object: 'list',
            data: [
              { description: null, priceId: null, quantity: 2, unitAmount: big, amountTotal: '18014398509481986' },
            ],
          },
        },
        at: NOW,
      },
    },
    finalized(NOW),
    attemptStarted('cs-1', NOW),
    paid('cs-1', '18014398509481985', NOW),
  ];
  const invoice = events.reduce<Invoice | null>(evolveInvoice, null)!;
  t.is(invoice.amountDue, '18014398509481986');
  t.is(invoice.amountPaid, '18014398509481985');
  t.is(invoice.amountRemaining, '1');
  for (const value of [
    invoice.amountDue,
    invoice.amountPaid,
    invoice.amountRemaining,
    ...invoice.lineItems.data.flatMap((i) => [i.unitAmount, i.amountTotal]),
  ]) {
    t.regex(value, /^(0|[1-9][0-9]*)$/);
  }
  // The projection (evolve alone) and the machine agree.
  t.deepEqual(given(events).state().context.invoice, invoice);
});

test('evolve ignores events before the invoice exists', (t) => {
  t.is(evolveInvoice(null, voided()), null);
});

test('the machine exports to JSON for the Stately editor', (t) => {
  const json = JSON.parse(
    JSON.stringify(invoiceMachine.toJSON(), (_key, value: unknown) =>
      typeof value === 'function' ? undefined : value,
    ),
  ) as {
    id: string;
    states: Record<string, { on?: Record<string, unknown>; type?: string }>;
  };
  t.is(json.id, 'invoice');
  t.deepEqual(Object.keys(json.states).sort(), ['deleted', 'draft', 'new', 'open', 'paid', 'uncollectible', 'void']);
  t.truthy(json.states.open?.on?.InvoicePaid);
  // Paid takes the money its other sessions receive after: not a final state.
  t.truthy(json.states.paid?.on?.InvoicePaymentReceivedAfterPaid);
  t.is(json.states.void?.type, 'final');
});

test('given events an older Weir wrote (no dueIsInstant), a midnight due date is that whole day: created, moved, and its reminders keyed to it; marked events keep the instant', (t) => {
  const old = (invoice: Invoice): InvoiceEvent => ({ type: 'InvoiceCreated', data: { invoice } });
  const dueDay = '2026-02-01T23:59:59.999Z';
  // Its finalize, as an older Weir wrote it too (no `dueDate`: the draft's).
  const { dueDate: _new, ...oldFinalize } = finalized().data as { dueDate?: string };
  const history: InvoiceEvent[] = [
    old(invoiceFixture({ dueDate: DUE_DATE })),
    { type: 'InvoiceFinalized', data: oldFinalize as Extract<InvoiceEvent, { type: 'InvoiceFinalized' }>['data'] },
  ];
  t.is(given(history).state().context.invoice!.dueDate, dueDay, 'due all of 1 February, as it was');
  history.push({ type: 'InvoiceReminderSent', data: { kind: 'before_due', days: 3, dueDate: DUE_DATE, at: NOW } });
  t.deepEqual(given(history).state().context.invoice!.remindersSent, [
    { kind: 'before_due', days: 3, dueDate: dueDay, at: NOW },
  ]);
  t.deepEqual(
    given(history).when({ type: 'SendInvoiceReminder', kind: 'before_due', days: 3, dueDate: dueDay }, NOW),
    [],
    'the reminder it sent is not sent again',
  );
  const moved: InvoiceEvent = {
    type: 'InvoiceUpdated',
    data: { changes: { dueDate: '2026-03-01T00:00:00.000Z' }, at: NOW },
  };
  t.is(evolveInvoice(evolveInvoice(null, old(invoiceFixture()))!, moved)!.dueDate, '2026-03-01T23:59:59.999Z');
  const marked: InvoiceEvent = { ...moved, data: { ...moved.data, dueIsInstant: true } };
  t.is(evolveInvoice(evolveInvoice(null, old(invoiceFixture()))!, marked)!.dueDate, '2026-03-01T00:00:00.000Z');
  t.is(given([created(invoiceFixture({ dueDate: DUE_DATE }))]).state().context.invoice!.dueDate, DUE_DATE);
  // The first draft of a series due that day may still be finalized on it (its subscription lapses once the day ends).
  const series = old(recurringInvoiceFixture(1, { dueDate: '2026-03-01T00:00:00.000Z' }));
  t.is(
    given([series]).when({ type: 'FinalizeInvoice', url: HOSTED_URL }, '2026-03-01T12:00:00.000Z')[0]!.type,
    'InvoiceFinalized',
  );
});

test('given a renewal draft past its due date, when finalized with a new due date, then it opens due then; a bad date is refused', (t) => {
  const renewal = created(invoiceFixture({ subscriptionId: 'sub-1', dueDate: '2026-01-05T00:00:00.000Z' }));
  const dueDate = '2026-03-08T00:00:00.000Z';
  const events = given([renewal]).when({ type: 'FinalizeInvoice', url: HOSTED_URL, dueDate }, NOW);
  t.like(events[0], { type: 'InvoiceFinalized', data: { dueDate } });
  t.like(given([renewal, ...events]).state().context.invoice, { status: 'open', dueDate });
  const sent = given([renewal]).when({ type: 'SendInvoice', to: null, url: HOSTED_URL, mailed: false, dueDate }, NOW);
  t.like(sent[0], { type: 'InvoiceFinalized', data: { dueDate } });
  t.throws(() => given([renewal]).when({ type: 'FinalizeInvoice', url: HOSTED_URL, dueDate: 'later' }, NOW), {
    instanceOf: ValidationError,
  });
});
