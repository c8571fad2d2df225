import type { RailNetwork } from '../../../chain-ingest/rail.ts';
import type { WithdrawalAddressSchema } from '../../../read-api/schema/organization.ts';
import type { z } from '../../../read-api/schema/fields.ts';
import { apiFor, type PageApi } from '../../api.ts';
import { readOne } from '../../api-reads.ts';
import { ReauthFields, reauthenticate } from '../../auth/reauth.tsx';
import type { DashboardContext, DashboardDeps } from '../../context.ts';
import { redirectTo, sendHtml } from '../../http.ts';
import type { PageRoutes } from '../../page.ts';
import { Alert, Badge, Card, CsrfField, EmptyState, Field, TableScroll } from '../../ui/components.tsx';
import { type FormErrors, formErrorsOf, SelectField, textOf } from '../../ui/form-parts.tsx';
import { ConfirmPage, DoneAlert } from '../developers/forms.tsx';
import { canChange, SECTIONS, SettingsForm, SettingsLayout } from './frame.tsx';

export type Wallet = z.output<typeof WithdrawalAddressSchema>;

const BASE = SECTIONS.paymentMethods.path;
const WALLETS = '/api/v1/organization/withdrawal-addresses';

type WalletForm = { chainId: string; address: string; name: string; errors: FormErrors };

const EMPTY: WalletForm = { chainId: '', address: '', name: '', errors: {} };
const walletInputOf = (field: string) => (['chainId', 'address', 'name'].includes(field) ? field : undefined);

/** A chain id as typed: a number when it is one, else as is (the API names what is wrong with it). */
const chainIdOf = (text: string): number | string => (/^\d{1,15}$/.test(text) ? Number(text) : text);

export const listWallets = async (api: PageApi): Promise<Wallet[]> => (await api<Wallet[]>('GET', WALLETS)).body;

/** The environment's networks, and any chain a wallet is still on that is no longer offered. */
function networksOf(networks: RailNetwork[], wallets: Wallet[]) {
  const offered = networks.map((n) => ({
    chainId: n.chainId,
    name: n.name,
    assets: n.assets.map((a) => a.symbol),
    offered: true,
  }));
  const gone = [...new Set(wallets.map((w) => w.chainId))]
    .filter((chainId) => !networks.some((n) => n.chainId === chainId))
    .map((chainId) => ({ chainId, name: `Chain ${chainId}`, assets: [] as string[], offered: false }));
  return [...offered, ...gone];
}

