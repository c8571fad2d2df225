import test from 'ava';
import { sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionEvent, SessionLineItem } from '../../machines/checkout-session.types.ts';
import { deterministicId } from '../shared/ids.ts';
import { deleted, finalized, invoiceFixture, paid, voided } from '../../machines/invoice.fixture.ts';
import type { Invoice, InvoiceEvent } from '../../machines/invoice.types.ts';
import { subscriptionIdOfInvoice } from '../../machines/subscription.decide.ts';
import {
  canceled,
  created,
  incompleteExpired,
  issued,
  markedUnpaid,
  missed,
  paused,
  renewalBill,
  renewalPaid,
  started,
  ENDED_AT,
  ENDINGS_AFTER_START,
  SUBSCRIPTION_ID,
  subscriptionFixture,
  trialFixture,
} from '../../machines/subscription.fixture.ts';
import type { SubscriptionEvent } from '../../machines/subscription.types.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { createTestLog } from '../projections/test-log.ts';
import { createCommandHandler } from '../actors/command-handler.ts';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { createSqliteReadStore } from '../read-store/sqlite-read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import { subscriptionAggregate } from '../../machines/subscription.aggregate.ts';
import {
  firstSessionClosing,
  SESSION_SUBSCRIPTION_DAYS_UNTIL_DUE,
  SUBSCRIPTION_BILLING_EFFECTS,
  subscriptionBilling,
} from './subscription-billing.ts';
import { createTestRail } from '../chain-ingest/test-rail.ts';
import { subscriptionBillingEffects } from './subscription-billing.effects.ts';
import { createWorkflowRunner, workflowInstances } from './workflow-runner.ts';
import { eventsOfInstance, givenWhenThenWorkflow, isEffect, type WorkflowStep } from './workflow.ts';

const AT = '2026-01-02T00:00:00.000Z';
const FIRST_INVOICE = 'inv-1';
const BY_INVOICE = subscriptionIdOfInvoice(FIRST_INVOICE);

const completed: CheckoutSessionEvent = {
  type: 'CheckoutSessionCompleted',
  data: { amountReceived: '1000000000', amountOverpaid: '0', transactionHash: '0xabc', partial: false, at: AT },
};
const partlyPaid: CheckoutSessionEvent = {
  type: 'CheckoutSessionPartiallyPaid',
  data: { amountReceived: '100000000', at: AT },
};
const sessionExpired: CheckoutSessionEvent = { type: 'CheckoutSessionExpired', data: { at: AT } };

/**
 * A little log around one subscription: its own events, its first checkout session `cs-1`, its
 * invoices and their pay pages (tenant `org-1` unless told). `history()` is what the runner folds
 * into the subscription's instance; `when` appends the event decided on it.
 */
function logOf(subscriptionId = SUBSCRIPTION_ID) {
  const { events, append } = createTestLog(AT);
  return {
    events,
    subscription: (event: SubscriptionEvent) => append(`subscription-${subscriptionId}`, event),
    invoice: (id: string, event: InvoiceEvent) => append(`invoice-${id}`, event),
    session: (id: string, event: CheckoutSessionEvent) => append(`checkout_session-${id}`, event),
    firstSession: () =>
      append('checkout_session-cs-1', {
        type: 'CheckoutSessionCreated',
        data: { session: sessionFixture({ id: 'cs-1', mode: 'subscription', subscriptionId }) },
      }),
    renewal: (overrides: Partial<Invoice> = {}) =>
      append('invoice-inv-2', {
        type: 'InvoiceCreated',
        data: { invoice: invoiceFixture({ id: 'inv-2', subscriptionId, ...overrides }) },
      }),
    payPage: (id: string, invoiceId: string, organizationId = 'org-1') =>
      append(
        `checkout_session-${id}`,
        { type: 'CheckoutSessionCreated', data: { session: sessionFixture({ id, invoiceId, organizationId }) } },
        organizationId,
      ),
    history: () => eventsOfInstance(subscriptionBilling, events, subscriptionId),
  };
}

const given = givenWhenThenWorkflow(subscriptionBilling);
/** The given history, then `when` decided on it: the commands in short [aggregate, id, type, actor, cause]. */
const decided = (history: RecordedEvent[], when: RecordedEvent) => short(given(history).when(when));
const short = (steps: WorkflowStep[]) =>
  steps.map((c) =>
    isEffect(c)
      ? ['effect', c.effect, c.input, c.context.actor, c.context.causationId]
      : [c.aggregate, c.id, c.command.type, c.context.actor, c.context.causationId],
  );
/** The event decided once, and again once folded in (a redelivery): the second must decide nothing. */
function once(t: import('ava').ExecutionContext, history: RecordedEvent[], when: RecordedEvent, message: string) {
  const [first, again] = given(history).whenTwice(when);
  t.deepEqual(again, [], `${message}: a repeat decides nothing`);
  return short(first);
}

const RECORD_CS1 = ['subscription', SUBSCRIPTION_ID, 'RecordSubscriptionPayment', 'system:subscriptions', 'cs-1'];
const VOID_FIRST = ['invoice', FIRST_INVOICE, 'VoidInvoice', 'system:subscription-billing', BY_INVOICE];
const VOID_RENEWAL = ['invoice', 'inv-2', 'VoidInvoice', 'system:subscription-billing', SUBSCRIPTION_ID];
const DELETE_RENEWAL = ['invoice', 'inv-2', 'DeleteInvoice', 'system:subscription-billing', SUBSCRIPTION_ID];

test('a paid first checkout session is recorded on its subscription, once; paid before the subscription existed, at its creation', (t) => {
  const log = logOf();
  log.firstSession();
  log.subscription(created());
  const history = log.history();
  const paidNow = log.session('cs-1', completed);
  t.deepEqual(once(t, history, paidNow, 'completed'), [RECORD_CS1]);
  t.like(given(history).when(paidNow)[0], {
    command: { type: 'RecordSubscriptionPayment', invoiceId: 'cs-1' },
    context: { organizationId: 'org-1', environment: 'test' },
  });

  const fast = logOf();
  fast.firstSession();
  fast.session('cs-1', completed);
  t.deepEqual(once(t, fast.history(), fast.subscription(created()), 'created'), [RECORD_CS1]);
  // Partly paid, or expired, before: nothing to record.
  for (const end of [partlyPaid, sessionExpired]) {
    const before = logOf();
    before.firstSession();
    before.session('cs-1', end);
    t.deepEqual(decided(before.history(), before.subscription(created())), [], end.type);
  }
});

