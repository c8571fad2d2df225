import type { CouponSchema } from '../../read-api/schema/coupon.ts';
import { formatPerZone, utcOf, zonedDate, zonedMidnight } from '../../shared/time-zone.ts';
import type { z } from '../../read-api/schema/fields.ts';
import { apiFor, type PageApi } from '../api.ts';
import { readList, readOne } from '../api-reads.ts';
import { can } from '../auth/roles.ts';
import type { DashboardContext, DashboardDeps } from '../context.ts';
import { redirectTo, sendHtml } from '../http.ts';
import { definePage } from '../page.ts';
import {
  Alert,
  Badge,
  Card,
  CsrfField,
  EmptyState,
  Facts,
  Field,
  money,
  type Tone,
  TableScroll,
} from '../ui/components.tsx';
import {
  AmountField,
  decimalAmount,
  type FormErrors,
  formErrorsOf,
  RadioGroup,
  refusalMessage,
  textOf,
  valuesOf,
} from '../ui/form-parts.tsx';
import { CurrencyField, currenciesOf } from '../ui/currency-field.tsx';
import { AppLayout, NewButton } from '../ui/layout.tsx';
import { type Built, createRoutes, type NewForm } from '../create-routes.ts';
import { DoneAlert } from './developers/forms.tsx';

type Coupon = z.output<typeof CouponSchema>;

const BASE = '/dashboard/promo-codes';
/** Promotion code rows of the create form (the API takes up to 20). */
const CODE_ROWS = 3;

const STATUS: Record<string, { tone: Tone; label: string }> = {
  active: { tone: 'success', label: 'Active' },
  expired: { tone: 'neutral', label: 'Expired' },
  disabled: { tone: 'neutral', label: 'Disabled' },
  limit_reached: { tone: 'warning', label: 'Limit reached' },
};
const StatusBadge = ({ status }: { status: string }) => (
  <Badge tone={STATUS[status]?.tone ?? 'neutral'} label={STATUS[status]?.label ?? status} />
);

const days = formatPerZone(
  (timeZone) => new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone }),
);
/** A last day of use in the dashboard's zone, with its year (an expiry is often next year): "25 Nov 2027". */
const Day = ({ iso, timeZone }: { iso: string; timeZone: string }): JSX.Element => (
  <time datetime={iso} safe>
    {days(timeZone).format(new Date(iso))}
  </time>
);

const discountOf = (c: Coupon): string =>
  c.percentOff !== null ? `${c.percentOff}% off` : `${money(c.amountOff ?? '0', c.currency ?? '')} off`;

/**
 * A date input's day as the last second of that day in the dashboard's zone (the day the list then
 * shows); anything else goes to the API as typed, to be named there.
 */
export function endOfDay(text: string | null, zone: string): string | null {
  const day = text === null ? null : /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!day) return text;
  const [year, month, date] = [Number(day[1]), Number(day[2]), Number(day[3])];
  // A day no calendar has (2026-13-01) goes as typed, for the API to refuse, rather than rolling over.
  const wall = new Date(utcOf(year, month - 1, date));
  if (wall.getUTCFullYear() !== year || wall.getUTCMonth() !== month - 1 || wall.getUTCDate() !== date) return text;
  return `${new Date(zonedMidnight(year, month, date + 1, zone) - 1000).toISOString().slice(0, 19)}Z`;
}
/** An instant's day in the dashboard's zone, for a date input. */
const dayOf = (iso: string | null, zone: string): string => (iso ? zonedDate(Date.parse(iso), zone) : '');

/** A whole number as typed, for the API to check (text that is not one goes as is, and is named there). */
const count = (text: string | null): number | string | undefined =>
  text === null ? undefined : /^\d+$/.test(text) ? Number(text) : text;

