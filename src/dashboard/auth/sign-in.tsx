import Router from '@koa/router';
import { RateLimitedError, WeirError } from '../../shared/errors.ts';
import { USERS, type UserDoc } from '../../projections/team.projection.ts';
import { COLLECTIONS, type OrganizationDoc } from '../../projections/collections.ts';
import { recordOrganization } from '../../tenancy/create-organization.ts';
import { checkNewUser, createUser } from '../../tenancy/create-user.ts';
import { formErrorOf } from '../command.ts';
import type { DashboardContext, DashboardDeps, DashboardState } from '../context.ts';
import { COOKIES, environmentReturnPath, isSecure, redirectTo, safeReturnPath, sendHtml, setCookie } from '../http.ts';
import { Alert, CsrfField, Field } from '../ui/components.tsx';
import { AuthLayout } from '../ui/layout.tsx';
import { askSecondFactor } from './two-factor-sign-in.tsx';
import { verifyCredentials } from './verify-credentials.ts';

type FormErrors = Record<string, string>;

/** A new password, typed twice (first-run setup, an invite's acceptance). */
export const NewPasswordFields = ({
  errors,
}: {
  errors: { password?: string; passwordConfirm?: string };
}): JSX.Element => (
  <>
    <Field
      name="password"
      label="Password"
      type="password"
      error={errors.password}
      hint="At least 10 characters."
      autocomplete="new-password"
      required
    />
    <Field
      name="passwordConfirm"
      label="Password again"
      type="password"
      error={errors.passwordConfirm}
      autocomplete="new-password"
      required
    />
  </>
);

function LoginPage(props: { csrf: string; email?: string; next: string; error?: string }): JSX.Element {
  return (
    <AuthLayout title="Sign in">
      <h1>Sign in</h1>
      <p class="lead">to your Weir dashboard</p>
      {props.error ? (
        <Alert tone="danger">
          <span safe>{props.error}</span>
        </Alert>
      ) : (
        ''
      )}
      <form method="post" action="/dashboard/login" novalidate>
        <CsrfField token={props.csrf} />
        <input type="hidden" name="next" value={props.next} />
        <Field name="email" label="Email" type="email" value={props.email} autocomplete="username" required autofocus />
        <Field name="password" label="Password" type="password" autocomplete="current-password" required />
        <button type="submit" class="button-primary button-block">
          Sign in
        </button>
      </form>
    </AuthLayout>
  );
}

type SetupValues = { organization: string; organizationName: string; email: string; name: string };

function SetupPage(props: {
  csrf: string;
  token: string;
  organizations: { id: string; name: string }[];
  values: SetupValues;
  errors: FormErrors;
}): JSX.Element {
  const { values, errors } = props;
  const creating = values.organization === 'new' || props.organizations.length === 0;
  return (
    <AuthLayout title="Set up Weir">
      <h1>Set up Weir</h1>
      <p class="lead">
        Create the first owner of the dashboard. This works once, with the setup token issued at start.
      </p>
      {errors.form ? (
        <Alert tone="danger">
          <span safe>{errors.form}</span>
        </Alert>
      ) : (
        ''
      )}
      <form method="post" action="/dashboard/setup" novalidate>
        <CsrfField token={props.csrf} />
        <input type="hidden" name="token" value={props.token} />
        <fieldset>
          <legend>Organization</legend>
          {props.organizations.map((org) => (
            <label class="choice">
              <input type="radio" name="organization" value={org.id} checked={values.organization === org.id} />
              <span safe>{org.name}</span>
            </label>
          ))}
          {props.organizations.length > 0 ? (
            <label class="choice">
              <input type="radio" name="organization" value="new" checked={creating} />
              <span>A new organization</span>
            </label>
          ) : (
            <input type="hidden" name="organization" value="new" />
          )}
          <Field
            name="organizationName"
            label="New organization's name"
            value={values.organizationName}
            error={errors.organizationName}
            hint={props.organizations.length > 0 ? 'Only when creating a new organization.' : undefined}
          />
        </fieldset>
        <Field name="name" label="Your name" value={values.name} error={errors.name} autocomplete="name" />
        <Field
          name="email"
          label="Email"
          type="email"
          value={values.email}
          error={errors.email}
          autocomplete="username"
          required
        />
        <NewPasswordFields errors={errors} />
        <button type="submit" class="button-primary button-block">
          Create owner and sign in
        </button>
      </form>
    </AuthLayout>
  );
}

/** Marks the token form's POST apart from the owner form's (both post to the setup page). */
const TOKEN_STEP = 'token';

