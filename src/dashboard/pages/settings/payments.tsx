import { payableNetworks } from '../../../actors/line-items.ts';
import type { RailNetwork } from '../../../chain-ingest/rail.ts';
import type { PaymentSettingWithChainsSchema } from '../../../read-api/schema/organization.ts';
import type { z } from '../../../read-api/schema/fields.ts';
import { apiFor } from '../../api.ts';
import type { DashboardContext, DashboardDeps } from '../../context.ts';
import { redirectTo, sendHtml } from '../../http.ts';
import type { PageRoutes } from '../../page.ts';
import { Card, Field } from '../../ui/components.tsx';
import { currenciesOf } from '../../ui/currency-field.tsx';
import { CheckboxField, type FormErrors, formErrorsOf, SelectField, valuesOf } from '../../ui/form-parts.tsx';
import { DoneAlert } from '../developers/forms.tsx';
import { SECTIONS, SettingsForm, SettingsLayout } from './frame.tsx';

export type PaymentSetting = z.output<typeof PaymentSettingWithChainsSchema>;

const BASE = SECTIONS.payments.path;
const API = '/api/v1/organization/payment-setting';
const INPUTS = ['preferredChainId', 'preferredCurrency', 'allowSwap', 'slippagePercentage', 'applyGasFee'];

/** A number as typed: a number when it is one, else as is (the API names what is wrong with it). */
const numberOf = (text: string): number | string => (/^\d{1,15}(\.\d{1,6})?$/.test(text) ? Number(text) : text);

const valuesOfSetting = (s: PaymentSetting): Record<string, string> => ({
  preferredChainId: s.preferredChainId === null ? '' : String(s.preferredChainId),
  preferredCurrency: s.preferredCurrency ?? '',
  allowSwap: s.allowSwap ? 'yes' : '',
  slippagePercentage: String(s.slippagePercentage),
  applyGasFee: s.applyGasFee ? 'yes' : '',
});

/** The form as the API's body; a choice left at "no preference" is not sent (the API keeps none). */
function bodyOf(form: URLSearchParams): Record<string, unknown> {
  const chain = form.get('preferredChainId') ?? '';
  const currency = form.get('preferredCurrency') ?? '';
  return {
    ...(chain ? { preferredChainId: numberOf(chain) } : {}),
    ...(currency ? { preferredCurrency: currency } : {}),
    allowSwap: form.get('allowSwap') === 'yes',
    applyGasFee: form.get('applyGasFee') === 'yes',
    slippagePercentage: numberOf((form.get('slippagePercentage') ?? '').trim()),
  };
}

function PaymentsPage(props: {
  ctx: DashboardContext;
  deps: DashboardDeps;
  values: Record<string, string>;
  errors: FormErrors;
}): JSX.Element {
  const { ctx, values: v, errors: e } = props;
  const { environment } = ctx.state.tenant;
  const none = { value: '', label: 'No preference' };
  const chainLabel = (n: RailNetwork) => `${n.name} (chain ${n.chainId})`;
  // Networks a wallet of theirs is on: a session offers no other.
  const chains = payableNetworks(props.deps.rail, environment, ctx.state.organization?.withdrawalAddresses ?? []).map(
    (n) => ({ value: String(n.chainId), label: chainLabel(n) }),
  );
  const networkNamed = (value: string) => {
    const network = props.deps.rail.networks(environment).find((n) => String(n.chainId) === value);
    return network ? `${chainLabel(network)} (no wallet)` : value;
  };
  // Those the API takes as a preference and a wallet of theirs receives (`weth` is an asset's currency, not a price's).
  const currencies = currenciesOf(ctx, props.deps).map((c) => ({
    value: c,
    label: c.toUpperCase(),
  }));
  // Once chosen, a preference can be changed but not unset (the API keeps one); a value no longer offered stays shown.
  const withCurrent = (
    options: { value: string; label: string }[],
    current: string | undefined,
    labelOf = (value: string) => value,
  ) =>
    !current
      ? [none, ...options]
      : options.some((o) => o.value === current)
        ? options
        : [...options, { value: current, label: labelOf(current) }];
  return (
    <SettingsLayout ctx={ctx} section="payments">
      <DoneAlert ctx={ctx} messages={{ saved: 'Checkout defaults saved.' }} />
      <Card id="checkout-defaults" class="narrow-card">
        <SettingsForm ctx={ctx} action={BASE} id="payments-form" errors={e}>
          <SelectField
            name="preferredChainId"
            label="Default network"
            options={withCurrent(chains, v.preferredChainId, networkNamed)}
            value={v.preferredChainId}
            error={e.preferredChainId}
            hint="New checkout sessions take it as their preferred network."
          />
          <SelectField
            name="preferredCurrency"
            label="Default currency"
            options={withCurrent(currencies, v.preferredCurrency)}
            value={v.preferredCurrency}
            error={e.preferredCurrency}
            hint="The currency you prefer to be paid in."
          />
          <fieldset>
            <legend>Currency conversion</legend>
            <p class="hint" id="swap-note">
              Weir does not convert currencies yet: a payer pays in an asset of the price's currency, straight to your
              wallet. These two are kept for API clients that send them, and change nothing.
            </p>
            <CheckboxField
              name="allowSwap"
              value="yes"
              label="Allow currency conversion (swap)"
              checked={v.allowSwap === 'yes'}
              error={e.allowSwap}
            />
            <Field
              name="slippagePercentage"
              label="Slippage allowed (%)"
              type="text"
              value={v.slippagePercentage}
              error={e.slippagePercentage}
              hint="How far a swap's rate may move, from 0 to 100."
            />
          </fieldset>
          <fieldset>
            <legend>Network fees</legend>
            <CheckboxField
              name="applyGasFee"
              value="yes"
              label="Add the network (gas) fee of paying out to the payer's total"
              checked={v.applyGasFee === 'yes'}
              error={e.applyGasFee}
            />
          </fieldset>
          <button type="submit" class="button-primary">
            Save checkout defaults
          </button>
        </SettingsForm>
      </Card>
    </SettingsLayout>
  );
}

/** Checkout defaults: the default network and currency, swap and its slippage, gas fee collection (`/organization/payment-setting`). */
export function paymentSettingRoutes(routes: PageRoutes, deps: DashboardDeps): void {
  routes.get(BASE, 'read', async (ctx) => {
    const setting = (await apiFor(ctx, deps)<PaymentSetting>('GET', API)).body;
    await sendHtml(ctx, <PaymentsPage ctx={ctx} deps={deps} values={valuesOfSetting(setting)} errors={{}} />);
  });

  routes.post(BASE, 'manage', async (ctx) => {
    const { form } = ctx.state;
    const answer = await apiFor(ctx, deps)('PUT', API, bodyOf(form));
    if (answer.status >= 400) {
      const errors = formErrorsOf(answer, (field) => (INPUTS.includes(field) ? field : undefined));
      return sendHtml(
        ctx,
        <PaymentsPage ctx={ctx} deps={deps} values={valuesOf(form)} errors={errors} />,
        answer.status,
      );
    }
    redirectTo(ctx, `${BASE}?done=saved`);
  });
}
