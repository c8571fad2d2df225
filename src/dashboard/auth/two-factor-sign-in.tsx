import Router from '@koa/router';
import { USERS, type UserDoc } from '../../projections/team.projection.ts';
import { RateLimitedError } from '../../shared/errors.ts';
import type { DashboardContext, DashboardDeps, DashboardState } from '../context.ts';
import { redirectTo, safeReturnPath, sendHtml } from '../http.ts';
import { Alert, CsrfField, Field } from '../ui/components.tsx';
import { AuthLayout } from '../ui/layout.tsx';
import { openTicket, sealTicket, verifySecondFactor } from './two-factor.ts';

export const TWO_FACTOR_SIGN_IN_PATH = '/dashboard/login/two-factor';

/** How long the second step may wait after the password was right. */
const SIGN_IN_TICKET_MS = 5 * 60_000;

function SecondFactorPage(props: { csrf: string; ticket: string; error?: string }): JSX.Element {
  return (
    <AuthLayout title="Two-factor sign-in">
      <h1>Two-factor sign-in</h1>
      <p class="lead">Enter the 6-digit code your authenticator app shows, or one of your recovery codes.</p>
      {props.error ? (
        <Alert tone="danger">
          <span safe>{props.error}</span>
        </Alert>
      ) : (
        ''
      )}
      <form method="post" action={TWO_FACTOR_SIGN_IN_PATH} novalidate>
        <CsrfField token={props.csrf} />
        <input type="hidden" name="ticket" value={props.ticket} />
        <Field
          name="code"
          label="Authentication code"
          autocomplete="one-time-code"
          hint="A recovery code works once: it looks like ABCD-EFGH-IJKL-MNOP."
          required
          autofocus
        />
        <button type="submit" class="button-primary button-block">
          Verify and sign in
        </button>
      </form>
      <p class="muted">
        <a href="/dashboard/login">Start again</a>
      </p>
    </AuthLayout>
  );
}

/**
 * The password was right and the user has two-factor on: no session yet, but the second step,
 * carrying a ticket sealed with the master key that names the user and where to go (for 5 minutes).
 */
export function askSecondFactor(ctx: DashboardContext, deps: DashboardDeps, user: UserDoc, next: string) {
  const ticket = sealTicket(deps, 'sign-in', { userId: user.id, next });
  return sendHtml(ctx, <SecondFactorPage csrf={ctx.state.csrfToken} ticket={ticket} />);
}

/**
 * `POST /dashboard/login/two-factor`: the code (TOTP or recovery) for the ticket's user; wrong
 * codes count against the sign-in throttle like wrong passwords. `signIn` starts the session.
 */
export function twoFactorSignInRoutes(
  deps: DashboardDeps,
  signIn: (ctx: DashboardContext, user: UserDoc) => Promise<void>,
): Router<DashboardState> {
  const router = new Router<DashboardState>();
  const users = deps.readStore.collection<UserDoc>(USERS);
  router.post(TWO_FACTOR_SIGN_IN_PATH, async (ctx) => {
    const { form, clientAddress } = ctx.state;
    const ticket = form.get('ticket') ?? '';
    const payload = openTicket<{ userId: string; next: string }>(deps, 'sign-in', ticket, SIGN_IN_TICKET_MS);
    const user = payload ? await users.get(payload.userId) : null;
    if (!payload || !user || user.removed || !user.twoFactorEnabled) {
      ctx.status = 303;
      ctx.redirect('/dashboard/login');
      return;
    }
    const again = (status: number, error: string) =>
      sendHtml(ctx, <SecondFactorPage csrf={ctx.state.csrfToken} ticket={ticket} error={error} />, status);
    try {
      deps.signInThrottle.check(user.emailLower, clientAddress);
    } catch (error) {
      if (!(error instanceof RateLimitedError)) throw error;
      ctx.set(error.headers);
      return again(429, `Too many failed sign-ins: ${error.message.replace(/^too many failed sign-ins /, '')}.`);
    }
    if (!(await verifySecondFactor(deps, user, clientAddress, (form.get('code') ?? '').slice(0, 64)))) {
      deps.signInThrottle.failed(user.emailLower, clientAddress);
      return again(401, 'That code is not right, or was used already.');
    }
    await signIn(ctx, user);
    redirectTo(ctx, safeReturnPath(payload.next));
  });
  return router;
}
