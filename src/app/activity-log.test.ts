import test from 'ava';
import { randomUUID } from 'node:crypto';
import type { NewEvent } from '../event-store/event-store.ts';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { writeCheckpoint } from '../audit/checkpoints.ts';
import { createManualClock } from '../shared/clock.ts';
import type { JsonObject } from '../shared/json.ts';
import { createLineLogger, logTo, scrubUrls } from '../shared/logger.ts';
import { activityLineOf, activityNameOf, createActivityLog } from './activity-log.ts';

const event = (type: string, data: JsonObject): NewEvent => ({
  id: randomUUID(),
  type,
  data,
  metadata: {
    organizationId: 'org-1',
    environment: 'test',
    actor: 'system:test',
    correlationId: randomUUID(),
    occurredAt: '2026-06-01T00:00:00.000Z',
  },
});

type Line = Record<string, unknown>;

async function activityOf(t: import('ava').ExecutionContext) {
  const eventStore = createSqliteEventStore({ path: ':memory:' });
  t.teardown(() => eventStore.close());
  const lines: Line[] = [];
  const logger = createLineLogger((line) => lines.push(JSON.parse(line) as Line), 'debug');
  return { eventStore, lines, activity: createActivityLog({ eventStore, logger }) };
}

const until = async (done: () => boolean) => {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((resolve) => setImmediate(resolve));
};

test('each event recorded after the start is one line with a stable name and ids; nothing recorded before is logged', async (t) => {
  const { eventStore, lines, activity } = await activityOf(t);
  await eventStore.append('checkout_session-old', [event('CheckoutSessionExpired', { at: 'x' })], 'no_stream');
  await activity.start();
  await eventStore.append(
    'checkout_session-s1',
    [
      event('PaymentDetected', {
        payment: {
          transferId: 'tr-1',
          network: 'sepolia',
          chainId: 11155111,
          transactionHash: `0x${'ab'.repeat(32)}`,
          logIndex: 3,
          blockNumber: 9,
          asset: { symbol: 'USDC' },
          amount: '150000000',
          amountRaw: '1500000',
          toAddress: '0xdeposit',
          fromAddress: '0xpayer',
        },
      }),
      event('PaymentWithdrawn', { transferId: 'tr-1', reason: 'reorg', at: 'x' }),
    ],
    'no_stream',
  );
  await eventStore.append(
    'customer-c1',
    [event('CustomerCreated', { customer: { email: 'a@b.example', name: 'Ada Private', phone: '+1555' } })],
    'no_stream',
  );
  await eventStore.append('idempotency-k1', [event('IdempotencyKeyClaimed', { key: 'k' })], 'no_stream');
  await until(() => lines.length >= 4);
  await activity.stop();

  t.deepEqual(
    lines.map((l) => [l.event, l.level]),
    [
      ['payment.detected', 30],
      ['payment.withdrawn', 40],
      ['customer.created', 30],
      ['idempotency.key_claimed', 20],
    ],
  );
  t.like(lines[0], {
    component: 'activity',
    organizationId: 'org-1',
    environment: 'test',
    sessionId: 's1',
    transferId: 'tr-1',
    network: 'sepolia',
    txHash: `0x${'ab'.repeat(32)}`,
    amount: '150000000',
    asset: 'USDC',
  });
  t.like(lines[1], { reason: 'reorg', transferId: 'tr-1' });
  t.like(lines[2], { customerId: 'c1' });
  const text = JSON.stringify(lines);
  for (const secret of ['a@b.example', 'Ada Private', '+1555', '0xpayer'])
    t.false(text.includes(secret), `${secret} is not logged`);
});

test("a checkpoint, the whole log's, is logged with what it signed and no organization or environment", async (t) => {
  const { eventStore, lines, activity } = await activityOf(t);
  await eventStore.append('checkout_session-s1', [event('CheckoutSessionExpired', { at: 'x' })], 'no_stream');
  await activity.start();
  const key = { publicKey: 'operator-key', sign: () => 'signature' };
  const clock = createManualClock(Date.parse('2026-06-01T00:00:00.000Z'));
  const checkpoint = await writeCheckpoint({ eventStore, key, clock });
  await until(() => lines.length >= 1);
  await activity.stop();

  t.is(lines.length, 1);
  t.like(lines[0], {
    event: 'audit_checkpoint.signed',
    recordId: 'log',
    actor: 'system:audit',
    position: checkpoint?.loggedAt,
    signedPosition: '1',
    signedHash: checkpoint?.hash,
  });
  t.false('organizationId' in lines[0]!, "no organizationId: the checkpoint is no tenant's");
  t.false('environment' in lines[0]!, "no environment: the checkpoint is no tenant's");
});