/**
 * The first step of the first run: the setup token Weir issued at start. Posted, so it stays out
 * of history, referrers and request logs.
 */
const SetupTokenPage = ({ csrf, error }: { csrf: string; error?: string }): JSX.Element => (
  <AuthLayout title="Set up Weir">
    <h1>Set up Weir</h1>
    <p class="lead">
      Weir keeps a one-time setup token in the file <code>dashboard-setup-token</code> of its data directory (and shows
      it on the terminal that started it). Enter it to create the first owner.
    </p>
    <form method="post" action="/dashboard/setup" novalidate>
      <CsrfField token={csrf} />
      <input type="hidden" name="step" value={TOKEN_STEP} />
      <Field name="token" label="Setup token" error={error} autocomplete="off" required autofocus />
      <button type="submit" class="button-primary button-block">
        Continue
      </button>
    </form>
  </AuthLayout>
);

const SetupClosed = ({ message }: { message: string }): JSX.Element => (
  <AuthLayout title="Setup">
    <h1>Setup</h1>
    <p safe>{message}</p>
    <p>
      <a href="/dashboard/login">Sign in</a>
    </p>
  </AuthLayout>
);

/** Signs `user` in: a new session (a new token, so none from before sign-in survives), its cookie. */
export async function signIn(ctx: DashboardContext, deps: DashboardDeps, user: UserDoc) {
  const { token } = await deps.sessions.start(user, ctx.state.clientAddress);
  setCookie(ctx, COOKIES.session, token, { secure: isSecure(ctx, deps.publicUrl) });
}

/**
 * The pages before sign-in: `/dashboard/login` (email and password, throttled per account and
 * address) and the first-run page `/dashboard/setup` (only while no user exists, with the token
 * issued at start, posted). Nothing of the organizations shows before it.
 */
