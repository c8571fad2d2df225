import test from 'ava';
import { quotientHalfUp } from './decimal.ts';

test('quotientHalfUp: half up in integers where a double rounds either way', (t) => {
  t.is(quotientHalfUp(3, 160, 4), '0.0188');
  t.is(quotientHalfUp(1, 32, 4), '0.0313');
  t.is(quotientHalfUp(2300, 2000, 1), '1.2');
  t.is(quotientHalfUp(1, 3, 0), '0');
  t.is(quotientHalfUp(2, 3, 0), '1');
  t.is(quotientHalfUp(160, 160, 2), '1.00');
  t.is(quotientHalfUp(0, 7, 2), '0.00');
});

test('quotientHalfUp: no share of nothing; counts only', (t) => {
  t.is(quotientHalfUp(0, 0, 2), null);
  t.throws(() => quotientHalfUp(-1, 3, 2), { instanceOf: RangeError, message: /counts, not -1 of 3/ });
  t.throws(() => quotientHalfUp(1, -3, 2), { instanceOf: RangeError });
  t.throws(() => quotientHalfUp(1.5, 3, 2), { instanceOf: RangeError });
});