const discountApplied: CheckoutSessionEvent = {
  type: 'DiscountApplied',
  data: {
    discount: { couponId: 'co-1', promotionCodeId: 'promo-1', code: 'LAUNCH', amountDiscount: '100000000', at: AT },
  },
};
const DISCOUNT_CS1 = ['subscription', SUBSCRIPTION_ID, 'RecordFirstBillDiscount', 'system:subscriptions', 'cs-1'];

test('a promotion code applied to the first checkout session is recorded on its subscription’s first bill, once; applied before the subscription existed, at its creation, before a payment', (t) => {
  const log = logOf();
  log.firstSession();
  log.subscription(created());
  const applied = log.session('cs-1', discountApplied);
  t.not(subscriptionBilling.correlate(applied), false);
  t.deepEqual(once(t, log.history().slice(0, -1), applied, 'applied'), [DISCOUNT_CS1]);
  t.like(given(log.history().slice(0, -1)).when(applied)[0], {
    command: {
      type: 'RecordFirstBillDiscount',
      invoiceId: 'cs-1',
      promotionCodeId: 'promo-1',
      amountDiscount: '100000000',
    },
  });

  // The workflow lags: the session was discounted (and, with a 100% code, paid) before the subscription was created.
  const lagging = logOf();
  lagging.firstSession();
  lagging.session('cs-1', discountApplied);
  t.deepEqual(once(t, lagging.history(), lagging.subscription(created()), 'created'), [DISCOUNT_CS1]);
  const paidFirst = logOf();
  paidFirst.firstSession();
  paidFirst.session('cs-1', discountApplied);
  paidFirst.session('cs-1', completed);
  t.deepEqual(decided(paidFirst.history(), paidFirst.subscription(created())), [DISCOUNT_CS1, RECORD_CS1]);

  // Once recorded, the subscription's own event says so: nothing more.
  const recorded = logOf();
  recorded.firstSession();
  recorded.session('cs-1', discountApplied);
  recorded.subscription(created());
  const history = recorded.history();
  const discountedBill: SubscriptionEvent = {
    type: 'FirstBillDiscounted',
    data: {
      invoiceId: 'cs-1',
      promotionCodeId: 'promo-1',
      amountDiscount: '100000000',
      amountDue: '900000000',
      at: AT,
    },
  };
  t.deepEqual(decided(history, recorded.subscription(discountedBill)), []);
  // A subscription that ended first records no discount.
  const ended = logOf();
  ended.firstSession();
  ended.subscription(created());
  ended.subscription(canceled());
  t.deepEqual(decided(ended.history(), ended.session('cs-1', discountApplied)), []);
});

test('a paid renewal invoice is recorded on the subscription; one paid after the end, or not its latest bill, is not', (t) => {
  const log = logOf();
  log.firstSession();
  for (const event of [created(), started(), issued()]) log.subscription(event);
  log.renewal();
  log.invoice('inv-2', finalized());
  const history = log.history();
  const paidNow = log.invoice('inv-2', paid('cs-8', '1000000000', AT));
  t.deepEqual(once(t, history, paidNow, 'paid'), [
    ['subscription', SUBSCRIPTION_ID, 'RecordSubscriptionPayment', 'system:subscriptions', 'inv-2'],
  ]);
  const marked = log.invoice('inv-2', { type: 'InvoiceMarkedAsPaid', data: { amountPaid: '1000000000', at: AT } });
  t.is(decided(history, marked).length, 1, 'marked as paid is a payment too');

  const ended = logOf();
  ended.firstSession();
  for (const event of [created(), started(), issued(), canceled(ENDED_AT)]) ended.subscription(event);
  ended.renewal();
  ended.invoice('inv-2', finalized());
  t.deepEqual(decided(ended.history(), ended.invoice('inv-2', paid('cs-8'))), [], 'ended first: ignored');

  const recorded = logOf();
  recorded.firstSession();
  for (const event of [created(), started(), issued(), renewalPaid()]) recorded.subscription(event);
  recorded.renewal();
  t.deepEqual(decided(recorded.history(), recorded.invoice('inv-2', paid('cs-8'))), [], 'recorded already');
});

/** A subscription whose first bill is the recurring invoice `inv-1`, its status before the subscription exists. */
function byInvoice(invoiceEvents: InvoiceEvent[]) {
  const log = logOf(BY_INVOICE);
  const invoice = invoiceFixture({
    id: FIRST_INVOICE,
    invoiceType: 'recurring',
    recurring: { interval: 'month', intervalCount: 1 },
  });
  log.invoice(FIRST_INVOICE, { type: 'InvoiceCreated', data: { invoice } });
  for (const event of invoiceEvents) log.invoice(FIRST_INVOICE, event);
  log.subscription(
    created(
      subscriptionFixture({
        id: BY_INVOICE,
        firstBill: { id: FIRST_INVOICE, kind: 'invoice', dueAt: '2026-01-11T00:00:00.000Z' },
      }),
    ),
  );
  return log;
}

test('a subscription that leaves incomplete unpaid (expired, or ended by the merchant) voids its first invoice still payable, once', (t) => {
  const expired: SubscriptionEvent = {
    type: 'SubscriptionIncompleteExpired',
    data: { invoiceId: FIRST_INVOICE, at: '2026-01-11T00:00:00.000Z' },
  };
  for (const ending of [expired, canceled('2026-01-05T00:00:00.000Z')]) {
    for (const payable of [
      [finalized()],
      [finalized(), { type: 'InvoiceMarkedUncollectible', data: { at: AT } }],
    ] as InvoiceEvent[][]) {
      const log = byInvoice(payable);
      t.deepEqual(once(t, log.history(), log.subscription(ending), ending.type), [VOID_FIRST]);
    }
    for (const [status, events] of Object.entries({
      paid: [finalized(), paid('cs-9')],
      void: [finalized(), voided()],
    })) {
      const log = byInvoice(events);
      t.deepEqual(
        decided(log.history(), log.subscription(ending)),
        [],
        `${ending.type} over a ${status} first invoice`,
      );
    }
  }
  // A pay page of the first invoice partly paid keeps it open, with the money on it; one that received nothing does not.
  for (const [what, payPage, expected] of [
    ['an open pay page', [], [VOID_FIRST]],
    ['a partly paid pay page', [partlyPaid], []],
  ] as const) {
    const log = byInvoice([finalized()]);
    log.payPage('cs-2', FIRST_INVOICE);
    for (const event of payPage) log.session('cs-2', event);
    t.deepEqual(decided(log.history(), log.subscription(expired)), expected, what);
  }
  // Paid before it was created: recorded at its creation (no void), by the invoice as cause.
  const fast = byInvoice([finalized(), paid('cs-9')]);
  const history = fast.history();
  t.deepEqual(short(given(history.slice(0, -1)).when(history.at(-1)!)), [
    ['subscription', BY_INVOICE, 'RecordSubscriptionPayment', 'system:subscriptions', FIRST_INVOICE],
  ]);
  // Started: nothing to close.
  const paidLater = byInvoice([finalized()]);
  t.deepEqual(decided(paidLater.history(), paidLater.subscription(started(FIRST_INVOICE))), []);
});

