import test from 'ava';
import { decimalAmount } from './form-parts.tsx';

test('a price typed with a decimal comma is refused, not charged at 100 times (1,50 is not 150)', (t) => {
  for (const typed of ['1,50', '12,5', '0,99']) t.true('error' in decimalAmount(typed), typed);
  t.deepEqual(decimalAmount('12.50'), { amount: '1250000000' });
  t.deepEqual(decimalAmount(' 1,000.25 '), { amount: '100025000000' });
});