test("a sweep's line names its block and the wallet it went to, as its event does", async (t) => {
  const { eventStore, lines, activity } = await activityOf(t);
  await activity.start();
  const sweep = {
    network: 'devnet',
    chainId: 31337,
    transactionHash: `0x${'5e'.repeat(32)}`,
    blockNumber: 12,
    depositAddress: '0xdeposit',
    merchantAddress: '0xwallet',
    transferIds: ['tr-1'],
    gasUsed: '50000',
    gasCost: '1000',
    at: 'x',
  };
  await eventStore.append('checkout_session-s1', [event('FundsSwept', { sweep })], 'no_stream');
  await until(() => lines.length >= 1);
  await activity.stop();
  t.like(lines[0], {
    event: 'sweep.completed',
    txHash: sweep.transactionHash,
    blockNumber: 12,
    merchantAddress: '0xwallet',
  });
});

test('event names: the table first, else the category and the rest of the type', (t) => {
  t.is(
    activityNameOf({ type: 'CheckoutSessionCompleted', streamId: 'checkout_session-1' }),
    'checkout_session.completed',
  );
  t.is(activityNameOf({ type: 'FundsSwept', streamId: 'checkout_session-1' }), 'sweep.completed');
  t.is(activityNameOf({ type: 'InvoicePaid', streamId: 'invoice-1' }), 'invoice.paid');
  t.is(activityNameOf({ type: 'SubscriptionCanceled', streamId: 'subscription-1' }), 'subscription.canceled');
  t.is(activityNameOf({ type: 'RenewalPaid', streamId: 'subscription-1' }), 'subscription.renewal_paid');
  t.is(activityNameOf({ type: 'SomethingNew', streamId: 'gizmo-1' }), 'gizmo.something_new');
});

test('module lines: a [component] prefix becomes a field, failures are warnings, URLs lose their path, query and userinfo', (t) => {
  const lines: Line[] = [];
  const log = logTo(createLineLogger((line) => lines.push(JSON.parse(line) as Line)));
  log('[ingest sepolia] rpc: using https://user:pw@eth.example/v3/KEY123?x=1 instead of wss://b.example/ws (timeout)');
  log('[timers] invoice_reminder t1 fired: recorded', { event: 'timer.fired', level: 'debug' });
  log('plain line');
  log('[mail] invoice mail m1 failed (attempt 1): 550 <ada.q@mail.example.co.uk>: Recipient address rejected');
  t.like(lines[0], {
    component: 'ingest sepolia',
    level: 40,
    msg: 'rpc: using https://eth.example/… instead of wss://b.example/… (timeout)',
  });
  t.is(lines.length, 3, 'debug is below the default level');
  t.like(lines[1], { level: 30, msg: 'plain line' });
  t.like(lines[2], {
    component: 'mail',
    level: 40,
    msg: 'invoice mail m1 failed (attempt 1): 550 <[email]>: Recipient address rejected',
  });
  t.is(scrubUrls('listening on http://127.0.0.1:8080 (x)'), 'listening on http://127.0.0.1:8080 (x)');
});

test('the final that settles a withdrawn transfer is a payment.given_up line, not a second payment.withdrawn', async (t) => {
  const { eventStore, lines, activity } = await activityOf(t);
  await activity.start();
  await eventStore.append(
    'checkout_session-s1',
    [
      event('PaymentWithdrawn', { transferId: 'tr-1', reason: 'reorg', at: 'x' }),
      event('PaymentWithdrawn', { transferId: 'tr-1', reason: 'not in the final block', at: 'y', settled: true }),
    ],
    'no_stream',
  );
  await until(() => lines.length >= 2);
  await activity.stop();
  t.deepEqual(
    lines.map((l) => [l.event, l.msg, l.transferId, l.reason]),
    [
      ['payment.withdrawn', 'payment.withdrawn', 'tr-1', 'reorg'],
      ['payment.given_up', 'payment.given_up', 'tr-1', 'not in the final block'],
    ],
  );
  t.is(
    activityNameOf({ type: 'PaymentWithdrawn', streamId: 'checkout_session-1', data: { settled: true } }),
    'payment.given_up',
  );
  t.is(activityNameOf({ type: 'PaymentWithdrawn', streamId: 'checkout_session-1' }), 'payment.withdrawn');
});

test('money a paid invoice received through another session is an invoice.overpaid line, with the session, what it received in all and its transaction', (t) => {
  const line = activityLineOf({
    ...event('InvoicePaymentReceivedAfterPaid', {
      checkoutSessionId: 'cs-2',
      amountReceived: '300000000',
      amountGasFee: '1000000',
      completed: true,
      transactionHash: '0xbeef',
      chainId: 1,
      at: 'x',
    }),
    streamId: 'invoice-inv-1',
    revision: 5,
    position: 9n,
  });
  t.is(line.level, 'info');
  t.like(line.fields, {
    event: 'invoice.overpaid',
    invoiceId: 'inv-1',
    checkoutSessionId: 'cs-2',
    amountReceived: '300000000',
    amountGasFee: '1000000',
    completed: true,
    txHash: '0xbeef',
  });
});