test('money sent to the first checkout session after it ended, its subscription ended without starting, is recorded on the subscription as owed back, once; when it came before the end, at the end; not once it started, nor a pay page’s', (t) => {
  const lateMoney = (transferId: string): CheckoutSessionEvent => ({
    type: 'LatePaymentReceived',
    data: { transferId, amount: '1000000000', at: AT },
  });
  const LATE_CS1 = ['subscription', SUBSCRIPTION_ID, 'RecordFirstBillLatePayment', 'system:subscriptions', 'cs-1'];
  for (const ending of [incompleteExpired(), canceled('2026-01-01T00:30:00.000Z')]) {
    const log = logOf();
    log.firstSession();
    log.subscription(created());
    log.session('cs-1', sessionExpired);
    log.subscription(ending);
    const after = log.session('cs-1', lateMoney('tr-1'));
    t.deepEqual(once(t, log.history().slice(0, -1), after, ending.type), [LATE_CS1]);
    t.like(given(log.history().slice(0, -1)).when(after)[0], {
      command: { type: 'RecordFirstBillLatePayment', invoiceId: 'cs-1', transferId: 'tr-1', amount: '1000000000' },
    });
  }
  // Late before the subscription learnt its end (the session expires first): recorded at the end.
  const before = logOf();
  before.firstSession();
  before.subscription(created());
  before.session('cs-1', sessionExpired);
  const early = before.session('cs-1', lateMoney('tr-1'));
  t.deepEqual(decided(before.history().slice(0, -1), early), [], 'not ended yet');
  t.deepEqual(once(t, before.history(), before.subscription(incompleteExpired()), 'expired'), [LATE_CS1]);

  // Started: its own late money is the session's to refund, nothing of the subscription's.
  const going = logOf();
  going.firstSession();
  for (const event of [created(), started(), canceled()]) going.subscription(event);
  t.deepEqual(decided(going.history(), going.session('cs-1', lateMoney('tr-1'))), []);
  // A renewal's pay page: its invoice's (`invoice-payments`).
  const renewal = logOf();
  renewal.firstSession();
  for (const event of [created(), started(), issued()]) renewal.subscription(event);
  renewal.renewal();
  renewal.payPage('cs-2', 'inv-2');
  renewal.session('cs-2', partlyPaid);
  renewal.subscription(canceled(ENDED_AT));
  t.deepEqual(decided(renewal.history(), renewal.session('cs-2', lateMoney('tr-2'))), []);
});

test('a draft made recurring is the first invoice of its subscription; a renewal stays with its subscription when updated', (t) => {
  const log = logOf(BY_INVOICE);
  log.invoice(FIRST_INVOICE, { type: 'InvoiceCreated', data: { invoice: invoiceFixture({ id: FIRST_INVOICE }) } });
  t.false(subscriptionBilling.correlate(log.events[0]!), 'a one-time invoice is not a subscription’s');
  const update = log.invoice(FIRST_INVOICE, {
    type: 'InvoiceUpdated',
    data: { changes: { invoiceType: 'recurring' }, at: AT },
  });
  t.is(subscriptionBilling.correlate(update), BY_INVOICE);
  log.invoice(FIRST_INVOICE, finalized());
  t.deepEqual(
    log.history().map((e) => e.type),
    ['InvoiceUpdated', 'InvoiceFinalized'],
  );
  const renewal = logOf();
  renewal.renewal();
  renewal.invoice('inv-2', { type: 'InvoiceUpdated', data: { changes: { invoiceType: 'recurring' }, at: AT } });
  t.deepEqual(
    renewal.history().map((e) => e.type),
    ['InvoiceCreated', 'InvoiceUpdated'],
  );
});

test('a subscription that ends while incomplete closes its first checkout session still open: canceled when ended, expired when it expired; a partly paid one is completed as is, also when its part came after the end; one that is over is left alone', (t) => {
  t.deepEqual(firstSessionClosing('incomplete_expired'), { type: 'ExpireCheckoutSession' });
  t.deepEqual(firstSessionClosing('canceled'), {
    type: 'CancelCheckoutSession',
    reason: 'the subscription was canceled',
  });
  t.deepEqual(firstSessionClosing('canceled', 'incomplete'), {
    type: 'CompletePartialCheckoutSession',
    reason: 'the subscription was canceled',
  });
  const close = (type: string) => ['checkout_session', 'cs-1', type, 'system:subscription-billing', SUBSCRIPTION_ID];
  for (const [ending, type] of [
    [incompleteExpired(), 'ExpireCheckoutSession'],
    [canceled('2026-01-01T00:30:00.000Z'), 'CancelCheckoutSession'],
  ] as const) {
    const log = logOf();
    log.firstSession();
    log.subscription(created());
    t.deepEqual(once(t, log.history(), log.subscription(ending), ending.type), [close(type)]);
    // Partly paid, it can neither expire nor be canceled: its page would ask for the rest of a subscription that ended.
    const partly = logOf();
    partly.firstSession();
    partly.subscription(created());
    partly.session('cs-1', partlyPaid);
    t.deepEqual(once(t, partly.history(), partly.subscription(ending), `${ending.type} partly paid`), [
      close('CompletePartialCheckoutSession'),
    ]);
    for (const end of [completed, sessionExpired]) {
      const left = logOf();
      left.firstSession();
      left.subscription(created());
      left.session('cs-1', end);
      t.deepEqual(decided(left.history(), left.subscription(ending)), [], `${ending.type} after ${end.type}`);
    }
  }
  // Ended while open, its cancel losing the race to a part payment: the part completes it as is, once.
  const raced = logOf();
  raced.firstSession();
  raced.subscription(created());
  raced.subscription(canceled('2026-01-01T00:30:00.000Z'));
  t.deepEqual(once(t, raced.history(), raced.session('cs-1', partlyPaid), 'partly paid after the end'), [
    close('CompletePartialCheckoutSession'),
  ]);
  t.deepEqual(decided(raced.history(), raced.session('cs-1', partlyPaid)), [], 'a second part: already closing');
  const going = logOf();
  going.firstSession();
  going.subscription(created());
  t.deepEqual(decided(going.history(), going.session('cs-1', partlyPaid)), [], 'partly paid while it waits: nothing');
  const log = logOf();
  log.firstSession();
  log.subscription(created());
  t.deepEqual(decided(log.history(), log.subscription(started())), [], 'started: nothing to close');
});

