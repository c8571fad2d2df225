import test, { type ExecutionContext } from 'ava';
import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CheckoutSessionCommand } from '../../machines/checkout-session.decide.ts';
import { paymentFixture, sessionFixture } from '../../machines/checkout-session.fixture.ts';
import { NOT_IN_FINAL_BLOCK, type CheckoutSession } from '../../machines/checkout-session.types.ts';
import { subscriptionAggregate } from '../../machines/subscription.aggregate.ts';
import { billLapsesAt, type SubscriptionCommand } from '../../machines/subscription.decide.ts';
import { SUBSCRIPTION_ID, subscriptionFixture } from '../../machines/subscription.fixture.ts';
import { createCommandHandler } from '../actors/command-handler.ts';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { COLLECTIONS, type CheckoutSessionDoc, type TimerDoc } from '../projections/collections.ts';
import { SUBSCRIPTION_TIMERS } from '../projections/subscriptions.projection.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { createChainReadGate, type ChainReadGate } from './chain-read-gate.ts';
import { fakeFollowers, HOUR, settle, startGatedTimers } from './gated-timers.fixture.ts';
import { subscriptionTimerHandlers } from './subscription-timers.ts';
import { NOT_YET_RETRY_MS } from './timer-runner.ts';

const ctx = { organizationId: 'org-1', environment: 'test' as const, actor: 'test' };
/** The first bill's due time: the fixture session's `expiresAt`. */
const DUE = '2026-01-01T01:00:00.000Z';
const TRANSFER = 't-1';
const RENEWAL = 'inv-2';

/**
 * An incomplete subscription whose first bill is a checkout session (or, with `invoiceId`, the
 * invoice that checkout session is a pay page of), over a real log, at 00:10 (the bill is due at
 * 01:00); the session is in the read model as the checkout sessions projection shows it.
 * `expireFirst` runs the subscription's expiry timer as the timer runner would. With `renewal`,
 * the subscription is active instead (its first session `cs-1` paid) and its open renewal invoice
 * `inv-2` is the bill the session is a pay page of, at the renewal's issue (2026-02-01, due
 * `renewalDue`); `pastDue` runs its past-due timer.
 */
async function firstBill(
  t: ExecutionContext,
  options: {
    invoiceId?: string;
    renewal?: true;
    gate?: (clock: ReturnType<typeof createManualClock>) => ChainReadGate;
  } = {},
) {
  const clock = createManualClock(Date.parse('2026-01-01T00:10:00.000Z'));
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  t.teardown(() => eventStore.close());
  const readStore = createEmbeddedReadStore({});
  const commands = createCommandHandler({ eventStore, clock });
  const invoiceId = options.renewal ? RENEWAL : options.invoiceId;
  const session: CheckoutSession = invoiceId
    ? sessionFixture({
        invoiceId,
        expiresAt: options.renewal ? '2026-02-20T00:00:00.000Z' : '2026-01-01T02:00:00.000Z',
      })
    : sessionFixture({ mode: 'subscription', subscriptionId: SUBSCRIPTION_ID });
  const bill = options.invoiceId
    ? { id: options.invoiceId, kind: 'invoice' as const, dueAt: DUE }
    : { id: session.id, kind: 'checkout_session' as const, dueAt: DUE };
  await commands.handle(checkoutSessionAggregate, session.id, { type: 'CreateCheckoutSession', session }, ctx);
  await readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).put({ ...session, _id: session.id });
  const subscriptionDo = (command: SubscriptionCommand) =>
    commands.handle(subscriptionAggregate, SUBSCRIPTION_ID, command, ctx);
  await subscriptionDo({
    type: 'CreateSubscription',
    subscription: subscriptionFixture(options.renewal ? {} : { firstBill: bill }),
  });
  let renewalDue = DUE;
  if (options.renewal) {
    await subscriptionDo({ type: 'RecordSubscriptionPayment', invoiceId: 'cs-1' });
    clock.set(Date.parse('2026-02-01T00:00:00.000Z'));
    const renewed = await subscriptionDo({ type: 'RenewSubscription', invoiceId: RENEWAL });
    renewalDue = billLapsesAt(renewed.state.context.subscription!.latestInvoice!);
  }
  const kind = options.renewal ? SUBSCRIPTION_TIMERS.pastDue : SUBSCRIPTION_TIMERS.expireFirst;
  const timer: TimerDoc = {
    _id: `${kind}:${SUBSCRIPTION_ID}`,
    kind,
    recordId: SUBSCRIPTION_ID,
    organizationId: 'org-1',
    environment: 'test',
    fireAt: Date.parse(renewalDue),
  };
  const gate = options.gate?.(clock);
  const handlers = subscriptionTimerHandlers(commands, { readStore, ...(gate ? { gate } : {}) });
  const timerCtx = { ...ctx, actor: 'system:timer', causationId: timer._id };
  const before = (await eventStore.readStream(`subscription-${SUBSCRIPTION_ID}`)).length;
  return {
    clock,
    readStore,
    commands,
    session,
    timer,
    renewalDue,
    subscriptionDo,
    sessionDo: (command: CheckoutSessionCommand) => commands.handle(checkoutSessionAggregate, session.id, command, ctx),
    confirm: () =>
      commands.handle(checkoutSessionAggregate, session.id, { type: 'ConfirmTransfer', transferId: TRANSFER }, ctx),
    expireFirst: () => handlers[SUBSCRIPTION_TIMERS.expireFirst]!(timer, timerCtx),
    pastDue: () => handlers[SUBSCRIPTION_TIMERS.pastDue]!(timer, timerCtx),
    handlers,
    /** The events appended to the subscription and to the session after their setup: type and actor. */
    appended: async () => ({
      subscription: (await eventStore.readStream(`subscription-${SUBSCRIPTION_ID}`)).slice(before).map((e) => e.type),
      session: (await eventStore.readStream(`checkout_session-${session.id}`))
        .slice(1)
        .map((e) => [e.type, e.metadata.actor]),
    }),
  };
}