function couponBodyOf(form: URLSearchParams, ctx: DashboardContext): Built {
  const zone = ctx.state.timeZone;
  const body: Record<string, unknown> = { name: form.get('name')?.trim() ?? '' };
  if (form.get('discount') === 'amount') {
    const amount = decimalAmount(form.get('amountOff') ?? '');
    if ('error' in amount) return { errors: { amountOff: amount.error } };
    body.amountOff = amount.amount;
    body.currency = form.get('currency') ?? 'usdc';
  } else {
    const percent = textOf(form, 'percentOff');
    body.percentOff = percent !== null && /^\d+(\.\d+)?$/.test(percent) ? Number(percent) : (percent ?? undefined);
  }
  body.maxRedemptions = count(textOf(form, 'maxRedemptions'));
  const redeemBy = endOfDay(textOf(form, 'redeemBy'), zone);
  if (redeemBy) body.redeemBy = redeemBy;
  const codes = [];
  for (let i = 0; i < CODE_ROWS; i++) {
    const code = textOf(form, `pc${i}_code`);
    if (code === null) continue;
    const expiredAt = endOfDay(textOf(form, `pc${i}_expiredAt`), zone);
    codes.push({
      code,
      maxRedemptions: count(textOf(form, `pc${i}_maxRedemptions`)),
      ...(expiredAt ? { expiredAt } : {}),
    });
  }
  body.promotionCodes = codes;
  return { body };
}

/** `promotionCodes[1].code` → `pc1_code`; the coupon's own fields by name. */
function couponInputOf(field: string): string | undefined {
  const code = /^promotion(?:Codes|CodeData\.data)\[(\d+)\]\.(\w+)/.exec(field);
  if (code) return `pc${code[1]}_${code[2]}`;
  if (/^promotion(Codes|CodeData)/.test(field)) return 'pc0_code';
  return ['name', 'percentOff', 'amountOff', 'currency', 'maxRedemptions', 'redeemBy'].includes(field)
    ? field
    : undefined;
}

const FormAlert = ({ errors }: { errors: FormErrors }) =>
  errors.form ? (
    <Alert tone="danger">
      <span safe>{errors.form}</span>
    </Alert>
  ) : (
    ''
  );

async function renderNew(ctx: DashboardContext, deps: DashboardDeps, { values: v, errors: e, status }: NewForm) {
  await sendHtml(
    ctx,
    <AppLayout ctx={ctx} title="New coupon" screen="promoCodes">
      <Card>
        <form method="post" action={BASE} novalidate>
          <CsrfField token={ctx.state.csrfToken} />
          <FormAlert errors={e} />
          <Field name="name" label="Name" value={v.name} error={e.name} hint="For you; payers see the code." />
          <RadioGroup
            name="discount"
            legend="Discount"
            value={v.discount ?? 'percent'}
            options={[
              { value: 'percent', label: 'Percentage off' },
              { value: 'amount', label: 'Fixed amount off' },
            ]}
          />
          <div class="form-row">
            <Field name="percentOff" label="Percent off" value={v.percentOff} error={e.percentOff} hint="e.g. 25" />
            <AmountField name="amountOff" label="Amount off" value={v.amountOff} error={e.amountOff} />
            {/* An amount off applies to sessions in its currency: one no wallet receives would never apply. */}
            <CurrencyField
              offered={currenciesOf(ctx, deps)}
              label="Currency of the amount"
              value={v.currency}
              error={e.currency}
            />
          </div>
          <fieldset>
            <legend>Limits</legend>
            <div class="form-row">
              <Field
                name="maxRedemptions"
                label="Most redemptions"
                type="number"
                value={v.maxRedemptions}
                error={e.maxRedemptions}
                hint="Across all its codes; empty: no limit."
              />
              <Field
                name="redeemBy"
                label="Redeem by"
                type="date"
                value={v.redeemBy}
                error={e.redeemBy}
                hint={`Usable until the end of this day (${ctx.state.timeZone}).`}
              />
            </div>
          </fieldset>
          <fieldset>
            <legend>Promotion codes</legend>
            <p class="muted small">What payers type at checkout: 2 to 20 letters, digits, - or _.</p>
            {Array.from({ length: CODE_ROWS }, (_, i) => (
              <div class="custom-field-row">
                <Field name={`pc${i}_code`} label={`Code ${i + 1}`} value={v[`pc${i}_code`]} error={e[`pc${i}_code`]} />
                <Field
                  name={`pc${i}_maxRedemptions`}
                  label={`Code ${i + 1} most uses`}
                  type="number"
                  value={v[`pc${i}_maxRedemptions`]}
                  error={e[`pc${i}_maxRedemptions`]}
                />
                <Field
                  name={`pc${i}_expiredAt`}
                  label={`Code ${i + 1} expires`}
                  type="date"
                  value={v[`pc${i}_expiredAt`]}
                  error={e[`pc${i}_expiredAt`]}
                />
              </div>
            ))}
          </fieldset>
          <div class="form-actions">
            <button type="submit" class="button-primary">
              Create coupon
            </button>
            <a class="button-secondary" href={BASE}>
              Cancel
            </a>
          </div>
        </form>
      </Card>
    </AppLayout>,
    status,
  );
}