/** Ended at once at the instant its renewal `inv-2`'s period starts: that period is not served. */
const ENDINGS: Record<string, SubscriptionEvent[]> = {
  ...ENDINGS_AFTER_START,
  'ended at its renewal': [
    created(),
    started(),
    issued(renewalBill('inv-2', ENDED_AT, '2026-03-02T00:00:00.000Z')),
    canceled(ENDED_AT),
  ],
};

/** The subscription's life up to (not including) its end, with its renewal `inv-2` through `renewal` events. */
function endingOver(how: string, renewal: InvoiceEvent[] | null, payPage: CheckoutSessionEvent[] | null = null) {
  const events = ENDINGS[how]!;
  const log = logOf();
  log.firstSession();
  for (const event of events.slice(0, -1)) log.subscription(event);
  if (renewal) {
    log.renewal();
    for (const event of renewal) log.invoice('inv-2', event);
  }
  if (payPage) {
    log.payPage('cs-2', 'inv-2');
    for (const event of payPage) log.session('cs-2', event);
  }
  return { log, end: () => log.subscription(events.at(-1)!) };
}

test('a subscription that ends after it started leaves its renewal for a period it served owed and payable (a draft left to its issue), voids one for a period from its end on that received nothing, and deletes one of those left a draft, whichever way it ends, once', (t) => {
  const payable = [
    [finalized()],
    [finalized(), { type: 'InvoiceMarkedUncollectible', data: { at: AT } }],
  ] as InvoiceEvent[][];
  for (const how of Object.keys(ENDINGS_AFTER_START)) {
    for (const renewal of payable) {
      const { log, end } = endingOver(how, renewal);
      t.deepEqual(decided(log.history(), end()), [], `${how}: its period (from 2026-02-01) was served, it stays owed`);
    }
    const { log, end } = endingOver(how, []);
    t.deepEqual(decided(log.history(), end()), [], `${how}: a draft of a served period is left to its issue`);
  }
  const unservedDraft = endingOver('ended at its renewal', []);
  t.deepEqual(
    once(t, unservedDraft.log.history(), unservedDraft.end(), 'unserved draft'),
    [DELETE_RENEWAL],
    'a draft of a period from the end on is deleted',
  );
  // Its period starting at the end: not served, so not owed.
  for (const renewal of payable) {
    const { log, end } = endingOver('ended at its renewal', renewal);
    t.deepEqual(once(t, log.history(), end(), 'unserved'), [VOID_RENEWAL], 'a period from the end on: voided');
  }
  const how = 'ended at its renewal';
  for (const [what, renewal] of Object.entries({
    paid: [finalized(), paid('cs-2', '1000000000', AT)],
    void: [finalized(), voided()],
    'deleted by the merchant': [deleted()],
    'not issued yet': null,
  })) {
    const { log, end } = endingOver(how, renewal);
    t.deepEqual(decided(log.history(), end()), [], what);
  }
  // A pay page that received nothing does not keep it open; one partly paid does, with the money on it.
  for (const [what, payPage, expected] of [
    ['an open pay page', [], [VOID_RENEWAL]],
    ['an expired pay page', [sessionExpired], [VOID_RENEWAL]],
    ['a partly paid pay page', [partlyPaid], []],
    ['a pay page partly paid then completed', [partlyPaid, completed], [VOID_RENEWAL]],
  ] as const) {
    const { log, end } = endingOver(how, [finalized()], [...payPage]);
    t.deepEqual(decided(log.history(), end()), expected, what);
  }
  // A pay page of another tenant naming the invoice is not its pay page.
  const { log, end } = endingOver(how, [finalized()]);
  log.payPage('cs-3', 'inv-2', 'org-2');
  log.session('cs-3', partlyPaid);
  t.deepEqual(decided(log.history(), end()), [VOID_RENEWAL]);
});

test('a renewal for a period served, left owed at the end, paid after it: recorded on the invoice, nothing on the ended subscription', (t) => {
  const { log, end } = endingOver('canceled at period end', [finalized()]);
  end();
  t.deepEqual(decided(log.history(), log.invoice('inv-2', paid('cs-2', '1000000000', AT))), []);
});

test('an ended subscription’s invoices that announce a next invoice announce none, once: a renewal left owed at the end, one issued after it (an older Weir), a first invoice left open partly paid; not while it goes on, nor a void or unscheduled one', (t) => {
  const scheduled: InvoiceEvent = {
    type: 'NextRecurringInvoiceScheduled',
    data: { nextInvoiceId: 'inv-3', issueDate: '2026-03-01T00:00:00.000Z', at: AT },
  };
  const unscheduled: InvoiceEvent = {
    type: 'NextRecurringInvoiceUnscheduled',
    data: { nextInvoiceId: 'inv-3', reason: 'the subscription was canceled', at: AT },
  };
  const UNSCHEDULE_RENEWAL = [
    'invoice',
    'inv-2',
    'UnscheduleNextRecurringInvoice',
    'system:subscription-billing',
    SUBSCRIPTION_ID,
  ];
  for (const how of Object.keys(ENDINGS_AFTER_START)) {
    for (const renewal of [
      [finalized(), scheduled],
      [finalized(), scheduled, paid('cs-2', '1000000000', AT)],
      [finalized(), scheduled, { type: 'InvoiceMarkedUncollectible', data: { at: AT } }],
    ] as InvoiceEvent[][]) {
      const { log, end } = endingOver(how, renewal);
      t.deepEqual(once(t, log.history(), end(), how), [UNSCHEDULE_RENEWAL], `${how}, ${renewal.at(-1)!.type}`);
    }
    for (const renewal of [[finalized()], [finalized(), scheduled, unscheduled]]) {
      const { log, end } = endingOver(how, renewal);
      t.deepEqual(decided(log.history(), end()), [], `${how}: announces none already`);
    }
  }
  const why = endingOver('ended while active', [finalized(), scheduled]);
  t.like(given(why.log.history()).when(why.end())[0], {
    command: { type: 'UnscheduleNextRecurringInvoice', reason: 'the subscription was canceled' },
  });
  // A period from the end on: voided (which announces none), then told all the same (nothing if the void went first).
  const unserved = endingOver('ended at its renewal', [finalized(), scheduled]);
  t.deepEqual(decided(unserved.log.history(), unserved.end()), [VOID_RENEWAL, UNSCHEDULE_RENEWAL]);
  const voidedFirst = endingOver('ended while active', [finalized(), scheduled, voided()]);
  t.deepEqual(decided(voidedFirst.log.history(), voidedFirst.end()), [], 'void: announces none');

  // Issued after the end (a served period, by an older Weir): the schedule it recorded is taken back.
  const after = endingOver('ended while active', null);
  after.end();
  after.log.renewal();
  after.log.invoice('inv-2', finalized());
  t.deepEqual(once(t, after.log.history(), after.log.invoice('inv-2', scheduled), 'after'), [UNSCHEDULE_RENEWAL]);
  // While it goes on, a renewal announces its successor.
  const going = endingOver('ended while active', [finalized()]);
  t.deepEqual(decided(going.log.history(), going.log.invoice('inv-2', scheduled)), []);

  // A first invoice partly paid stays open when its subscription expires: it announces no next invoice either.
  const expired: SubscriptionEvent = {
    type: 'SubscriptionIncompleteExpired',
    data: { invoiceId: FIRST_INVOICE, at: '2026-01-11T00:00:00.000Z' },
  };
  const first = byInvoice([finalized(), scheduled]);
  first.payPage('cs-2', FIRST_INVOICE);
  first.session('cs-2', partlyPaid);
  t.deepEqual(once(t, first.history(), first.subscription(expired), 'expired'), [
    ['invoice', FIRST_INVOICE, 'UnscheduleNextRecurringInvoice', 'system:subscription-billing', BY_INVOICE],
  ]);
  const open = byInvoice([finalized(), scheduled]);
  t.deepEqual(decided(open.history(), open.subscription(expired)), [
    VOID_FIRST,
    ['invoice', FIRST_INVOICE, 'UnscheduleNextRecurringInvoice', 'system:subscription-billing', BY_INVOICE],
  ]);
});

