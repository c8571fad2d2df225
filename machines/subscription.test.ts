import test from 'ava';
import { IllegalEventError } from '../src/actors/aggregate.ts';
import { givenWhenThen } from '../src/actors/given-when-then.ts';
import { InvalidStateError, ValidationError } from '../src/shared/errors.ts';
import { addDays, addInterval, BILLING_SCHEDULES, periodEndAfter } from './billing-calendar.ts';
import { subscriptionAggregate } from './subscription.aggregate.ts';
import { UNPAID_AFTER_DAYS, type SubscriptionCommand, type SubscriptionCommandType } from './subscription.decide.ts';
import { evolveSubscription } from './subscription.evolve.ts';
import {
  cancelScheduled,
  canceled,
  created,
  HISTORIES,
  incompleteExpired,
  issued,
  itemFixture,
  markedUnpaid,
  missed,
  paused,
  renewalBill,
  renewalPaid,
  started,
  subscriptionFixture,
  trialFixture,
} from './subscription.fixture.ts';
import { subscriptionMachine } from './subscription.machine.ts';
import {
  SUBSCRIPTION_WEBHOOK_EVENTS,
  type Subscription,
  type SubscriptionBill,
  type SubscriptionEvent,
  type SubscriptionStatus,
} from './subscription.types.ts';

const given = givenWhenThen(subscriptionAggregate);
const NOW = '2026-03-01T00:00:00.000Z';
const subscriptionOf = (history: SubscriptionEvent[]): Subscription => {
  const subscription = given(history).state().context.subscription;
  if (!subscription) throw new Error('no subscription in history');
  return subscription;
};

// ---------------------------------------------------------------------------------------------
// Every (status, command) pair, at NOW (after every due time of the fixtures).

const commandFor = (type: SubscriptionCommandType, history: SubscriptionEvent[]): SubscriptionCommand => {
  switch (type) {
    case 'CreateSubscription':
      return { type, subscription: subscriptionFixture() };
    case 'RecordSubscriptionPayment':
      return { type, invoiceId: subscriptionOf(history).latestInvoice?.id ?? 'none' };
    case 'RecordFirstBillDiscount':
      return {
        type,
        invoiceId: subscriptionOf(history).latestInvoice?.id ?? 'none',
        promotionCodeId: 'promo-1',
        amountDiscount: '100000000',
      };
    case 'RecordFirstBillLatePayment':
      return {
        type,
        invoiceId: subscriptionOf(history).latestInvoice?.id ?? 'none',
        transferId: 'tr-late',
        amount: '250000000',
      };
    case 'ExpireFirstPayment':
      return { type };
    case 'RenewSubscription':
      return { type, invoiceId: 'inv-new' };
    case 'RecordRenewalInvoiceDeleted':
    case 'RecordRenewalInvoiceVoided':
    case 'RecordRenewalInvoiceNotFinalized':
      return { type, invoiceId: subscriptionOf(history).latestInvoice?.id ?? 'none' };
    case 'RecordRenewalInvoiceFinalized':
      return {
        type,
        invoiceId: subscriptionOf(history).latestInvoice?.id ?? 'none',
        dueAt: '2026-03-08T00:00:00.000Z',
      };
    case 'MarkRenewalPaymentMissed':
      return { type };
    case 'MarkSubscriptionUnpaid':
      return { type };
    case 'CancelSubscription':
      return { type, comment: 'bye' };
    case 'EndSubscription':
      return { type, comment: 'bye' };
    case 'ResumeSubscription':
      return { type };
    case 'PauseSubscription':
      return { type };
  }
};

const COMMANDS: SubscriptionCommandType[] = [
  'CreateSubscription',
  'RecordFirstBillDiscount',
  'RecordSubscriptionPayment',
  'RecordFirstBillLatePayment',
  'ExpireFirstPayment',
  'RenewSubscription',
  'RecordRenewalInvoiceDeleted',
  'RecordRenewalInvoiceVoided',
  'RecordRenewalInvoiceNotFinalized',
  'RecordRenewalInvoiceFinalized',
  'MarkRenewalPaymentMissed',
  'MarkSubscriptionUnpaid',
  'CancelSubscription',
  'EndSubscription',
  'ResumeSubscription',
  'PauseSubscription',
];

const ended: SubscriptionEvent = {
  type: 'SubscriptionCanceled',
  data: { atPeriodEnd: false, comment: 'bye', at: NOW },
};
const scheduled = (cancelAt: string): SubscriptionEvent => ({
  type: 'SubscriptionCancelScheduled',
  data: { cancelAt, comment: 'bye', at: NOW },
});
const discounted: SubscriptionEvent = {
  type: 'FirstBillDiscounted',
  data: { invoiceId: 'cs-1', promotionCodeId: 'promo-1', amountDiscount: '100000000', amountDue: '900000000', at: NOW },
};
const lateToFirstBill: SubscriptionEvent = {
  type: 'FirstBillLatePaymentReceived',
  data: { invoiceId: 'cs-1', transferId: 'tr-late', amount: '250000000', at: NOW },
};
const renewal = (periodStart: string, periodEnd: string): SubscriptionEvent => ({
  type: 'RenewalInvoiceIssued',
  data: {
    invoice: renewalBill('inv-new', periodStart, periodEnd, NOW, '2026-03-04T00:00:00.000Z'),
    at: NOW,
    dueIsInstant: true,
  },
});

type Outcome = SubscriptionEvent[] | 'refused';
const TABLE: Record<SubscriptionStatus, Record<SubscriptionCommandType, Outcome>> = {
  incomplete: {
    CreateSubscription: [],
    RecordFirstBillDiscount: [discounted],
    RecordFirstBillLatePayment: [],
    RecordSubscriptionPayment: [{ type: 'SubscriptionStarted', data: { invoiceId: 'cs-1', at: NOW } }],
    ExpireFirstPayment: [{ type: 'SubscriptionIncompleteExpired', data: { invoiceId: 'cs-1', at: NOW } }],
    RenewSubscription: [],
    RecordRenewalInvoiceDeleted: [],
    RecordRenewalInvoiceVoided: [],
    // No renewal of theirs is open (nor a draft): see the tests of a renewal Weir could not finalize.
    RecordRenewalInvoiceNotFinalized: [],
    RecordRenewalInvoiceFinalized: [],
    MarkRenewalPaymentMissed: [],
    MarkSubscriptionUnpaid: [],
    CancelSubscription: 'refused',
    EndSubscription: [ended],
    ResumeSubscription: 'refused',
    PauseSubscription: 'refused',
  },
  incomplete_expired: {
    CreateSubscription: [],
    RecordFirstBillDiscount: [],
    RecordFirstBillLatePayment: [lateToFirstBill],
    RecordSubscriptionPayment: [],
    ExpireFirstPayment: [],
    RenewSubscription: [],
    RecordRenewalInvoiceDeleted: [],
    RecordRenewalInvoiceVoided: [],
    // No renewal of theirs is open (nor a draft): see the tests of a renewal Weir could not finalize.
    RecordRenewalInvoiceNotFinalized: [],
    RecordRenewalInvoiceFinalized: [],
    MarkRenewalPaymentMissed: [],
    MarkSubscriptionUnpaid: [],
    CancelSubscription: 'refused',
    EndSubscription: 'refused',
    ResumeSubscription: 'refused',
    PauseSubscription: 'refused',
  },
  trialing: {
    CreateSubscription: [],
    RecordFirstBillDiscount: [],
    RecordFirstBillLatePayment: [],
    RecordSubscriptionPayment: [],
    ExpireFirstPayment: [],
    // NOW is past the first period after the trial: the period containing NOW is billed.
    RenewSubscription: [renewal('2026-02-15T00:00:00.000Z', '2026-03-15T00:00:00.000Z')],
    RecordRenewalInvoiceDeleted: [],
    RecordRenewalInvoiceVoided: [],
    // No renewal of theirs is open (nor a draft): see the tests of a renewal Weir could not finalize.
    RecordRenewalInvoiceNotFinalized: [],
    RecordRenewalInvoiceFinalized: [],
    MarkRenewalPaymentMissed: [],
    MarkSubscriptionUnpaid: [],
    // Its period ended before NOW (the renewal timer is due): to end now, not at that past moment.
    CancelSubscription: [scheduled(NOW)],
    EndSubscription: [ended],
    ResumeSubscription: [],
    PauseSubscription: 'refused',
  },
  active: {
    CreateSubscription: [],
    RecordFirstBillDiscount: [discounted],
    RecordFirstBillLatePayment: [],
    RecordSubscriptionPayment: [],
    ExpireFirstPayment: [],
    // NOW is the end of February, the period after the current one: March is billed, February is not billed late.
    RenewSubscription: [renewal('2026-03-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z')],
    RecordRenewalInvoiceDeleted: [],
    RecordRenewalInvoiceVoided: [],
    // No renewal of theirs is open (nor a draft): see the tests of a renewal Weir could not finalize.
    RecordRenewalInvoiceNotFinalized: [],
    RecordRenewalInvoiceFinalized: [],
    MarkRenewalPaymentMissed: [],
    MarkSubscriptionUnpaid: [],
    CancelSubscription: [scheduled(NOW)],
    EndSubscription: [ended],
    ResumeSubscription: [],
    PauseSubscription: [{ type: 'SubscriptionPaused', data: { at: NOW } }],
  },
  past_due: {
    CreateSubscription: [],
    RecordFirstBillDiscount: [],
    RecordFirstBillLatePayment: [],
    RecordSubscriptionPayment: [{ type: 'RenewalPaid', data: { invoiceId: 'inv-2', at: NOW } }],
    ExpireFirstPayment: [],
    RenewSubscription: [],
    RecordRenewalInvoiceDeleted: [{ type: 'RenewalInvoiceDeleted', data: { invoiceId: 'inv-2', at: NOW } }],
    RecordRenewalInvoiceVoided: [{ type: 'RenewalInvoiceVoided', data: { invoiceId: 'inv-2', at: NOW } }],
    // No renewal of theirs is open (nor a draft): see the tests of a renewal Weir could not finalize.
    RecordRenewalInvoiceNotFinalized: [],
    // Its bill lapsed while never sent (an older Weir): the billing workflow reports only a finalize of such a draft.
    RecordRenewalInvoiceFinalized: [
      { type: 'RenewalInvoiceFinalized', data: { invoiceId: 'inv-2', dueAt: '2026-03-08T00:00:00.000Z', at: NOW } },
    ],
    MarkRenewalPaymentMissed: [],
    MarkSubscriptionUnpaid: [{ type: 'SubscriptionMarkedUnpaid', data: { at: NOW } }],
    CancelSubscription: [scheduled('2026-03-01T00:00:00.000Z')],
    EndSubscription: [ended],
    ResumeSubscription: [],
    PauseSubscription: 'refused',
  },
  unpaid: {
    CreateSubscription: [],
    RecordFirstBillDiscount: [],
    RecordFirstBillLatePayment: [],
    RecordSubscriptionPayment: [{ type: 'RenewalPaid', data: { invoiceId: 'inv-2', at: NOW } }],
    ExpireFirstPayment: [],
    RenewSubscription: [],
    RecordRenewalInvoiceDeleted: [{ type: 'RenewalInvoiceDeleted', data: { invoiceId: 'inv-2', at: NOW } }],
    RecordRenewalInvoiceVoided: [{ type: 'RenewalInvoiceVoided', data: { invoiceId: 'inv-2', at: NOW } }],
    // No renewal of theirs is open (nor a draft): see the tests of a renewal Weir could not finalize.
    RecordRenewalInvoiceNotFinalized: [],
    // Its bill lapsed while never sent (an older Weir): the billing workflow reports only a finalize of such a draft.
    RecordRenewalInvoiceFinalized: [
      { type: 'RenewalInvoiceFinalized', data: { invoiceId: 'inv-2', dueAt: '2026-03-08T00:00:00.000Z', at: NOW } },
    ],
    MarkRenewalPaymentMissed: [],
    MarkSubscriptionUnpaid: [],
    CancelSubscription: [scheduled('2026-03-01T00:00:00.000Z')],
    EndSubscription: [ended],
    ResumeSubscription: [],
    PauseSubscription: 'refused',
  },
  paused: {
    CreateSubscription: [],
    RecordFirstBillDiscount: [discounted],
    RecordFirstBillLatePayment: [],
    RecordSubscriptionPayment: [],
    ExpireFirstPayment: [],
    RenewSubscription: [],
    RecordRenewalInvoiceDeleted: [],
    RecordRenewalInvoiceVoided: [],
    // No renewal of theirs is open (nor a draft): see the tests of a renewal Weir could not finalize.
    RecordRenewalInvoiceNotFinalized: [],
    RecordRenewalInvoiceFinalized: [],
    MarkRenewalPaymentMissed: [],
    MarkSubscriptionUnpaid: [],
    CancelSubscription: 'refused',
    EndSubscription: [ended],
    // Paused past its period end: the calendar restarts at the resume.
    ResumeSubscription: [
      { type: 'SubscriptionResumed', data: { currentPeriodEnd: NOW, billingCycleAnchor: NOW, at: NOW } },
    ],
    PauseSubscription: [],
  },
  canceled: {
    CreateSubscription: [],
    RecordFirstBillDiscount: [],
    RecordFirstBillLatePayment: [],
    RecordSubscriptionPayment: [],
    ExpireFirstPayment: [],
    RenewSubscription: [],
    RecordRenewalInvoiceDeleted: [],
    RecordRenewalInvoiceVoided: [],
    // No renewal of theirs is open (nor a draft): see the tests of a renewal Weir could not finalize.
    RecordRenewalInvoiceNotFinalized: [],
    RecordRenewalInvoiceFinalized: [],
    MarkRenewalPaymentMissed: [],
    MarkSubscriptionUnpaid: [],
    CancelSubscription: [],
    EndSubscription: [],
    ResumeSubscription: 'refused',
    PauseSubscription: 'refused',
  },
};

