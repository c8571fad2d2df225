import QRCode from 'qrcode';
import type { PaymentLinkSchema } from '../../../read-api/schema/payment-link.ts';
import type { z } from '../../../read-api/schema/fields.ts';
import { apiFor, type PageApi } from '../../api.ts';
import { readList, readOne } from '../../api-reads.ts';
import { can } from '../../auth/roles.ts';
import type { DashboardContext, DashboardDeps } from '../../context.ts';
import { redirectTo, sendHtml } from '../../http.ts';
import { definePage } from '../../page.ts';
import { SECTIONS } from '../settings/frame.tsx';
import {
  Alert,
  Badge,
  Card,
  CsrfField,
  DateTime,
  EmptyState,
  Facts,
  money,
  TableScroll,
} from '../../ui/components.tsx';
import { CopyField } from '../../ui/copy.tsx';
import { currenciesOf, decimalsHint, decimalsIn } from '../../ui/currency-field.tsx';
import { refusalMessage } from '../../ui/form-parts.tsx';
import { AppLayout, NewButton } from '../../ui/layout.tsx';
import { priceLabel } from '../../ui/price-label.ts';
import { type RelatedSession, RelatedSessions } from '../../ui/related-records.tsx';
import { LinkForm, linkBodyOf, linkInputOf, type Price } from './link-form.tsx';
import { createRoutes, type NewForm } from '../../create-routes.ts';
import { DoneAlert } from '../developers/forms.tsx';

type PaymentLink = z.output<typeof PaymentLinkSchema>;

const BASE = '/dashboard/payment-links';
const QR = { type: 'svg', margin: 1 } as const;

const PRICING_LABEL: Record<PaymentLink['pricing'], string> = {
  fixed: 'Fixed',
  variable: 'Customer chooses',
  subscription: 'Subscription',
};

/** What the payer pays, in a few words. */
function priceText(link: PaymentLink): string {
  if (link.pricing === 'variable') {
    const min = link.minimumAmount ? `from ${money(link.minimumAmount, link.currency)}` : '';
    const max = link.maximumAmount ? `up to ${money(link.maximumAmount, link.currency)}` : '';
    return [min, max].filter(Boolean).join(' ') || `Any amount in ${link.currency.toUpperCase()}`;
  }
  return priceLabel({ ...link, unitAmount: link.amount ?? '0' });
}

const ActiveBadge = ({ active }: { active: boolean }) =>
  active ? <Badge tone="success" label="Active" /> : <Badge tone="neutral" label="Inactive" />;

const WALLETS = SECTIONS.paymentMethods.path;

/**
 * Whether payers can pay `link` now: a wallet of the organization takes its currency (`currenciesOf`,
 * what checkout itself accepts). The API keeps such a link active, and its page tells the payer no more
 * than that it cannot be paid, so the merchant is told here.
 */
const payableIn = (link: PaymentLink, payable: readonly string[]): boolean => payable.includes(link.currency);

/** Said of active links no wallet can be paid for: that customers cannot pay, and where to add the wallet. */
function NoWalletAlert({ links }: { links: PaymentLink[] }): JSX.Element {
  if (links.length === 0) return <></>;
  const currencies = [...new Set(links.map((l) => l.currency.toUpperCase()))].join(', ');
  const which = links.length === 1 ? 'This link sells' : `${links.length} active links sell`;
  return (
    <Alert tone="danger">
      <span safe>{`${which} in ${currencies}, which no wallet of yours receives: customers cannot pay ${
        links.length === 1 ? 'it' : 'them'
      } until you add a wallet for ${currencies}. `}</span>
      <a href={WALLETS}>Add a wallet</a>
    </Alert>
  );
}

