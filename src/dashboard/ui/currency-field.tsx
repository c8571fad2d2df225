import { currencyDecimals } from '../../actors/currency-precision.ts';
import { payableCurrencies } from '../../actors/line-items.ts';
import type { DashboardContext, DashboardDeps } from '../context.ts';
import { type Option, SelectField } from './form-parts.tsx';

/**
 * The currencies the tenant's forms offer: those it can be paid in (`payableCurrencies`), a network
 * taking each where a wallet of theirs is. Checkout refuses the others, so a price in one could not be paid.
 */
export const currenciesOf = (ctx: DashboardContext, deps: Pick<DashboardDeps, 'rail'>): string[] =>
  payableCurrencies(deps.rail, ctx.state.tenant.environment, ctx.state.organization?.withdrawalAddresses ?? []);

/** The decimals an amount in `currency` may have for the tenant: its finest asset's (`currencyDecimals`). */
export const decimalsIn = (ctx: DashboardContext, deps: Pick<DashboardDeps, 'rail'>, currency: string): number | null =>
  currencyDecimals(deps.rail, ctx.state.tenant.environment, currency);

/**
 * What an amount field says of the decimals each offered currency carries (`USDC at most 6, DAI 8`),
 * so an amount its currency cannot hold is not typed in the first place. Empty when nothing is offered.
 */
export function decimalsHint(
  ctx: DashboardContext,
  deps: Pick<DashboardDeps, 'rail'>,
  offered: readonly string[],
): string {
  const each = offered.flatMap((c) => {
    const decimals = decimalsIn(ctx, deps, c);
    return decimals === null ? [] : [`${c.toUpperCase()} ${decimals}`];
  });
  return each.length === 0 ? '' : `Decimals at most: ${each.join(', ')}.`;
}

/**
 * The choices of a currency select: the currencies offered (`currenciesOf`), and `current` when it
 * is not one (the wallets or networks changed since it was chosen), so it shows as it is rather
 * than the first choice being sent in its place.
 */
export function currencyOptions(offered: readonly string[], current: string): Option[] {
  const options = offered.map((c) => ({ value: c, label: c.toUpperCase() }));
  return !current || offered.includes(current)
    ? options
    : [...options, { value: current, label: `${current.toUpperCase()} (no wallet)` }];
}

/** Said at the field when no currency can be offered: what to do about it. */
const NO_WALLET = 'None offered yet: add a wallet under Settings → Payment methods.';

/** A currency select of a form: the offered currencies, the first chosen by default, `value` kept. */
export function CurrencyField(props: {
  offered: readonly string[];
  value?: string | undefined;
  label?: string;
  error?: string | null | undefined;
  hint?: string;
  required?: boolean;
}): JSX.Element {
  // With nothing offered, USDC (the API's default) is shown as what it is: received by no wallet.
  const value = props.value ?? props.offered[0] ?? 'usdc';
  return (
    <SelectField
      name="currency"
      label={props.label ?? 'Currency'}
      value={value}
      error={props.error}
      hint={props.offered.length === 0 ? NO_WALLET : props.hint}
      options={currencyOptions(props.offered, value)}
      required={props.required}
    />
  );
}