// The state the machine reaches after each allowed event list, per status (checked below).
const NEXT: Partial<Record<SubscriptionEvent['type'], SubscriptionStatus>> = {
  SubscriptionStarted: 'active',
  SubscriptionIncompleteExpired: 'incomplete_expired',
  SubscriptionCanceled: 'canceled',
  SubscriptionPaused: 'paused',
  SubscriptionResumed: 'active',
  SubscriptionMarkedUnpaid: 'unpaid',
  RenewalPaid: 'active',
  RenewalInvoiceDeleted: 'active',
  RenewalInvoiceVoided: 'active',
  RenewalInvoiceFinalized: 'active',
};

for (const [status, row] of Object.entries(TABLE) as [SubscriptionStatus, Record<SubscriptionCommandType, Outcome>][]) {
  for (const type of COMMANDS) {
    const outcome = row[type];
    const title =
      outcome === 'refused'
        ? 'refused naming the status'
        : outcome.length === 0
          ? 'nothing'
          : outcome.map((e) => e.type).join(', ');
    test(`given ${/^[aeiou]/.test(status) ? 'an' : 'a'} ${status} subscription, when ${type}, then ${title}`, (t) => {
      const history = HISTORIES[status];
      t.is(given(history).state().value, status);
      const command = commandFor(type, history);
      if (outcome === 'refused') {
        const error = t.throws(() => given(history).when(command, NOW), { instanceOf: InvalidStateError });
        t.true(error.message.includes(`subscription is ${status};`), error.message);
        return;
      }
      const events = given(history).when(command, NOW);
      t.deepEqual(events, outcome);
      // The machine accepts what the decider produced, and lands where expected.
      const after = given([...history, ...events]).state();
      const last = events.at(-1);
      t.is(after.value, last ? (NEXT[last.type] ?? status) : status);
    });
  }
}

test('every status has a history, and the table covers every command', (t) => {
  t.deepEqual(Object.keys(TABLE).sort(), Object.keys(HISTORIES).sort());
  for (const row of Object.values(TABLE)) t.deepEqual(Object.keys(row).sort(), [...COMMANDS].sort());
});

test('a first bill is discounted once, never below nothing, and only while its checkout session is the latest bill', (t) => {
  const discount = { type: 'RecordFirstBillDiscount', invoiceId: 'cs-1', promotionCodeId: 'promo-1' } as const;
  t.deepEqual(given([created(), discounted]).when({ ...discount, amountDiscount: '100000000' }, NOW), []);
  const [all] = given([created()]).when({ ...discount, amountDiscount: '2000000000' }, NOW);
  t.like(all, { type: 'FirstBillDiscounted', data: { amountDiscount: '2000000000', amountDue: '0' } });
  const bill = subscriptionOf([created(), discounted]).latestInvoice;
  t.like(bill, { id: 'cs-1', amountDue: '900000000', amountDiscount: '100000000', status: 'open' });
  t.like(subscriptionOf([created(), discounted, started()]).latestInvoice, { amountDue: '900000000', status: 'paid' });
  // A renewal bills the period in full.
  t.like(subscriptionOf([created(), discounted, started(), issued()]).latestInvoice, { amountDue: '1000000000' });
  t.is(subscriptionOf([created(), discounted, started(), issued()]).latestInvoice?.amountDiscount, undefined);
  t.deepEqual(given([created(), started(), issued()]).when({ ...discount, amountDiscount: '1' }, NOW), []);
  t.throws(() => given([created()]).when({ ...discount, amountDiscount: '-1' }, NOW), { instanceOf: ValidationError });
});

// ---------------------------------------------------------------------------------------------
// Creation

test('given nothing, when created, then SubscriptionCreated and the subscription is incomplete', (t) => {
  const subscription = subscriptionFixture();
  const events = given([]).when({ type: 'CreateSubscription', subscription });
  t.deepEqual(events, [created(subscription)]);
  const state = given(events).state();
  t.is(state.value, 'incomplete');
  t.like(state.context.subscription, {
    status: 'incomplete',
    amountTotal: '1000000000',
    currentPeriodStart: '2026-01-01T00:00:00.000Z',
    currentPeriodEnd: '2026-02-01T00:00:00.000Z',
    checkoutSessionId: 'cs-1',
    latestInvoiceId: null,
    cancelAtPeriodEnd: false,
  });
});

test('given nothing, when a trial subscription is created, then it is trialing until the trial end', (t) => {
  const events = given([]).when({ type: 'CreateSubscription', subscription: trialFixture() });
  const state = given(events).state();
  t.is(state.value, 'trialing');
  t.like(state.context.subscription, {
    trialStart: '2026-01-01T00:00:00.000Z',
    trialEnd: '2026-01-15T00:00:00.000Z',
    currentPeriodEnd: '2026-01-15T00:00:00.000Z',
    latestInvoice: null,
  });
});

test('when a subscription is created in another status, then a validation error', (t) => {
  t.throws(
    () => given([]).when({ type: 'CreateSubscription', subscription: { ...subscriptionFixture(), status: 'active' } }),
    { instanceOf: ValidationError },
  );
});

test('a new subscription sums its items and refuses items that cannot bill together', (t) => {
  const two = subscriptionFixture({
    items: [itemFixture(), itemFixture({ priceId: 'price-2', quantity: 3, unitAmount: '250000000' })],
  });
  t.is(two.amountTotal, '1750000000');
  t.is(two.latestInvoice?.amountDue, '1750000000');
  t.throws(() => subscriptionFixture({ items: [] }), { instanceOf: ValidationError });
  t.throws(() => subscriptionFixture({ items: [itemFixture(), itemFixture({ currency: 'usdt' })] }), {
    instanceOf: ValidationError,
  });
  t.throws(() => subscriptionFixture({ items: [itemFixture(), itemFixture({ interval: 'year' })] }), {
    instanceOf: ValidationError,
  });
  t.throws(() => subscriptionFixture({ items: [itemFixture({ quantity: 0 })] }), { instanceOf: ValidationError });
  t.throws(() => subscriptionFixture({ items: [itemFixture({ unitAmount: '1.5' })] }), { instanceOf: ValidationError });
  t.throws(() => subscriptionFixture({ firstBill: null }), { instanceOf: ValidationError });
  t.throws(() => subscriptionFixture({ trialEnd: '2025-12-31T00:00:00.000Z', firstBill: null }), {
    instanceOf: ValidationError,
  });
});

