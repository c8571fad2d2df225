import QRCode from 'qrcode';
import { teamPolicyAggregate } from '../../../actors/team-policy.ts';
import { USER_ENVIRONMENT } from '../../../actors/user.ts';
import { reauthenticate, ReauthFields } from '../../auth/reauth.tsx';
import { RECOVERY_CODE_COUNT } from '../../auth/recovery-codes.ts';
import { can } from '../../auth/roles.ts';
import { otpauthUrl } from '../../auth/totp.ts';
import {
  disableTwoFactor,
  enableTwoFactor,
  enrolmentSecret,
  renewRecoveryCodes,
  SECURITY_PATH,
  startEnrolment,
  twoFactorRequired,
} from '../../auth/two-factor.ts';
import type { DashboardContext, DashboardDeps } from '../../context.ts';
import { redirectTo, sendHtml } from '../../http.ts';
import type { PageRoutes } from '../../page.ts';
import { Alert, Badge, Card, CsrfField, Field } from '../../ui/components.tsx';
import { AppLayout } from '../../ui/layout.tsx';

const ENROL_PATH = `${SECURITY_PATH}/two-factor`;
const RENEW_PATH = `${SECURITY_PATH}/recovery-codes`;

const NOTICES: Record<string, string> = {
  off: 'Two-factor sign-in is off.',
  required: 'Every member now signs in with two factors; those without are asked to set it up first.',
  optional: 'Two-factor sign-in is no longer required.',
};

/** The key as people type it into an app: groups of four. */
const grouped = (secret: string) => secret.replace(/(.{4})(?!$)/g, '$1 ');

async function renderSecurity(
  ctx: DashboardContext,
  deps: DashboardDeps,
  view: { status?: number; error?: string } = {},
) {
  const { user } = ctx.state;
  const required = await twoFactorRequired(deps, user.organizationId);
  const notice = NOTICES[typeof ctx.query.done === 'string' ? ctx.query.done : ''];
  await sendHtml(
    ctx,
    <AppLayout ctx={ctx} title="Security" screen="settings">
      <p class="back-link">
        <a href="/dashboard/settings">← Settings</a> · <a href="/dashboard/settings/team">Team</a>
      </p>
      {notice ? (
        <Alert tone="success">
          <span safe>{notice}</span>
        </Alert>
      ) : (
        ''
      )}
      {view.error ? (
        <Alert tone="danger">
          <span safe>{view.error}</span>
        </Alert>
      ) : (
        ''
      )}
      {required && !user.twoFactorEnabled ? (
        <Alert tone="info">Your organization requires two-factor sign-in. Set it up to use the dashboard.</Alert>
      ) : (
        ''
      )}
      <Card
        title="Two-factor sign-in"
        id="two-factor"
        actions={user.twoFactorEnabled ? <Badge tone="success" label="On" /> : <Badge label="Off" />}
      >
        {user.twoFactorEnabled ? (
          <>
            <p>
              Signing in asks for a code from your authenticator app after your password; so do changes that could
              redirect funds or data.
            </p>
            <form method="post" action={`${ENROL_PATH}/disable`} class="narrow-form">
              <CsrfField token={ctx.state.csrfToken} />
              <ReauthFields user={user} />
              <button type="submit" class="button-danger">
                Turn off two-factor
              </button>
            </form>
          </>
        ) : (
          <>
            <p>
              Add a second step to signing in: a 6-digit code from an authenticator app on your phone (any app that
              reads TOTP QR codes). A stolen password alone then opens nothing.
            </p>
            <a class="button button-primary" href={ENROL_PATH}>
              Set up two-factor
            </a>
          </>
        )}
      </Card>
      {user.twoFactorEnabled ? (
        <Card
          title="Recovery codes"
          id="recovery"
          actions={
            <Badge
              tone={user.recoveryCodesLeft <= 2 ? 'warning' : 'neutral'}
              label={`${user.recoveryCodesLeft} of ${RECOVERY_CODE_COUNT} left`}
            />
          }
        >
          <p>
            Each recovery code signs you in once without your phone. New codes replace these: the old ones, used or not,
            stop working.
          </p>
          <form method="post" action={RENEW_PATH}>
            <CsrfField token={ctx.state.csrfToken} />
            <button type="submit" class="button-secondary">
              Get new recovery codes
            </button>
          </form>
        </Card>
      ) : (
        ''
      )}
      <Card
        title="Required for the organization"
        id="requirement"
        actions={required ? <Badge tone="success" label="Required" /> : <Badge label="Optional" />}
      >
        <p>
          {required
            ? 'Every member signs in with two factors. Members without it are sent to set it up before anything else.'
            : 'Members choose for themselves whether to use two-factor sign-in.'}
        </p>
        {can(user.role, 'owner') ? (
          <form method="post" action={`${SECURITY_PATH}/requirement`}>
            <CsrfField token={ctx.state.csrfToken} />
            <input type="hidden" name="required" value={required ? 'no' : 'yes'} />
            <button type="submit" class={required ? 'button-secondary' : 'button-primary'}>
              {required ? 'Stop requiring two-factor' : 'Require two-factor for everyone'}
            </button>
          </form>
        ) : (
          <p class="muted">Only an owner can change this.</p>
        )}
      </Card>
    </AppLayout>,
    view.status ?? 200,
  );
}

