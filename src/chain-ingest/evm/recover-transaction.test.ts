import test from 'ava';
import { paymentFixture, sessionFixture } from '../../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionStatus, SessionPayment } from '../../../machines/checkout-session.types.ts';
import { createInProcessBus } from '../../bus/in-process-bus.ts';
import { WeirError } from '../../shared/errors.ts';
import type { RecoveryReads } from '../payment-intents.ts';
import { devnetNetwork } from './networks/devnet.ts';
import { createNetworkRegistry } from './networks/registry.ts';
import { classifyRecovery, createTransactionRecovery, evmRecoveryRail } from './recover-transaction.ts';

const payment = (transferId: string, status: SessionPayment['status'], late = false): SessionPayment => ({
  ...paymentFixture(transferId, '100000000'),
  status,
  detectedAt: '2026-01-01T00:10:00.000Z',
  confirmedAt: status === 'confirmed' ? '2026-01-01T00:11:00.000Z' : null,
  late,
});
const session = (status: CheckoutSessionStatus, payments: SessionPayment[]) =>
  sessionFixture({ status, payments, amountReceived: '100000000' });

test('a recovered transfer still pending is in process, whatever the session shows', (t) => {
  const result = classifyRecovery(session('complete', [payment('a', 'confirmed'), payment('b', 'pending')]), ['b'], 12);
  t.is(result.outcome, 'in_process');
  t.regex(result.message, /12 blocks/);
  t.is(classifyRecovery(session('open', []), ['b'], 1).outcome, 'in_process', 'not shown yet: still in process');
  t.regex(result.message, /recover it again once its block has them/, 'without a follower that tracks the block');
  t.regex(
    classifyRecovery(session('open', [payment('b', 'pending')]), ['b'], 12, true).message,
    /12 blocks\); the checkout session is updated then, with no further recovery$/,
    'the follower confirms it',
  );
});

test("confirmed transfers give the session's outcome: complete, partial, or a late payment on a closed session", (t) => {
  t.is(classifyRecovery(session('complete', [payment('a', 'confirmed')]), ['a'], 1).outcome, 'complete');
  const partial = classifyRecovery(session('incomplete', [payment('a', 'confirmed')]), ['a'], 1);
  t.is(partial.outcome, 'partial');
  t.regex(partial.message, /100000000 of 300000000/);
  t.is(classifyRecovery(session('expired', [payment('a', 'confirmed', true)]), ['a'], 1).outcome, 'late_payment');
  t.is(classifyRecovery(session('canceled', [payment('a', 'confirmed', true)]), ['a'], 1).outcome, 'late_payment');
});

test('a transfer withdrawn after a reorg and found on the chain again is in process, not refused: its block (the same once final, or another) credits it', (t) => {
  const again = classifyRecovery(session('open', [payment('a', 'withdrawn')]), ['a'], 12, true);
  t.is(again.outcome, 'in_process');
  t.regex(again.message, /12 blocks\); the checkout session is updated then, with no further recovery$/);
  t.is(
    classifyRecovery(session('complete', [payment('b', 'confirmed'), payment('a', 'withdrawn')]), ['a'], 1).outcome,
    'in_process',
  );
});

test("a 502 chain_unavailable names the network's endpoints by host only: their path and query may hold an API key", async (t) => {
  const token = (n: number) => `0x${n.toString(16).padStart(40, 'c')}`;
  const network = devnetNetwork({ usdc: token(1), usdt: token(2), dai: token(3) });
  // Nothing listens there: every read fails.
  const http = ['http://127.0.0.1:9/v2/KEY-IN-PATH', 'http://127.0.0.1:9/rpc?api-key=KEY-IN-QUERY'];
  const unused = (): never => {
    throw new Error('not read when the chain does not answer');
  };
  const reads: RecoveryReads = {
    targetAt: unused,
    session: unused,
    paymentStatus: unused,
    recordedIndexes: unused,
    onAdvanced: unused,
    caughtUp: unused,
  };
  const bus = createInProcessBus();
  t.teardown(() => bus.close());
  const lines: string[] = [];
  const recovery = createTransactionRecovery({
    rail: evmRecoveryRail(createNetworkRegistry({ networks: [network], rpc: { [network.chainId]: { http, ws: [] } } })),
    bus,
    reads,
    clock: { now: () => Date.parse('2026-01-01T00:30:00.000Z') },
    rpcTimeoutMs: 2_000,
    log: (line) => lines.push(line),
  });
  const error = await t.throwsAsync(
    recovery.recover({
      organizationId: 'org',
      environment: 'test',
      chainId: network.chainId,
      transactionHash: `0x${'ab'.repeat(32)}`,
    }),
    { instanceOf: WeirError },
  );
  t.is(error.statusCode, 502);
  const body = JSON.stringify(error.toBody());
  t.is(error.code, 'chain_unavailable');
  t.regex(body, /http:\/\/127\.0\.0\.1:9\/…/, 'each endpoint is still named, by its host');
  t.notRegex(body, /KEY-IN/);
  t.notRegex(lines.join('\n'), /KEY-IN/);
});