test('a subscription created by a recurring invoice names it as its latest invoice', (t) => {
  const s = subscriptionFixture({ firstBill: { id: 'inv-1', kind: 'invoice', dueAt: '2026-01-08T00:00:00.000Z' } });
  t.is(s.latestInvoiceId, 'inv-1');
  t.is(s.checkoutSessionId, null);
  t.deepEqual(given([created(s)]).when({ type: 'ExpireFirstPayment' }, '2026-01-07T23:59:59.999Z'), []);
  t.deepEqual(given([created(s)]).when({ type: 'RecordSubscriptionPayment', invoiceId: 'inv-1' }, NOW), [
    { type: 'SubscriptionStarted', data: { invoiceId: 'inv-1', at: NOW } },
  ]);
});

test('given no subscription, when any other command arrives, then refused as missing', (t) => {
  t.throws(() => given([]).when({ type: 'RenewSubscription', invoiceId: 'x' }), {
    instanceOf: InvalidStateError,
    message: /does not exist/,
  });
});

// ---------------------------------------------------------------------------------------------
// First payment

test('given an incomplete subscription, when its first payment arrives, then it starts and the bill is paid', (t) => {
  const events = given([created()]).when(
    { type: 'RecordSubscriptionPayment', invoiceId: 'cs-1' },
    '2026-01-01T00:10:00.000Z',
  );
  t.deepEqual(events, [started()]);
  const s = subscriptionOf([created(), ...events]);
  t.is(s.status, 'active');
  t.like(s.latestInvoice, { status: 'paid', paidAt: '2026-01-01T00:10:00.000Z' });
  t.is(SUBSCRIPTION_WEBHOOK_EVENTS[events[0]!.type], 'customer.subscription.started');
});

test('when a payment names another bill, or repeats, then nothing', (t) => {
  t.deepEqual(given([created()]).when({ type: 'RecordSubscriptionPayment', invoiceId: 'cs-other' }), []);
  t.deepEqual(given([created(), started()]).when({ type: 'RecordSubscriptionPayment', invoiceId: 'cs-1' }), []);
  t.deepEqual(
    given([created(), started(), issued(), renewalPaid()]).when({
      type: 'RecordSubscriptionPayment',
      invoiceId: 'inv-2',
    }),
    [],
  );
});

test('given an incomplete subscription, when the first-payment timer fires early, then nothing; at the due time it expires', (t) => {
  t.deepEqual(given([created()]).when({ type: 'ExpireFirstPayment' }, '2026-01-01T00:59:59.999Z'), []);
  const events = given([created()]).when({ type: 'ExpireFirstPayment' }, '2026-01-01T01:00:00.000Z');
  t.deepEqual(events, [incompleteExpired()]);
  const s = subscriptionOf([created(), ...events]);
  t.is(s.status, 'incomplete_expired');
  t.is(s.endedAt, '2026-01-01T01:00:00.000Z');
  t.is(s.latestInvoice?.status, 'expired');
  t.deepEqual(given([created(), ...events]).when({ type: 'ExpireFirstPayment' }, NOW), []);
});

test('given an incomplete subscription whose first checkout session received part of its amount, when the expiry fires at the due time with that part, then it expires with the part on its bill, owed back; nothing before; a first invoice keeps its part', (t) => {
  const part = { type: 'ExpireFirstPayment', amountReceived: '100000000' } as const;
  t.deepEqual(given([created()]).when(part, '2026-01-01T00:59:59.999Z'), []);
  const events = given([created()]).when(part, '2026-01-01T01:00:00.000Z');
  t.deepEqual(events, [
    {
      type: 'SubscriptionIncompleteExpired',
      data: { invoiceId: 'cs-1', amountToRefund: '100000000', at: '2026-01-01T01:00:00.000Z' },
    },
  ]);
  const s = subscriptionOf([created(), ...events]);
  t.is(s.status, 'incomplete_expired');
  t.like(s.latestInvoice, { status: 'expired', amountToRefund: '100000000' });
  t.deepEqual(given([created()]).when({ type: 'ExpireFirstPayment', amountReceived: '0' }, NOW), [
    incompleteExpired(NOW),
  ]);
  t.throws(() => given([created()]).when({ type: 'ExpireFirstPayment', amountReceived: '-1' }, NOW), {
    instanceOf: ValidationError,
  });
});

// ---------------------------------------------------------------------------------------------
// Trial

test('given a trial, at its end the first invoice is issued; paid it starts, missed it is past due', (t) => {
  const trial = [created(trialFixture())];
  t.deepEqual(given(trial).when({ type: 'RenewSubscription', invoiceId: 'inv-1' }, '2026-01-14T23:59:59.999Z'), []);
  const issuedAtEnd = given(trial).when({ type: 'RenewSubscription', invoiceId: 'inv-1' }, '2026-01-15T00:00:00.000Z');
  t.deepEqual(issuedAtEnd, [issued(renewalBill('inv-1', '2026-01-15T00:00:00.000Z', '2026-02-15T00:00:00.000Z'))]);
  const history = [...trial, ...issuedAtEnd];
  t.is(given(history).state().value, 'trialing');
  t.deepEqual(
    given(history).when({ type: 'RecordSubscriptionPayment', invoiceId: 'inv-1' }, '2026-01-16T00:00:00.000Z'),
    [started('inv-1', '2026-01-16T00:00:00.000Z')],
  );
  // Issued at midnight, due 3 days later at midnight: missed from that instant, not a day later.
  t.deepEqual(given(history).when({ type: 'MarkRenewalPaymentMissed' }, '2026-01-17T23:59:59.999Z'), []);
  const missedEvents = given(history).when({ type: 'MarkRenewalPaymentMissed' }, '2026-01-18T00:00:00.000Z');
  t.deepEqual(missedEvents, [missed('inv-1', '2026-01-18T00:00:00.000Z')]);
  t.is(given([...history, ...missedEvents]).state().value, 'past_due');
});

test('given a trial canceled at period end, when the trial ends, then it is canceled with no invoice', (t) => {
  const history = [created(trialFixture()), cancelScheduled('2026-01-10T00:00:00.000Z', '2026-01-15T00:00:00.000Z')];
  const events = given(history).when({ type: 'RenewSubscription', invoiceId: 'inv-1' }, '2026-01-15T00:00:00.000Z');
  t.deepEqual(events, [canceled('2026-01-15T00:00:00.000Z', true)]);
});

// ---------------------------------------------------------------------------------------------
// Renewals

test('given an active subscription, when the renewal timer fires early, then nothing; on time the next period begins; twice changes nothing', (t) => {
  const history = [created(), started()];
  t.deepEqual(given(history).when({ type: 'RenewSubscription', invoiceId: 'inv-2' }, '2026-01-31T23:59:59.999Z'), []);
  const events = given(history).when({ type: 'RenewSubscription', invoiceId: 'inv-2' }, '2026-02-01T00:00:00.000Z');
  t.deepEqual(events, [issued()]);
  const s = subscriptionOf([...history, ...events]);
  t.like(s, {
    status: 'active',
    currentPeriodStart: '2026-02-01T00:00:00.000Z',
    currentPeriodEnd: '2026-03-01T00:00:00.000Z',
    latestInvoiceId: 'inv-2',
  });
  t.deepEqual(
    given([...history, ...events]).when({ type: 'RenewSubscription', invoiceId: 'inv-3' }, '2026-02-01T00:00:01.000Z'),
    [],
  );
});

test('given an open renewal invoice, when paid in time, then RenewalPaid and it stays active', (t) => {
  const history = [created(), started(), issued()];
  const events = given(history).when(
    { type: 'RecordSubscriptionPayment', invoiceId: 'inv-2' },
    '2026-02-02T00:00:00.000Z',
  );
  t.deepEqual(events, [renewalPaid()]);
  t.is(subscriptionOf([...history, ...events]).latestInvoice?.status, 'paid');
  t.deepEqual(
    given([...history, ...events]).when({ type: 'MarkRenewalPaymentMissed' }, '2026-02-04T00:00:00.000Z'),
    [],
  );
});

test('given an open renewal invoice, when the due timer fires early nothing; once the invoice is overdue past_due', (t) => {
  // Renewed at midnight, due at midnight February 4: missed from that instant, as a renewal at any other time of day.
  const history = [created(), started(), issued()];
  t.deepEqual(given(history).when({ type: 'MarkRenewalPaymentMissed' }, '2026-02-03T23:59:59.999Z'), []);
  const events = given(history).when({ type: 'MarkRenewalPaymentMissed' }, '2026-02-04T00:00:00.000Z');
  t.deepEqual(events, [missed('inv-2', '2026-02-04T00:00:00.000Z')]);
  const s = subscriptionOf([...history, ...events]);
  t.like(s, { status: 'past_due', pastDueSince: '2026-02-04T00:00:00.000Z' });
  t.is(SUBSCRIPTION_WEBHOOK_EVENTS.RenewalPaymentMissed, 'customer.subscription.past_due');
  t.deepEqual(given([...history, ...events]).when({ type: 'MarkRenewalPaymentMissed' }, NOW), []);
  // Due at a time of day (renewed at 10:00): missed from that instant.
  const atTen = [
    created(),
    started(),
    issued(
      renewalBill(
        'inv-2',
        '2026-02-01T00:00:00.000Z',
        '2026-03-01T00:00:00.000Z',
        '2026-02-01T10:00:00.000Z',
        '2026-02-04T10:00:00.000Z',
      ),
    ),
  ];
  t.deepEqual(given(atTen).when({ type: 'MarkRenewalPaymentMissed' }, '2026-02-04T09:59:59.999Z'), []);
  t.deepEqual(given(atTen).when({ type: 'MarkRenewalPaymentMissed' }, '2026-02-04T10:00:00.000Z'), [
    missed('inv-2', '2026-02-04T10:00:00.000Z'),
  ]);
});

