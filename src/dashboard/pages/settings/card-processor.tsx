import type { CardProcessorSchema } from '../../../read-api/schema/card-processor.ts';
import type { z } from '../../../read-api/schema/fields.ts';
import { apiFor } from '../../api.ts';
import { ReauthFields, reauthenticate } from '../../auth/reauth.tsx';
import type { DashboardContext, DashboardDeps } from '../../context.ts';
import { redirectTo, sendHtml } from '../../http.ts';
import type { PageRoutes } from '../../page.ts';
import { Alert, Badge, Card, DateTime, Field } from '../../ui/components.tsx';
import { type FormErrors, formErrorsOf } from '../../ui/form-parts.tsx';
import { ConfirmPage, DoneAlert } from '../developers/forms.tsx';
import { canChange, SECTIONS, SettingsForm, SettingsLayout } from './frame.tsx';

export type CardProcessor = z.output<typeof CardProcessorSchema>;

const BASE = SECTIONS.cards.path;
const API = '/api/v1/organization/card-processor';

type KeysForm = { publishableKey: string; secretKey: string; errors: FormErrors };

/** The keys on file: the publishable key, and of the secret only its last four (the API never answers more). */
function Connected({ keys, timeZone }: { keys: CardProcessor; timeZone: string }): JSX.Element {
  return (
    <dl class="details">
      <dt>Processor</dt>
      <dd>Stripe</dd>
      <dt>Publishable key</dt>
      <dd>
        <code class="break" safe>
          {keys.publishableKey ?? ''}
        </code>
      </dd>
      <dt>Secret key</dt>
      <dd>
        <code id="secret-key-last4" safe>{`…${keys.secretKeyLast4 ?? ''}`}</code>
        <span class="muted"> (stored sealed, never shown again)</span>
      </dd>
      <dt>Connected</dt>
      <dd>{keys.connectedAt ? <DateTime iso={keys.connectedAt} timeZone={timeZone} /> : ''}</dd>
    </dl>
  );
}

function CardProcessorPage(props: { ctx: DashboardContext; keys: CardProcessor; form: KeysForm }): JSX.Element {
  const { ctx, keys, form } = props;
  const env = ctx.state.tenant.environment;
  return (
    <SettingsLayout ctx={ctx} section="cards">
      <p class="lede">
        Card payments go through your own card processor account: its payouts reach your bank account, and Weir adds no
        fee. Keys are per environment: {env} keys here.
      </p>
      <DoneAlert
        ctx={ctx}
        messages={{ saved: 'Card processor keys saved.', removed: 'Card processor keys removed.' }}
      />
      <div class="grid grid-2 settings-grid">
        <Card
          title="Connected account"
          id="card-processor"
          actions={keys.connected ? <Badge tone="success" label="Connected" /> : <Badge label="Not connected" />}
        >
          {keys.connected ? (
            <Connected keys={keys} timeZone={ctx.state.timeZone} />
          ) : (
            <p class="muted">No card processor keys yet.</p>
          )}
          {keys.cardPaymentsAvailable ? (
            ''
          ) : (
            <Alert tone="info">
              <span>This Weir server does not take card payments at checkout yet: the keys wait for it.</span>
            </Alert>
          )}
          {keys.connected && canChange(ctx) ? (
            <a class="button-secondary" href={`${BASE}/remove`}>
              Remove keys
            </a>
          ) : (
            ''
          )}
        </Card>
        <Card title={keys.connected ? 'Replace the keys' : 'Connect Stripe'} id="card-keys">
          <SettingsForm ctx={ctx} action={BASE} id="card-form" errors={form.errors}>
            <Field
              name="publishableKey"
              label="Publishable key"
              value={form.publishableKey}
              error={form.errors.publishableKey}
              hint={`pk_${env}_…`}
              autocomplete="off"
              required
            />
            <Field
              name="secretKey"
              label="Secret key"
              value={form.secretKey}
              error={form.errors.secretKey}
              hint={`sk_${env}_… or a restricted rk_${env}_… key. Stored sealed: only its last four are shown again.`}
              autocomplete="off"
              required
            />
            <ReauthFields user={ctx.state.user} />
            <button type="submit" class="button-primary">
              Save keys
            </button>
          </SettingsForm>
        </Card>
      </div>
    </SettingsLayout>
  );
}

/**
 * Card processor keys through `/api/v1/organization/card-processor`. New keys send card payouts
 * elsewhere, so setting them asks for the password (or code) again, as a wallet does.
 */
export function cardProcessorRoutes(routes: PageRoutes, deps: DashboardDeps): void {
  const show = async (ctx: DashboardContext, form: KeysForm, status = 200) => {
    const keys = (await apiFor(ctx, deps)<CardProcessor>('GET', API)).body;
    await sendHtml(ctx, <CardProcessorPage ctx={ctx} keys={keys} form={form} />, status);
  };

  routes.get(BASE, 'read', (ctx) => show(ctx, { publishableKey: '', secretKey: '', errors: {} }));

  routes.post(BASE, 'manage', async (ctx) => {
    if (!(await reauthenticate(ctx, deps, 'set the card processor keys'))) return;
    const form: KeysForm = {
      publishableKey: (ctx.state.form.get('publishableKey') ?? '').trim(),
      secretKey: (ctx.state.form.get('secretKey') ?? '').trim(),
      errors: {},
    };
    const answer = await apiFor(ctx, deps)('PUT', API, {
      provider: 'stripe',
      publishableKey: form.publishableKey,
      secretKey: form.secretKey,
    });
    if (answer.status >= 400) {
      const errors = formErrorsOf(answer, (field) =>
        field === 'publishableKey' || field === 'secretKey' ? field : undefined,
      );
      return show(ctx, { ...form, errors }, answer.status);
    }
    redirectTo(ctx, `${BASE}?done=saved`);
  });

  routes.get(`${BASE}/remove`, 'manage', (ctx) =>
    sendHtml(
      ctx,
      <ConfirmPage
        ctx={ctx}
        screen="settings"
        title="Remove card processor keys"
        message="Remove the card processor keys of this environment? Weir stops using them; your processor account itself is not changed."
        action={`${BASE}/remove`}
        button="Remove keys"
        back={BASE}
      />,
    ),
  );

  routes.post(`${BASE}/remove`, 'manage', async (ctx) => {
    await apiFor(ctx, deps)('DELETE', API);
    redirectTo(ctx, `${BASE}?done=removed`);
  });
}