function CouponList({ coupons }: { coupons: Coupon[] }): JSX.Element {
  return (
    <Card title="Coupons" id="coupons">
      {coupons.length === 0 ? (
        <EmptyState message="No coupons yet." hint="A coupon is a discount; payers use it through its codes." />
      ) : (
        <TableScroll label="Coupons with their discount and status">
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Discount</th>
                <th class="hide-narrow">Codes</th>
                <th class="hide-narrow">Used</th>
                <th>Status</th>
              </tr>
            </thead>
            <tbody>
              {coupons.map((c) => (
                <tr>
                  <td>
                    <a href={`${BASE}/${c.id}`} safe>
                      {c.name}
                    </a>
                  </td>
                  <td class="nowrap" safe>
                    {discountOf(c)}
                  </td>
                  <td class="hide-narrow">
                    <code safe>{c.promotionCodes.map((p) => p.code).join(', ')}</code>
                  </td>
                  <td class="hide-narrow" safe>
                    {`${c.timesRedeemed}${c.maxRedemptions !== null ? ` of ${c.maxRedemptions}` : ''}`}
                  </td>
                  <td>
                    <StatusBadge status={c.status} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </Card>
  );
}

async function renderDetail(
  ctx: DashboardContext,
  api: PageApi,
  id: string,
  edit?: { values: Record<string, string>; errors: FormErrors },
  status = 200,
) {
  const coupon = await readOne<Coupon>(api, `/api/v1/coupons/${encodeURIComponent(id)}`, 'coupon', id);
  const manage = can(ctx.state.user.role, 'manage');
  const { redeemBy } = coupon;
  const form = edit ?? {
    values: {
      name: coupon.name,
      maxRedemptions: coupon.maxRedemptions === null ? '' : String(coupon.maxRedemptions),
      redeemBy: dayOf(coupon.redeemBy, ctx.state.timeZone),
    },
    errors: {},
  };
  const action = coupon.isEnable ? 'disable' : 'enable';
  await sendHtml(
    ctx,
    <AppLayout
      ctx={ctx}
      title={coupon.name}
      screen="promoCodes"
      actions={
        <>
          {manage && !coupon.isArchived ? (
            <form method="post" action={`${BASE}/${coupon.id}/${action}`}>
              <CsrfField token={ctx.state.csrfToken} />
              <button type="submit" class={coupon.isEnable ? 'button-secondary' : 'button-primary'}>
                {coupon.isEnable ? 'Deactivate' : 'Activate'}
              </button>
            </form>
          ) : (
            ''
          )}
          <a class="button-secondary" href={BASE}>
            All coupons
          </a>
        </>
      }
    >
      <DoneAlert ctx={ctx} messages={{ created: 'Coupon created.', saved: 'Coupon saved.' }} />
      <div class="grid grid-2">
        <Card title="Coupon" id="coupon" actions={<StatusBadge status={coupon.status} />}>
          <Facts
            items={[
              ['Discount', discountOf(coupon)],
              [
                'Redeemed',
                `${coupon.timesRedeemed}${coupon.maxRedemptions !== null ? ` of at most ${coupon.maxRedemptions}` : ' (no limit)'}`,
              ],
              ['Redeem by', redeemBy ? () => <Day iso={redeemBy} timeZone={ctx.state.timeZone} /> : 'No end date'],
            ]}
          />
        </Card>
        {manage ? (
          <Card title="Edit" id="edit-coupon">
            <form method="post" action={`${BASE}/${coupon.id}`} novalidate>
              <CsrfField token={ctx.state.csrfToken} />
              <FormAlert errors={form.errors} />
              <Field name="name" label="Name" value={form.values.name} error={form.errors.name} />
              <div class="form-row">
                <Field
                  name="maxRedemptions"
                  label="Most redemptions"
                  type="number"
                  value={form.values.maxRedemptions}
                  error={form.errors.maxRedemptions}
                />
                <Field
                  name="redeemBy"
                  label="Redeem by"
                  type="date"
                  value={form.values.redeemBy}
                  error={form.errors.redeemBy}
                  hint={`Usable until the end of this day (${ctx.state.timeZone}).`}
                />
              </div>
              <button type="submit" class="button-primary">
                Save
              </button>
            </form>
          </Card>
        ) : (
          ''
        )}
      </div>
      <Card title="Promotion codes" id="promotion-codes">
        <TableScroll label="Promotion codes of this coupon">
          <table>
            <thead>
              <tr>
                <th>Code</th>
                <th>Used</th>
                <th class="hide-narrow">Expires</th>
                <th>Status</th>
              </tr>
            </thead>
            <tbody>
              {coupon.promotionCodes.map((p) => (
                <tr>
                  <td>
                    <code safe>{p.code}</code>
                  </td>
                  <td safe>{`${p.timesRedeemed}${p.maxRedemptions !== null ? ` of ${p.maxRedemptions}` : ''}`}</td>
                  <td class="hide-narrow nowrap">
                    {p.expiredAt ? <Day iso={p.expiredAt} timeZone={ctx.state.timeZone} /> : 'Never'}
                  </td>
                  <td>
                    <StatusBadge status={p.status} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      </Card>
    </AppLayout>,
    status,
  );
}

/** Promo codes: coupons (percent or amount off) with their promotion codes, limits and expiry, on or off. */
export const page = definePage({
  screen: 'promoCodes',
  routes(routes, deps) {
    routes.get(BASE, 'read', async (ctx) => {
      const coupons = await readList<Coupon>(apiFor(ctx, deps), '/api/v1/coupons?limit=200');
      await sendHtml(
        ctx,
        <AppLayout
          ctx={ctx}
          title="Promo codes"
          screen="promoCodes"
          actions={<NewButton ctx={ctx} href={`${BASE}/new`} label="New coupon" />}
        >
          <CouponList coupons={coupons} />
        </AppLayout>,
      );
    });

    createRoutes(routes, deps, {
      base: BASE,
      apiPath: '/api/v1/coupons',
      build: couponBodyOf,
      inputOf: couponInputOf,
      show: (ctx, form) => renderNew(ctx, deps, form),
    });

    routes.get(`${BASE}/:id`, 'read', (ctx) => renderDetail(ctx, apiFor(ctx, deps), ctx.params.id!));

    routes.post(`${BASE}/:id`, 'manage', async (ctx) => {
      const api = apiFor(ctx, deps);
      const id = ctx.params.id!;
      const { form } = ctx.state;
      const zone = ctx.state.timeZone;
      const typed = textOf(form, 'redeemBy');
      // The form shows the expiry's day in the zone: that day sent back unchanged keeps the instant
      // as it is (its end of day in the zone would move it later, past the merchant's cut-off).
      const current = await api<Coupon>('GET', `/api/v1/coupons/${encodeURIComponent(id)}`);
      const was = current.status === 200 ? current.body.redeemBy : null;
      const body = {
        name: form.get('name')?.trim() ?? '',
        maxRedemptions: count(textOf(form, 'maxRedemptions')) ?? null,
        redeemBy: was && typed === dayOf(was, zone) ? was : endOfDay(typed, zone),
      };
      const answer = await api('PUT', `/api/v1/coupons/${encodeURIComponent(id)}`, body);
      if (answer.status >= 400)
        return renderDetail(
          ctx,
          api,
          id,
          { values: valuesOf(form), errors: formErrorsOf(answer, couponInputOf) },
          answer.status,
        );
      redirectTo(ctx, `${BASE}/${id}?done=saved`);
    });

    for (const action of ['enable', 'disable'] as const) {
      routes.post(`${BASE}/:id/${action}`, 'manage', async (ctx) => {
        const api = apiFor(ctx, deps);
        const id = ctx.params.id!;
        const answer = await api('POST', `/api/v1/coupons/${encodeURIComponent(id)}/${action}`);
        if (answer.status >= 400)
          return renderDetail(ctx, api, id, { values: {}, errors: { form: refusalMessage(answer) } }, answer.status);
        redirectTo(ctx, `${BASE}/${id}`);
      });
    }
  },
});