test(`given a past_due subscription, it becomes unpaid exactly ${UNPAID_AFTER_DAYS} days later, not before; once only`, (t) => {
  const history = HISTORIES.past_due;
  t.deepEqual(given(history).when({ type: 'MarkSubscriptionUnpaid' }, '2026-02-10T23:59:59.999Z'), []);
  const events = given(history).when({ type: 'MarkSubscriptionUnpaid' }, '2026-02-11T00:00:00.000Z');
  t.deepEqual(events, [markedUnpaid()]);
  t.is(given([...history, ...events]).state().value, 'unpaid');
  t.deepEqual(given([...history, ...events]).when({ type: 'MarkSubscriptionUnpaid' }, NOW), []);
});

test('given a past_due or unpaid subscription, when the late payment arrives, then active again with nothing overdue', (t) => {
  for (const history of [HISTORIES.past_due, HISTORIES.unpaid]) {
    const events = given(history).when(
      { type: 'RecordSubscriptionPayment', invoiceId: 'inv-2' },
      '2026-02-20T00:00:00.000Z',
    );
    t.deepEqual(events, [renewalPaid('inv-2', '2026-02-20T00:00:00.000Z')]);
    t.like(subscriptionOf([...history, ...events]), {
      status: 'active',
      pastDueSince: null,
      latestInvoice: { status: 'paid' },
    });
  }
});

/** `history` then `command` at `at`: the history with the events it produced. */
const step = (history: SubscriptionEvent[], command: SubscriptionCommand, at: string): SubscriptionEvent[] => [
  ...history,
  ...given(history).when(command, at),
];
const issuedBills = (history: SubscriptionEvent[]) =>
  history.flatMap((e) => (e.type === 'RenewalInvoiceIssued' ? [e.data.invoice] : []));

test('given Net-60 terms on a monthly plan, each period is billed at its end while the earlier bill is open within its terms: March is billed (it was never billed: no renewal while February was open, and April came after its payment)', (t) => {
  const net60 = subscriptionFixture({ daysUntilDue: 60 });
  let history = [created(net60), started()];
  history = step(history, { type: 'RenewSubscription', invoiceId: 'inv-2' }, '2026-02-01T00:00:00.000Z');
  t.like(subscriptionOf(history).latestInvoice, { id: 'inv-2', dueAt: '2026-04-02T00:00:00.000Z' });
  // March 1: February's bill is open, due April 2: March is billed all the same.
  history = step(history, { type: 'RenewSubscription', invoiceId: 'inv-3' }, '2026-03-01T00:00:00.000Z');
  t.like(subscriptionOf(history), {
    status: 'active',
    latestInvoice: { id: 'inv-3', periodStart: '2026-03-01T00:00:00.000Z', periodEnd: '2026-04-01T00:00:00.000Z' },
    earlierBills: [{ id: 'inv-2', status: 'open' }],
  });
  // February paid on time, on April 1, then April billed at its end.
  const paid = given(history).when(
    { type: 'RecordSubscriptionPayment', invoiceId: 'inv-2' },
    '2026-04-01T00:00:00.000Z',
  );
  t.deepEqual(paid, [renewalPaid('inv-2', '2026-04-01T00:00:00.000Z')]);
  history = [...history, ...paid];
  t.like(subscriptionOf(history), { status: 'active', latestInvoice: { id: 'inv-3', status: 'open' } });
  t.is(subscriptionOf(history).earlierBills, undefined, 'a settled earlier bill is followed no more');
  history = step(history, { type: 'RenewSubscription', invoiceId: 'inv-4' }, '2026-04-01T00:00:00.000Z');
  t.deepEqual(
    issuedBills(history).map((bill) => [bill.id, bill.periodStart, bill.periodEnd]),
    [
      ['inv-2', '2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z'],
      ['inv-3', '2026-03-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z'],
      ['inv-4', '2026-04-01T00:00:00.000Z', '2026-05-01T00:00:00.000Z'],
    ],
  );
  // March's bill, paid later, is recorded though it is no longer the latest.
  t.deepEqual(
    given(history).when({ type: 'RecordSubscriptionPayment', invoiceId: 'inv-3' }, '2026-04-20T00:00:00.000Z'),
    [renewalPaid('inv-3', '2026-04-20T00:00:00.000Z')],
  );
});

test('given terms of 35 days on a monthly plan, each bill paid on its due day, over a year: every period is billed at its own end, contiguous, none skipped nor drifting', (t) => {
  let history = [created(subscriptionFixture({ daysUntilDue: 35 })), started()];
  let n = 2;
  for (
    let day = Date.parse('2026-02-01T00:00:00.000Z');
    day <= Date.parse('2027-01-01T00:00:00.000Z');
    day += 86_400_000
  ) {
    const at = new Date(day).toISOString();
    t.deepEqual(given(history).when({ type: 'MarkRenewalPaymentMissed' }, at), [], `nothing lapses by ${at}`);
    const renewed = given(history).when({ type: 'RenewSubscription', invoiceId: `inv-${n}` }, at);
    if (renewed.length > 0) n += 1;
    history = [...history, ...renewed];
    const s = subscriptionOf(history);
    // Each bill is paid at noon of its due day, before it lapses (at its due instant, midnight after).
    for (const bill of [...(s.earlierBills ?? []), ...(s.latestInvoice ? [s.latestInvoice] : [])])
      if (bill.status === 'open' && Date.parse(bill.dueAt) - day <= 86_400_000)
        history = step(history, { type: 'RecordSubscriptionPayment', invoiceId: bill.id }, addDays(at, 0.5));
  }
  const bills = issuedBills(history);
  t.is(bills.length, 12);
  for (const [i, bill] of bills.entries()) {
    t.is(bill.periodStart, addInterval('2026-01-01T00:00:00.000Z', 'month', i + 1));
    t.is(bill.periodEnd, addInterval('2026-01-01T00:00:00.000Z', 'month', i + 2));
    t.is(bill.issuedAt, bill.periodStart, 'issued at its period start, not once the earlier bill was paid');
  }
  t.is(subscriptionOf(history).status, 'active');
});

test('given an earlier bill open beside the latest: the earliest to lapse is missed first, a payment of another one keeps the subscription past due, and no period is billed while it is; once paid, it is active again', (t) => {
  const net40 = subscriptionFixture({ daysUntilDue: 40 });
  let history = [created(net40), started()];
  history = step(history, { type: 'RenewSubscription', invoiceId: 'inv-2' }, '2026-02-01T00:00:00.000Z');
  history = step(history, { type: 'RenewSubscription', invoiceId: 'inv-3' }, '2026-03-01T00:00:00.000Z');
  // February's bill lapses on March 13, before March's (April 10).
  t.deepEqual(given(history).when({ type: 'MarkRenewalPaymentMissed' }, '2026-03-12T23:59:59.999Z'), []);
  history = step(history, { type: 'MarkRenewalPaymentMissed' }, '2026-03-13T00:00:00.000Z');
  t.deepEqual(history.at(-1), missed('inv-2', '2026-03-13T00:00:00.000Z'));
  t.like(subscriptionOf(history), { status: 'past_due', earlierBills: [{ id: 'inv-2', status: 'missed' }] });
  // A renewal whose earlier bill has lapsed waits for its past-due timer.
  const lapsedAtRenewal = history.slice(0, -1);
  t.deepEqual(
    given(lapsedAtRenewal).when({ type: 'RenewSubscription', invoiceId: 'inv-4' }, '2026-04-01T00:00:00.000Z'),
    [],
  );
  history = step(history, { type: 'RecordSubscriptionPayment', invoiceId: 'inv-3' }, '2026-03-20T00:00:00.000Z');
  t.is(given(history).state().value, 'past_due');
  t.like(subscriptionOf(history), { status: 'past_due', pastDueSince: '2026-03-13T00:00:00.000Z' });
  t.deepEqual(given(history).when({ type: 'RenewSubscription', invoiceId: 'inv-4' }, '2026-04-01T00:00:00.000Z'), []);
  history = step(history, { type: 'RecordSubscriptionPayment', invoiceId: 'inv-2' }, '2026-03-25T00:00:00.000Z');
  t.is(given(history).state().value, 'active');
  t.like(subscriptionOf(history), {
    status: 'active',
    pastDueSince: null,
    latestInvoice: { id: 'inv-3', status: 'paid' },
  });
  t.is(subscriptionOf(history).earlierBills, undefined);
});

test('given a past due subscription over an earlier bill, voiding the later open one keeps it past due; voiding the overdue one makes it active', (t) => {
  let history = [created(subscriptionFixture({ daysUntilDue: 40 })), started()];
  history = step(history, { type: 'RenewSubscription', invoiceId: 'inv-2' }, '2026-02-01T00:00:00.000Z');
  history = step(history, { type: 'RenewSubscription', invoiceId: 'inv-3' }, '2026-03-01T00:00:00.000Z');
  history = step(history, { type: 'MarkRenewalPaymentMissed' }, '2026-03-13T00:00:00.000Z');
  history = step(history, { type: 'RecordRenewalInvoiceVoided', invoiceId: 'inv-3' }, '2026-03-14T00:00:00.000Z');
  t.is(given(history).state().value, 'past_due');
  history = step(history, { type: 'RecordRenewalInvoiceVoided', invoiceId: 'inv-2' }, '2026-03-15T00:00:00.000Z');
  t.is(given(history).state().value, 'active');
  t.like(subscriptionOf(history), { status: 'active', latestInvoice: { id: 'inv-3', status: 'void' } });
});

