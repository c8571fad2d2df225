import test from 'ava';
import { decimalAmount } from './form-parts.tsx';

const SEPARATORS = 'must be written with a dot for decimals and no separators, such as 1500 or 1.5';

test('an amount with a comma or any other separator is refused, never guessed: 1,500 is 1500 to some and 1.5 to others', (t) => {
  for (const typed of [
    '1,500',
    '1,50',
    '12,5',
    '0,99',
    ' 1,000.25 ',
    '12,345,678.5',
    '1.500,00',
    '1 500',
    "1'500",
    '1’500',
    '1_500',
    '1\u00a0500',
    '1\u202f500',
  ])
    t.deepEqual(decimalAmount(typed), { error: SEPARATORS }, typed);
});

test('a plain amount with a dot for decimals is read exactly', (t) => {
  t.deepEqual(decimalAmount('1500'), { amount: '150000000000' });
  t.deepEqual(decimalAmount(' 1.5 '), { amount: '150000000' });
  t.deepEqual(decimalAmount('12.50'), { amount: '1250000000' });
  t.deepEqual(decimalAmount('0.1'), { amount: '10000000' }, 'no float rounding');
  t.deepEqual(decimalAmount('1000.00000001'), { amount: '100000000001' });
});

test('anything else that is no amount says what one looks like', (t) => {
  for (const typed of ['-1', '1e3', 'abc', '.5', '1.', '0x10'])
    t.deepEqual(decimalAmount(typed), { error: 'must be a number such as 25 or 12.50' }, typed);
  t.deepEqual(decimalAmount('1.123456789'), { error: 'must have at most 8 decimals' });
});
