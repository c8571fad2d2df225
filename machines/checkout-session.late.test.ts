import test from 'ava';
import {
  canceled,
  confirmed,
  confirmedLate,
  detectedDai,
  detected,
  dustSentBeforeCancel,
  halfOverThenCanceled,
  lateHalfMakesAUnit,
  markedRefunded,
  paymentFixture,
  sessionAfterEvents,
  sessionFixture,
} from './checkout-session.fixture.ts';
import {
  allSentBefore,
  confirmingAfterClose,
  hasLateToSettle,
  lateMoney,
  latePaidInvoice,
  moneyAtClose,
  paidAfterClose,
  paidAtClose,
  receivedSplit,
  refundMarkedAt,
  withInvoicePaidLate,
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

test('an 18-decimal session split at its close adds up to its amountReceived to the unit: only the part before the close is rounded down, the late part is the rest', (t) => {
  // 1.000000005 in time, the cancel, 2.000000005 late: 3.00000001 received. Each part cut on its own
  // came to 1.00000000 + 2.00000000, a unit short.
  const session = sessionAfterEvents(
    detectedDai('a', '1000000005000000000'),
    confirmed('a'),
    canceled(),
    detectedDai('b', '2000000005000000000', '2026-01-01T00:21:00.000Z'),
    ...confirmedLate('b', '200000000'),
  );
  t.is(session.amountReceived, '300000001');
  const { paid, lateReceived } = moneyAtClose(session);
  t.is(paid.beforeClose, 100000000n);
  t.like(paid.afterClose, { amount: 200000001n, sentBefore: 0n });
  t.is(paid.beforeClose + (paid.afterClose?.amount ?? 0n), 300000001n);
  t.is(lateReceived.amount, 200000001n, "the dashboard's late row is the same rest");
  // Sent before the cancel and confirmed after it: all of the late part, the carried unit included.
  const sentBefore = sessionAfterEvents(
    detectedDai('a', '1000000005000000000'),
    confirmed('a'),
    detectedDai('b', '2000000005000000000'),
    canceled(),
    ...confirmedLate('b', '200000000'),
  );
  const late = paidAtClose(sentBefore).afterClose!;
  t.like(late, { amount: 200000001n, sentBefore: 200000001n });
  t.true(allSentBefore(late), 'still "Confirmed after closing"');
});

test('late dust is never below nothing: it reads 0 with its payment listed when it carries no unit, the rest of amountReceived when it does', (t) => {
  const dust = (onTime: string) =>
    paidAtClose(
      sessionAfterEvents(
        detectedDai('a', onTime),
        confirmed('a'),
        canceled(),
        detectedDai('b', '1', '2026-01-01T00:21:00.000Z'),
        ...confirmedLate('b', '0'),
      ),
    );
  const none = dust('1000000000000000000');
  t.is(none.beforeClose, 100000000n);
  t.is(none.afterClose?.amount, 0n);
  t.deepEqual(ids(none.afterClose), ['b'], 'the page says "less than 0.00000001"');
  // 1 wei short of 1.00000001 in time: the late wei makes the unit, and the late part carries it.
  const carried = dust('1000000009999999999');
  t.is(carried.beforeClose, 100000000n);
  t.is(carried.afterClose?.amount, 1n);
  // An amountReceived below the exact sum before the close (a log from before the exact sums): nothing late, never less.
  const short = paidAtClose({
    ...sessionAfterEvents(
      detectedDai('a', '1000000010000000000'),
      confirmed('a'),
      canceled(),
      detectedDai('b', '1'),
      ...confirmedLate('b', '0'),
    ),
    amountReceived: '100000000',
  });
  t.deepEqual([short.beforeClose, short.afterClose?.amount], [100000000n, 0n]);
});

test('the late money a page tells is the Paid row after the close to the unit when no mark splits it: the fractions in time and late make a unit, and it carries it as the row does', (t) => {
  // 0.000000005 late: the two halves make the unit the late row carries.
  const unit = sessionAfterEvents(...lateHalfMakesAUnit());
  t.is(receivedSplit(unit).afterClose.amount, 1n);
  t.like(lateMoney(unit), { amount: 1n, refundedAt: null }, 'not "less than 0.00000001"');
  const marked = sessionAfterEvents(...lateHalfMakesAUnit(), markedRefunded());
  t.like(lateMoney(marked), { amount: 1n, refundedAt: '2026-01-02T09:00:00.000Z' });
});

test("what a mark of refunded covered and the late money still to settle after it make the Paid row after the close to the unit: the rest is the split's late part less the covered payments cut down", (t) => {
  // 1.000000003 late and marked refunded, then 1.000000003 more: 3.00000001 received, 2.00000001 of it late.
  const partly = sessionAfterEvents(
    ...halfOverThenCanceled(),
    detectedDai('b', '1000000003000000000', '2026-01-01T00:21:00.000Z'),
    ...confirmedLate('b', '100000000'),
    markedRefunded(),
    detectedDai('c', '1000000003000000000', '2026-01-02T10:00:00.000Z'),
    ...confirmedLate('c', '100000000', '2026-01-02T10:05:00.000Z'),
  );
  const split = receivedSplit(partly).afterClose.amount;
  t.is(split, 200000001n);
  const toSettle = lateMoney(partly);
  t.deepEqual(ids(toSettle), ['c']);
  const covered = 100000000n; // b, cut down
  t.is(covered + toSettle.amount, split, 'what the mark covered and what is still to settle make the late row');
});

test('dust sent before the close is told as sent before it, by its payments, though it reads 0 at the 10^8 scale; some of each is both', (t) => {
  // 1 wei seen before the cancel, confirmed after it.
  const dust = sessionAfterEvents(...dustSentBeforeCancel());
  const late = lateMoney(dust);
  t.like(late, { amount: 0n, sentBefore: 0n });
  t.true(allSentBefore(late), '"Confirmed after closing", not "Received after closing"');
  t.true(allSentBefore(paidAtClose(dust).afterClose!));
  t.true(allSentBefore(moneyAtClose(dust).lateReceived));
  // The dust seen before, 1 USDC after: some of each.
  const both = sessionAfterEvents(
    ...dustSentBeforeCancel(),
    detected('b', '100000000', '2026-01-01T00:21:00.000Z'),
    ...confirmedLate('b', '100000000'),
  );
  t.false(allSentBefore(lateMoney(both)));
  t.deepEqual(ids({ payments: lateMoney(both).paymentsBefore }), ['a']);
  // Seen after the cancel: none of it before.
  const after = sessionAfterEvents(
    canceled(),
    detectedDai('a', '1', '2026-01-01T00:21:00.000Z'),
    ...confirmedLate('a', '0'),
  );
  t.false(allSentBefore(lateMoney(after)));
  t.deepEqual(lateMoney(after).paymentsBefore, []);
});

test('late money its invoice counted while owed paid the invoice: not to settle, no longer paid-after-close to refund, still received late; the rest of the late money is still to settle', (t) => {
  // Canceled, 2 USDC late (the invoice counted it while open), then 0.50 late the invoice did not count.
  const late = [
    canceled('2026-01-01T00:20:00.000Z'),
    detected('b', '200000000', '2026-01-01T00:21:00.000Z'),
    ...confirmedLate('b', '200000000', '2026-01-01T00:25:00.000Z'),
  ];
  const session = sessionAfterEvents(...late);
  t.true(hasLateToSettle(session));
  const paid = withInvoicePaidLate(session, ['b']);
  t.false(hasLateToSettle(paid));
  t.false(paidAfterClose(paid));
  t.deepEqual(ids(lateMoney(paid)), []);
  t.deepEqual(ids(moneyAtClose(paid).lateReceived), ['b'], 'still received after the close');
  t.deepEqual(
    latePaidInvoice(paid).map((p) => p.transferId),
    ['b'],
  );
  t.is(withInvoicePaidLate(session, ['another']), session, 'a transfer of no late payment marks nothing');

  const more = sessionAfterEvents(
    ...late,
    detected('c', '50000000', '2026-01-02T10:00:00.000Z'),
    ...confirmedLate('c', '50000000', '2026-01-02T10:05:00.000Z'),
  );
  const partly = withInvoicePaidLate(more, ['b']);
  t.true(hasLateToSettle(partly));
  t.like(lateMoney(partly), { amount: 50000000n, refundedAt: null });
  t.deepEqual(ids(lateMoney(partly)), ['c']);
  // Marked refunded, the mark covers what is left; what paid the invoice is not told as refunded.
  const marked = withInvoicePaidLate(sessionAfterEvents(...late, markedRefunded('2026-01-02T09:00:00.000Z')), ['b']);
  t.is(refundMarkedAt(marked), '2026-01-02T09:00:00.000Z');
  t.deepEqual(ids(lateMoney(marked)), []);
});