const detect = (amount = '300000000'): CheckoutSessionCommand => ({
  type: 'RecordTransfer',
  payment: paymentFixture(TRANSFER, amount),
});
const detectedOnly = [['PaymentDetected', 'test']];
/** The types of the events appended to the subscription and to the session. */
async function typesAppended(bill: { appended: () => Promise<{ subscription: string[]; session: unknown[][] }> }) {
  const { subscription, session } = await bill.appended();
  return { subscription, session: session.map(([type]) => type) };
}

test("an unpaid first session is expired by the subscription's expiry, then the subscription; a part-paid one with nothing more pending expires it at its due time, its part owed back; the rest pending holds it", async (t) => {
  const unpaid = await firstBill(t);
  unpaid.clock.set(Date.parse(DUE));
  const result = await unpaid.expireFirst();
  t.true('position' in result && result.position !== null);
  t.deepEqual(await unpaid.appended(), {
    subscription: ['SubscriptionIncompleteExpired'],
    session: [['CheckoutSessionExpired', 'system:timer']],
  });

  // A first payment confirmed for less than the amount, then nothing more: the session is incomplete
  // (it never expires itself), and the subscription no longer waits for it for ever (a retry a minute):
  // at the due time it expires, the part recorded on its bill as owed back.
  const partly = await firstBill(t);
  await partly.sessionDo(detect('100000000'));
  await partly.confirm();
  partly.clock.set(Date.parse(DUE) - 1);
  t.deepEqual(await partly.expireFirst(), { position: null }, 'before the due time: nothing');
  partly.clock.set(Date.parse(DUE));
  const ended = await partly.expireFirst();
  t.true('position' in ended && ended.position !== null);
  t.deepEqual(await typesAppended(partly), {
    subscription: ['SubscriptionIncompleteExpired'],
    session: ['PaymentDetected', 'PaymentConfirmed', 'CheckoutSessionPartiallyPaid'],
  });
  const expired = await partly.commands.load(subscriptionAggregate, SUBSCRIPTION_ID, ctx);
  t.like(expired.state.context.subscription!.latestInvoice, { status: 'expired', amountToRefund: '100000000' });

  // The rest sent in time, still confirming at the due time: the expiry waits for it; confirmed, the
  // session completes and the subscription, told by the billing process, starts.
  const rest = await firstBill(t);
  await rest.sessionDo(detect('100000000'));
  await rest.confirm();
  await rest.sessionDo({ type: 'RecordTransfer', payment: paymentFixture('t-2', '200000000') });
  rest.clock.set(Date.parse(DUE));
  t.deepEqual(await rest.expireFirst(), { notYet: true }, 'the rest pending');
  await rest.commands.handle(
    checkoutSessionAggregate,
    rest.session.id,
    { type: 'ConfirmTransfer', transferId: 't-2' },
    ctx,
  );
  t.deepEqual(await rest.expireFirst(), { notYet: true }, 'complete, not yet recorded');
  await rest.subscriptionDo({ type: 'RecordSubscriptionPayment', invoiceId: rest.session.id });
  t.deepEqual(await rest.expireFirst(), { position: null });
  t.deepEqual((await typesAppended(rest)).subscription, ['SubscriptionStarted']);

  // A first invoice's pay page part-paid does not hold it either: the part stays on the open invoice, the merchant's to settle.
  const invoice = await firstBill(t, { invoiceId: 'inv-1' });
  await invoice.sessionDo(detect('100000000'));
  await invoice.confirm();
  await invoice.readStore
    .collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions)
    .put({ ...invoice.session, _id: invoice.session.id, status: 'incomplete' });
  invoice.clock.set(Date.parse(DUE));
  t.true('position' in (await invoice.expireFirst()));
  t.deepEqual((await invoice.appended()).subscription, ['SubscriptionIncompleteExpired']);
  const byInvoice = await invoice.commands.load(subscriptionAggregate, SUBSCRIPTION_ID, ctx);
  t.false('amountToRefund' in byInvoice.state.context.subscription!.latestInvoice!);
});

