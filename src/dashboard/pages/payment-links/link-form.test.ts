import test from 'ava';
import { LinkForm, linkBodyOf, type Price } from './link-form.tsx';

/** USDC's decimals where only 6-decimal USDC is offered; DAI's, 8. */
const decimalsOf = (currency: string) => (currency === 'usdc' ? 6 : 8);

/** The payment-link form as a merchant fills it for a customer-chosen price, with `suggested` typed. */
const variable = (suggested: string, more: Record<string, string> = {}) =>
  linkBodyOf(
    new URLSearchParams({
      title: 'Tip jar',
      pricing: 'variable',
      currency: 'usdc',
      suggestedAmounts: suggested,
      ...more,
    }),
    decimalsOf,
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

test('amounts with more decimals than the currency carries (USDC: 6) are refused at their input, as the price form refuses them', (t) => {
  const tooFine = 'must have at most 6 decimals in USDC: no USDC asset carries more';
  t.deepEqual(variable('5, 1.1234567'), { errors: { suggestedAmounts: `1.1234567: ${tooFine}` } });
  t.deepEqual(variable('', { minimumAmount: '1.0000001', maximumAmount: '2.0000001' }), {
    errors: { minimumAmount: tooFine, maximumAmount: tooFine },
  });
  const fixed = linkBodyOf(
    new URLSearchParams({ title: 'Tea', pricing: 'fixed', currency: 'usdc', amount: '1.1234567' }),
    decimalsOf,
  );
  t.deepEqual(fixed, { errors: { amount: tooFine } });
  // Six decimals are an amount; DAI takes all eight.
  t.like(variable('1.123456', { minimumAmount: '1.000001' }), {
    body: { suggestedAmounts: ['112345600'], minimumAmount: '100000100' },
  });
  t.like(variable('1.1234567', { currency: 'dai' }), { body: { suggestedAmounts: ['112345670'] } });
});

/** The catalog's active recurring prices, as the create page reads them, with `interval` × `intervalCount`. */
const recurringPrice = (id: string, interval: 'day' | 'week' | 'month' | 'year', intervalCount: number): Price =>
  ({
    id,
    type: 'recurring',
    currency: 'usdc',
    unitAmount: '1000000000',
    interval,
    intervalCount,
    isActive: true,
    product: { id: `product-${id}`, name: `Plan ${id}`, isActive: true },
  }) as unknown as Price;

/** The values the form's Recurring price picker offers, and the whole form. */
const pickerOf = async (recurringPrices: Price[]) => {
  const html = String(await LinkForm({ csrf: 'x', values: {}, errors: {}, recurringPrices, currencies: ['usdc'] }));
  const select = html.match(/<select[^>]*name="priceId"[\s\S]*?<\/select>/)?.[0] ?? '';
  return { values: [...select.matchAll(/<option[^>]*value="([^"]*)"/g)].map(([, value]) => value), html };
};

test('the subscription picker offers only prices a subscription bills (by the month or the year): a weekly or daily one would make a link no payer can pay', async (t) => {
  const { values } = await pickerOf([
    recurringPrice('monthly', 'month', 1),
    recurringPrice('weekly', 'week', 1),
    recurringPrice('quarterly', 'month', 3),
    recurringPrice('daily', 'day', 30),
    recurringPrice('annual', 'year', 1),
  ]);
  t.deepEqual(values, ['', 'monthly', 'quarterly', 'annual']);
  // With only such prices in the catalog, the hint says what to add.
  const none = await pickerOf([recurringPrice('weekly', 'week', 1)]);
  t.deepEqual(none.values, ['']);
  t.regex(none.html, /add a recurring price billed by the month or the year to a product first/);
});

test('the fields every link needs (its title, its currency) are required, marked so beside their label as other forms are; those needed by one pricing say so in their hint', async (t) => {
  const { html } = await pickerOf([]);
  const control = (name: string) => html.match(new RegExp(`<(input|select)[^>]*name="${name}"[^>]*>`))?.[0] ?? '';
  const label = (name: string) =>
    html.match(new RegExp(`<label for="field-${name}"[^>]*>([\\s\\S]*?)</label>`))?.[1] ?? '';
  for (const name of ['title', 'currency']) {
    t.regex(control(name), /\srequired(\s|>|=)/, name);
    t.regex(html, new RegExp(`<label for="field-${name}" class="required">`), name);
    t.is(label(name).trim(), name === 'title' ? 'Title' : 'Currency', "the label's text stays the label");
  }
  t.notRegex(control('description'), /\srequired/);
  t.regex(html, /Required for a fixed price\./);
  t.regex(html, /Required for a subscription[.:]/);
});
