import test, { type ExecutionContext } from 'ava';
import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CheckoutSessionCommand } from '../../machines/checkout-session.decide.ts';
import { paymentFixture, sessionFixture } from '../../machines/checkout-session.fixture.ts';
import { renewalBill, subscriptionFixture } from '../../machines/subscription.fixture.ts';
import type { Subscription } from '../../machines/subscription.types.ts';
import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import { invoiceFixture, recurringInvoiceFixture } from '../../machines/invoice.fixture.ts';
import { subscriptionAggregate } from '../../machines/subscription.aggregate.ts';
import type { SubscriptionCommand } from '../../machines/subscription.decide.ts';
import type { InvoiceCommand } from '../../machines/invoice.decide.ts';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { createProjectionRunner } from '../projections/projection-runner.ts';
import { INVOICES, type InvoiceDoc } from '../projections/invoices.projection.ts';
import {
  SUBSCRIPTION_WORK,
  SUBSCRIPTIONS,
  type SubscriptionDoc,
  type SubscriptionWorkDoc,
} from '../projections/subscriptions.projection.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../projections/collections.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { createCommandHandler, type CommandHandler } from './command-handler.ts';
import { createSubscriptionBilling, firstSessionClosing } from './subscription-billing.ts';

const tenant = { organizationId: 'org-1', environment: 'test' as const, actor: 'test' };
const SUBSCRIPTION_ID = 'sub-1';

/**
 * The billing process manager over a real log, with one work item of `kind` on its list about the
 * record `sourceId` (stream `streamId`) that has had `history` (the projection wrote the work before
 * it saw the rest), and the subscription's document when given. Answers what one pass appended to
 * that stream (type, actor, cause) and what it logged.
 */
async function afterOnePass(
  t: ExecutionContext,
  kind: SubscriptionWorkDoc['kind'],
  streamId: string,
  sourceId: string,
  history: (commands: CommandHandler, readStore: ReadStore) => Promise<unknown>,
  subscription: Subscription | null = null,
) {
  const clock = createManualClock(Date.parse('2026-01-02T00:00:00.000Z'));
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  const readStore = createEmbeddedReadStore({});
  const commands = createCommandHandler({ eventStore, clock });
  const projections = createProjectionRunner({ eventStore, readStore, projections: [] });
  const lines: string[] = [];
  const billing = createSubscriptionBilling({
    clock,
    readStore,
    projections,
    commands,
    publicUrl: 'http://weir.test',
    log: (line) => lines.push(line),
  });
  t.teardown(async () => {
    await billing.stop();
    await projections.stop();
    await eventStore.close();
  });
  await projections.start();
  await history(commands, readStore);
  if (subscription)
    await readStore.collection<SubscriptionDoc>(SUBSCRIPTIONS).put({ ...subscription, _id: subscription.id });
  await readStore.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK).put({
    _id: `${kind}:${sourceId}`,
    kind,
    subscriptionId: SUBSCRIPTION_ID,
    organizationId: 'org-1',
    environment: 'test',
    sourceId,
    at: '2026-02-01T00:00:00.000Z',
  });
  const before = (await eventStore.readStream(streamId)).length;
  await billing.runOnce();
  const events = (await eventStore.readStream(streamId)).slice(before);
  return {
    lines,
    events: events.map((e) => [e.type, e.metadata.actor, e.metadata.causationId]),
    data: events.map((e) => e.data),
  };
}

/** `void_first_invoice` for a first invoice that has had `history`. */
function voidWorkAfter(t: ExecutionContext, history: InvoiceCommand[]) {
  const invoice = recurringInvoiceFixture();
  return afterOnePass(t, 'void_first_invoice', `invoice-${invoice.id}`, invoice.id, async (commands) => {
    for (const command of [{ type: 'CreateInvoice', invoice } as const, ...history])
      await commands.handle(invoiceAggregate, invoice.id, command, tenant);
  });
}

const finalize: InvoiceCommand = { type: 'FinalizeInvoice', url: 'http://weir.test/invoices/pay' };