async function renderEnrol(
  ctx: DashboardContext,
  enrolment: { secret: string; ticket: string },
  view: { status?: number; error?: string } = {},
) {
  const { user } = ctx.state;
  const url = otpauthUrl({ secret: enrolment.secret, account: user.email, issuer: 'Weir' });
  const svg = await QRCode.toString(url, { type: 'svg', margin: 1 });
  await sendHtml(
    ctx,
    <AppLayout ctx={ctx} title="Set up two-factor" screen="settings">
      <p class="back-link">
        <a href={SECURITY_PATH}>← Security</a>
      </p>
      <Card title="1. Add Weir to your authenticator app" id="scan">
        <div class="totp-setup">
          <img
            class="totp-qr"
            src={`data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`}
            width="180"
            height="180"
            alt="QR code of your two-factor key, for an authenticator app"
          />
          <div>
            <p>Scan the code with the app, or type this key into it (time-based, 6 digits, 30 seconds):</p>
            <p>
              <code id="totp-secret" class="totp-secret" safe>
                {grouped(enrolment.secret)}
              </code>
            </p>
          </div>
        </div>
      </Card>
      <Card title="2. Confirm with a code" id="confirm">
        <form method="post" action={ENROL_PATH} class="narrow-form" novalidate>
          <CsrfField token={ctx.state.csrfToken} />
          <input type="hidden" name="ticket" value={enrolment.ticket} />
          <Field
            name="code"
            label="Code the app shows"
            autocomplete="one-time-code"
            error={view.error}
            hint="6 digits; a new one every 30 seconds."
            required
          />
          <ReauthFields user={user} />
          <button type="submit" class="button-primary">
            Turn on two-factor
          </button>
        </form>
      </Card>
    </AppLayout>,
    view.status ?? 200,
  );
}

/** Recovery codes, shown this once: after turning two-factor on, or after renewing them. */
function RecoveryCodesPage(props: { ctx: DashboardContext; codes: string[]; renewed?: boolean }): JSX.Element {
  const { ctx, codes } = props;
  return (
    <AppLayout ctx={ctx} title={props.renewed ? 'New recovery codes' : 'Two-factor is on'} screen="settings">
      <Alert tone="success">
        {props.renewed
          ? 'New recovery codes made: the old ones no longer work.'
          : 'Two-factor sign-in is on. Signing in now asks for a code after your password.'}
      </Alert>
      <Card title="Your recovery codes" id="recovery-codes">
        <p>
          Each code signs you in once without your phone. Keep them somewhere safe, such as a password manager:
          <strong> they are shown only now.</strong>
        </p>
        <ol class="recovery-codes">
          {codes.map((code) => (
            <li>
              <code safe>{code}</code>
            </li>
          ))}
        </ol>
        <a class="button button-primary" href={SECURITY_PATH}>
          I have saved them
        </a>
      </Card>
    </AppLayout>
  );
}