test('given a trialing subscription whose first bill went past due, when that bill is paid, then it starts (SubscriptionStarted and its webhook, not RenewalPaid); a later payment renews it', (t) => {
  const february = renewalBill('inv-2', '2026-01-15T00:00:00.000Z', '2026-02-15T00:00:00.000Z');
  const pastDue = [created(trialFixture()), issued(february), missed('inv-2', '2026-01-18T00:00:00.000Z')];
  t.is(given(pastDue).state().value, 'past_due');
  const paid = given(pastDue).when(
    { type: 'RecordSubscriptionPayment', invoiceId: 'inv-2' },
    '2026-01-20T00:00:00.000Z',
  );
  t.deepEqual(paid, [started('inv-2', '2026-01-20T00:00:00.000Z')]);
  t.is(SUBSCRIPTION_WEBHOOK_EVENTS.SubscriptionStarted, 'customer.subscription.started');
  const history = [...pastDue, ...paid];
  t.is(given(history).state().value, 'active');
  t.like(subscriptionOf(history), { status: 'active', pastDueSince: null, latestInvoice: { status: 'paid' } });
  t.is(subscriptionOf(history).notStarted, undefined);
  // Unpaid first, then paid: it starts all the same.
  const unpaid = [...pastDue, markedUnpaid('2026-01-25T00:00:00.000Z')];
  t.deepEqual(
    given(unpaid).when({ type: 'RecordSubscriptionPayment', invoiceId: 'inv-2' }, '2026-01-26T00:00:00.000Z'),
    [started('inv-2', '2026-01-26T00:00:00.000Z')],
  );
  // Once started, the next bill is a renewal.
  const renewed = step(history, { type: 'RenewSubscription', invoiceId: 'inv-3' }, '2026-02-15T00:00:00.000Z');
  t.deepEqual(
    given(renewed).when({ type: 'RecordSubscriptionPayment', invoiceId: 'inv-3' }, '2026-02-16T00:00:00.000Z'),
    [renewalPaid('inv-3', '2026-02-16T00:00:00.000Z')],
  );
});

// ---------------------------------------------------------------------------------------------
// Cancel, resume, end, pause

test('given an active subscription canceled at period end, it runs to the period end and is then canceled', (t) => {
  const history = [created(), started()];
  const events = given(history).when(
    { type: 'CancelSubscription', comment: 'too expensive' },
    '2026-01-10T00:00:00.000Z',
  );
  t.deepEqual(events, [
    {
      type: 'SubscriptionCancelScheduled',
      data: { cancelAt: '2026-02-01T00:00:00.000Z', comment: 'too expensive', at: '2026-01-10T00:00:00.000Z' },
    },
  ]);
  const pending = [...history, ...events];
  t.like(subscriptionOf(pending), {
    status: 'active',
    cancelAtPeriodEnd: true,
    cancelAt: '2026-02-01T00:00:00.000Z',
    canceledAt: '2026-01-10T00:00:00.000Z',
  });
  t.deepEqual(given(pending).when({ type: 'CancelSubscription', comment: null }), []);
  t.deepEqual(given(pending).when({ type: 'RenewSubscription', invoiceId: 'inv-2' }, '2026-01-31T23:59:59.999Z'), []);
  const end = given(pending).when({ type: 'RenewSubscription', invoiceId: 'inv-2' }, '2026-02-01T00:00:00.000Z');
  t.deepEqual(end, [canceled('2026-02-01T00:00:00.000Z', true)]);
  const s = subscriptionOf([...pending, ...end]);
  t.like(s, {
    status: 'canceled',
    endedAt: '2026-02-01T00:00:00.000Z',
    canceledAt: '2026-01-10T00:00:00.000Z',
    cancellationReason: 'cancellation_requested',
    cancellationComment: 'too expensive',
  });
  t.is(SUBSCRIPTION_WEBHOOK_EVENTS.SubscriptionCanceled, 'customer.subscription.deleted');
});

test('given a pending cancel, when resumed, then the cancel is revoked and the next renewal is invoiced', (t) => {
  const pending = [created(), started(), cancelScheduled()];
  const events = given(pending).when({ type: 'ResumeSubscription' }, '2026-01-20T00:00:00.000Z');
  t.deepEqual(events, [{ type: 'SubscriptionCancelRevoked', data: { at: '2026-01-20T00:00:00.000Z' } }]);
  const history = [...pending, ...events];
  t.like(subscriptionOf(history), {
    cancelAtPeriodEnd: false,
    cancelAt: null,
    canceledAt: null,
    cancellationReason: null,
  });
  t.deepEqual(given(history).when({ type: 'ResumeSubscription' }), []);
  t.deepEqual(given(history).when({ type: 'RenewSubscription', invoiceId: 'inv-2' }, '2026-02-01T00:00:00.000Z'), [
    issued(),
  ]);
});

test('given a past_due subscription canceled at period end, at the period end it is canceled', (t) => {
  const history = [...HISTORIES.past_due, cancelScheduled('2026-02-05T00:00:00.000Z', '2026-03-01T00:00:00.000Z')];
  t.deepEqual(given(history).when({ type: 'RenewSubscription', invoiceId: 'inv-3' }, NOW), [canceled(NOW, true)]);
});

test('given a past_due subscription whose period has ended unbilled, when canceled at period end, then it is to end now, not at that past moment', (t) => {
  const later = '2026-03-15T00:00:00.000Z';
  const events = given(HISTORIES.past_due).when({ type: 'CancelSubscription', comment: null }, later);
  t.deepEqual(events, [{ type: 'SubscriptionCancelScheduled', data: { cancelAt: later, comment: null, at: later } }]);
  t.deepEqual(
    given([...HISTORIES.past_due, ...events]).when({ type: 'RenewSubscription', invoiceId: 'inv-3' }, later),
    [canceled(later, true)],
  );
});

test('given an active subscription, when ended, then canceled at once', (t) => {
  const events = given([created(), started()]).when(
    { type: 'EndSubscription', comment: null },
    '2026-01-10T00:00:00.000Z',
  );
  t.deepEqual(events, [canceled('2026-01-10T00:00:00.000Z')]);
  t.like(subscriptionOf([created(), started(), ...events]), {
    status: 'canceled',
    endedAt: '2026-01-10T00:00:00.000Z',
    canceledAt: '2026-01-10T00:00:00.000Z',
    cancelAt: null,
  });
});

test('given a subscription canceled at period end, when ended at once, then it keeps the request time and ends now', (t) => {
  const events = given([created(), started(), cancelScheduled()]).when(
    { type: 'EndSubscription', comment: null },
    '2026-01-20T00:00:00.000Z',
  );
  t.like(subscriptionOf([created(), started(), cancelScheduled(), ...events]), {
    canceledAt: '2026-01-10T00:00:00.000Z',
    endedAt: '2026-01-20T00:00:00.000Z',
    cancelAt: null,
  });
});

test('given a pending cancel, when paused, then refused naming the status', (t) => {
  const error = t.throws(() => given([created(), started(), cancelScheduled()]).when({ type: 'PauseSubscription' }), {
    instanceOf: InvalidStateError,
  });
  t.regex(error.message, /subscription is active;/);
});

test('given a subscription paused within its period, when resumed, then the period and anchor are kept and renewal proceeds', (t) => {
  const history = [created(), started(), paused()];
  t.deepEqual(given(history).when({ type: 'RenewSubscription', invoiceId: 'inv-2' }, '2026-02-01T00:00:00.000Z'), []);
  const events = given(history).when({ type: 'ResumeSubscription' }, '2026-01-20T00:00:00.000Z');
  t.deepEqual(events, [
    {
      type: 'SubscriptionResumed',
      data: {
        currentPeriodEnd: '2026-02-01T00:00:00.000Z',
        billingCycleAnchor: '2026-01-01T00:00:00.000Z',
        at: '2026-01-20T00:00:00.000Z',
      },
    },
  ]);
  t.like(subscriptionOf([...history, ...events]), { status: 'active', pausedAt: null });
  t.deepEqual(
    given([...history, ...events]).when({ type: 'RenewSubscription', invoiceId: 'inv-2' }, '2026-02-01T00:00:00.000Z'),
    [issued()],
  );
});

test('given a subscription paused past its period end, when resumed, then the next period starts at the resume', (t) => {
  const resumedAt = '2026-03-10T12:00:00.000Z';
  const history = [created(), started(), paused()];
  const events = given(history).when({ type: 'ResumeSubscription' }, resumedAt);
  const renewed = given([...history, ...events]).when({ type: 'RenewSubscription', invoiceId: 'inv-2' }, resumedAt);
  t.deepEqual(renewed, [
    {
      type: 'RenewalInvoiceIssued',
      data: { invoice: renewalBill('inv-2', resumedAt, '2026-04-10T12:00:00.000Z'), at: resumedAt, dueIsInstant: true },
    },
  ]);
});

test('given an open invoice when paused, when it is paid while paused, then it stays paused', (t) => {
  const history = [created(), started(), issued(), paused('2026-02-02T00:00:00.000Z')];
  t.deepEqual(given(history).when({ type: 'MarkRenewalPaymentMissed' }, NOW), []);
  const events = given(history).when(
    { type: 'RecordSubscriptionPayment', invoiceId: 'inv-2' },
    '2026-02-03T00:00:00.000Z',
  );
  t.deepEqual(events, [renewalPaid('inv-2', '2026-02-03T00:00:00.000Z')]);
  t.is(given([...history, ...events]).state().value, 'paused');
  t.is(subscriptionOf([...history, ...events]).status, 'paused');
});

// ---------------------------------------------------------------------------------------------
// The machine

