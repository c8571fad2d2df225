import test from 'ava';
import { linkBodyOf } from './link-form.tsx';

/** The payment-link form as a merchant fills it for a customer-chosen price, with `suggested` typed. */
const variable = (suggested: string) =>
  linkBodyOf(
    new URLSearchParams({ title: 'Tip jar', pricing: 'variable', currency: 'usdc', suggestedAmounts: suggested }),
  );

test('suggested amounts: commas or whitespace between them, each read as the amount fields read one', (t) => {
  for (const typed of ['5, 10, 25', '5,10,25', '5 10 25', ' 5\t10\n25 ', '5 ,10 , 25,'])
    t.like(variable(typed), { body: { suggestedAmounts: ['500000000', '1000000000', '2500000000'] } }, typed);
  t.like(variable('2.5, 0.75'), { body: { suggestedAmounts: ['250000000', '75000000'] } });
  t.like(variable(''), { body: { suggestedAmounts: [] } });
});

test('suggested amounts: the bad one is named with its problem; a repeat, or a comma that may be a thousands separator, is refused, not guessed', (t) => {
  const cases: [string, string][] = [
    ['5, ten, 25', 'ten: must be a number such as 25 or 12.50'],
    ['5, -3', '-3: must be a number such as 25 or 12.50'],
    ['5 1.123456789', '1.123456789: must have at most 8 decimals'],
    ['5, 10, 10.00', '10.00 repeats 10: give each amount once'],
    [
      '5, 1,500',
      '1,500 may be one amount with a thousands separator or two amounts: write amounts without separators (1500) and put a space after each comma (1, 500)',
    ],
  ];
  for (const [typed, error] of cases) t.deepEqual(variable(typed), { errors: { suggestedAmounts: error } }, typed);
});
