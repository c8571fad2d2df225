import test from 'ava';
import { ValidationError } from './errors.ts';
import {
  discountShares,
  parsePercentage,
  percentUnits,
  taxDecimals,
  taxesAfterDiscount,
  taxLine,
  type TaxRateTerms,
} from './tax.ts';

const rate = (id: string, percentage: string, type: 'exclusive' | 'inclusive' = 'exclusive'): TaxRateTerms => ({
  id,
  name: id,
  description: null,
  country: null,
  percentage,
  type,
  isDefault: true,
});

test('percentages: numbers or decimal strings, at most 4 places, 0 to 100, canonical', (t) => {
  t.is(parsePercentage(8.25, 'p'), '8.25');
  t.is(parsePercentage('19.50', 'p'), '19.5');
  t.is(parsePercentage('7.0000', 'p'), '7');
  t.is(parsePercentage(0, 'p'), '0');
  t.is(parsePercentage(100, 'p'), '100');
  t.is(percentUnits('8.875'), 88750n);
  for (const bad of [-1, 100.0001, '1e1', 1.23456, '.5', '05', 'NaN', Number.NaN, null, true])
    t.throws(() => parsePercentage(bad, 'p'), { instanceOf: ValidationError }, String(bad));
});

test('exclusive tax rounds half up per line at the given decimals', (t) => {
  // 0.00000050 at 10^-6 is exactly half a unit: up. Just below half: down.
  t.is(taxLine(100n, [rate('a', '50')], 6).amountExclusive, 100n);
  t.is(taxLine(998n, [rate('a', '5')], 6).amountExclusive, 0n);
  t.is(taxLine(1000n, [rate('a', '5')], 6).amountExclusive, 100n);
  // At 8 decimals nothing is lost beyond 10^-8: 1.23456789 × 7.5% = 0.09259259175 → 0.09259259.
  t.is(taxLine(123456789n, [rate('a', '7.5')], 8).amountExclusive, 9259259n);
  // Two exclusive rates: each rounded on its own.
  const two = taxLine(1000000n, [rate('a', '0.05'), rate('b', '0.05')], 6);
  t.deepEqual(
    two.taxRates.map((r) => r.amount),
    ['500', '500'],
  );
  t.is(two.amountTax, 1000n);
});

test('inclusive tax is contained in the amount; exclusive taxes the rest', (t) => {
  // 119.00 with 19% included: 19.00 of it is tax.
  const vat = taxLine(11900000000n, [rate('vat', '19', 'inclusive')], 6);
  t.is(vat.amountTax, 1900000000n);
  t.is(vat.amountExclusive, 0n);
  // Two inclusive rates share the amount in proportion: 110 with 5% and 5% holds 5 + 5.
  const both = taxLine(11000000000n, [rate('a', '5', 'inclusive'), rate('b', '5', 'inclusive')], 6);
  t.deepEqual(
    both.taxRates.map((r) => r.amount),
    ['500000000', '500000000'],
  );
  const mixed = taxLine(11900000000n, [rate('vat', '19', 'inclusive'), rate('levy', '10')], 6);
  t.is(mixed.amountExclusive, 1000000000n);
  t.is(mixed.amountTax, 2900000000n);
});

test('tax decimals: the coarsest asset of the currency, at most 8', (t) => {
  const networks = [
    {
      assets: [
        { currency: 'usdc', decimals: 6 },
        { currency: 'eth', decimals: 18 },
      ],
    },
    { assets: [{ currency: 'usdc', decimals: 18 }] },
  ];
  t.is(taxDecimals(networks, 'usdc'), 6);
  t.is(taxDecimals(networks, 'eth'), 8);
  t.is(taxDecimals(networks, 'dai'), 8);
});

test('a discount is shared among lines as their amounts, to the last 10^-8, never more than a line', (t) => {
  t.deepEqual(discountShares([1000n, 100n], 550n), [500n, 50n]);
  // 10 over three equal lines: 4, 3, 3 (the remainder to the first).
  t.deepEqual(discountShares([5n, 5n, 5n], 10n), [4n, 3n, 3n]);
  t.deepEqual(discountShares([7n, 0n, 3n], 10n), [7n, 0n, 3n], 'all of it: each line whole');
  t.deepEqual(discountShares([7n, 3n], 0n), [0n, 0n]);
});

test('taxes after a discount: each line taxed on what is left of it, rounded as taxLine rounds; none without rates', (t) => {
  const applied = taxLine(1_000_000_000n, [rate('vat', '10')], 6).taxRates;
  const lines = [
    { amountSubtotal: '1000000000', taxRates: applied },
    { amountSubtotal: '100000000', taxRates: [] },
  ];
  // 5.50 off 11.00: 5.00 of the taxed line, whose 10% is then 0.50.
  t.deepEqual(taxesAfterDiscount(lines, 550_000_000n, 6), [
    { amountTax: '50000000', taxRates: [{ ...applied[0]!, amount: '50000000' }] },
    { amountTax: '0', taxRates: [] },
  ]);
  t.is(taxesAfterDiscount([{ amountSubtotal: '100' }], 50n, 6), null);
});
