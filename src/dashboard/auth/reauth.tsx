import { USER_CREDENTIALS, type UserCredentialDoc, type UserDoc } from '../../projections/team.projection.ts';
import { RateLimitedError } from '../../shared/errors.ts';
import type { DashboardContext, DashboardDeps } from '../context.ts';
import { sendHtml } from '../http.ts';
import { Alert, CsrfField, Field } from '../ui/components.tsx';
import { AppLayout } from '../ui/layout.tsx';
import { verifyPassword } from './password.ts';
import { verifySecondFactor } from './two-factor.ts';

/**
 * A way to prove again who one is: the form field it reads and how it checks it. The password, or
 * for a user with two-factor on a TOTP code (`methodsFor` picks the user's), so every page that asks
 * for re-authentication gets it without a change.
 */
export type ReauthMethod = {
  field: string;
  label: string;
  type: 'password' | 'text';
  autocomplete: string;
  /** What the confirmation page asks for: "To <action>, <prompt>." */
  prompt: string;
  /** What a wrong answer is told. */
  wrong: string;
  verify(deps: DashboardDeps, user: UserDoc, value: string, clientAddress: string): Promise<boolean>;
};

const PASSWORD: ReauthMethod = {
  field: 'reauth_password',
  label: 'Your password',
  type: 'password',
  autocomplete: 'current-password',
  prompt: 'enter your password again',
  wrong: 'That password is not right.',
  async verify(deps, user, value) {
    const credential = await deps.readStore.collection<UserCredentialDoc>(USER_CREDENTIALS).get(user.id);
    return verifyPassword(credential?.passwordHash ?? null, value);
  },
};

/** A code of the user's authenticator app (not a recovery code: those are for signing in without the phone). */
const TOTP: ReauthMethod = {
  field: 'reauth_code',
  label: 'Code from your authenticator app',
  type: 'text',
  autocomplete: 'one-time-code',
  prompt: 'enter the 6-digit code your authenticator app shows',
  wrong: 'That code is not right, or was used already.',
  verify: (deps, user, value, clientAddress) => verifySecondFactor(deps, user, clientAddress, value, 'totp'),
};

/** The methods this user re-authenticates with (the first one present in a form is used; the first is asked for). */
const methodsFor = (user: UserDoc): ReauthMethod[] => (user.twoFactorEnabled ? [TOTP] : [PASSWORD]);

/** What confirming it is them asks of this user ("enter your password again"), for a page to tell ahead. */
export const reauthPrompt = (user: UserDoc): string => methodsFor(user)[0]!.prompt;

/** The re-authentication field(s), to put inside a sensitive form so it is asked for in one step. */
export function ReauthFields({ user, error }: { user: UserDoc; error?: string }): JSX.Element {
  const [method] = methodsFor(user);
  return (
    <Field
      name={method!.field}
      label={method!.label}
      type={method!.type}
      autocomplete={method!.autocomplete}
      hint="Asked again for changes that could redirect funds or data."
      error={error}
      required
    />
  );
}

/** Every field of the form as posted, but the CSRF token and re-authentication, as hidden inputs. */
const carried = (form: URLSearchParams, skip: ReadonlySet<string>): JSX.Element[] =>
  [...form.entries()]
    .filter(([name]) => !skip.has(name))
    .map(([name, value]) => <input type="hidden" name={name} value={value} />);

function ConfirmPage(props: {
  ctx: DashboardContext;
  action: string;
  prompt: string;
  error?: string;
  skip: ReadonlySet<string>;
}) {
  const { ctx } = props;
  return (
    <AppLayout ctx={ctx} title="Confirm it's you">
      <div class="card error-page">
        <p safe>{`To ${props.action}, ${props.prompt}.`}</p>
        {props.error ? (
          <Alert tone="danger">
            <span safe>{props.error}</span>
          </Alert>
        ) : (
          ''
        )}
        <form method="post" action={ctx.path}>
          <CsrfField token={ctx.state.csrfToken} />
          {carried(ctx.state.form, props.skip)}
          <ReauthFields user={ctx.state.user} />
          <button type="submit" class="button-primary">
            Confirm
          </button>
        </form>
      </div>
    </AppLayout>
  );
}

/**
 * For a sensitive action (a withdrawal address, a new API key or webhook endpoint): true when the
 * POST carries the user's password (or, with two-factor on, a TOTP code) and it is right;
 * otherwise it has answered with a page asking for it, carrying the form as posted, and the
 * handler must stop:
 *
 *     if (!(await reauthenticate(ctx, deps, 'create an API key'))) return;
 *
 * Wrong answers count against the sign-in throttle (per account and address), as sign-ins do.
 */
export async function reauthenticate(ctx: DashboardContext, deps: DashboardDeps, action: string): Promise<boolean> {
  const { user, form, clientAddress } = ctx.state;
  const methods = methodsFor(user);
  // Neither method's answer is ever carried along, whichever the user has now.
  const skip = new Set(['_csrf', PASSWORD.field, TOTP.field]);
  const method = methods.find((m) => form.has(m.field));
  const ask = (status: number, error?: string) =>
    sendHtml(
      ctx,
      <ConfirmPage ctx={ctx} action={action} prompt={methods[0]!.prompt} error={error} skip={skip} />,
      status,
    );
  if (!method) {
    await ask(200);
    return false;
  }
  try {
    deps.signInThrottle.check(user.emailLower, clientAddress);
  } catch (error) {
    if (!(error instanceof RateLimitedError)) throw error;
    ctx.set(error.headers);
    await ask(429, `Too many wrong answers: ${error.message.replace(/^too many failed sign-ins /, '')}.`);
    return false;
  }
  if (await method.verify(deps, user, form.get(method.field) ?? '', clientAddress)) return true;
  deps.signInThrottle.failed(user.emailLower, clientAddress);
  await ask(403, method.wrong);
  return false;
}
