import test, { type ExecutionContext } from 'ava';
import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CheckoutSessionCommand } from '../../machines/checkout-session.decide.ts';
import { paymentFixture, sessionFixture } from '../../machines/checkout-session.fixture.ts';
import { NOT_IN_FINAL_BLOCK, type CheckoutSession } from '../../machines/checkout-session.types.ts';
import { subscriptionAggregate } from '../../machines/subscription.aggregate.ts';
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

/**
 * An incomplete subscription whose first bill is a checkout session (or, with `invoiceId`, the
 * invoice that checkout session is a pay page of), over a real log, at 00:10 (the bill is due at
 * 01:00); the session is in the read model as the checkout sessions projection shows it.
 * `expireFirst` runs the subscription's expiry timer as the timer runner would.
 */
async function firstBill(
  t: ExecutionContext,
  options: { invoiceId?: string; gate?: (clock: ReturnType<typeof createManualClock>) => ChainReadGate } = {},
) {
  const clock = createManualClock(Date.parse('2026-01-01T00:10:00.000Z'));
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  t.teardown(() => eventStore.close());
  const readStore = createEmbeddedReadStore({});
  const commands = createCommandHandler({ eventStore, clock });
  const session: CheckoutSession = options.invoiceId
    ? sessionFixture({ invoiceId: options.invoiceId, expiresAt: '2026-01-01T02:00:00.000Z' })
    : sessionFixture({ mode: 'subscription', subscriptionId: SUBSCRIPTION_ID });
  const bill = options.invoiceId
    ? { id: options.invoiceId, kind: 'invoice' as const, dueAt: DUE }
    : { id: session.id, kind: 'checkout_session' as const, dueAt: DUE };
  await commands.handle(checkoutSessionAggregate, session.id, { type: 'CreateCheckoutSession', session }, ctx);
  await readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).put({ ...session, _id: session.id });
  await commands.handle(
    subscriptionAggregate,
    SUBSCRIPTION_ID,
    { type: 'CreateSubscription', subscription: subscriptionFixture({ firstBill: bill }) },
    ctx,
  );
  const timer: TimerDoc = {
    _id: `${SUBSCRIPTION_TIMERS.expireFirst}:${SUBSCRIPTION_ID}`,
    kind: SUBSCRIPTION_TIMERS.expireFirst,
    recordId: SUBSCRIPTION_ID,
    organizationId: 'org-1',
    environment: 'test',
    fireAt: Date.parse(DUE),
  };
  const gate = options.gate?.(clock);
  const handlers = subscriptionTimerHandlers(commands, { readStore, ...(gate ? { gate } : {}) });
  const timerCtx = { ...ctx, actor: 'system:timer', causationId: timer._id };
  return {
    clock,
    readStore,
    commands,
    session,
    timer,
    sessionDo: (command: CheckoutSessionCommand) => commands.handle(checkoutSessionAggregate, session.id, command, ctx),
    confirm: () =>
      commands.handle(checkoutSessionAggregate, session.id, { type: 'ConfirmTransfer', transferId: TRANSFER }, ctx),
    expireFirst: () => handlers[SUBSCRIPTION_TIMERS.expireFirst]!(timer, timerCtx),
    handlers,
    /** The events appended to the subscription and to the session after their creation: type and actor. */
    appended: async () => ({
      subscription: (await eventStore.readStream(`subscription-${SUBSCRIPTION_ID}`)).slice(1).map((e) => e.type),
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

test("an unpaid first session is expired by the subscription's expiry, then the subscription; a part-paid one stays incomplete and the subscription expires as before", async (t) => {
  const unpaid = await firstBill(t);
  unpaid.clock.set(Date.parse(DUE));
  const result = await unpaid.expireFirst();
  t.true('position' in result && result.position !== null);
  t.deepEqual(await unpaid.appended(), {
    subscription: ['SubscriptionIncompleteExpired'],
    session: [['CheckoutSessionExpired', 'system:timer']],
  });

  // A first payment confirmed for less than the amount: the session is incomplete and does not expire; the subscription does.
  const partly = await firstBill(t);
  await partly.sessionDo(detect('100000000'));
  await partly.confirm();
  partly.clock.set(Date.parse(DUE));
  await partly.expireFirst();
  t.deepEqual(await typesAppended(partly), {
    subscription: ['SubscriptionIncompleteExpired'],
    session: ['PaymentDetected', 'PaymentConfirmed', 'CheckoutSessionPartiallyPaid'],
  });
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

test("the expiry waits, like the session's own, for the chain followers of the first session's networks to read past the due time", async (t) => {
  const followers = fakeFollowers(['weir-testnet']);
  const bill = await firstBill(t, {
    gate: (clock) =>
      createChainReadGate({
        clock,
        readThrough: followers.readThrough,
        matcherDrained: async () => true,
        maxWaitMs: HOUR,
        log: () => {},
      }),
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
