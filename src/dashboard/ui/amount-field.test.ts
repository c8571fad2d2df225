import test from 'ava';
import { blankInvoiceForm } from '../pages/invoices/invoice-form.ts';
import { LineRows } from '../pages/invoices/editor.tsx';
import { LinkForm } from '../pages/payment-links/link-form.tsx';
import { PriceFields } from '../pages/products/price-fields.tsx';
import { AMOUNT_HINT, AmountField } from './form-parts.tsx';

const html = async (element: JSX.Element): Promise<string> => String(await element);
/** The hint an input names in its aria-describedby, as text. */
const hintOf = (page: string, name: string): string | undefined => {
  const input = new RegExp(`<input[^>]* name="${name}"[^>]*>`).exec(page)?.[0] ?? '';
  const ids = /aria-describedby="([^"]*)"/.exec(input)?.[1]?.split(' ') ?? [];
  for (const id of ids) {
    const text = new RegExp(`<p class="hint" id="${id}">([^<]*)</p>`).exec(page)?.[1];
    if (text?.includes(AMOUNT_HINT)) return text;
  }
  return undefined;
};

test('an amount field says, beside it and tied to it, that a dot is for decimals and there are no thousands separators', async (t) => {
  t.regex(AMOUNT_HINT, /dot for decimals/);
  t.regex(AMOUNT_HINT, /no thousands separators/);
  const field = await html(AmountField({ name: 'amountOff', label: 'Amount off', value: '1.5', error: 'is wrong' }));
  t.regex(field, /<input[^>]* inputmode="decimal"/);
  t.is(hintOf(field, 'amountOff'), AMOUNT_HINT);
  t.regex(field, /aria-describedby="field-amountOff-hint field-amountOff-error"/);
  // A field's own hint comes first.
  t.is(
    hintOf(await html(AmountField({ name: 'amount', label: 'Amount', hint: 'Fixed price.' })), 'amount'),
    `Fixed price. ${AMOUNT_HINT}`,
  );
});

test('every amount input of the dashboard forms carries the hint: payment links, prices, invoice lines', async (t) => {
  const link = await html(LinkForm({ csrf: 'c', values: {}, errors: {}, recurringPrices: [], currencies: ['usdc'] }));
  for (const name of ['amount', 'minimumAmount', 'maximumAmount']) t.truthy(hintOf(link, name), name);
  const price = await html(PriceFields({ values: {}, errors: {}, currencies: ['usdc'] }));
  t.truthy(hintOf(price, 'unitAmount'));
  const lines = await html(LineRows({ form: blankInvoiceForm('usdc'), errors: {}, prices: [] }));
  t.is(lines.split(AMOUNT_HINT).length - 1, 1, 'said once for the table');
  for (const name of ['line-0-amount', 'line-1-amount']) t.truthy(hintOf(lines, name), name);
});