test('a renewal voided or written off (uncollectible) by the merchant while its subscription goes on is recorded on the subscription, once: that period is settled, the next one bills; not after the end', (t) => {
  const VOIDED = ['subscription', SUBSCRIPTION_ID, 'RecordRenewalInvoiceVoided', 'system:subscriptions', 'inv-2'];
  const uncollectible: InvoiceEvent = { type: 'InvoiceMarkedUncollectible', data: { at: AT } };
  for (const [how, events] of Object.entries({
    active: [created(), started(), issued()],
    'past due': [created(), started(), issued(), missed()],
    unpaid: [created(), started(), issued(), missed(), markedUnpaid()],
  })) {
    for (const settle of [voided(), uncollectible]) {
      const log = logOf();
      log.firstSession();
      for (const event of events) log.subscription(event);
      log.renewal();
      log.invoice('inv-2', finalized());
      t.deepEqual(once(t, log.history(), log.invoice('inv-2', settle), `${how}, ${settle.type}`), [VOIDED]);
    }
  }
  const { log, end } = endingOver('ended while past due', [finalized()]);
  end();
  t.deepEqual(decided(log.history(), log.invoice('inv-2', uncollectible)), [], 'after the end');
});

test('a renewal created or opened after its subscription ended (its issue under way) is left to its issue and owed when its period started before the end; one for a period from the end on is deleted as a draft, voided once open; one created while it goes on is left to its issue', (t) => {
  const { log, end } = endingOver('ended while active', null);
  end();
  const createdAfter = log.renewal();
  t.deepEqual(decided(log.history().slice(0, -1), createdAfter), [], 'a served period: owed, so issued');
  t.deepEqual(decided(log.history(), log.invoice('inv-2', finalized())), []);
  const unserved = endingOver('ended at its renewal', null);
  unserved.end();
  const unservedDraft = unserved.log.renewal();
  t.deepEqual(once(t, unserved.log.history().slice(0, -1), unservedDraft, 'created'), [DELETE_RENEWAL]);
  t.deepEqual(once(t, unserved.log.history(), unserved.log.invoice('inv-2', finalized()), 'finalized'), [VOID_RENEWAL]);

  const going = endingOver('ended while active', null).log;
  const createdBefore = going.renewal();
  t.deepEqual(decided(going.history().slice(0, -1), createdBefore), []);
  t.deepEqual(decided(going.history(), going.invoice('inv-2', finalized())), []);
});

test('a renewal draft the merchant deletes while its subscription goes on is recorded on the subscription, once; one deleted after the end, or by the end, is not', (t) => {
  const GOING_ON: Record<string, SubscriptionEvent[]> = {
    active: [created(), started(), issued()],
    'past due': [created(), started(), issued(), missed()],
    unpaid: [created(), started(), issued(), missed(), markedUnpaid()],
    paused: [created(), started(), issued(), paused('2026-02-01T12:00:00.000Z')],
    trialing: [created(trialFixture()), issued()],
  };
  for (const [how, events] of Object.entries(GOING_ON)) {
    const log = logOf();
    log.firstSession();
    for (const event of events) log.subscription(event);
    log.renewal();
    t.deepEqual(once(t, log.history(), log.invoice('inv-2', deleted()), how), [
      ['subscription', SUBSCRIPTION_ID, 'RecordRenewalInvoiceDeleted', 'system:subscriptions', 'inv-2'],
    ]);
  }
  const { log, end } = endingOver('ended while active', []);
  end();
  t.deepEqual(
    decided(log.history(), log.invoice('inv-2', deleted())),
    [],
    'deleted by the billing process after the end',
  );
});

