import test from 'ava';
import { paymentFixture, sessionFixture } from '../../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionStatus, SessionPayment } from '../../../machines/checkout-session.types.ts';
import { classifyRecovery } from './recover-transaction.ts';

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
