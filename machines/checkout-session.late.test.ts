import test from 'ava';
import {
  canceled,
  confirmed,
  confirmedLate,
  detected,
  markedRefunded,
  paymentFixture,
  sessionAfterEvents,
  sessionFixture,
} from './checkout-session.fixture.ts';
import {
  confirmingAfterClose,
  lateMoney,
  moneyAtClose,
  paidAfterClose,
  paidAtClose,
  receivedSplit,
} from './checkout-session.late.ts';

const ids = (money: { payments: { transferId: string }[] } | null) => money?.payments.map((p) => p.transferId);

test('money at a close is each late-money rule at once: paid split at the close, every late payment, what is left to settle past a mark, what is still confirming', (t) => {
  // 1 USDC in time, canceled, 2 USDC late and marked refunded, 0.50 late after the mark, 0.25 confirming.
  const session = sessionAfterEvents(
    detected('a', '100000000'),
    confirmed('a'),
    canceled('2026-01-01T00:20:00.000Z'),
    detected('b', '200000000', '2026-01-01T00:21:00.000Z'),
    ...confirmedLate('b', '200000000', '2026-01-01T00:25:00.000Z'),
    markedRefunded('2026-01-02T09:00:00.000Z'),
    detected('c', '50000000', '2026-01-02T10:00:00.000Z'),
    ...confirmedLate('c', '50000000', '2026-01-02T10:05:00.000Z'),
    detected('d', '25000000', '2026-01-02T11:00:00.000Z'),
  );
  const money = moneyAtClose(session);
  t.is(money.paid.beforeClose, 100000000n);
  t.like(money.paid.afterClose, { amount: 250000000n, sentBefore: 0n, close: 'the cancel' });
  t.deepEqual(ids(money.paid.afterClose), ['b', 'c']);
  t.deepEqual(ids(money.lateReceived), ['b', 'c']);
  t.like(money.late, { amount: 50000000n, refundedAt: null });
  t.deepEqual(ids(money.late), ['c'], 'the mark covered b: only c is left to settle');
  t.like(money.confirming, { amount: 25000000n });
  t.deepEqual(ids(money.confirming), ['d']);
  t.true(money.paidAfterClose);
  // The very rules the pages read one by one before: one derivation, the same figures.
  t.deepEqual(money, {
    paid: paidAtClose(session),
    lateReceived: receivedSplit(session).afterClose,
    late: lateMoney(session),
    confirming: confirmingAfterClose(session),
    paidAfterClose: paidAfterClose(session),
  });
});

test("money after a short completion is received, not split: the paid figure is the API's amountReceived, the late payment is still listed", (t) => {
  const at = '2026-01-01T00:11:00.000Z';
  const payment = (transferId: string, amount: string, late: boolean) => ({
    ...paymentFixture(transferId, amount),
    status: 'confirmed' as const,
    detectedAt: at,
    confirmedAt: at,
    late,
  });
  const session = sessionFixture({
    status: 'complete',
    paymentStatus: 'paid',
    amountReceived: '300000000',
    payments: [payment('a', '290000000', false), payment('b', '10000000', true)],
  });
  const money = moneyAtClose(session);
  t.deepEqual(money.paid, { beforeClose: 300000000n, afterClose: null });
  t.like(money.lateReceived, { amount: 10000000n });
  t.deepEqual(ids(money.lateReceived), ['b']);
  t.false(money.paidAfterClose);
  t.deepEqual(ids(money.confirming), []);
  t.deepEqual(moneyAtClose(sessionFixture()).paid, { beforeClose: 0n, afterClose: null });
});
