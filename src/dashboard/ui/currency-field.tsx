import { type Option, SelectField } from './form-parts.tsx';

/**
 * The choices of a currency select: the currencies some network takes (`offeredCurrencies`), and
 * `current` when none does (the networks changed since it was chosen), so it shows as it is rather
 * than the first choice being sent in its place.
 */
export function currencyOptions(offered: readonly string[], current: string): Option[] {
  const options = offered.map((c) => ({ value: c, label: c.toUpperCase() }));
  return !current || offered.includes(current)
    ? options
    : [...options, { value: current, label: `${current.toUpperCase()} (no network takes it)` }];
}

/** A currency select of a form: the offered currencies, the first chosen by default, `value` kept. */
export function CurrencyField(props: {
  offered: readonly string[];
  value?: string | undefined;
  label?: string;
  error?: string | null | undefined;
  hint?: string;
}): JSX.Element {
  // With no network at all, USDC (the API's default) is shown as what it is: taken by none.
  const value = props.value ?? props.offered[0] ?? 'usdc';
  return (
    <SelectField
      name="currency"
      label={props.label ?? 'Currency'}
      value={value}
      error={props.error}
      hint={props.hint}
      options={currencyOptions(props.offered, value)}
    />
  );
}