test('a renewal paid in time is not past due when its confirmation comes after its due time: the past-due timer waits for the pending payment, and for the chain followers; unpaid, it is past due', async (t) => {
  const bill = await firstBill(t, { renewal: true });
  await bill.sessionDo(detect());
  bill.clock.set(Date.parse(bill.renewalDue) + HOUR);
  t.deepEqual(await bill.pastDue(), { notYet: true }, 'detected before the due time, not final yet');
  await bill.confirm();
  t.deepEqual(await bill.pastDue(), { notYet: true }, 'complete, the invoice not yet paid on the subscription');
  await bill.subscriptionDo({ type: 'RecordSubscriptionPayment', invoiceId: RENEWAL });
  t.like(await bill.pastDue(), { position: null });
  t.deepEqual((await bill.appended()).subscription, ['RenewalPaid']);

  const unpaid = await firstBill(t, { renewal: true });
  unpaid.clock.set(Date.parse(unpaid.renewalDue));
  const result = await unpaid.pastDue();
  t.true('position' in result && result.position !== null);
  t.deepEqual((await unpaid.appended()).subscription, ['RenewalPaymentMissed']);

  // A part paid at the due time does not hold it: the rest is overdue.
  const partly = await firstBill(t, { renewal: true });
  await partly.sessionDo(detect('100000000'));
  await partly.confirm();
  partly.clock.set(Date.parse(partly.renewalDue));
  await partly.pastDue();
  t.deepEqual((await partly.appended()).subscription, ['RenewalPaymentMissed']);

  const followers = fakeFollowers(['weir-testnet']);
  const gated = await firstBill(t, {
    renewal: true,
    gate: readGate(followers),
  });
  gated.clock.set(Date.parse(gated.renewalDue));
  t.deepEqual(await gated.pastDue(), { notYet: true }, 'the follower has not read past the due time');
  followers.read('weir-testnet', Date.parse(gated.renewalDue) + 1000, 100n);
  await gated.pastDue();
  t.deepEqual((await gated.appended()).subscription, ['RenewalPaymentMissed']);
});

test('a first payment detected before the due time holds the expiry past it; confirmed, the subscription starts and the timer changes nothing', async (t) => {
  const bill = await firstBill(t);
  await bill.sessionDo(detect());
  for (const at of [DUE, '2026-01-01T03:00:00.000Z']) {
    bill.clock.set(Date.parse(at));
    t.deepEqual(await bill.expireFirst(), { notYet: true }, at);
  }
  t.deepEqual(
    await bill.appended(),
    { subscription: [], session: detectedOnly },
    'neither the session nor the subscription expires',
  );

  await bill.confirm();
  t.deepEqual(
    await bill.expireFirst(),
    { notYet: true },
    'complete, not yet recorded on the subscription: still waits',
  );
  await bill.commands.handle(
    subscriptionAggregate,
    SUBSCRIPTION_ID,
    { type: 'RecordSubscriptionPayment', invoiceId: bill.session.id },
    ctx,
  );
  t.deepEqual(await bill.expireFirst(), { position: null });
  t.deepEqual(await typesAppended(bill), {
    subscription: ['SubscriptionStarted'],
    session: ['PaymentDetected', 'PaymentConfirmed', 'CheckoutSessionCompleted'],
  });
});

