import test from 'ava';
import { created, finalized, INVOICE_ID, voided } from '../../machines/invoice.fixture.ts';
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