function WalletRows({ ctx, wallets }: { ctx: DashboardContext; wallets: Wallet[] }): JSX.Element {
  const manage = canChange(ctx);
  return (
    <TableScroll label="Wallets">
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Address</th>
            {manage ? <th scope="col">Actions</th> : ''}
          </tr>
        </thead>
        <tbody>
          {wallets.map((w) => (
            <tr id={`wallet-${w.id}`}>
              <td>
                <span safe>{w.name}</span> {w.isDefault ? <Badge tone="success" label="Default" /> : ''}
              </td>
              <td>
                <code class="break" safe>
                  {w.address}
                </code>
              </td>
              {manage ? (
                <td>
                  <div class="row-actions">
                    {w.isDefault ? (
                      ''
                    ) : (
                      <form method="post" action={`${BASE}/${w.id}/default`} class="inline-form">
                        <CsrfField token={ctx.state.csrfToken} />
                        <button type="submit" class="button-secondary" aria-label={`Make ${w.name} the default`}>
                          Make default
                        </button>
                      </form>
                    )}
                    <a class="button-secondary" href={`${BASE}/${w.id}`} aria-label={`Edit ${w.name}`}>
                      Edit
                    </a>
                    <a class="button-quiet danger-link" href={`${BASE}/${w.id}/remove`} aria-label={`Remove ${w.name}`}>
                      Remove
                    </a>
                  </div>
                </td>
              ) : (
                ''
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

function PaymentMethodsPage(props: {
  ctx: DashboardContext;
  networks: RailNetwork[];
  wallets: Wallet[];
  form: WalletForm;
}): JSX.Element {
  const { ctx, networks, wallets, form } = props;
  const environment = ctx.state.tenant.environment;
  return (
    <SettingsLayout ctx={ctx} section="paymentMethods">
      <p class="lede">
        Payers pay into addresses that only your wallets can be paid out to: each network pays out to its default
        wallet. Adding, changing or removing a wallet, and changing the default, ask for your password (or code) again.
      </p>
      <DoneAlert
        ctx={ctx}
        messages={{
          added: 'Wallet added.',
          saved: 'Wallet saved.',
          default: 'Default wallet changed.',
          removed: 'Wallet removed.',
        }}
      />
      {networks.length === 0 ? (
        <Alert tone="info">
          <span safe>{`This Weir offers no network in ${environment} mode: there is no wallet to add here.`}</span>
        </Alert>
      ) : (
        ''
      )}
      {networksOf(networks, wallets).map((network) => {
        const own = wallets.filter((w) => w.chainId === network.chainId);
        return (
          <Card
            title={network.name}
            id={`network-${network.chainId}`}
            actions={
              own.length > 0 ? (
                <Badge tone="success" label="Receiving" />
              ) : (
                <Badge tone={network.offered ? 'warning' : 'neutral'} label="No wallet" />
              )
            }
          >
            <p class="muted network-facts" safe>
              {network.offered
                ? `Chain ${network.chainId} · ${network.assets.join(', ')}`
                : `Chain ${network.chainId} · no longer offered by this Weir`}
            </p>
            {own.length === 0 ? (
              <EmptyState message="No wallet on this network." hint="Checkout does not offer it until one is added." />
            ) : (
              <WalletRows ctx={ctx} wallets={own} />
            )}
          </Card>
        );
      })}
      {networks.length > 0 && canChange(ctx) ? (
        <Card title="Add a wallet" id="add-wallet">
          <SettingsForm ctx={ctx} action={BASE} id="wallet-form" errors={form.errors}>
            <div class="form-row">
              <SelectField
                name="chainId"
                label="Network"
                options={networks.map((n) => ({ value: String(n.chainId), label: `${n.name} (chain ${n.chainId})` }))}
                value={form.chainId}
                error={form.errors.chainId}
              />
              <Field
                name="name"
                label="Name"
                value={form.name}
                error={form.errors.name}
                hint="Optional, e.g. Treasury."
              />
            </div>
            <Field
              name="address"
              label="Wallet address"
              value={form.address}
              error={form.errors.address}
              hint="A wallet you hold the key to: payments are paid out to it."
              required
            />
            <ReauthFields user={ctx.state.user} />
            <button type="submit" class="button-primary">
              Add wallet
            </button>
          </SettingsForm>
        </Card>
      ) : (
        ''
      )}
    </SettingsLayout>
  );
}

function EditWalletPage(props: { ctx: DashboardContext; wallet: Wallet; form: WalletForm }): JSX.Element {
  const { ctx, wallet, form } = props;
  return (
    <SettingsLayout ctx={ctx} section="paymentMethods" title={`Wallet: ${wallet.name}`}>
      <p class="back-link">
        <a href={BASE}>← Payment methods</a>
      </p>
      <Card id="edit-wallet" class="narrow-card">
        <SettingsForm ctx={ctx} action={`${BASE}/${wallet.id}`} id="wallet-form" errors={form.errors}>
          <Field name="name" label="Name" value={form.name} error={form.errors.name} required />
          <Field
            name="address"
            label="Wallet address"
            value={form.address}
            error={form.errors.address}
            hint="Changing the address asks for your password (or code) again."
            required
          />
          <button type="submit" class="button-primary">
            Save wallet
          </button>
        </SettingsForm>
      </Card>
    </SettingsLayout>
  );
}

/**
 * Payment methods: the environment's networks, each with its wallets (the API's withdrawal
 * addresses): add, rename, change, remove, mark default. Every change but a rename asks for the
 * password (or TOTP code) again, so a stolen session alone cannot redirect funds.
 */
export function paymentMethodRoutes(routes: PageRoutes, deps: DashboardDeps): void {
  const networksOf = (ctx: DashboardContext) => deps.rail.networks(ctx.state.tenant.environment);
  const show = async (ctx: DashboardContext, form: WalletForm, status = 200) => {
    const wallets = await listWallets(apiFor(ctx, deps));
    const networks = networksOf(ctx);
    const chosen = form.chainId || String(networks[0]?.chainId ?? '');
    await sendHtml(
      ctx,
      <PaymentMethodsPage ctx={ctx} networks={networks} wallets={wallets} form={{ ...form, chainId: chosen }} />,
      status,
    );
  };
  const load = (ctx: DashboardContext) =>
    readOne<Wallet>(apiFor(ctx, deps), `${WALLETS}/${encodeURIComponent(ctx.params.id!)}`, 'wallet', ctx.params.id!);
  const formOf = (form: URLSearchParams): WalletForm => ({
    chainId: form.get('chainId') ?? '',
    address: (form.get('address') ?? '').trim(),
    name: (form.get('name') ?? '').trim(),
    errors: {},
  });

  routes.get(BASE, 'read', (ctx) => show(ctx, EMPTY));

  routes.post(BASE, 'manage', async (ctx) => {
    if (!(await reauthenticate(ctx, deps, 'add a wallet'))) return;
    const form = formOf(ctx.state.form);
    const answer = await apiFor(ctx, deps)('POST', WALLETS, {
      chainId: chainIdOf(form.chainId),
      address: form.address,
      name: textOf(ctx.state.form, 'name'),
    });
    if (answer.status >= 400) return show(ctx, { ...form, errors: formErrorsOf(answer, walletInputOf) }, answer.status);
    redirectTo(ctx, `${BASE}?done=added`);
  });

  routes.get(`${BASE}/:id`, 'manage', async (ctx) => {
    const wallet = await load(ctx);
    const form = { chainId: String(wallet.chainId), address: wallet.address, name: wallet.name, errors: {} };
    await sendHtml(ctx, <EditWalletPage ctx={ctx} wallet={wallet} form={form} />);
  });

  routes.post(`${BASE}/:id`, 'manage', async (ctx) => {
    const wallet = await load(ctx);
    const form = formOf(ctx.state.form);
    // A rename redirects nothing; a new address redirects the network's payouts.
    if (form.address !== wallet.address && !(await reauthenticate(ctx, deps, `change the address of “${wallet.name}”`)))
      return;
    const answer = await apiFor(ctx, deps)('PUT', `${WALLETS}/${wallet.id}`, {
      name: form.name,
      ...(form.address !== wallet.address ? { address: form.address } : {}),
    });
    if (answer.status >= 400) {
      const errors = formErrorsOf(answer, walletInputOf);
      return sendHtml(ctx, <EditWalletPage ctx={ctx} wallet={wallet} form={{ ...form, errors }} />, answer.status);
    }
    redirectTo(ctx, `${BASE}?done=saved`);
  });

  routes.post(`${BASE}/:id/default`, 'manage', async (ctx) => {
    const wallet = await load(ctx);
    if (!(await reauthenticate(ctx, deps, `make “${wallet.name}” the default wallet of its network`))) return;
    await apiFor(ctx, deps)('POST', `${WALLETS}/${wallet.id}/mark-as-default`);
    redirectTo(ctx, `${BASE}?done=default`);
  });

  routes.get(`${BASE}/:id/remove`, 'manage', async (ctx) => {
    const wallet = await load(ctx);
    await sendHtml(
      ctx,
      <ConfirmPage
        ctx={ctx}
        screen="settings"
        title="Remove wallet"
        message={`Remove the wallet “${wallet.name}” (${wallet.address})? Sessions already open still pay out to it; new ones use the network's other wallets.`}
        action={`${BASE}/${wallet.id}/remove`}
        button="Remove wallet"
        back={BASE}
      >
        <ReauthFields user={ctx.state.user} />
      </ConfirmPage>,
    );
  });

  routes.post(`${BASE}/:id/remove`, 'manage', async (ctx) => {
    const wallet = await load(ctx);
    if (!(await reauthenticate(ctx, deps, `remove the wallet “${wallet.name}”`))) return;
    await apiFor(ctx, deps)('DELETE', `${WALLETS}/${wallet.id}`);
    redirectTo(ctx, `${BASE}?done=removed`);
  });
}