test('the machine refuses facts its state cannot take', (t) => {
  const illegal: SubscriptionEvent[][] = [
    [started()],
    [created(), created()],
    [created(), issued()],
    [created(), renewalPaid('cs-1')],
    [created(), started(), started()],
    [created(), started(), markedUnpaid()],
    [
      created(),
      started(),
      { type: 'SubscriptionResumed', data: { currentPeriodEnd: NOW, billingCycleAnchor: NOW, at: NOW } },
    ],
    [created(), incompleteExpired(), started()],
    [created(), incompleteExpired(), canceled()],
    [created(), started(), canceled(), renewalPaid()],
    [created(), started(), canceled(), cancelScheduled()],
    [...HISTORIES.past_due, issued()],
    [...HISTORIES.past_due, { type: 'SubscriptionPaused', data: { at: NOW } }],
    [...HISTORIES.unpaid, markedUnpaid()],
    [created(), started(), paused(), issued()],
    [created(), started(), paused(), cancelScheduled()],
    [created(trialFixture()), renewalPaid()],
    [created(), { type: 'SubscriptionCancelScheduled', data: { cancelAt: NOW, comment: null, at: NOW } }],
  ];
  for (const history of illegal)
    t.throws(() => given(history).state(), { instanceOf: IllegalEventError }, history.map((e) => e.type).join(' → '));
});

test('the projection folds the same events to the same record as the machine', (t) => {
  const history = [
    ...HISTORIES.unpaid,
    renewalPaid('inv-2', '2026-02-20T00:00:00.000Z'),
    cancelScheduled('2026-02-21T00:00:00.000Z', '2026-03-01T00:00:00.000Z'),
  ];
  const projected = history.reduce<Subscription | null>((s, e) => evolveSubscription(s, e), null);
  t.deepEqual(projected, subscriptionOf(history));
});

test('machine.toJSON() describes every status as a state', (t) => {
  const json = subscriptionMachine.toJSON();
  const text = JSON.stringify(json);
  t.is(json.id, 'subscription');
  t.deepEqual(Object.keys(json.states ?? {}).sort(), [
    'active',
    'canceled',
    'incomplete',
    'incomplete_expired',
    'new',
    'past_due',
    'paused',
    'trialing',
    'unpaid',
  ]);
  t.true(text.includes('RenewalPaymentMissed'));
});

// ---------------------------------------------------------------------------------------------
// A year and a month of a monthly subscription anchored on the 31st, at the decider level.

test('13 months of a monthly subscription: month ends clamp without drift, one late payment, one run to unpaid', (t) => {
  const start = '2026-01-31T10:00:00.000Z';
  const subscription = subscriptionFixture({
    createdAt: start,
    firstBill: { id: 'cs-1', kind: 'checkout_session', dueAt: '2026-01-31T11:00:00.000Z' },
  });
  const history: SubscriptionEvent[] = [];
  const run = (command: SubscriptionCommand, now: string): SubscriptionEvent[] => {
    const events = given(history).when(command, now);
    history.push(...events);
    return events;
  };
  const current = () => subscriptionOf(history);
  const status = () => given(history).state().value;

  run({ type: 'CreateSubscription', subscription }, start);
  t.is(
    run({ type: 'RecordSubscriptionPayment', invoiceId: 'cs-1' }, '2026-01-31T10:05:00.000Z')[0]?.type,
    'SubscriptionStarted',
  );
  t.is(current().currentPeriodEnd, '2026-02-28T10:00:00.000Z');

  const periodEnds: string[] = [current().currentPeriodEnd];
  for (let month = 2; month <= 13; month += 1) {
    const periodEnd = current().currentPeriodEnd;
    const invoiceId = `inv-${month}`;
    // A timer that fires a millisecond early does nothing.
    t.deepEqual(run({ type: 'RenewSubscription', invoiceId }, new Date(Date.parse(periodEnd) - 1).toISOString()), []);
    t.is(run({ type: 'RenewSubscription', invoiceId }, periodEnd).length, 1, `renewal ${month}`);
    // ... and a second firing does nothing either.
    t.deepEqual(run({ type: 'RenewSubscription', invoiceId: `${invoiceId}-again` }, periodEnd), []);
    periodEnds.push(current().currentPeriodEnd);
    const due = current().latestInvoice!.dueAt;
    t.is(due, addDays(periodEnd, 3));

    if (month === 4) {
      // Missed, then paid late while past due: active again.
      t.deepEqual(run({ type: 'MarkRenewalPaymentMissed' }, addDays(due, -1)), []);
      t.is(run({ type: 'MarkRenewalPaymentMissed' }, due)[0]?.type, 'RenewalPaymentMissed');
      t.is(status(), 'past_due');
      t.deepEqual(run({ type: 'MarkSubscriptionUnpaid' }, addDays(due, 5)), []);
      t.is(run({ type: 'RecordSubscriptionPayment', invoiceId }, addDays(due, 6))[0]?.type, 'RenewalPaid');
      t.is(status(), 'active');
      t.deepEqual(run({ type: 'MarkSubscriptionUnpaid' }, addDays(due, 7)), []);
    } else if (month === 8) {
      // Missed and left unpaid: past due, then unpaid a week later; no new invoice while unpaid.
      run({ type: 'MarkRenewalPaymentMissed' }, due);
      t.is(run({ type: 'MarkSubscriptionUnpaid' }, addDays(due, 7))[0]?.type, 'SubscriptionMarkedUnpaid');
      t.is(status(), 'unpaid');
      const next = current().currentPeriodEnd;
      t.deepEqual(run({ type: 'RenewSubscription', invoiceId: 'inv-9-early' }, next), []);
      // Paid two days after the next period should have begun: active, and the renewal catches up.
      t.is(run({ type: 'RecordSubscriptionPayment', invoiceId }, addDays(next, 2))[0]?.type, 'RenewalPaid');
      t.is(status(), 'active');
    } else {
      run({ type: 'RecordSubscriptionPayment', invoiceId }, addDays(periodEnd, 1));
      t.is(status(), 'active');
    }
  }

  t.deepEqual(periodEnds, [
    '2026-02-28T10:00:00.000Z',
    '2026-03-31T10:00:00.000Z',
    '2026-04-30T10:00:00.000Z',
    '2026-05-31T10:00:00.000Z',
    '2026-06-30T10:00:00.000Z',
    '2026-07-31T10:00:00.000Z',
    '2026-08-31T10:00:00.000Z',
    '2026-09-30T10:00:00.000Z',
    '2026-10-31T10:00:00.000Z',
    '2026-11-30T10:00:00.000Z',
    '2026-12-31T10:00:00.000Z',
    '2027-01-31T10:00:00.000Z',
    '2027-02-28T10:00:00.000Z',
  ]);
  const count = (type: SubscriptionEvent['type']) => history.filter((e) => e.type === type).length;
  t.is(count('RenewalInvoiceIssued'), 12);
  t.is(count('RenewalPaid'), 12);
  t.is(count('RenewalPaymentMissed'), 2);
  t.is(count('SubscriptionMarkedUnpaid'), 1);
  t.like(current(), {
    status: 'active',
    currentPeriodStart: '2027-01-31T10:00:00.000Z',
    pastDueSince: null,
    latestInvoiceId: 'inv-13',
  });

  // The merchant cancels at period end; the last period runs out and the subscription ends.
  run({ type: 'CancelSubscription', comment: null }, '2027-02-10T00:00:00.000Z');
  t.deepEqual(run({ type: 'RenewSubscription', invoiceId: 'inv-14' }, '2027-02-28T10:00:00.000Z'), [
    canceled('2027-02-28T10:00:00.000Z', true),
  ]);
  t.is(status(), 'canceled');
});

// ---------------------------------------------------------------------------------------------
// Billing calendar

test('addInterval clamps to the end of shorter months', (t) => {
  t.is(addInterval('2026-01-31T00:00:00.000Z', 'month', 1), '2026-02-28T00:00:00.000Z');
  t.is(addInterval('2028-01-31T00:00:00.000Z', 'month', 1), '2028-02-29T00:00:00.000Z');
  t.is(addInterval('2026-03-31T08:30:15.250Z', 'month', 1), '2026-04-30T08:30:15.250Z');
  t.is(addInterval('2026-08-31T00:00:00.000Z', 'month', 6), '2027-02-28T00:00:00.000Z');
  t.is(addInterval('2026-11-30T00:00:00.000Z', 'month', 3), '2027-02-28T00:00:00.000Z');
  t.is(addInterval('2028-02-29T00:00:00.000Z', 'year', 1), '2029-02-28T00:00:00.000Z');
  t.is(addInterval('2028-02-29T00:00:00.000Z', 'year', 4), '2032-02-29T00:00:00.000Z');
});

test('addInterval crosses years and keeps the day and time when the month has it', (t) => {
  t.is(addInterval('2026-12-15T23:59:59.999Z', 'month', 1), '2027-01-15T23:59:59.999Z');
  t.is(addInterval('2026-05-20T12:00:00.000Z', 'month', 25), '2028-06-20T12:00:00.000Z');
  t.is(addInterval('2026-05-20T12:00:00.000Z', 'month', 0), '2026-05-20T12:00:00.000Z');
  t.is(addInterval('2026-05-20T14:00:00+02:00', 'month', 1), '2026-06-20T12:00:00.000Z');
});

test('addInterval for each offered schedule', (t) => {
  const from = '2026-01-31T00:00:00.000Z';
  const next = (s: { interval: 'month' | 'year'; intervalCount: number }) =>
    addInterval(from, s.interval, s.intervalCount);
  t.is(next(BILLING_SCHEDULES.monthly), '2026-02-28T00:00:00.000Z');
  t.is(next(BILLING_SCHEDULES.quarterly), '2026-04-30T00:00:00.000Z');
  t.is(next(BILLING_SCHEDULES.half_yearly), '2026-07-31T00:00:00.000Z');
  t.is(next(BILLING_SCHEDULES.annual), '2027-01-31T00:00:00.000Z');
});

test('addInterval refuses a bad count or date', (t) => {
  t.throws(() => addInterval('2026-01-01T00:00:00.000Z', 'month', -1), { instanceOf: RangeError });
  t.throws(() => addInterval('2026-01-01T00:00:00.000Z', 'month', 1.5), { instanceOf: RangeError });
  t.throws(() => addInterval('not a date', 'month', 1), { instanceOf: RangeError });
});

