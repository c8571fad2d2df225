import test from 'ava';
import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CheckoutSessionCommand } from '../../machines/checkout-session.decide.ts';
import {
  confirmed,
  created,
  detected,
  paymentFixture,
  sessionFixture,
} from '../../machines/checkout-session.fixture.ts';
import {
  NOT_IN_FINAL_BLOCK,
  type CheckoutSession,
  type CheckoutSessionEvent,
} from '../../machines/checkout-session.types.ts';
import { givenWhenThen } from '../actors/given-when-then.ts';
import { decideFirstBillDiscount } from '../../machines/subscription.decide.ts';
import {
  created as subscriptionCreated,
  SUBSCRIPTION_ID,
  subscriptionFixture,
} from '../../machines/subscription.fixture.ts';
import { TRON_LOCAL_CHAIN_ID } from '../chain-ingest/tron/networks.ts';
import type { EventStore, RecordedEvent } from '../event-store/event-store.ts';
import { publicCheckoutSession } from '../projections/public-views.ts';
import { createTestLog } from '../projections/test-log.ts';
import type { JsonObject } from '../shared/json.ts';
import { subscriptionPayloadOf } from './subscription-webhook-events.ts';
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
  const body = await renderWebhookBody(store, source, { ...publicEventOf(source, kind!), livemode: false }, present);
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
  const body = await renderWebhookBody(store, source, { ...publicEventOf(source, kind!), livemode: false }, present);
  const object = (JSON.parse(body) as { data: { object: { lastPaymentError: Record<string, unknown> } } }).data.object;
  t.like(object.lastPaymentError, { code: 'payment_withdrawn', transactionHash: TXID, network: 'tron-local' });
});

/** The events the session's decider records for `commands` in turn, after `history`. */
function decided(history: CheckoutSessionEvent[], commands: CheckoutSessionCommand[], now: string) {
  const given = givenWhenThen(checkoutSessionAggregate);
  return commands.reduce((events, command) => [...events, ...given(events).when(command, now)], history);
}

test('a payment reorged away sends no payment_intent.payment_failed while the session waits for it to be mined again; exactly one once its height is final in another block, the intent then needing a payment', async (t) => {
  const history = [created(sessionFixture()), detected('t1', '300000000')];
  const reorged = decided(history, [{ type: 'WithdrawTransfer', transferId: 't1', reason: 'reorg' }], AT);
  const gone = decided(reorged, [{ type: 'WithdrawTransfer', transferId: 't1', reason: NOT_IN_FINAL_BLOCK }], AT);
  const { recorded, store } = logOf(gone);
  const kinds = recorded.map((event) => publicEventKindsOf(event).map((kind) => kind.type));
  t.deepEqual(kinds.slice(history.length), [[], ['payment_intent.payment_failed']]);
  const source = recorded.at(-1)!;
  const body = await renderWebhookBody(
    store,
    source,
    { ...publicEventOf(source, publicEventKindsOf(source)[0]!), livemode: false },
    present,
  );
  t.like((JSON.parse(body) as { data: { object: Record<string, unknown> } }).data.object, {
    status: 'requires_payment_method',
    lastPaymentError: { code: 'payment_withdrawn' },
  });
});

test('a payment awaited back past expiresAt and then given up expires the session: payment_intent.canceled with the expiry, no payment_failed', (t) => {
  const later = '2026-01-01T01:00:00.000Z';
  const history = [created(sessionFixture()), detected('t1', '300000000')];
  const events = decided(
    history,
    [
      { type: 'WithdrawTransfer', transferId: 't1', reason: 'reorg' },
      { type: 'WithdrawTransfer', transferId: 't1', reason: NOT_IN_FINAL_BLOCK },
    ],
    later,
  );
  const { recorded } = logOf(events);
  t.deepEqual(
    recorded.slice(history.length).flatMap((event) => publicEventKindsOf(event).map((kind) => kind.type)),
    ['checkout_session.expired', 'payment_intent.canceled'],
  );
});

/** A log of the first checkout session `cs-1` and the subscription it creates, in the order given, and a store that reads each stream back. */
function subscriptionLog(order: 'code first' | 'subscription first') {
  const log = createTestLog(AT);
  const discount = { couponId: 'co-1', promotionCodeId: 'promo-1', code: 'HALF', amountDiscount: '400000000', at: AT };
  const session = 'checkout_session-cs-1';
  const subscription = `subscription-${SUBSCRIPTION_ID}`;
  log.append(session, created(sessionFixture({ id: 'cs-1' })));
  const applyCode = () => log.append(session, { type: 'DiscountApplied', data: { discount } });
  if (order === 'code first') applyCode();
  const creation = log.append(subscription, subscriptionCreated());
  if (order === 'subscription first') applyCode();
  // What the billing workflow records once it sees both (v4): the first bill as the session asks it.
  const decided = decideFirstBillDiscount(
    subscriptionFixture(),
    'incomplete',
    { type: 'RecordFirstBillDiscount', invoiceId: 'cs-1', promotionCodeId: 'promo-1', amountDiscount: '400000000' },
    AT,
  );
  for (const event of decided) log.append(subscription, event);
  const store = {
    readStream: async (streamId: string) => log.events.filter((e) => e.streamId === streamId),
  } as unknown as EventStore;
  return { store, creation, discounted: log.events.at(-1)! };
}

async function subscriptionHook(store: EventStore, source: RecordedEvent) {
  const [kind] = publicEventKindsOf(source);
  const body = await renderWebhookBody(store, source, { ...publicEventOf(source, kind!), livemode: false }, present);
  return JSON.parse(body) as { type: string; data: { object: { latestInvoice: Record<string, unknown> } } };
}

test('customer.subscription.created shows the first bill discounted by a code applied to its session before the subscription was created, as the API shows it once the billing records it', async (t) => {
  const { store, creation, discounted } = subscriptionLog('code first');
  const hook = await subscriptionHook(store, creation);
  t.is(hook.type, 'customer.subscription.created');
  t.like(hook.data.object.latestInvoice, {
    id: null,
    checkoutSessionId: 'cs-1',
    amountDue: '600000000',
    amountDiscount: '400000000',
  });
  const recorded = subscriptionPayloadOf(
    (await store.readStream(discounted.streamId)).filter((e) => e.revision <= discounted.revision),
  );
  t.deepEqual(hook.data.object.latestInvoice, recorded.latestInvoice as unknown as Record<string, unknown>);
});

test('customer.subscription.created shows the first bill in full when the code was applied after the subscription was created', async (t) => {
  const { store, creation } = subscriptionLog('subscription first');
  const hook = await subscriptionHook(store, creation);
  t.like(hook.data.object.latestInvoice, { id: null, checkoutSessionId: 'cs-1', amountDue: '1000000000' });
  t.false('amountDiscount' in hook.data.object.latestInvoice);
});
