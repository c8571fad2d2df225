import test from 'ava';
import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import { recurringInvoiceFixture } from '../../machines/invoice.fixture.ts';
import type { InvoiceCommand } from '../../machines/invoice.decide.ts';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { createProjectionRunner } from '../projections/projection-runner.ts';
import { SUBSCRIPTION_WORK, type SubscriptionWorkDoc } from '../projections/subscriptions.projection.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { createCommandHandler } from './command-handler.ts';
import { createSubscriptionBilling } from './subscription-billing.ts';

const tenant = { organizationId: 'org-1', environment: 'test' as const, actor: 'test' };
const SUBSCRIPTION_ID = 'sub-1';

/**
 * The billing process manager over a real log, with one `void_first_invoice` work item on its list
 * for a first invoice that has had `history` (the projection wrote the work before it saw the rest).
 */
async function voidWorkAfter(t: import('ava').ExecutionContext, history: InvoiceCommand[]) {
  const clock = createManualClock(Date.parse('2026-01-02T00:00:00.000Z'));
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  const readStore = createEmbeddedReadStore({});
  const commands = createCommandHandler({ eventStore, clock });
  const projections = createProjectionRunner({ eventStore, readStore, projections: [] });
  const lines: string[] = [];
  const billing = createSubscriptionBilling({ clock, readStore, projections, commands, publicUrl: 'http://weir.test', log: (line) => lines.push(line) });
  t.teardown(async () => { await billing.stop(); await projections.stop(); await eventStore.close(); });
  await projections.start();
  const invoice = recurringInvoiceFixture();
  for (const command of [{ type: 'CreateInvoice', invoice } as const, ...history]) await commands.handle(invoiceAggregate, invoice.id, command, tenant);
  await readStore.collection<SubscriptionWorkDoc>(SUBSCRIPTION_WORK).put({
    _id: `void_first_invoice:${invoice.id}`, kind: 'void_first_invoice', subscriptionId: SUBSCRIPTION_ID, organizationId: 'org-1', environment: 'test',
    sourceId: invoice.id, at: '2026-02-01T00:00:00.000Z',
  });
  const before = (await eventStore.readStream(`invoice-${invoice.id}`)).length;
  await billing.runOnce();
  const events = (await eventStore.readStream(`invoice-${invoice.id}`)).slice(before);
  return { lines, events: events.map((e) => [e.type, e.metadata.actor, e.metadata.causationId]) };
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
