import test from 'ava';
import { decimalToAmount } from './decimal-amount.ts';

test('typed decimals become exact 10^8-scaled amounts', (t) => {
  t.is(decimalToAmount('100'), '10000000000');
  t.is(decimalToAmount('2.5'), '250000000');
  t.is(decimalToAmount(' 1,000.00000001 '), '100000000001');
  t.is(decimalToAmount('0.1'), '10000000', 'no float rounding');
});

test('anything else is refused', (t) => {
  for (const typed of ['', '-1', '1e3', '1.123456789', 'abc', '.5', '1.', '0x10'])
    t.is(decimalToAmount(typed), null, typed);
});