test('periodEndAfter counts from the anchor, so the 31st comes back after February', (t) => {
  const anchor = '2026-01-31T00:00:00.000Z';
  t.is(periodEndAfter(anchor, 'month', 1, anchor), '2026-02-28T00:00:00.000Z');
  t.is(periodEndAfter(anchor, 'month', 1, '2026-02-28T00:00:00.000Z'), '2026-03-31T00:00:00.000Z');
  t.is(periodEndAfter(anchor, 'month', 3, '2026-04-30T00:00:00.000Z'), '2026-07-31T00:00:00.000Z');
  t.is(periodEndAfter(anchor, 'year', 1, '2026-06-01T00:00:00.000Z'), '2027-01-31T00:00:00.000Z');
  t.throws(() => periodEndAfter(anchor, 'month', 0, anchor), { instanceOf: RangeError });
});

test('a renewal at the period end bills the next period, due daysUntilDue days after it is issued', (t) => {
  const at = '2026-02-01T00:00:00.000Z';
  const events = given([created(), started()]).when({ type: 'RenewSubscription', invoiceId: 'inv-2' }, at);
  t.deepEqual(events, [
    {
      type: 'RenewalInvoiceIssued',
      data: { invoice: renewalBill('inv-2', at, '2026-03-01T00:00:00.000Z', at), at, dueIsInstant: true },
    },
  ]);
});

test('a renewal of a subscription due the day it is issued (daysUntilDue 0) is due the end of that day: not past due a minute after its issue, only once the day has ended', (t) => {
  // Created at 09:30, so it renews at 09:30 on the 1st of each month.
  const subscription = subscriptionFixture({ daysUntilDue: 0, createdAt: '2026-01-01T09:30:00.000Z' });
  const at = '2026-02-01T09:30:00.000Z';
  const [event] = given([created(subscription), started()]).when({ type: 'RenewSubscription', invoiceId: 'inv-2' }, at);
  t.like(event, {
    type: 'RenewalInvoiceIssued',
    data: { invoice: { issuedAt: at, dueAt: '2026-02-01T23:59:59.999Z' } },
  });
  const history = [created(subscription), started(), event!];
  const miss = { type: 'MarkRenewalPaymentMissed' } as const;
  t.deepEqual(given(history).when(miss, '2026-02-01T09:31:00.000Z'), [], 'a minute after its issue');
  t.deepEqual(given(history).when(miss, '2026-02-01T23:59:59.999Z'), [], 'payable all its due day');
  t.deepEqual(given(history).when(miss, '2026-02-02T00:00:00.000Z'), [missed('inv-2', '2026-02-02T00:00:00.000Z')]);
  // One an older Weir issued due at its issue instant keeps it: the log is folded as recorded.
  const { invoice } = (event as Extract<SubscriptionEvent, { type: 'RenewalInvoiceIssued' }>).data;
  const older: SubscriptionEvent = {
    type: 'RenewalInvoiceIssued',
    data: { invoice: { ...invoice, dueAt: at }, at, dueIsInstant: true },
  };
  t.deepEqual(given([created(subscription), started(), older]).when(miss, '2026-02-01T09:31:00.000Z'), [
    missed('inv-2', '2026-02-01T09:31:00.000Z'),
  ]);
});

test('a renewal issued late (after the overdue bill was paid) bills the period containing now, not the periods missed', (t) => {
  const at = '2026-04-10T00:00:00.000Z';
  const [event] = given([created(), started()]).when({ type: 'RenewSubscription', invoiceId: 'inv-2' }, at);
  t.like(event, {
    type: 'RenewalInvoiceIssued',
    data: {
      invoice: {
        periodStart: '2026-04-01T00:00:00.000Z',
        periodEnd: '2026-05-01T00:00:00.000Z',
        dueAt: '2026-04-13T00:00:00.000Z',
      },
    },
  });
});

// ---------------------------------------------------------------------------------------------
// A renewal draft deleted by the merchant

test('given an active subscription whose renewal draft the merchant deleted, when the deletion is recorded, then that period is not billed: nothing comes due, a payment is ignored, and the next period renews at its end', (t) => {
  const history = [created(), started(), issued()];
  const deletion = given(history).when(
    { type: 'RecordRenewalInvoiceDeleted', invoiceId: 'inv-2' },
    '2026-02-01T01:00:00.000Z',
  );
  t.deepEqual(deletion, [
    { type: 'RenewalInvoiceDeleted', data: { invoiceId: 'inv-2', at: '2026-02-01T01:00:00.000Z' } },
  ]);
  const after = [...history, ...deletion];
  t.like(given(after).state().context.subscription, {
    status: 'active',
    latestInvoiceId: 'inv-2',
    latestInvoice: { status: 'deleted' },
    pastDueSince: null,
  });
  t.deepEqual(given(after).when({ type: 'RecordRenewalInvoiceDeleted', invoiceId: 'inv-2' }, NOW), [], 'recorded once');
  t.deepEqual(
    given(after).when({ type: 'MarkRenewalPaymentMissed' }, '2026-02-05T00:00:00.000Z'),
    [],
    'never past due for it',
  );
  t.deepEqual(
    given(after).when({ type: 'RecordSubscriptionPayment', invoiceId: 'inv-2' }, '2026-02-05T00:00:00.000Z'),
    [],
  );
  t.deepEqual(
    given(after).when({ type: 'RenewSubscription', invoiceId: 'inv-3' }, '2026-02-20T00:00:00.000Z'),
    [],
    'not before the period end',
  );
  t.deepEqual(given(after).when({ type: 'RenewSubscription', invoiceId: 'inv-3' }, '2026-03-01T00:00:00.000Z'), [
    {
      type: 'RenewalInvoiceIssued',
      data: {
        invoice: renewalBill(
          'inv-3',
          '2026-03-01T00:00:00.000Z',
          '2026-04-01T00:00:00.000Z',
          '2026-03-01T00:00:00.000Z',
          '2026-03-04T00:00:00.000Z',
        ),
        at: '2026-03-01T00:00:00.000Z',
        dueIsInstant: true,
      },
    },
  ]);
  t.deepEqual(
    given(history).when({ type: 'RecordRenewalInvoiceDeleted', invoiceId: 'inv-other' }, NOW),
    [],
    'only the latest renewal',
  );
});

test('given a trialing or paused subscription whose renewal draft was deleted, when the deletion is recorded, then it keeps its status', (t) => {
  const going: [SubscriptionEvent[], SubscriptionStatus][] = [
    [[created(trialFixture()), issued()], 'trialing'],
    [[created(), started(), issued(), paused('2026-02-01T12:00:00.000Z')], 'paused'],
  ];
  for (const [history, status] of going) {
    const events = given(history).when({ type: 'RecordRenewalInvoiceDeleted', invoiceId: 'inv-2' }, NOW);
    t.deepEqual(
      events.map((e) => e.type),
      ['RenewalInvoiceDeleted'],
      status,
    );
    t.is(given([...history, ...events]).state().value, status);
  }
});

test('given a renewal an older Weir issued (no dueIsInstant) due at midnight, it is missed only once that day has ended, as then; one issued now, from that instant', (t) => {
  const { dueIsInstant: _marker, ...data } = issued().data as {
    invoice: SubscriptionBill;
    at: string;
    dueIsInstant?: true;
  };
  const old: SubscriptionEvent = { type: 'RenewalInvoiceIssued', data };
  const history = [created(), started(), old];
  t.is(given(history).state().context.subscription!.latestInvoice!.dueAt, '2026-02-04T23:59:59.999Z');
  t.deepEqual(given(history).when({ type: 'MarkRenewalPaymentMissed' }, '2026-02-04T23:59:59.999Z'), []);
  t.deepEqual(given(history).when({ type: 'MarkRenewalPaymentMissed' }, '2026-02-05T00:00:00.000Z'), [
    missed('inv-2', '2026-02-05T00:00:00.000Z'),
  ]);
  t.deepEqual(
    given([created(), started(), issued()]).when({ type: 'MarkRenewalPaymentMissed' }, '2026-02-04T00:00:00.000Z'),
    [missed('inv-2', '2026-02-04T00:00:00.000Z')],
  );
});

// ---------------------------------------------------------------------------------------------
// A renewal Weir could not finalize (its invoice stays a draft until the merchant finalizes it)

const notFinalized = (at = '2026-02-01T00:00:05.000Z'): SubscriptionEvent => ({
  type: 'RenewalInvoiceNotFinalized',
  data: { invoiceId: 'inv-2', at },
});

test('given a renewal Weir could not finalize, its bill is a draft: never missed at its due time', (t) => {
  const history = [created(), started(), issued()];
  const events = given(history).when(
    { type: 'RecordRenewalInvoiceNotFinalized', invoiceId: 'inv-2' },
    '2026-02-01T00:00:05.000Z',
  );
  t.deepEqual(events, [notFinalized()]);
  const stuck = [...history, ...events];
  t.is(given(stuck).state().value, 'active');
  t.like(subscriptionOf(stuck).latestInvoice, { id: 'inv-2', status: 'draft', dueAt: '2026-02-04T00:00:00.000Z' });
  // Past its due date, and long after: the customer was sent nothing, so nothing lapsed.
  t.deepEqual(given(stuck).when({ type: 'MarkRenewalPaymentMissed' }, '2026-02-04T00:00:00.000Z'), []);
  t.deepEqual(given(stuck).when({ type: 'MarkRenewalPaymentMissed' }, '2026-05-01T00:00:00.000Z'), []);
  // Recorded once; only for the latest renewal, while it is open.
  t.deepEqual(given(stuck).when({ type: 'RecordRenewalInvoiceNotFinalized', invoiceId: 'inv-2' }, NOW), []);
  t.deepEqual(given(history).when({ type: 'RecordRenewalInvoiceNotFinalized', invoiceId: 'inv-other' }, NOW), []);
  t.deepEqual(
    given([...history, missed()]).when({ type: 'RecordRenewalInvoiceNotFinalized', invoiceId: 'inv-2' }, NOW),
    [],
  );
  t.is(SUBSCRIPTION_WEBHOOK_EVENTS.RenewalInvoiceNotFinalized, undefined, 'the reference has no webhook for it');
});

