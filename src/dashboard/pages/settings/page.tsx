import { formatInvoiceNumber } from '../../../actors/invoice-number-claim.ts';
import { apiFor } from '../../api.ts';
import { readOne } from '../../api-reads.ts';
import type { DashboardContext } from '../../context.ts';
import { sendHtml } from '../../http.ts';
import { definePage } from '../../page.ts';
import { brandingRoutes } from './branding.tsx';
import { businessRoutes, type Organization } from './business.tsx';
import { type CardProcessor, cardProcessorRoutes } from './card-processor.tsx';
import { SECTIONS, type SectionId, SETTINGS, SettingsLayout } from './frame.tsx';
import { type InvoiceSetting, invoicingRoutes } from './invoicing.tsx';
import { paymentMethodRoutes } from './payment-methods.tsx';
import { type PaymentSetting, paymentSettingRoutes } from './payments.tsx';

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** Each part of Settings in a line: what is set now. */
function Overview(props: { ctx: DashboardContext; summaries: Partial<Record<SectionId, string>> }): JSX.Element {
  const { ctx, summaries } = props;
  const parts = (Object.keys(SECTIONS) as SectionId[]).filter((id) => id !== 'overview');
  return (
    <SettingsLayout ctx={ctx} section="overview" title="Settings">
      <p class="lede" safe>
        {`Settings are per environment, as the API is: these are your ${ctx.state.tenant.environment} settings. Team and security are the same in both.`}
      </p>
      <ul class="settings-index">
        {parts.map((id) => (
          <li class="card">
            <h2>
              <a href={SECTIONS[id].path}>{SECTIONS[id].label}</a>
            </h2>
            <p class="muted" safe>
              {summaries[id] ?? ''}
            </p>
          </li>
        ))}
      </ul>
    </SettingsLayout>
  );
}

/**
 * Settings: payment methods (wallets per network, changed after re-authentication), checkout
 * defaults, business details, branding with a preview of the checkout page, card processor keys
 * and invoice numbering, each through its `/api/v1/organization` route; the team and two-factor
 * pages (pages/team) are linked from its tabs. Anyone signed in reads them; admins and owners change them.
 */
export const page = definePage({
  screen: 'settings',
  routes(routes, deps) {
    routes.get(SETTINGS, 'read', async (ctx) => {
      const api = apiFor(ctx, deps);
      const [org, payment, cards, invoices] = await Promise.all([
        readOne<Organization>(api, '/api/v1/organization', 'organization', ctx.state.tenant.organizationId),
        api<PaymentSetting>('GET', '/api/v1/organization/payment-setting'),
        api<CardProcessor>('GET', '/api/v1/organization/card-processor'),
        api<InvoiceSetting>('GET', '/api/v1/organization/invoice-setting'),
      ]);
      const networks = deps.rail.networks(ctx.state.tenant.environment);
      const chainName = (chainId: number | null) =>
        chainId === null ? 'none' : (networks.find((n) => n.chainId === chainId)?.name ?? `chain ${chainId}`);
      const chains = new Set(org.addresses.map((w) => w.chainId)).size;
      const p = payment.body;
      const summaries: Partial<Record<SectionId, string>> = {
        paymentMethods:
          org.addresses.length === 0
            ? 'No wallet yet: checkout cannot take payments.'
            : `${plural(org.addresses.length, 'wallet')} on ${plural(chains, 'network')}.`,
        payments: `Default network: ${chainName(p.preferredChainId)} · currency: ${p.preferredCurrency?.toUpperCase() ?? 'none'} · swap ${p.allowSwap ? 'on' : 'off'} · network fee ${p.applyGasFee ? 'added to the total' : 'not added'}.`,
        business: [org.name, org.supportEmail ?? org.email].filter(Boolean).join(' · '),
        branding: `${org.brandLogo ? 'Logo set' : 'No logo'} · ${org.brandColor ? `colour ${org.brandColor}` : 'default colour'}.`,
        cards: cards.body.connected ? `Stripe, secret key ending ${cards.body.secretKeyLast4}.` : 'Not connected.',
        invoices: `Next invoice: ${formatInvoiceNumber(invoices.body.nextInvoiceSequence, invoices.body.invoicePrefix)}.`,
        team: 'Members, their roles and invites.',
        security: 'Your two-factor sign-in, and whether the organization requires it.',
      };
      await sendHtml(ctx, <Overview ctx={ctx} summaries={summaries} />);
    });
    paymentMethodRoutes(routes, deps);
    paymentSettingRoutes(routes, deps);
    businessRoutes(routes, deps);
    brandingRoutes(routes, deps);
    cardProcessorRoutes(routes, deps);
    invoicingRoutes(routes, deps);
  },
});
