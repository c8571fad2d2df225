import test from 'ava';
import { created as createdSession, detected, sessionFixture } from '../../machines/checkout-session.fixture.ts';
import {
  attemptStarted,
  created,
  finalized,
  INVOICE_ID,
  markedUncollectible,
  paid,
  receivedAfterPaid,
  recurringInvoiceFixture,
  voided,
} from '../../machines/invoice.fixture.ts';
import { subscriptionIdOfInvoice } from '../../machines/subscription.decide.ts';
import { TRON_LOCAL_CHAIN_ID } from '../chain-ingest/tron/networks.ts';
import type { EventStore, RecordedEvent } from '../event-store/event-store.ts';
import { invoicePayloadOf, invoiceWebhookTypeOf } from './invoice-webhook-events.ts';
import { publicEventKindsOf, publicEventOf, type RecordPresenters, renderWebhookBody } from './webhook-events.ts';

/** Invoice payloads need no session presenter. */
const unusedPresenters = {} as RecordPresenters;

const recorded = (events: { type: string; data: object }[], streamId = `invoice-${INVOICE_ID}`) =>
  events.map(
    (e, i) =>
      ({
        id: `e${i}`,
        streamId,
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
  // Paid twice: the reference lists no invoice event for it (no invoice.updated), and a second
  // invoice.paid would fulfil the order again; its session's checkout_session.completed tells it.
  const twice = recorded([created(), finalized(), attemptStarted('cs-1'), paid('cs-1'), receivedAfterPaid('cs-2')]);
  t.is(invoiceWebhookTypeOf(twice[4]!), null);
  t.like(invoicePayloadOf(twice), { status: 'paid', amountPaid: '600000000', amountOverpaid: '300000000' });
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

test('the invoice.paid webhook of an invoice paid on Tron before InvoicePaid recorded the chain shows the bare txID, the chain read from its checkout session', async (t) => {
  const txid = 'cd'.repeat(32);
  const session = sessionFixture();
  const onTron = detected('t1', '300000000');
  if (onTron.type !== 'PaymentDetected') throw new Error('a detection');
  const payment = { ...onTron.data.payment, chainId: TRON_LOCAL_CHAIN_ID, transactionHash: `0x${txid}` };
  const sessionLog = recorded(
    [createdSession(session), { ...onTron, data: { payment } }],
    `checkout_session-${session.id}`,
  );
  const stored = paid(session.id);
  if (stored.type !== 'InvoicePaid') throw new Error('a payment');
  // As stored before the chain was recorded: no `chainId`.
  const history = recorded([
    created(),
    finalized(),
    attemptStarted(session.id),
    { ...stored, data: { ...stored.data, transactionHash: `0x${txid}` } },
  ]);
  const streams = new Map([
    [`checkout_session-${session.id}`, sessionLog],
    [`invoice-${INVOICE_ID}`, history],
  ]);
  const render = async (known: Map<string, RecordedEvent[]>) => {
    const store = { readStream: async (streamId: string) => known.get(streamId) ?? [] } as unknown as EventStore;
    const source = history.at(-1)!;
    const [kind] = publicEventKindsOf(source);
    t.is(kind?.type, 'invoice.paid');
    const body = await renderWebhookBody(
      store,
      source,
      { ...publicEventOf(source, kind!), livemode: false },
      unusedPresenters,
    );
    return (JSON.parse(body) as { data: { object: { transactionHash: string } } }).data.object.transactionHash;
  };
  t.is(await render(streams), txid);
  streams.delete(`checkout_session-${session.id}`);
  t.is(await render(streams), `0x${txid}`, 'no session: as recorded');
});

test('a finalization failure recorded since its webhook exists is invoice.finalization_failed, carrying the invoice and lastFinalizationError; one recorded before (no announced) is never sent by a replay', (t) => {
  const failure = { code: 'payment_method_not_available', field: 'paymentMethods.chainIds[0]', message: 'no wallet' };
  const at = '2026-01-02T00:00:00.000Z';
  const history = recorded([
    created(),
    { type: 'InvoiceFinalizationFailed', data: { ...failure, at, announced: true } },
  ]);
  t.deepEqual(publicEventKindsOf(history[1]!), [{ type: 'invoice.finalization_failed', object: 'invoice' }]);
  const payload = invoicePayloadOf(history);
  t.like(payload, { id: INVOICE_ID, status: 'draft', lastFinalizationError: { ...failure, at } });
  t.false('announced' in (payload.lastFinalizationError ?? {}), 'the log’s flag is not on the invoice');
  const old = recorded([created(), { type: 'InvoiceFinalizationFailed', data: { ...failure, at } }]);
  t.deepEqual(publicEventKindsOf(old[1]!), [], 'an older Weir recorded it without sending anything');
});
