import test, { type ExecutionContext } from 'ava';
import { renewalBill, subscriptionFixture } from '../../machines/subscription.fixture.ts';
import type { Subscription } from '../../machines/subscription.types.ts';
import { invoiceFixture } from '../../machines/invoice.fixture.ts';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { createProjectionRunner } from '../projections/projection-runner.ts';
import { INVOICES, type InvoiceDoc } from '../projections/invoices.projection.ts';
import {
  SUBSCRIPTION_WORK,
  SUBSCRIPTIONS,
  type SubscriptionDoc,
  type SubscriptionWorkDoc,
} from '../projections/subscriptions.projection.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { createCommandHandler, type CommandHandler } from './command-handler.ts';
import { createSubscriptionBilling } from './subscription-billing.ts';

const _tenant = { organizationId: 'org-1', environment: 'test' as const, actor: 'test' };
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

test('issue_invoice issues nothing for a renewal whose draft the merchant deleted (the projection of the delete takes the work off the list): nothing sent, nothing refused', async (t) => {
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