/**
 * `/dashboard/settings/security`: the user's own two-factor sign-in (set up with a QR code and a
 * confirming code, recovery codes shown once and renewed after a code, turned off with a code), and the organization's
 * requirement, which owners set. Turning it on asks for the password too (a stolen session must not
 * lock the user out with an app of the thief's).
 */
export function securityRoutes(routes: PageRoutes, deps: DashboardDeps): void {
  routes.get(SECURITY_PATH, 'read', (ctx) => renderSecurity(ctx, deps));

  routes.get(ENROL_PATH, 'read', async (ctx) => {
    if (ctx.state.user.twoFactorEnabled) return redirectTo(ctx, SECURITY_PATH);
    await renderEnrol(ctx, startEnrolment(deps, ctx.state.user));
  });

  routes.post(ENROL_PATH, 'read', async (ctx) => {
    const { user, form, clientAddress } = ctx.state;
    if (user.twoFactorEnabled) return redirectTo(ctx, SECURITY_PATH);
    const ticket = form.get('ticket') ?? '';
    const secret = enrolmentSecret(deps, user, ticket);
    // A ticket past its 15 minutes (or not this user's): start again with a new key.
    if (!secret) return redirectTo(ctx, ENROL_PATH);
    if (!(await reauthenticate(ctx, deps, 'turn on two-factor sign-in'))) return;
    const codes = await enableTwoFactor(deps, user, clientAddress, secret, form.get('code') ?? '');
    if (!codes)
      return renderEnrol(
        ctx,
        { secret, ticket },
        { status: 400, error: 'That code is not right: enter the one the app shows now.' },
      );
    await sendHtml(ctx, <RecoveryCodesPage ctx={ctx} codes={codes} />);
  });

  routes.post(RENEW_PATH, 'read', async (ctx) => {
    if (!ctx.state.user.twoFactorEnabled) return redirectTo(ctx, SECURITY_PATH);
    if (!(await reauthenticate(ctx, deps, 'get new recovery codes'))) return;
    const codes = await renewRecoveryCodes(deps, ctx.state.user, ctx.state.clientAddress);
    await sendHtml(ctx, <RecoveryCodesPage ctx={ctx} codes={codes} renewed />);
  });

  routes.post(`${ENROL_PATH}/disable`, 'read', async (ctx) => {
    if (!ctx.state.user.twoFactorEnabled) return redirectTo(ctx, SECURITY_PATH);
    if (!(await reauthenticate(ctx, deps, 'turn off two-factor sign-in'))) return;
    await disableTwoFactor(deps, ctx.state.user, ctx.state.clientAddress);
    redirectTo(ctx, `${SECURITY_PATH}?done=off`);
  });

  routes.post(`${SECURITY_PATH}/requirement`, 'owner', async (ctx) => {
    const { user } = ctx.state;
    const required = ctx.state.form.get('required') === 'yes';
    if (required && !user.twoFactorEnabled)
      return renderSecurity(ctx, deps, {
        status: 400,
        error: 'Turn on two-factor for yourself first: requiring it would otherwise send you to set it up.',
      });
    const result = await deps.commands.handle(
      teamPolicyAggregate,
      user.organizationId,
      { type: 'SetTwoFactorRequirement', required },
      {
        organizationId: user.organizationId,
        environment: USER_ENVIRONMENT,
        actor: `user:${user.id}`,
        clientAddress: ctx.state.clientAddress,
      },
    );
    if (result.position !== null) await deps.projections.waitFor(result.position);
    redirectTo(ctx, `${SECURITY_PATH}?done=${required ? 'required' : 'optional'}`);
  });
}