test('a renewal draft Weir could not finalize, finalized by the merchant, reopens its bill due as it opened, once; also when the finalize came before the subscription learnt of the draft; not one finalized by an older Weir', (t) => {
  const DUE = '2026-02-20T00:00:00.000Z';
  const REOPEN = ['subscription', SUBSCRIPTION_ID, 'RecordRenewalInvoiceFinalized', 'system:subscriptions', 'inv-2'];
  const notFinalized: SubscriptionEvent = { type: 'RenewalInvoiceNotFinalized', data: { invoiceId: 'inv-2', at: AT } };
  const opened = (dueDate?: string): InvoiceEvent => {
    const { dueDate: _drop, ...data } = (finalized() as Extract<InvoiceEvent, { type: 'InvoiceFinalized' }>).data;
    return { type: 'InvoiceFinalized', data: dueDate === undefined ? data : { ...data, dueDate } };
  };
  const stuck = () => {
    const log = logOf();
    log.firstSession();
    for (const event of [created(), started(), issued()]) log.subscription(event);
    log.renewal();
    return log;
  };
  const log = stuck();
  log.subscription(notFinalized);
  const [steps, again] = given(log.history()).whenTwice(log.invoice('inv-2', opened(DUE)));
  t.deepEqual(short(steps), [REOPEN]);
  t.deepEqual(again, [], 'a repeat decides nothing');
  t.like(steps[0], { command: { invoiceId: 'inv-2', dueAt: DUE } });
  // Finalized while Weir recorded the refusal: the subscription's record of the draft comes after the finalize.
  const raced = stuck();
  raced.invoice('inv-2', opened(DUE));
  t.deepEqual(decided(raced.history(), raced.subscription(notFinalized)), [REOPEN]);
  // A bill never a draft (the issue finalized it) is left alone, as is a finalize without its due date (an older Weir's).
  const plain = stuck();
  t.deepEqual(decided(plain.history(), plain.invoice('inv-2', opened(DUE))), []);
  const old = stuck();
  old.subscription(notFinalized);
  t.deepEqual(decided(old.history(), old.invoice('inv-2', opened())), []);
});

test('a renewal draft an older Weir let its subscription miss (RenewalPaymentMissed, no RenewalInvoiceNotFinalized), finalized by the merchant, reopens its bill, once; a missed bill whose invoice was sent (open, then uncollectible) does not', (t) => {
  const DUE = '2026-02-20T00:00:00.000Z';
  const REOPEN = ['subscription', SUBSCRIPTION_ID, 'RecordRenewalInvoiceFinalized', 'system:subscriptions', 'inv-2'];
  const opened: InvoiceEvent = {
    type: 'InvoiceFinalized',
    data: { ...(finalized() as Extract<InvoiceEvent, { type: 'InvoiceFinalized' }>).data, dueDate: DUE },
  };
  for (const [how, lapse] of [
    ['past due', [missed()]],
    ['unpaid', [missed(), markedUnpaid()]],
  ] as const) {
    const log = logOf();
    log.firstSession();
    for (const event of [created(), started(), issued()]) log.subscription(event);
    log.renewal();
    log.invoice('inv-2', { type: 'InvoiceFinalizationFailed', data: { code: 'c', field: null, message: 'm', at: AT } });
    for (const event of lapse) log.subscription(event);
    const [steps, again] = given(log.history()).whenTwice(log.invoice('inv-2', opened));
    t.deepEqual(short(steps), [REOPEN], how);
    t.like(steps[0], { command: { invoiceId: 'inv-2', dueAt: DUE } });
    t.deepEqual(again, [], `${how}: a repeat decides nothing`);
  }
  // Sent by the issue (open), then missed: a later change of its invoice reopens nothing (written off, it settles the bill).
  const sent = logOf();
  sent.firstSession();
  for (const event of [created(), started(), issued()]) sent.subscription(event);
  sent.renewal();
  sent.invoice('inv-2', opened);
  sent.subscription(missed());
  t.deepEqual(
    decided(sent.history(), sent.invoice('inv-2', { type: 'InvoiceMarkedUncollectible', data: { at: AT } })),
    [['subscription', SUBSCRIPTION_ID, 'RecordRenewalInvoiceVoided', 'system:subscriptions', 'inv-2']],
  );
});

/** A line of a monthly price of 5 USDC, `quantity` of them. */
const monthly = (quantity = 2): SessionLineItem => ({
  description: 'Pro',
  quantity,
  price: {
    id: 'price-1',
    productId: 'prod-1',
    product: { id: 'prod-1', name: 'Pro', description: null, isActive: true },
    type: 'recurring',
    currency: 'usdc',
    unitAmount: '500000000',
    interval: 'month',
    intervalCount: 1,
    isActive: true,
  },
  amountSubtotal: (500000000n * BigInt(quantity)).toString(),
  amountTotal: (500000000n * BigInt(quantity)).toString(),
  currency: 'usdc',
});

test('a mode: subscription checkout session creates its subscription, billed first by the session; without a customerId, first a customer from the payer’s email; once', (t) => {
  const CREATE = ['subscription', SUBSCRIPTION_ID, 'CreateSubscription', 'system:subscriptions', 'cs-1'];
  const sessionWith = (overrides: Parameters<typeof sessionFixture>[0]) => {
    const log = logOf();
    const session = sessionFixture({
      id: 'cs-1',
      mode: 'subscription',
      subscriptionId: SUBSCRIPTION_ID,
      lineItems: { object: 'list', data: [monthly()] },
      ...overrides,
    });
    return log.session('cs-1', { type: 'CheckoutSessionCreated', data: { session } });
  };
  const named = sessionWith({ customerId: 'cus-7' });
  t.deepEqual(once(t, [], named, 'created'), [CREATE]);
  t.like(given([]).when(named)[0], {
    command: {
      type: 'CreateSubscription',
      subscription: {
        id: SUBSCRIPTION_ID,
        status: 'incomplete',
        customerId: 'cus-7',
        daysUntilDue: SESSION_SUBSCRIPTION_DAYS_UNTIL_DUE,
        amountTotal: '1000000000',
        items: [{ priceId: 'price-1', productId: 'prod-1', quantity: 2, interval: 'month' }],
        latestInvoice: { id: 'cs-1', kind: 'checkout_session' },
      },
    },
    context: { organizationId: 'org-1', environment: 'test' },
  });

  const customerId = deterministicId(`customer:subscription:${SUBSCRIPTION_ID}`);
  const payer = sessionWith({
    customerId: null,
    customerDetails: { name: 'Ada', email: 'ada@example.com', phone: null, address: null },
  });
  t.deepEqual(once(t, [], payer, 'created with a payer'), [
    ['customer', customerId, 'CreateCustomer', 'system:subscriptions', 'cs-1'],
    CREATE,
  ]);
  t.like(given([]).when(payer)[1], { command: { subscription: { customerId } } });
  t.like(given([]).when(payer)[0], { command: { customer: { email: 'ada@example.com', name: 'Ada' } } });
  // Its lines are checked by the same rule when it is created: one that fails it bills nothing, and says so.
  const [report, ...rest] = decided(
    [],
    sessionWith({
      customerId: 'cus-7',
      lineItems: { object: 'list', data: [{ ...monthly(), price: { ...monthly().price, type: 'one_time' } }] },
    }),
  );
  t.deepEqual(rest, []);
  t.like(report, [
    'effect',
    SUBSCRIPTION_BILLING_EFFECTS.reportUnbillable,
    { checkoutSessionId: 'cs-1', subscriptionId: SUBSCRIPTION_ID },
  ]);
  t.regex(String((report![2] as { reason: string }).reason), /recurring prices only/);
});

