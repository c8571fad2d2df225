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

test('a decimal comma is refused, not read as a thousands separator (1,50 is not 150)', (t) => {
  for (const typed of ['1,50', '12,5', '1,5000', ',100', '1,000,00', '1,00.5'])
    t.is(decimalToAmount(typed), null, typed);
  t.is(decimalToAmount('1,500'), '150000000000', 'whole thousands groups still read');
  t.is(decimalToAmount('12,345,678.5'), '1234567850000000');
});
