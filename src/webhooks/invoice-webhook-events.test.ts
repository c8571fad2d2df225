import test from 'ava';
import {
  created,
  finalized,
  INVOICE_ID,
  markedUncollectible,
  recurringInvoiceFixture,
  voided,
} from '../../machines/invoice.fixture.ts';
import { subscriptionIdOfInvoice } from '../../machines/subscription.decide.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { invoicePayloadOf, invoiceWebhookTypeOf } from './invoice-webhook-events.ts';

const recorded = (events: { type: string; data: object }[]) =>
  events.map(
    (e, i) =>
      ({
        id: `e${i}`,
        streamId: `invoice-${INVOICE_ID}`,
        revision: i,
        position: BigInt(i + 1),
        type: e.type,
        data: e.data,
        metadata: { organizationId: 'org-1', environment: 'test', actor: 't', occurredAt: '2026-01-02T00:00:00.000Z' },
      }) as unknown as RecordedEvent,
  );

test('invoice log events map to public webhook events with the invoice as payload', (t) => {
  const history = recorded([created(), finalized()]);
  t.is(invoiceWebhookTypeOf(history[0]!), null);
  t.is(invoiceWebhookTypeOf(history[1]!), 'invoice.finalized');
  t.is(invoiceWebhookTypeOf({ ...history[1]!, streamId: 'checkout_session-x' }), null);
  const payload = invoicePayloadOf(history);
  t.is(payload.id, INVOICE_ID);
  t.is(payload.status, 'open');
  t.is(payload.object, 'invoice');
  t.is(
    invoiceWebhookTypeOf(recorded([created(), finalized(), voided()])[2]!),
    null,
    'void has no public event in the reference list',
  );
});

test('the payload of the first invoice of a recurring series names the subscription its finalize creates; a renewal its own, a one-time invoice none', (t) => {
  const first = recurringInvoiceFixture();
  for (const history of [
    [created(first), finalized()],
    [created(first), finalized(), markedUncollectible()],
  ])
    t.is(invoicePayloadOf(recorded(history)).subscriptionId, subscriptionIdOfInvoice(INVOICE_ID));
  const renewal = recurringInvoiceFixture(1, { subscriptionId: 'sub-1', billingReason: 'subscription_cycle' });
  t.is(invoicePayloadOf(recorded([created(renewal), finalized()])).subscriptionId, 'sub-1');
  t.is(invoicePayloadOf(recorded([created(), finalized()])).subscriptionId, null);
});