test('a mode: subscription session with neither customer nor email waits for the email its page collects: then the customer and the subscription are created as from customerData.email, once; paid without one (a 100% code), it is created without a customer; expired without one, nothing', (t) => {
  const CREATE = ['subscription', SUBSCRIPTION_ID, 'CreateSubscription', 'system:subscriptions', 'cs-1'];
  const customerId = deterministicId(`customer:subscription:${SUBSCRIPTION_ID}`);
  const unnamed = () => {
    const log = logOf();
    const session = sessionFixture({
      id: 'cs-1',
      mode: 'subscription',
      customerId: null,
      subscriptionId: SUBSCRIPTION_ID,
      lineItems: { object: 'list', data: [monthly()] },
    });
    const createdEvent = log.session('cs-1', { type: 'CheckoutSessionCreated', data: { session } });
    return { log, createdEvent };
  };
  const { log, createdEvent } = unnamed();
  t.deepEqual(decided([], createdEvent), [], 'no subscription before the email');
  const history = log.history();
  const collected = log.session('cs-1', {
    type: 'CustomerEmailCollected',
    data: { email: 'pat@example.com', at: AT },
  });
  t.deepEqual(once(t, history, collected, 'the email given'), [
    ['customer', customerId, 'CreateCustomer', 'system:subscriptions', 'cs-1'],
    CREATE,
  ]);
  const [customer, subscription] = given(history).when(collected);
  t.like(customer, { command: { customer: { email: 'pat@example.com' } } });
  t.like(subscription, {
    command: {
      subscription: { customerId, status: 'incomplete', latestInvoice: { id: 'cs-1', kind: 'checkout_session' } },
    },
  });
  t.deepEqual(decided(log.history(), log.session('cs-1', completed)), [], 'paid after: the subscription records it');

  const free = unnamed();
  const paidWithout = free.log.session('cs-1', completed);
  t.deepEqual(once(t, free.log.history().slice(0, -1), paidWithout, 'paid without an email'), [CREATE]);
  t.like(given([free.createdEvent]).when(paidWithout)[0], { command: { subscription: { customerId: null } } });

  const lapsed = unnamed();
  const expiredEvent = lapsed.log.session('cs-1', sessionExpired);
  t.deepEqual(decided([lapsed.createdEvent], expiredEvent), []);
  const late = lapsed.log.session('cs-1', { type: 'CustomerEmailCollected', data: { email: 'p@example.com', at: AT } });
  t.deepEqual(decided([lapsed.createdEvent, expiredEvent], late), [], 'an email after the end creates nothing');
});

test('the first invoice of a recurring series, once finalized, creates its subscription (an effect: its products are in the catalog); a draft made one-time again does not', (t) => {
  const EFFECT = [
    'effect',
    SUBSCRIPTION_BILLING_EFFECTS.createFromInvoice,
    { invoiceId: FIRST_INVOICE, subscriptionId: BY_INVOICE },
    'system:subscriptions',
    FIRST_INVOICE,
  ];
  const recurring = invoiceFixture({
    id: FIRST_INVOICE,
    invoiceType: 'recurring',
    recurring: { interval: 'month', intervalCount: 1 },
  });
  const log = logOf(BY_INVOICE);
  log.invoice(FIRST_INVOICE, { type: 'InvoiceCreated', data: { invoice: recurring } });
  const history = log.history();
  t.deepEqual(once(t, history, log.invoice(FIRST_INVOICE, finalized()), 'finalized'), [EFFECT]);

  const madeRecurring = logOf(BY_INVOICE);
  madeRecurring.invoice(FIRST_INVOICE, {
    type: 'InvoiceCreated',
    data: { invoice: invoiceFixture({ id: FIRST_INVOICE }) },
  });
  madeRecurring.invoice(FIRST_INVOICE, {
    type: 'InvoiceUpdated',
    data: { changes: { invoiceType: 'recurring' }, at: AT },
  });
  const made = madeRecurring.history();
  t.deepEqual(decided(made, madeRecurring.invoice(FIRST_INVOICE, finalized())), [EFFECT], 'a draft made recurring');

  const oneTimeAgain = logOf(BY_INVOICE);
  oneTimeAgain.invoice(FIRST_INVOICE, { type: 'InvoiceCreated', data: { invoice: recurring } });
  oneTimeAgain.invoice(FIRST_INVOICE, {
    type: 'InvoiceUpdated',
    data: { changes: { invoiceType: 'one_time' }, at: AT },
  });
  const again = oneTimeAgain.history();
  t.deepEqual(decided(again, oneTimeAgain.invoice(FIRST_INVOICE, finalized())), [], 'made one-time again');
});

test('a renewal the subscription issues becomes its invoice (an effect: a number claimed, created and sent), from its series’ first invoice when it has one; once', (t) => {
  const log = logOf();
  log.firstSession();
  log.subscription(created());
  log.subscription(started());
  const history = log.history();
  t.deepEqual(once(t, history, log.subscription(issued()), 'issued'), [
    [
      'effect',
      SUBSCRIPTION_BILLING_EFFECTS.issueRenewal,
      { subscriptionId: SUBSCRIPTION_ID, invoiceId: 'inv-2', templateId: null },
      'system:subscriptions',
      'inv-2',
    ],
  ]);
  const series = byInvoice([finalized(), paid('cs-9')]);
  series.subscription(started(FIRST_INVOICE));
  const seriesHistory = series.history();
  t.like(given(seriesHistory).when(series.subscription(issued()))[0], {
    effect: SUBSCRIPTION_BILLING_EFFECTS.issueRenewal,
    input: { subscriptionId: BY_INVOICE, templateId: FIRST_INVOICE },
  });
});

test('events of no subscription are not the workflow’s', (t) => {
  const log = logOf();
  t.deepEqual(subscriptionBilling.correlate(log.payPage('cs-x', 'some-invoice')), { sameAs: 'invoice-some-invoice' });
  t.deepEqual(log.history(), [], 'a pay page of an invoice of no subscription');
  const plain = log.session('cs-plain', {
    type: 'CheckoutSessionCreated',
    data: { session: sessionFixture({ id: 'cs-plain' }) },
  });
  t.false(subscriptionBilling.correlate(plain));
  t.false(subscriptionBilling.correlate(log.invoice('inv-9', { type: 'InvoiceSent', data: { to: null, at: AT } })));
});

