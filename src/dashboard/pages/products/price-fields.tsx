import { INTERVALS } from '../../../actors/line-items.ts';
import { Field } from '../../ui/components.tsx';
import { CurrencyField } from '../../ui/currency-field.tsx';
import { decimalAmountIn } from '../../../shared/decimal.ts';
import { AmountField, type FormErrors, SelectField, textOf } from '../../ui/form-parts.tsx';
import type { Built } from '../../create-routes.ts';

/**
 * A price's inputs: amount as typed, currency (of those a wallet of the merchant receives), and a
 * schedule (none: one-time). `decimalsHint`: what the amount may have in each currency (`decimalsHint`).
 */
export function PriceFields(props: {
  values: Record<string, string>;
  errors: FormErrors;
  currencies: readonly string[];
  decimalsHint?: string;
}) {
  const { values: v, errors: e } = props;
  return (
    <div class="form-row">
      <AmountField
        name="unitAmount"
        label="Price"
        value={v.unitAmount}
        error={e.unitAmount}
        {...(props.decimalsHint ? { hint: props.decimalsHint } : {})}
      />
      <CurrencyField offered={props.currencies} value={v.currency} error={e.currency} />
      <SelectField
        name="interval"
        label="Billing"
        value={v.interval ?? ''}
        error={e.interval}
        options={[{ value: '', label: 'One time' }, ...INTERVALS.map((i) => ({ value: i, label: `Every ${i}` }))]}
      />
      <Field
        name="intervalCount"
        label="Intervals per period"
        type="number"
        value={v.intervalCount}
        error={e.intervalCount}
        hint="Recurring only: 3 with month is quarterly."
      />
    </div>
  );
}

/**
 * The price body of the form (amount converted exactly), or the input that is not a number or has
 * more decimals than its currency carries (`decimalsOf`, see `decimalsIn`).
 */
export function priceBodyOf(form: URLSearchParams, decimalsOf: (currency: string) => number | null): Built {
  const currency = form.get('currency') ?? 'usdc';
  const amount = decimalAmountIn(form.get('unitAmount') ?? '', currency, decimalsOf(currency));
  if ('error' in amount) return { errors: { unitAmount: amount.error } };
  const body: Record<string, unknown> = { currency, unitAmount: amount.amount };
  const interval = textOf(form, 'interval');
  if (interval) {
    body.interval = interval;
    const count = textOf(form, 'intervalCount');
    if (count !== null) {
      if (!/^\d+$/.test(count)) return { errors: { intervalCount: 'must be a whole number' } };
      body.intervalCount = Number(count);
    }
  }
  return { body };
}

/** The inputs a price's API field path names (`defaultPriceData.unitAmount` → `unitAmount`). */
export function priceInputOf(field: string): string | undefined {
  const name = field.replace(/^defaultPriceData\./, '');
  return ['unitAmount', 'currency', 'interval', 'intervalCount'].includes(name)
    ? name
    : name === 'type'
      ? 'interval'
      : undefined;
}