test('void_first_invoice voids an open first invoice through its void command, saying who and why', async (t) => {
  const { lines, events } = await voidWorkAfter(t, [finalize]);
  t.deepEqual(events, [['InvoiceVoided', 'system:subscription-billing', SUBSCRIPTION_ID]]);
  t.deepEqual(lines, []);
});

test('void_first_invoice is done when the invoice is already void, or was paid in the meantime: nothing appended, nothing refused', async (t) => {
  for (const last of [{ type: 'VoidInvoice' }, { type: 'MarkInvoicePaid' }] as const) {
    const { lines, events } = await voidWorkAfter(t, [finalize, last]);
    t.deepEqual(events, [], last.type);
    t.deepEqual(lines, [], `${last.type}: not logged as a refusal`);
  }
});

/**
 * `close_first_session` for the first checkout session (expired an hour after it opened, a day
 * before the pass) of a subscription now `status`, after `history` of the session.
 */
function closeWorkAfter(
  t: ExecutionContext,
  status: 'canceled' | 'incomplete_expired',
  history: CheckoutSessionCommand[],
) {
  const session = sessionFixture({ mode: 'subscription', subscriptionId: SUBSCRIPTION_ID });
  const subscription = {
    ...subscriptionFixture({
      id: SUBSCRIPTION_ID,
      firstBill: { id: session.id, kind: 'checkout_session', dueAt: session.expiresAt },
    }),
    status,
  };
  return afterOnePass(
    t,
    'close_first_session',
    `checkout_session-${session.id}`,
    session.id,
    async (commands) => {
      for (const command of [{ type: 'CreateCheckoutSession', session } as const, ...history])
        await commands.handle(checkoutSessionAggregate, session.id, command, tenant);
    },
    subscription,
  );
}

test('close_first_session cancels the open session of a subscription the merchant ended, and expires that of one that expired unpaid, saying who and why', async (t) => {
  const ended = await closeWorkAfter(t, 'canceled', []);
  t.deepEqual(ended.events, [['CheckoutSessionCanceled', 'system:subscription-billing', SUBSCRIPTION_ID]]);
  t.like(ended.data[0], { reason: 'the subscription was canceled' });
  t.deepEqual(ended.lines, []);
  // Its expiry is the session's: the same fact whether the session's own timer or this work records it first.
  const expired = await closeWorkAfter(t, 'incomplete_expired', []);
  t.deepEqual(expired.events, [['CheckoutSessionExpired', 'system:subscription-billing', SUBSCRIPTION_ID]]);
  t.deepEqual(expired.lines, []);
  t.deepEqual(firstSessionClosing('incomplete_expired'), { type: 'ExpireCheckoutSession' });
  t.deepEqual(firstSessionClosing('canceled'), {
    type: 'CancelCheckoutSession',
    reason: 'the subscription was canceled',
  });
});

test('close_first_session is done when the session left open first (canceled, expired, paid in full or in part): nothing appended, nothing refused', async (t) => {
  const pay = (amount: string): CheckoutSessionCommand[] => [
    { type: 'RecordTransfer', payment: paymentFixture(`t-${amount}`, amount) },
    { type: 'ConfirmTransfer', transferId: `t-${amount}` },
  ];
  const histories: Record<string, CheckoutSessionCommand[]> = {
    canceled: [{ type: 'CancelCheckoutSession', reason: 'canceled by the merchant' }],
    expired: [{ type: 'ExpireCheckoutSession' }],
    complete: pay('300000000'),
    incomplete: pay('100000000'),
  };
  for (const status of ['canceled', 'incomplete_expired'] as const) {
    for (const [left, history] of Object.entries(histories)) {
      const { lines, events } = await closeWorkAfter(t, status, history);
      t.deepEqual(events, [], `${status}, session ${left}`);
      t.deepEqual(lines, [], `${status}, session ${left}: not logged as a refusal`);
    }
  }
});