test("a first payment withdrawn by a reorg after the due time: the session waits for it to be mined again until its height is final in another block, expires then, and the timer runner's next try expires the subscription", async (t) => {
  const bill = await firstBill(t);
  await bill.sessionDo(detect());
  bill.clock.set(Date.parse(DUE));
  await bill.readStore.collection<TimerDoc>(COLLECTIONS.timers).put(bill.timer);
  const followers = fakeFollowers([]);
  const { runner, lines } = startGatedTimers(t, {
    clock: bill.clock,
    readStore: bill.readStore,
    readThrough: followers.readThrough,
    handlers: () => bill.handlers,
  });
  await settle();
  bill.clock.advanceBy(NOT_YET_RETRY_MS);
  await settle();
  t.deepEqual(
    await bill.appended(),
    { subscription: [], session: detectedOnly },
    'tried again on the clock: still pending',
  );

  bill.clock.advanceBy(1000);
  await bill.sessionDo({ type: 'WithdrawTransfer', transferId: TRANSFER, reason: 'reorg' });
  // The matcher calls retryWaiting once it has handled the reorg: paid in time, the transfer may come back.
  runner.retryWaiting();
  await settle();
  t.deepEqual(await bill.appended(), { subscription: [], session: [...detectedOnly, ['PaymentWithdrawn', 'test']] });
  await bill.sessionDo({ type: 'WithdrawTransfer', transferId: TRANSFER, reason: NOT_IN_FINAL_BLOCK });
  runner.retryWaiting();
  await settle();
  t.deepEqual(await bill.appended(), {
    subscription: ['SubscriptionIncompleteExpired'],
    session: [
      ...detectedOnly,
      ['PaymentWithdrawn', 'test'],
      ['PaymentWithdrawn', 'test'],
      ['CheckoutSessionExpired', 'test'],
    ],
  });
  t.deepEqual(lines, [], 'waiting for a pending payment is no failure: nothing logged');
});

test('a first invoice: its expiry waits while a pay-page session has a payment pending, or withdrawn by a reorg and free to come back, and goes ahead once it is gone', async (t) => {
  const bill = await firstBill(t, { invoiceId: 'inv-1' });
  await bill.sessionDo(detect());
  bill.clock.set(Date.parse(DUE));
  t.deepEqual(await bill.expireFirst(), { notYet: true });
  t.deepEqual((await bill.appended()).subscription, []);

  // Withdrawn by a reorg: paid in time, it may be mined again, and the pay page waits for it.
  await bill.sessionDo({ type: 'WithdrawTransfer', transferId: TRANSFER, reason: 'reorg' });
  t.deepEqual(await bill.expireFirst(), { notYet: true });
  // Its height final in another block: the session awaits payment again, and the invoice's due time has passed.
  await bill.sessionDo({ type: 'WithdrawTransfer', transferId: TRANSFER, reason: NOT_IN_FINAL_BLOCK });
  const result = await bill.expireFirst();
  t.true('position' in result && result.position !== null);
  t.deepEqual(await bill.appended(), {
    subscription: ['SubscriptionIncompleteExpired'],
    session: [...detectedOnly, ['PaymentWithdrawn', 'test'], ['PaymentWithdrawn', 'test']],
  });
});

/** A gate on these followers, the matcher drained: it waits for them alone. */
const readGate =
  (followers: ReturnType<typeof fakeFollowers>) =>
  (clock: Parameters<typeof createChainReadGate>[0]['clock']): ChainReadGate =>
    createChainReadGate({
      clock,
      readThrough: followers.readThrough,
      matcherDrained: async () => true,
      maxWaitMs: HOUR,
      log: () => {},
    });

test("the expiry waits, like the session's own, for the chain followers of the first session's networks to read past the due time", async (t) => {
  const followers = fakeFollowers(['weir-testnet']);
  const bill = await firstBill(t, {
    gate: readGate(followers),
  });
  bill.clock.set(Date.parse(DUE));
  t.deepEqual(await bill.expireFirst(), { notYet: true });
  t.deepEqual(
    await bill.appended(),
    { subscription: [], session: [] },
    'the session is not expired before the follower read past its expiry',
  );

  followers.read('weir-testnet', Date.parse(DUE) + 1000, 100n);
  await bill.expireFirst();
  t.deepEqual(await bill.appended(), {
    subscription: ['SubscriptionIncompleteExpired'],
    session: [['CheckoutSessionExpired', 'system:timer']],
  });
});
