import test from 'ava';
import { confirmed, created, paymentFixture, sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSession, CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import { TRON_LOCAL_CHAIN_ID } from '../chain-ingest/tron/networks.ts';
import type { EventStore, RecordedEvent } from '../event-store/event-store.ts';
import { publicCheckoutSession } from '../projections/public-views.ts';
import type { JsonObject } from '../shared/json.ts';
import { publicEventOf, publicEventKindsOf, renderWebhookBody, type RecordPresenters } from './webhook-events.ts';

const AT = '2026-01-01T00:20:00.000Z';
const TXID = 'ab'.repeat(32);
const BLOCK_ID = 'bc'.repeat(32);

/** One stream's events as the log holds them, and a store that reads it back. */
function logOf(events: CheckoutSessionEvent[]) {
  const recorded: RecordedEvent[] = events.map((event, revision) => ({
    id: `e${revision}`,
    type: event.type,
    data: event.data as unknown as JsonObject,
    metadata: {
      organizationId: 'org-1',
      environment: 'test',
      actor: 'system:matcher',
      correlationId: 'c',
      occurredAt: AT,
    },
    streamId: 'checkout_session-cs_1',
    revision,
    position: BigInt(revision + 1),
  }));
  const store = { readStream: async () => recorded } as unknown as EventStore;
  return { recorded, store };
}

const present: RecordPresenters = {
  checkoutSession: async (session: CheckoutSession) => publicCheckoutSession(session),
  paymentIntent: async (session: CheckoutSession) => publicCheckoutSession(session).paymentIntent,
};

/** A transfer on the local Tron: its txID and block id kept as 0x…, as the follower reads them. */
const onTron = (transferId: string, amount: string, logIndex: number): CheckoutSessionEvent => ({
  type: 'PaymentDetected',
  data: {
    payment: {
      ...paymentFixture(transferId, amount),
      network: 'tron-local',
      chainId: TRON_LOCAL_CHAIN_ID,
      transactionHash: `0x${TXID}`,
      blockHash: `0x${BLOCK_ID}`,
      logIndex,
      status: 'pending',
      detectedAt: AT,
      confirmedAt: null,
      late: false,
    },
  },
});

test('a Tron session’s overpayment webhook shows its transfer by the bare txID (its block by the bare block id), the very transfer even when one transaction carries two', async (t) => {
  const { recorded, store } = logOf([
    created(sessionFixture()),
    onTron('t1', '300000000', 0),
    confirmed('t1', AT),
    {
      type: 'CheckoutSessionCompleted',
      data: { amountReceived: '300000000', amountOverpaid: '0', transactionHash: `0x${TXID}`, partial: false, at: AT },
    },
    // The payer's one transaction sent a second transfer (another log) to the deposit.
    onTron('t2', '50000000', 1),
    confirmed('t2', AT),
    {
      type: 'OverpaymentReceived',
      data: { transferId: 't2', amount: '50000000', amountOverpaid: '50000000', at: AT },
    },
  ]);
  const source = recorded.at(-1)!;
  const [kind] = publicEventKindsOf(source);
  const body = await renderWebhookBody(store, source, publicEventOf(source, kind!), present);
  const object = (JSON.parse(body) as { data: { object: Record<string, unknown> } }).data.object;
  t.is(object['transactionHash'], TXID);
  t.like(object['overpayment'], { transactionHash: TXID, amountRaw: '500000' });
  t.deepEqual(
    (object['payments'] as { blockHash: string }[]).map((p) => p.blockHash),
    [BLOCK_ID, BLOCK_ID],
  );
  t.notRegex(body, /0xab|0xbc/);
});

test('a Tron payment withdrawn from the chain is named by its bare txID in payment_intent.payment_failed', async (t) => {
  const { recorded, store } = logOf([
    created(sessionFixture()),
    onTron('t1', '300000000', 0),
    { type: 'PaymentWithdrawn', data: { transferId: 't1', reason: 'reorg', at: AT, paymentFailed: true } },
  ]);
  const source = recorded.at(-1)!;
  const [kind] = publicEventKindsOf(source);
  const body = await renderWebhookBody(store, source, publicEventOf(source, kind!), present);
  const object = (JSON.parse(body) as { data: { object: { lastPaymentError: Record<string, unknown> } } }).data.object;
  t.like(object.lastPaymentError, { code: 'payment_withdrawn', transactionHash: TXID, network: 'tron-local' });
});