/**
 * `void_unpaid_invoice` for the renewal invoice of an ended subscription that has had `history`,
 * with a checkout session of its pay page in `payPage` (as the sessions read model shows it) when given.
 */
function voidUnpaidWorkAfter(
  t: ExecutionContext,
  history: InvoiceCommand[],
  payPage: CheckoutSessionDoc['status'] | null = null,
) {
  const invoice = recurringInvoiceFixture(1, { subscriptionId: SUBSCRIPTION_ID, billingReason: 'subscription_cycle' });
  return afterOnePass(t, 'void_unpaid_invoice', `invoice-${invoice.id}`, invoice.id, async (commands, readStore) => {
    for (const command of [{ type: 'CreateInvoice', invoice } as const, ...history])
      await commands.handle(invoiceAggregate, invoice.id, command, tenant);
    if (payPage) {
      const session = sessionFixture({
        id: 'cs-pay',
        invoiceId: invoice.id,
        status: payPage,
        amountReceived: payPage === 'incomplete' ? '100000000' : '0',
      });
      await readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).put({ ...session, _id: session.id });
    }
  });
}

test('void_unpaid_invoice voids the open or uncollectible renewal invoice of an ended subscription through its void command, saying who and why', async (t) => {
  for (const history of [[finalize], [finalize, { type: 'MarkInvoiceUncollectible' } as const]]) {
    const { lines, events } = await voidUnpaidWorkAfter(t, history);
    t.deepEqual(
      events,
      [['InvoiceVoided', 'system:subscription-billing', SUBSCRIPTION_ID]],
      history.map((c) => c.type).join(', '),
    );
    t.deepEqual(lines, []);
  }
  // A pay page opened, or expired, without receiving anything does not keep it open.
  for (const payPage of ['open', 'expired'] as const) {
    t.deepEqual(
      (await voidUnpaidWorkAfter(t, [finalize], payPage)).events,
      [['InvoiceVoided', 'system:subscription-billing', SUBSCRIPTION_ID]],
      payPage,
    );
  }
});

test('void_unpaid_invoice is done when the invoice is already void, was paid, or was partly paid in the meantime: nothing appended, nothing refused', async (t) => {
  for (const last of [{ type: 'VoidInvoice' }, { type: 'MarkInvoicePaid' }] as const) {
    const { lines, events } = await voidUnpaidWorkAfter(t, [finalize, last]);
    t.deepEqual(events, [], last.type);
    t.deepEqual(lines, [], `${last.type}: not logged as a refusal`);
  }
  const partly = await voidUnpaidWorkAfter(t, [finalize], 'incomplete');
  t.deepEqual(partly.events, [], 'partly paid: it stays open with the money on its pay page');
  t.deepEqual(partly.lines, []);
});

test('issue_invoice issues nothing for a subscription that ended after its renewal was issued', async (t) => {
  const bill = renewalBill('inv-2', '2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z');
  const subscription: Subscription = {
    ...subscriptionFixture({ id: SUBSCRIPTION_ID }),
    status: 'canceled',
    latestInvoice: bill,
    latestInvoiceId: bill.id,
  };
  const { lines, events } = await afterOnePass(
    t,
    'issue_invoice',
    'invoice-inv-2',
    'inv-2',
    async () => undefined,
    subscription,
  );
  t.deepEqual(events, [], 'not created, not sent');
  t.deepEqual(lines, []);
});

/** `delete_draft_invoice` for the renewal invoice of an ended subscription, created as a draft, that has had `history`. */
function deleteDraftWorkAfter(t: ExecutionContext, history: InvoiceCommand[]) {
  const invoice = recurringInvoiceFixture(1, { subscriptionId: SUBSCRIPTION_ID, billingReason: 'subscription_cycle' });
  return afterOnePass(t, 'delete_draft_invoice', `invoice-${invoice.id}`, invoice.id, async (commands) => {
    for (const command of [{ type: 'CreateInvoice', invoice } as const, ...history])
      await commands.handle(invoiceAggregate, invoice.id, command, tenant);
  });
}