function LinkList({
  links,
  timeZone,
  payable,
}: {
  links: PaymentLink[];
  timeZone: string;
  payable: readonly string[];
}): JSX.Element {
  return (
    <Card title="All payment links" id="payment-links">
      {links.length === 0 ? (
        <EmptyState message="No payment links yet." hint="A payment link is a page you share to get paid." />
      ) : (
        <TableScroll label="Payment links with their price and status">
          <table>
            <thead>
              <tr>
                <th>Title</th>
                <th class="hide-narrow">Pricing</th>
                <th class="amount">Price</th>
                <th>Status</th>
                <th class="hide-narrow">Created</th>
              </tr>
            </thead>
            <tbody>
              {links.map((link) => (
                <tr>
                  <td>
                    <a href={`${BASE}/${link.id}`} safe>
                      {link.title}
                    </a>
                  </td>
                  <td class="hide-narrow" safe>
                    {PRICING_LABEL[link.pricing]}
                  </td>
                  <td class="amount" safe>
                    {priceText(link)}
                  </td>
                  <td class="nowrap">
                    <ActiveBadge active={link.isActive} />
                    {link.isActive && !payableIn(link, payable) ? (
                      <>
                        {' '}
                        <Badge tone="warning" label="No wallet" />
                      </>
                    ) : (
                      ''
                    )}
                  </td>
                  <td class="hide-narrow nowrap">
                    <DateTime iso={link.createdAt} timeZone={timeZone} />
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

const yes = (on: boolean) => (on ? 'Yes' : 'No');

/** The link's settings as a description list. */
function LinkSettings({ link }: { link: PaymentLink }): JSX.Element {
  const asked = [
    link.nameCollection && 'name',
    link.emailCollection && 'email',
    link.phoneNumberCollection && 'phone',
    link.billingAddressCollection && 'billing address',
    link.shippingAddressCollection && 'shipping address',
  ].filter((s): s is string => typeof s === 'string');
  const rows: [string, string][] = [
    ['Pricing', PRICING_LABEL[link.pricing]],
    ['Price', priceText(link)],
    ...(link.suggestedAmounts.length > 0
      ? [['Suggested', link.suggestedAmounts.map((a) => money(a, link.currency)).join(', ')] as [string, string]]
      : []),
    ['Asks for', asked.length > 0 ? asked.join(', ') : 'Nothing beyond the payment'],
    [
      'Custom fields',
      link.customFields.fields.length > 0
        ? link.customFields.fields
            .map((f) => `${f.label.custom} (${f.type}${f.optional ? ', optional' : ''})`)
            .join('; ')
        : 'None',
    ],
    [
      'After payment',
      link.afterCompletion === 'redirect'
        ? `Redirect to ${link.afterCompletionRedirectUrl ?? ''}`
        : (link.afterCompletionConfirmMsg ?? 'The standard confirmation'),
    ],
    ['Promotion codes', yes(link.allowPromotionCodes)],
    ['Use', link.type === 'one_time' ? 'Single payment' : 'Reusable'],
  ];
  return <Facts items={rows} />;
}

async function renderDetail(
  ctx: DashboardContext,
  deps: DashboardDeps,
  api: PageApi,
  link: PaymentLink,
  notice?: string,
  status = 200,
) {
  const qr = await QRCode.toString(link.url, QR);
  // What the link has sold: the sessions payers opened through it, newest first.
  const sessions = await readList<RelatedSession>(
    api,
    `/api/v1/checkout/sessions?paymentLinkId=${encodeURIComponent(link.id)}&limit=20`,
  );
  const manage = can(ctx.state.user.role, 'manage');
  const action = link.isActive ? 'deactivate' : 'activate';
  await sendHtml(
    ctx,
    <AppLayout
      ctx={ctx}
      title={link.title}
      screen="paymentLinks"
      actions={
        <a class="button-secondary" href={BASE}>
          All payment links
        </a>
      }
    >
      <NoWalletAlert links={link.isActive && !payableIn(link, currenciesOf(ctx, deps)) ? [link] : []} />
      <DoneAlert
        ctx={ctx}
        messages={{
          created: 'Payment link created.',
          activated: 'Payment link activated.',
          deactivated: 'Payment link deactivated.',
        }}
      />
      {notice ? (
        <Alert tone="danger">
          <span safe>{notice}</span>
        </Alert>
      ) : (
        ''
      )}
      <div class="grid grid-2">
        <Card title="Share" id="share" actions={<ActiveBadge active={link.isActive} />}>
          <CopyField id="link-url" label="Link" value={link.url} />
          <img
            class="qr"
            src={`data:image/svg+xml;base64,${Buffer.from(qr).toString('base64')}`}
            alt={`QR code of ${link.url}`}
            width="180"
            height="180"
          />
          {manage ? (
            <form method="post" action={`${BASE}/${link.id}/${action}`}>
              <CsrfField token={ctx.state.csrfToken} />
              <button type="submit" class={link.isActive ? 'button-secondary' : 'button-primary'}>
                {link.isActive ? 'Deactivate' : 'Activate'}
              </button>
            </form>
          ) : (
            ''
          )}
        </Card>
        <Card title="Settings" id="settings">
          <LinkSettings link={link} />
        </Card>
      </div>
      <RelatedSessions sessions={sessions} id="link-sessions" timeZone={ctx.state.timeZone} />
    </AppLayout>,
    status,
  );
}

async function renderNew(ctx: DashboardContext, deps: DashboardDeps, { values, errors, status }: NewForm) {
  const prices = await readList<Price>(apiFor(ctx, deps), '/api/v1/prices?type=recurring&isActive=true&limit=100');
  await sendHtml(
    ctx,
    <AppLayout ctx={ctx} title="New payment link" screen="paymentLinks">
      <Card>
        <LinkForm
          csrf={ctx.state.csrfToken}
          values={values}
          errors={errors}
          recurringPrices={prices.filter((p) => p.product?.isActive !== false)}
          currencies={currenciesOf(ctx, deps)}
          decimalsHint={decimalsHint(ctx, deps, currenciesOf(ctx, deps))}
        />
      </Card>
    </AppLayout>,
    status,
  );
}

/**
 * Payment links: the list, a create form for fixed, customer-chosen and subscription prices with
 * every data-collection option, and a detail with the link to copy, its QR code and the switch.
 */
export const page = definePage({
  screen: 'paymentLinks',
  routes(routes, deps) {
    routes.get(BASE, 'read', async (ctx) => {
      const links = await readList<PaymentLink>(apiFor(ctx, deps), '/api/v1/payment-links?limit=200');
      const payable = currenciesOf(ctx, deps);
      await sendHtml(
        ctx,
        <AppLayout
          ctx={ctx}
          title="Payment links"
          screen="paymentLinks"
          actions={<NewButton ctx={ctx} href={`${BASE}/new`} label="New payment link" />}
        >
          <NoWalletAlert links={links.filter((l) => l.isActive && !payableIn(l, payable))} />
          <LinkList links={links} timeZone={ctx.state.timeZone} payable={payable} />
        </AppLayout>,
      );
    });

    createRoutes(routes, deps, {
      base: BASE,
      apiPath: '/api/v1/payment-links',
      build: (form, ctx) => linkBodyOf(form, (currency) => decimalsIn(ctx, deps, currency)),
      inputOf: linkInputOf,
      show: (ctx, form) => renderNew(ctx, deps, form),
    });

    routes.get(`${BASE}/:id`, 'read', async (ctx) => {
      const id = ctx.params.id!;
      const link = await readOne<PaymentLink>(
        apiFor(ctx, deps),
        `/api/v1/payment-links/${encodeURIComponent(id)}`,
        'payment link',
        id,
      );
      await renderDetail(ctx, deps, apiFor(ctx, deps), link);
    });

    for (const action of ['activate', 'deactivate'] as const) {
      routes.post(`${BASE}/:id/${action}`, 'manage', async (ctx) => {
        const api = apiFor(ctx, deps);
        const id = encodeURIComponent(ctx.params.id!);
        const answer = await api<PaymentLink>('POST', `/api/v1/payment-links/${id}/${action}`);
        if (answer.status < 400) return redirectTo(ctx, `${BASE}/${answer.body.id}?done=${action}d`);
        const link = await readOne<PaymentLink>(api, `/api/v1/payment-links/${id}`, 'payment link', ctx.params.id!);
        await renderDetail(ctx, deps, api, link, refusalMessage(answer), answer.status);
      });
    }
  },
});
