import test from 'ava';
import { doublingDelay } from './backoff.ts';

test('doubles from the first wait per failure in a row and stops at the cap', (t) => {
  t.deepEqual(
    [1, 2, 3, 4, 5, 6].map((failures) => doublingDelay(failures, 1_000, 10_000)),
    [1_000, 2_000, 4_000, 8_000, 10_000, 10_000],
  );
});

test('no failure yet or a count out of range waits the first delay; a huge count stays at the cap', (t) => {
  t.is(doublingDelay(0, 500, 60_000), 500);
  t.is(doublingDelay(-3, 500, 60_000), 500);
  t.is(doublingDelay(10_000, 500, 60_000), 60_000);
  t.true(Number.isFinite(doublingDelay(Number.MAX_SAFE_INTEGER, 1, Number.MAX_SAFE_INTEGER)));
});

test('a cap below the first wait wins, and nothing is negative', (t) => {
  t.is(doublingDelay(1, 5_000, 1_000), 1_000);
  t.is(doublingDelay(3, -10, 1_000), 0);
});