export function signInRoutes(deps: DashboardDeps): Router<DashboardState> {
  const router = new Router<DashboardState>();
  const users = deps.readStore.collection<UserDoc>(USERS);

  router.get('/dashboard/login', async (ctx) => {
    if (ctx.state.user) return redirectTo(ctx, '/dashboard');
    // First run: no one can sign in yet, so the way in is the setup page, not a sign-in form.
    if (deps.setup.active() && (await users.count({})) === 0) return redirectTo(ctx, '/dashboard/setup');
    const next = safeReturnPath(typeof ctx.query.next === 'string' ? ctx.query.next : null);
    await sendHtml(ctx, <LoginPage csrf={ctx.state.csrfToken} next={next} />);
  });

  router.post('/dashboard/login', async (ctx) => {
    const { form } = ctx.state;
    const email = (form.get('email') ?? '').slice(0, 254);
    const next = safeReturnPath(form.get('next'));
    const again = (status: number, error: string) =>
      sendHtml(ctx, <LoginPage csrf={ctx.state.csrfToken} email={email} next={next} error={error} />, status);
    try {
      const user = await verifyCredentials(deps, {
        email,
        password: form.get('password') ?? '',
        clientAddress: ctx.state.clientAddress,
      });
      if (!user) return again(401, 'That email and password do not match a user.');
      // With two-factor on, the password alone opens no session: the code is asked for first.
      if (user.twoFactorEnabled) return askSecondFactor(ctx, deps, user, next);
      await signIn(ctx, deps, user);
      redirectTo(ctx, next);
    } catch (error) {
      if (!(error instanceof RateLimitedError)) throw error;
      ctx.set(error.headers);
      return again(429, `Too many failed sign-ins: ${error.message.replace(/^too many failed sign-ins /, '')}.`);
    }
  });

  /** The organizations to choose from: each once, by its live record's name. */
  const organizations = async () =>
    (
      await deps.readStore
        .collection<OrganizationDoc>(COLLECTIONS.organizations)
        .find({ environment: 'live' }, { sort: { createdAt: 1 }, limit: 100 })
    ).map((org) => ({ id: org.organizationId, name: org.name }));

  const setupOpen = async (): Promise<string | null> => {
    const head = await deps.eventStore.headPosition();
    if (head !== null) await deps.projections.waitFor(head, 2_000).catch(() => {});
    if ((await users.count({})) > 0) {
      // Users made meanwhile (weir user create): the token is of no more use, nor its file.
      deps.setup.spend();
      return 'Weir is set up: its dashboard has users. Sign in instead.';
    }
    if (!deps.setup.active()) return 'There is no setup token now. Restart Weir to issue a new one.';
    return null;
  };

  router.get('/dashboard/setup', async (ctx) => {
    // An address that carries a token (an old `?token=` link) is not read: the token is in history
    // and logs already, and the clean address, which asks for it, replaces it in the address bar.
    if (ctx.querystring !== '') return redirectTo(ctx, '/dashboard/setup');
    const closed = await setupOpen();
    if (closed) return sendHtml(ctx, <SetupClosed message={closed} />, 404);
    await sendHtml(ctx, <SetupTokenPage csrf={ctx.state.csrfToken} />);
  });

  let settingUp = false;
  router.post('/dashboard/setup', async (ctx) => {
    const { form } = ctx.state;
    const token = form.get('token') ?? '';
    const closed = await setupOpen();
    if (closed) return sendHtml(ctx, <SetupClosed message={closed} />, 404);
    if (!deps.setup.matches(token))
      return sendHtml(
        ctx,
        <SetupTokenPage csrf={ctx.state.csrfToken} error="That is not the setup token Weir issued at start." />,
        403,
      );
    const orgs = await organizations();
    if (form.get('step') === TOKEN_STEP)
      return sendHtml(
        ctx,
        <SetupPage
          csrf={ctx.state.csrfToken}
          token={token}
          organizations={orgs}
          values={{ organization: orgs[0]?.id ?? 'new', organizationName: '', email: '', name: '' }}
          errors={{}}
        />,
      );
    const values: SetupValues = {
      organization: form.get('organization') ?? 'new',
      organizationName: (form.get('organizationName') ?? '').trim(),
      email: (form.get('email') ?? '').trim(),
      name: (form.get('name') ?? '').trim(),
    };
    const password = form.get('password') ?? '';
    const errors: FormErrors = {};
    const creating = values.organization === 'new';
    if (!creating && !orgs.some((o) => o.id === values.organization)) errors.organization = 'choose an organization';
    if (creating && (values.organizationName === '' || values.organizationName.length > 200))
      errors.organizationName = 'Give the organization a name (1 to 200 characters).';
    if (password !== (form.get('passwordConfirm') ?? '')) errors.passwordConfirm = 'The two passwords differ.';
    const again = (status: number) =>
      sendHtml(
        ctx,
        <SetupPage csrf={ctx.state.csrfToken} token={token} organizations={orgs} values={values} errors={errors} />,
        status,
      );
    if (Object.keys(errors).length > 0) return again(400);
    if (settingUp) {
      errors.form = 'Another setup is under way; reload in a moment.';
      return again(409);
    }
    settingUp = true;
    try {
      // The user's fields are checked before the organization is made, so bad input writes nothing.
      checkNewUser({ email: values.email, name: values.name, role: 'owner', password });
      const organizationId = creating
        ? (await recordOrganization(deps.commands, values.organizationName, 'setup')).organizationId
        : values.organization;
      const { userId, position } = await createUser(deps.commands, {
        organizationId,
        email: values.email,
        name: values.name,
        role: 'owner',
        password,
        actor: 'setup',
      });
      if (position !== null) await deps.projections.waitFor(position);
      deps.setup.spend();
      await signIn(ctx, deps, (await users.get(userId))!);
      redirectTo(ctx, '/dashboard');
    } catch (error) {
      if (!(error instanceof WeirError)) throw error;
      const { field, message } = formErrorOf(error);
      errors[field && ['email', 'password', 'name'].includes(field) ? field : 'form'] = message;
      return again(error.statusCode);
    } finally {
      settingUp = false;
    }
  });

  return router;
}

/** Sign-out and the test/live switch: POSTs of a signed-in user (CSRF checked by the area). */
export function sessionRoutes(deps: DashboardDeps): Router<DashboardState> {
  const router = new Router<DashboardState>();
  router.post('/dashboard/logout', async (ctx) => {
    await deps.sessions.end(ctx.state.session, 'signed_out');
    setCookie(ctx, COOKIES.session, null, { secure: isSecure(ctx, deps.publicUrl) });
    redirectTo(ctx, '/dashboard/login');
  });
  router.post('/dashboard/environment', (ctx) => {
    const environment = ctx.state.form.get('environment') === 'live' ? 'live' : 'test';
    setCookie(ctx, COOKIES.environment, environment, {
      secure: isSecure(ctx, deps.publicUrl),
      maxAgeSeconds: 365 * 24 * 3600,
    });
    redirectTo(ctx, environmentReturnPath(ctx.state.form.get('return')));
  });
  return router;
}
