import Router from '@koa/router';
import { NewPasswordFields } from './sign-in.tsx';
import { organizationRecordId } from '../../actors/organization.ts';
import { COLLECTIONS, type OrganizationDoc } from '../../projections/collections.ts';
import { USERS, type UserDoc } from '../../projections/team.projection.ts';
import { WeirError } from '../../shared/errors.ts';
import { checkNewUser } from '../../tenancy/create-user.ts';
import { acceptInvite, INVITE_PATH, openInvite } from '../../tenancy/invites.ts';
import type { DashboardContext, DashboardDeps, DashboardState } from '../context.ts';
import { redirectTo, sendHtml } from '../http.ts';
import { Alert, CsrfField, Field } from '../ui/components.tsx';
import { AuthLayout } from '../ui/layout.tsx';

type Errors = Partial<Record<'name' | 'password' | 'passwordConfirm' | 'form', string>>;

function AcceptPage(props: {
  csrf: string;
  token: string;
  organization: string;
  email: string;
  role: string;
  name: string;
  errors: Errors;
}): JSX.Element {
  const { errors } = props;
  return (
    <AuthLayout title="Join your team">
      <h1 safe>{`Join ${props.organization}`}</h1>
      <p class="lead">
        You are invited as <strong safe>{props.role}</strong>. Choose a password to finish.
      </p>
      {errors.form ? (
        <Alert tone="danger">
          <span safe>{errors.form}</span>
        </Alert>
      ) : (
        ''
      )}
      <form method="post" action={`${INVITE_PATH}${props.token}`} novalidate>
        <CsrfField token={props.csrf} />
        <div class="field">
          <label for="invite-email">Email</label>
          <input id="invite-email" type="email" value={props.email} autocomplete="username" readonly />
        </div>
        <Field name="name" label="Your name" value={props.name} error={errors.name} autocomplete="name" />
        <NewPasswordFields errors={errors} />
        <button type="submit" class="button-primary button-block">
          Join and sign in
        </button>
      </form>
    </AuthLayout>
  );
}

const InviteClosed = (): JSX.Element => (
  <AuthLayout title="Invite">
    <h1>This invite link does not work</h1>
    <p>It was used already, revoked, or is past its expiry. Ask whoever invited you to send it again.</p>
    <p>
      <a href="/dashboard/login">Sign in</a>
    </p>
  </AuthLayout>
);

/**
 * The invite link's page, before sign-in: `/dashboard/invite/<id>.<secret>` shows the invite while it
 * is pending and not expired (Weir's clock); the invitee chooses a name and password, becomes a
 * user with the invite's role, and is signed in. `signIn` starts their session.
 */
export function inviteRoutes(
  deps: DashboardDeps,
  signIn: (ctx: DashboardContext, user: UserDoc) => Promise<void>,
): Router<DashboardState> {
  const router = new Router<DashboardState>();
  const users = deps.readStore.collection<UserDoc>(USERS);
  const orgName = async (organizationId: string) =>
    (
      await deps.readStore
        .collection<OrganizationDoc>(COLLECTIONS.organizations)
        .get(organizationRecordId(organizationId, 'live'))
    )?.name ?? 'your organization';

  router.get(`${INVITE_PATH}:token`, async (ctx) => {
    const opened = await openInvite(deps.readStore, ctx.params.token ?? '', deps.clock.now());
    if (!opened) return sendHtml(ctx, <InviteClosed />, 404);
    const { invite } = opened;
    await sendHtml(
      ctx,
      <AcceptPage
        csrf={ctx.state.csrfToken}
        token={ctx.params.token!}
        organization={await orgName(invite.organizationId)}
        email={invite.email}
        role={invite.role}
        name=""
        errors={{}}
      />,
    );
  });

  router.post(`${INVITE_PATH}:token`, async (ctx) => {
    const token = ctx.params.token ?? '';
    const opened = await openInvite(deps.readStore, token, deps.clock.now());
    if (!opened) return sendHtml(ctx, <InviteClosed />, 404);
    const { form } = ctx.state;
    const { invite } = opened;
    const name = (form.get('name') ?? '').trim();
    const password = form.get('password') ?? '';
    const errors: Errors = {};
    const again = async (status: number) =>
      sendHtml(
        ctx,
        <AcceptPage
          csrf={ctx.state.csrfToken}
          token={token}
          organization={await orgName(invite.organizationId)}
          email={invite.email}
          role={invite.role}
          name={name}
          errors={errors}
        />,
        status,
      );
    if (password !== (form.get('passwordConfirm') ?? '')) errors.passwordConfirm = 'The two passwords differ.';
    try {
      checkNewUser({ email: invite.email, name, role: invite.role, password });
      if (errors.passwordConfirm) return again(400);
      const { userId } = await acceptInvite(deps, opened, { name, password, clientAddress: ctx.state.clientAddress });
      await signIn(ctx, (await users.get(userId))!);
      redirectTo(ctx, '/dashboard');
    } catch (error) {
      if (!(error instanceof WeirError)) throw error;
      const field = /^(\w+): /.exec(error.message)?.[1];
      const message = error.message.replace(/^\w+: /, '');
      if (field === 'name' || field === 'password')
        errors[field] = `${message.charAt(0).toUpperCase()}${message.slice(1)}.`;
      else errors.form = `${error.message.charAt(0).toUpperCase()}${error.message.slice(1)}.`;
      return again(error.statusCode);
    }
  });

  return router;
}