test('over the real deciders: an ended subscription’s payable first invoice is voided, saying who and why; one paid in the meantime refuses the void, which is dropped without a warning', async (t) => {
  const clock = createManualClock(Date.parse('2026-01-05T00:00:00.000Z'));
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  const readStore = createSqliteReadStore({ path: ':memory:', indexedFields: ['pending'] });
  const commands = createCommandHandler({ eventStore, clock });
  const warnings: string[] = [];
  const runner = createWorkflowRunner({
    workflow: subscriptionBilling,
    eventStore,
    readStore,
    commands,
    clock,
    effects: subscriptionBillingEffects({ commands, readStore, publicUrl: 'http://weir.test', rail: createTestRail() }),
    log: (line, fields) => {
      if (fields?.level !== 'debug') warnings.push(line);
    },
  });
  t.teardown(async () => {
    await runner.stop();
    await eventStore.close();
  });
  const ctx = { organizationId: 'org-1', environment: 'test' as const, actor: 'test' };
  /** A subscription billed first by the open recurring invoice `invoiceId`, ended by the merchant while incomplete. */
  async function endedOver(invoiceId: string): Promise<string> {
    const invoice = invoiceFixture({
      id: invoiceId,
      invoiceType: 'recurring',
      recurring: { interval: 'month', intervalCount: 1 },
    });
    await commands.handle(invoiceAggregate, invoiceId, { type: 'CreateInvoice', invoice }, ctx);
    await commands.handle(invoiceAggregate, invoiceId, { type: 'FinalizeInvoice', url: 'http://weir.test/pay' }, ctx);
    const id = subscriptionIdOfInvoice(invoiceId);
    const subscription = subscriptionFixture({
      id,
      firstBill: { id: invoiceId, kind: 'invoice', dueAt: '2026-01-11T00:00:00.000Z' },
    });
    await commands.handle(subscriptionAggregate, id, { type: 'CreateSubscription', subscription }, ctx);
    await commands.handle(subscriptionAggregate, id, { type: 'EndSubscription', comment: null }, ctx);
    return id;
  }
  const voided = await endedOver('inv-a');
  await endedOver('inv-b');
  await commands.handle(invoiceAggregate, 'inv-b', { type: 'MarkInvoicePaid' }, ctx);
  await runner.runOnce();
  const ends = async (invoiceId: string) =>
    (await eventStore.readStream(`invoice-${invoiceId}`))
      .filter((e) => e.type === 'InvoiceVoided')
      .map((e) => [e.metadata.actor, e.metadata.causationId]);
  t.deepEqual(await ends('inv-a'), [['system:subscription-billing', voided]]);
  t.deepEqual(await ends('inv-b'), [], 'paid before its void: it stays paid');
  t.deepEqual(warnings, []);
  t.is(await readStore.collection(workflowInstances(subscriptionBilling.name)).count({ pending: true }), 0);
});

test('over the real deciders: a first invoice whose partial payment reached it before the workflow saw any (a race, a replay) refuses the void; it stays open with the money, and the runner goes on to the next', async (t) => {
  const clock = createManualClock(Date.parse('2026-01-05T00:00:00.000Z'));
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  const readStore = createSqliteReadStore({ path: ':memory:', indexedFields: ['pending'] });
  const commands = createCommandHandler({ eventStore, clock });
  const warnings: string[] = [];
  const refused: string[] = [];
  const runner = createWorkflowRunner({
    workflow: subscriptionBilling,
    eventStore,
    readStore,
    commands,
    clock,
    effects: subscriptionBillingEffects({ commands, readStore, publicUrl: 'http://weir.test', rail: createTestRail() }),
    log: (line, fields) => {
      if (fields?.level !== 'debug') warnings.push(line);
      if (fields?.event === 'workflow.refused') refused.push(line);
    },
  });
  t.teardown(async () => {
    await runner.stop();
    await eventStore.close();
  });
  const ctx = { organizationId: 'org-1', environment: 'test' as const, actor: 'test' };
  /** A subscription billed first by the open recurring invoice `invoiceId` (partly paid first when told), ended while incomplete. */
  async function endedOver(invoiceId: string, partlyPaidBy: string | null): Promise<void> {
    const invoice = invoiceFixture({
      id: invoiceId,
      invoiceType: 'recurring',
      recurring: { interval: 'month', intervalCount: 1 },
    });
    await commands.handle(invoiceAggregate, invoiceId, { type: 'CreateInvoice', invoice }, ctx);
    await commands.handle(invoiceAggregate, invoiceId, { type: 'FinalizeInvoice', url: 'http://weir.test/pay' }, ctx);
    // What the invoice payments workflow records; this workflow has seen no event of the session.
    if (partlyPaidBy)
      await commands.handle(
        invoiceAggregate,
        invoiceId,
        { type: 'RecordInvoicePartialPayment', checkoutSessionId: partlyPaidBy, amountReceived: '100000000' },
        ctx,
      );
    const id = subscriptionIdOfInvoice(invoiceId);
    const subscription = subscriptionFixture({
      id,
      firstBill: { id: invoiceId, kind: 'invoice', dueAt: '2026-01-11T00:00:00.000Z' },
    });
    await commands.handle(subscriptionAggregate, id, { type: 'CreateSubscription', subscription }, ctx);
    await commands.handle(subscriptionAggregate, id, { type: 'EndSubscription', comment: null }, ctx);
  }
  await endedOver('inv-partly', 'cs-partly');
  await endedOver('inv-after', null);
  await runner.runOnce();
  const types = async (invoiceId: string) =>
    (await eventStore.readStream(`invoice-${invoiceId}`))
      .map((e) => e.type)
      .filter((type) => type !== 'InvoiceCreated');
  t.deepEqual(await types('inv-partly'), [
    'InvoiceFinalized',
    'NextRecurringInvoiceScheduled',
    'InvoicePaymentAttemptStarted',
    'InvoicePartialPaymentReceived',
    // Open with the money, it announces no next invoice of a subscription that ended.
    'NextRecurringInvoiceUnscheduled',
  ]);
  t.is(refused.length, 1);
  t.regex(refused[0]!, /VoidInvoice of invoice inv-partly refused: .*partial payment cannot be voided/);
  t.is(
    (await types('inv-after')).at(-1),
    'InvoiceVoided',
    'the next subscription’s first invoice is voided: the refusal held nothing back',
  );
  t.deepEqual(warnings, []);
  t.is(await readStore.collection(workflowInstances(subscriptionBilling.name)).count({ pending: true }), 0);
  // Run again (a later pass): the refused void is not tried again.
  await runner.runOnce();
  t.is(refused.length, 1);
});