test('given a renewal draft, the calendar goes on: the next period is issued at its end, its own bill the latest, and each period after', (t) => {
  const stuck = [created(), started(), issued(), notFinalized()];
  t.deepEqual(given(stuck).when({ type: 'RenewSubscription', invoiceId: 'inv-3' }, '2026-02-28T23:59:59.999Z'), []);
  const march = given(stuck).when({ type: 'RenewSubscription', invoiceId: 'inv-3' }, '2026-03-01T00:00:00.000Z');
  const marchBill = renewalBill('inv-3', '2026-03-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z');
  t.deepEqual(march, [
    { type: 'RenewalInvoiceIssued', data: { invoice: marchBill, at: marchBill.issuedAt, dueIsInstant: true } },
  ]);
  const next = [...stuck, ...march];
  t.is(given(next).state().value, 'active');
  t.like(subscriptionOf(next), {
    currentPeriodStart: '2026-03-01T00:00:00.000Z',
    currentPeriodEnd: '2026-04-01T00:00:00.000Z',
    latestInvoiceId: 'inv-3',
    latestInvoice: { id: 'inv-3', status: 'open' },
  });
  // The older draft is still owed once sent: it stays followed, its finalize reopens it, its payment is recorded.
  t.like(subscriptionOf(next).earlierBills, [{ id: 'inv-2', status: 'draft' }]);
  t.deepEqual(given(next).when({ type: 'RecordRenewalInvoiceFinalized', invoiceId: 'inv-2', dueAt: NOW }, NOW), [
    { type: 'RenewalInvoiceFinalized', data: { invoiceId: 'inv-2', dueAt: NOW, at: NOW } },
  ]);
  t.deepEqual(given(next).when({ type: 'RecordSubscriptionPayment', invoiceId: 'inv-2' }, NOW), [
    renewalPaid('inv-2', NOW),
  ]);
  // The new bill follows the rules of an open one (missed at its due time), or is a draft in turn.
  t.deepEqual(given(next).when({ type: 'MarkRenewalPaymentMissed' }, '2026-03-04T00:00:00.000Z'), [
    missed('inv-3', '2026-03-04T00:00:00.000Z'),
  ]);
  const again = [...next, { type: 'RenewalInvoiceNotFinalized', data: { invoiceId: 'inv-3', at: NOW } } as const];
  t.deepEqual(given(again).when({ type: 'MarkRenewalPaymentMissed' }, '2026-03-04T00:00:00.000Z'), []);
  const april = given(again).when({ type: 'RenewSubscription', invoiceId: 'inv-4' }, '2026-04-01T00:00:00.000Z');
  t.like(subscriptionOf([...again, ...april]).latestInvoice, {
    id: 'inv-4',
    periodStart: '2026-04-01T00:00:00.000Z',
    status: 'open',
  });
});

test('given a renewal draft the merchant finalizes, its bill opens due at the due date then in force, and is missed only after it', (t) => {
  const stuck = [created(), started(), issued(), notFinalized()];
  const dueAt = '2026-02-17T09:00:00.000Z';
  const events = given(stuck).when(
    { type: 'RecordRenewalInvoiceFinalized', invoiceId: 'inv-2', dueAt },
    '2026-02-10T09:00:00.000Z',
  );
  t.deepEqual(events, [
    { type: 'RenewalInvoiceFinalized', data: { invoiceId: 'inv-2', dueAt, at: '2026-02-10T09:00:00.000Z' } },
  ]);
  const open = [...stuck, ...events];
  t.like(subscriptionOf(open).latestInvoice, { status: 'open', dueAt });
  t.deepEqual(given(open).when({ type: 'MarkRenewalPaymentMissed' }, '2026-02-17T08:59:59.999Z'), []);
  t.deepEqual(given(open).when({ type: 'MarkRenewalPaymentMissed' }, dueAt), [missed('inv-2', dueAt)]);
  // Once: a repeat, or a finalize of a bill that was never a draft, records nothing.
  t.deepEqual(given(open).when({ type: 'RecordRenewalInvoiceFinalized', invoiceId: 'inv-2', dueAt }, NOW), []);
  t.deepEqual(
    given([created(), started(), issued()]).when(
      { type: 'RecordRenewalInvoiceFinalized', invoiceId: 'inv-2', dueAt },
      NOW,
    ),
    [],
  );
  t.throws(() => given(stuck).when({ type: 'RecordRenewalInvoiceFinalized', invoiceId: 'inv-2', dueAt: 'soon' }, NOW), {
    instanceOf: ValidationError,
  });
});

test('given a bill an older Weir let lapse while its invoice was a draft it could not finalize (no RenewalInvoiceNotFinalized, RenewalPaymentMissed), its finalize reopens it: active again, missed only at the new due date', (t) => {
  const dueAt = '2026-02-17T09:00:00.000Z';
  const finalize = { type: 'RecordRenewalInvoiceFinalized', invoiceId: 'inv-2', dueAt } as const;
  for (const history of [
    [created(), started(), issued(), missed()],
    [created(), started(), issued(), missed(), markedUnpaid()],
  ]) {
    const events = given(history).when(finalize, '2026-02-10T09:00:00.000Z');
    t.deepEqual(events, [
      { type: 'RenewalInvoiceFinalized', data: { invoiceId: 'inv-2', dueAt, at: '2026-02-10T09:00:00.000Z' } },
    ]);
    const open = [...history, ...events];
    t.is(given(open).state().value, 'active');
    t.like(subscriptionOf(open), { pastDueSince: null, latestInvoice: { status: 'open', dueAt } });
    t.deepEqual(given(open).when({ type: 'MarkSubscriptionUnpaid' }, '2026-02-16T00:00:00.000Z'), []);
    t.deepEqual(given(open).when({ type: 'MarkRenewalPaymentMissed' }, '2026-02-17T08:59:59.999Z'), []);
    t.deepEqual(given(open).when({ type: 'MarkRenewalPaymentMissed' }, dueAt), [missed('inv-2', dueAt)]);
    // Re-dated to a due date already past, it would only lapse again: nothing.
    t.deepEqual(given(history).when(finalize, dueAt), []);
  }
});

test('given a renewal draft, it can be paid, deleted or voided as an open one, in each status that bills', (t) => {
  const drafts: [SubscriptionEvent[], SubscriptionStatus][] = [
    [[created(), started(), issued(), notFinalized()], 'active'],
    [[created(trialFixture()), issued(), notFinalized()], 'trialing'],
    [[created(), started(), issued(), notFinalized(), paused('2026-02-02T00:00:00.000Z')], 'paused'],
  ];
  for (const [history, status] of drafts) {
    t.is(given(history).state().value, status);
    for (const type of ['RecordRenewalInvoiceDeleted', 'RecordRenewalInvoiceVoided'] as const)
      t.is(given(history).when({ type, invoiceId: 'inv-2' }, NOW).length, 1, `${status}: ${type}`);
    const paid = given(history).when({ type: 'RecordSubscriptionPayment', invoiceId: 'inv-2' }, NOW);
    t.like(subscriptionOf([...history, ...paid]).latestInvoice, { status: 'paid' }, status);
  }
});

test('an event log without RenewalInvoiceNotFinalized folds as before: the open renewal lapses at its due time', (t) => {
  const history = [created(), started(), issued()];
  t.like(subscriptionOf(history).latestInvoice, { status: 'open', dueAt: '2026-02-04T00:00:00.000Z' });
  t.deepEqual(given(history).when({ type: 'MarkRenewalPaymentMissed' }, '2026-02-04T00:00:00.000Z'), [missed()]);
});

test('money a first checkout session receives after its subscription ended without starting is owed back on its bill, each transfer once; the subscription stays ended; nothing once it started', (t) => {
  const late = (transferId: string, amount: string): SubscriptionCommand => ({
    type: 'RecordFirstBillLatePayment',
    invoiceId: 'cs-1',
    transferId,
    amount,
  });
  const partExpired: SubscriptionEvent = {
    type: 'SubscriptionIncompleteExpired',
    data: { invoiceId: 'cs-1', amountToRefund: '100000000', at: '2026-01-01T01:00:00.000Z' },
  };
  for (const [how, ending, before] of [
    ['expired unpaid', incompleteExpired(), 0n],
    ['expired part-paid', partExpired, 100000000n],
    ['ended by the merchant while incomplete', canceled(), 0n],
  ] as const) {
    const history = [created(), ending];
    const first = given(history).when(late('tr-1', '250000000'), NOW);
    t.deepEqual(first, [
      {
        type: 'FirstBillLatePaymentReceived',
        data: { invoiceId: 'cs-1', transferId: 'tr-1', amount: '250000000', at: NOW },
      },
    ]);
    t.deepEqual(given([...history, ...first]).when(late('tr-1', '250000000'), NOW), [], `${how}: once`);
    const second = given([...history, ...first]).when(late('tr-2', '50000000'), NOW);
    const after = given([...history, ...first, ...second]).state();
    t.is(after.value, ending.type === 'SubscriptionCanceled' ? 'canceled' : 'incomplete_expired', how);
    t.like(after.context.subscription!.latestInvoice, {
      id: 'cs-1',
      amountToRefund: (before + 300000000n).toString(),
      lateTransferIds: ['tr-1', 'tr-2'],
    });
  }
  t.deepEqual(given([created(), started(), canceled()]).when(late('tr-1', '250000000'), NOW), [], 'started: paid');
  t.deepEqual(given([created()]).when(late('tr-1', '250000000'), NOW), [], 'not ended');
  t.throws(() => given([created(), incompleteExpired()]).when(late('tr-1', '0'), NOW), { instanceOf: ValidationError });
});