test('delete_draft_invoice deletes the renewal draft of an ended subscription through its delete command, saying who and why; one deleted, or finalized in the meantime, is done', async (t) => {
  const { lines, events } = await deleteDraftWorkAfter(t, []);
  t.deepEqual(events, [['InvoiceDeleted', 'system:subscription-billing', SUBSCRIPTION_ID]]);
  t.deepEqual(lines, []);
  // Deleted already, or finalized by its issue under way as the end came (then voided, paid or written off): nothing appended, nothing refused.
  const histories: InvoiceCommand[][] = [
    [{ type: 'DeleteInvoice' }],
    [finalize],
    [finalize, { type: 'VoidInvoice' }],
    [finalize, { type: 'MarkInvoicePaid' }],
    [finalize, { type: 'MarkInvoiceUncollectible' }],
  ];
  for (const history of histories) {
    const done = await deleteDraftWorkAfter(t, history);
    const what = history.map((c) => c.type).join(', ');
    t.deepEqual(done.events, [], what);
    t.deepEqual(done.lines, [], `${what}: not logged as a refusal`);
  }
});

test('issue_invoice issues nothing for a renewal whose draft the merchant deleted (the projection of the delete replaces the work): nothing sent, nothing refused', async (t) => {
  const bill = renewalBill('inv-2', '2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z');
  const subscription: Subscription = {
    ...subscriptionFixture({ id: SUBSCRIPTION_ID }),
    status: 'active',
    latestInvoice: bill,
    latestInvoiceId: bill.id,
  };
  const { lines, events } = await afterOnePass(
    t,
    'issue_invoice',
    'invoice-inv-2',
    'inv-2',
    async (_commands, readStore) => {
      const draft = invoiceFixture({
        id: 'inv-2',
        subscriptionId: SUBSCRIPTION_ID,
        deletedAt: '2026-02-01T01:00:00.000Z',
      });
      await readStore.collection<InvoiceDoc>(INVOICES).put({ ...draft, _id: draft.id, _revision: 1 });
    },
    subscription,
  );
  t.deepEqual(events, []);
  t.deepEqual(lines, []);
});

/**
 * `record_deleted_renewal` for renewal `inv-2` of a subscription (started in November, renewed now)
 * that has had `history` since.
 */
function recordDeletedRenewalAfter(t: ExecutionContext, history: SubscriptionCommand[]) {
  const subscription = subscriptionFixture({
    id: SUBSCRIPTION_ID,
    createdAt: '2025-11-01T00:00:00.000Z',
    firstBill: { id: 'cs-1', kind: 'checkout_session', dueAt: '2025-11-01T01:00:00.000Z' },
  });
  const commands: SubscriptionCommand[] = [
    { type: 'CreateSubscription', subscription },
    { type: 'RecordSubscriptionPayment', invoiceId: 'cs-1' },
    { type: 'RenewSubscription', invoiceId: 'inv-2' },
    ...history,
  ];
  return afterOnePass(t, 'record_deleted_renewal', `subscription-${SUBSCRIPTION_ID}`, 'inv-2', async (handler) => {
    for (const command of commands) await handler.handle(subscriptionAggregate, SUBSCRIPTION_ID, command, tenant);
  });
}

test('record_deleted_renewal records on the subscription that its renewal draft was deleted; recorded already, or ended in the meantime, it is done', async (t) => {
  const { lines, events } = await recordDeletedRenewalAfter(t, []);
  t.deepEqual(events, [['RenewalInvoiceDeleted', 'system:subscriptions', 'inv-2']]);
  t.deepEqual(lines, []);
  for (const history of [
    [{ type: 'RecordRenewalInvoiceDeleted', invoiceId: 'inv-2' }],
    [{ type: 'EndSubscription', comment: null }],
  ] satisfies SubscriptionCommand[][]) {
    const done = await recordDeletedRenewalAfter(t, history);
    t.deepEqual(done.events, [], history[0]!.type);
    t.deepEqual(done.lines, [], `${history[0]!.type}: not logged as a refusal`);
  }
});
