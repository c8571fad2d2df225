import Router from '@koa/router';
import type { Aggregate, DomainEvent } from '../../actors/aggregate.ts';
import { organizationRecordId } from '../../actors/organization.ts';
import { INVITE_LIFETIME_MS, inviteOpen, userInviteAggregate } from '../../actors/user-invite.ts';
import {
  USER_ENVIRONMENT,
  userAggregate,
  userEmailClaimAggregate,
  userEmailClaimId,
  type UserRole,
} from '../../actors/user.ts';
import { requirePermission } from '../../dashboard/auth/roles.ts';
import { renderInviteMail } from '../../mail/invite-mail.ts';
import type { Mailer } from '../../mail/mailer.ts';
import { COLLECTIONS, type OrganizationDoc } from '../../projections/collections.ts';
import { USER_INVITES, USERS, type UserDoc, type UserInviteDoc } from '../../projections/team.projection.ts';
import { ConflictError, ForbiddenError, InvalidStateError, NotFoundError, WeirError } from '../../shared/errors.ts';
import { isUuid } from '../../shared/ids.ts';
import { inviteLink, newInviteSecret } from '../../tenancy/invites.ts';
import { organizationMembers, organizationOwnerId } from '../../tenancy/organization-owner.ts';
import { type ApiContext, type ApiDeps, type ApiState, idsOf } from '../api-context.ts';
import { DeletedMessage, idParams, invalidFields, notFound } from '../schema/fields.ts';
import { type ErrorSpec, schemaRoutes } from '../schema/route.ts';
import {
  CurrentUserSchema,
  InviteCreate,
  InviteList,
  InviteSchema,
  UserList,
  UserRoleUpdate,
  UserSchema,
} from '../schema/team.ts';

/** What the team routes use of the API's dependencies (tests mount them alone over a bridge). */
export type TeamRouteDeps = Pick<ApiDeps, 'clock' | 'readStore' | 'commands' | 'projections' | 'publicUrl'> & {
  mailer: Mailer;
};

/** Who is asking: a dashboard user (through the in-process API, actor `user:<id>`) or a secret key. */
type Caller = { kind: 'user'; user: UserDoc } | { kind: 'api_key'; keyId: string };

const MAIL_FAILED: ErrorSpec = {
  status: 502,
  codes: ['mail_delivery_failed'],
  description: 'The mail server refused the invite; nothing was recorded',
};
const FORBIDDEN: ErrorSpec = {
  status: 403,
  codes: ['role_forbidden', 'live_key_required'],
  description:
    "A dashboard user's role does not allow it (owners alone touch owners), or a test key asked (team changes take a live key or the dashboard)",
};
/** Said by every route that changes the team (the choice is explained at `teamRoutes`). */
const LIVE_ONLY =
  ' A team change is the organization’s, not its test data’s: it takes a live key or the dashboard; a test key is refused (403 `live_key_required`).';

const LAST_OWNER: ErrorSpec = {
  status: 409,
  codes: ['last_owner'],
  description: 'The organization would be left without an owner',
};

function splitName(name: string | null): { firstName: string; lastName: string } {
  const [first = '', ...rest] = (name ?? '').trim().split(/\s+/);
  return { firstName: first, lastName: rest.join(' ') };
}

export function presentUser(user: UserDoc) {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    ...splitName(user.name),
    role: user.role,
    status: 'active' as const,
    twoFactorEnabled: user.twoFactorEnabled === true,
    createdAt: user.createdAt,
    updatedAt: user.updatedAt,
  };
}

/** An invite as the API shows it; its link only in the answer that made it (`link`). */
export function presentInvite(invite: UserInviteDoc, now: number, link: string | null = null) {
  const status = invite.status === 'pending' && !inviteOpen(invite, now) ? 'expired' : invite.status;
  return {
    id: invite.id,
    email: invite.email,
    role: invite.role,
    organizationId: invite.organizationId,
    status,
    expireAt: invite.expiresAt,
    inviteUrl: link,
    invitedBy: invite.invitedBy,
    acceptedUserId: invite.acceptedUserId,
    createdAt: invite.createdAt,
    updatedAt: invite.updatedAt,
  };
}

/**
 * The organization's dashboard users and invites (the reference's `/users`, `/invites`), and
 * `/auth/me`. Users belong to the organization, not to an environment: a test or a live key sees
 * the same team. Changing the team is an act of the organization, not of its test data: a live key
 * (which acts as the organization, an owner's authority) or a dashboard user in either mode may, a
 * test key, often kept in CI and laptops, only reads. A dashboard user acts with their role: admins
 * manage members, owners alone touch owners, and the last owner can be neither demoted nor removed.
 */
export function teamRoutes(deps: TeamRouteDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1' });
  const users = deps.readStore.collection<UserDoc>(USERS);
  const invites = deps.readStore.collection<UserInviteDoc>(USER_INVITES);
  const orgs = deps.readStore.collection<OrganizationDoc>(COLLECTIONS.organizations);
  const now = () => deps.clock.now();

  async function callerOf(ctx: ApiContext): Promise<Caller> {
    const { actor, keyId, organizationId } = ctx.state.tenant;
    if (!actor.startsWith('user:')) return { kind: 'api_key', keyId };
    const user = await users.get(actor.slice('user:'.length));
    if (!user || user.removed || user.organizationId !== organizationId)
      throw new ForbiddenError('this user is no longer a member of the organization', 'role_forbidden');
    return { kind: 'user', user };
  }
  /** Throws the 403 of a user whose role does not allow it, or of a test key; a live key may do everything. */
  async function authorize(ctx: ApiContext, permission: 'manage' | 'owner'): Promise<Caller> {
    const caller = await callerOf(ctx);
    if (caller.kind === 'user') requirePermission(caller.user.role, permission);
    else if (ctx.state.tenant.environment !== 'live')
      throw new ForbiddenError(
        'a test key cannot change the team; use a live key (sk_live_…) or the dashboard',
        'live_key_required',
      );
    return caller;
  }

  /** Team records are the organization's, kept under `live` (USER_ENVIRONMENT) whichever key asks. */
  async function run<TState, TEvent extends DomainEvent, TCommand>(
    ctx: ApiContext,
    aggregate: Aggregate<TState, TEvent, TCommand>,
    id: string,
    command: TCommand,
  ) {
    const { tenant } = ctx.state;
    const result = await deps.commands.handle(aggregate, id, command, {
      organizationId: tenant.organizationId,
      environment: USER_ENVIRONMENT,
      actor: tenant.actor,
      ...(tenant.clientAddress ? { clientAddress: tenant.clientAddress } : {}),
      correlationId: ctx.get('x-request-id') || undefined,
    });
    if (result.position !== null) await deps.projections.waitFor(result.position);
    return result;
  }

  const members = (organizationId: string) => organizationMembers(deps.readStore, organizationId);
  const loadUser = async (ctx: ApiContext, id: string) => {
    const user = isUuid(id) ? await users.get(id) : null;
    if (!user || user.removed || user.organizationId !== ctx.state.tenant.organizationId)
      throw new NotFoundError('user', id);
    return user;
  };
  const loadInvite = async (ctx: ApiContext, id: string) => {
    const invite = isUuid(id) ? await invites.get(id) : null;
    if (!invite || invite.organizationId !== ctx.state.tenant.organizationId) throw new NotFoundError('invite', id);
    return invite;
  };
  /** Refuses a change that leaves the organization without an owner. */
  async function keepAnOwner(user: UserDoc, what: string) {
    if (user.role !== 'owner') return;
    const owners = (await members(user.organizationId)).filter((m) => m.role === 'owner');
    if (owners.length <= 1)
      throw new ConflictError(`${what}: the organization's last owner; make another member owner first`, 'last_owner');
  }

  /** Mails the invite's link; a refusal is a 502 and the caller records nothing. */
  async function mailInvite(ctx: ApiContext, caller: Caller, invite: { email: string; role: UserRole }, link: string) {
    const org = await orgs.get(organizationRecordId(ctx.state.tenant.organizationId, ctx.state.tenant.environment));
    const mail = renderInviteMail({
      organizationName: org?.name ?? 'your organization',
      invitedBy: caller.kind === 'user' ? (caller.user.name ?? caller.user.email) : null,
      role: invite.role,
      link,
      expiresAt: new Date(now() + INVITE_LIFETIME_MS).toISOString(),
    });
    try {
      await deps.mailer.send({ to: invite.email, ...mail });
    } catch (error) {
      throw new WeirError(
        502,
        'Bad Gateway',
        'mail_delivery_failed',
        `the invite could not be mailed: ${(error as Error).message}`,
      );
    }
  }

  const api = schemaRoutes(router, { tag: 'Team', auth: 'secretKey' });

  api.route(
    {
      method: 'get',
      path: '/auth/me',
      summary: 'Who is calling',
      description:
        "The dashboard user behind the request with their organization; for a secret key, the key's id (`accountType: api_key`, no email or name) and its organization.",
      response: CurrentUserSchema,
    },
    async (ctx) => {
      const caller = await callerOf(ctx);
      const { organizationId, environment } = ctx.state.tenant;
      const org = await orgs.get(organizationRecordId(organizationId, environment));
      if (!org) throw new NotFoundError('organization', organizationId);
      const organization = {
        id: org.id,
        name: org.name,
        type: org.kind,
        status: org.status,
        ownerId: await organizationOwnerId(deps.readStore, organizationId),
        environment: org.environment,
        createdAt: org.createdAt,
        updatedAt: org.updatedAt,
      };
      if (caller.kind === 'user') {
        const { createdAt: _c, updatedAt: _u, ...user } = presentUser(caller.user);
        return { ...user, accountType: 'email' as const, organization };
      }
      return {
        id: caller.keyId,
        accountType: 'api_key' as const,
        email: null,
        name: null,
        firstName: null,
        lastName: null,
        role: 'api_key',
        status: 'active' as const,
        twoFactorEnabled: false,
        organization,
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/users',
      summary: "List the organization's dashboard users",
      description: 'Every member, oldest first (removed users are gone). The same list for a test and a live key.',
      response: UserList,
    },
    async (ctx) => (await members(ctx.state.tenant.organizationId)).map(presentUser),
  );

  api.route(
    {
      method: 'put',
      path: '/users/:id/role',
      summary: "Change a user's role",
      description: `Owners alone make or unmake owners; the last owner keeps the role. Takes effect on their next request.${LIVE_ONLY}`,
      params: idParams('user'),
      body: UserRoleUpdate,
      response: UserSchema,
      errors: [invalidFields(), notFound('user'), FORBIDDEN, LAST_OWNER],
    },
    async (ctx, { params: { id }, body: { role } }) => {
      const user = await loadUser(ctx, id);
      await authorize(ctx, user.role === 'owner' || role === 'owner' ? 'owner' : 'manage');
      if (role !== 'owner') await keepAnOwner(user, 'role');
      await run(ctx, userAggregate, user.id, { type: 'ChangeUserRole', role });
      return presentUser((await users.get(user.id))!);
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/users/:id',
      summary: 'Remove a user',
      description: `Their sessions end at their next request and their email is free again; the last owner cannot be removed.${LIVE_ONLY}`,
      params: idParams('user'),
      response: DeletedMessage,
      errors: [notFound('user'), FORBIDDEN, LAST_OWNER],
    },
    async (ctx, { params: { id } }) => {
      const user = await loadUser(ctx, id);
      await authorize(ctx, user.role === 'owner' ? 'owner' : 'manage');
      await keepAnOwner(user, 'user');
      await run(ctx, userAggregate, user.id, { type: 'RemoveUser' });
      await run(ctx, userEmailClaimAggregate, userEmailClaimId(user.email), {
        type: 'ReleaseUserEmail',
        userId: user.id,
      });
      return { statusCode: 200 as const, message: `user ${user.id} removed` };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/invites',
      summary: "List the organization's invites",
      description: 'Newest first, whatever their status; a pending invite past its `expireAt` reads `expired`.',
      response: InviteList,
    },
    async (ctx) =>
      (
        await invites.find(
          { organizationId: ctx.state.tenant.organizationId },
          { sort: { createdAt: -1 }, limit: 1000 },
        )
      ).map((invite) => presentInvite(invite, now())),
  );

  api.route(
    {
      method: 'post',
      path: '/invites',
      summary: 'Invite someone to the dashboard',
      description: `Mails a one-time link (valid 7 days) with which they set a password and join with \`role\`. The link is in this answer only (\`inviteUrl\`). Owners alone invite owners.${LIVE_ONLY}`,
      body: InviteCreate,
      response: InviteSchema,
      errors: [
        invalidFields(),
        FORBIDDEN,
        {
          status: 409,
          codes: ['user_email_in_use', 'invite_pending'],
          description: "The address is a user's already, or has a pending invite (resend that one)",
        },
        MAIL_FAILED,
      ],
    },
    async (ctx, { body }) => {
      const caller = await authorize(ctx, body.role === 'owner' ? 'owner' : 'manage');
      const { organizationId } = ctx.state.tenant;
      const emailLower = body.email.toLowerCase();
      const [member] = await users.find({ emailLower, removed: false }, { limit: 1 });
      if (member) throw new ConflictError(`email: ${body.email} is already a user's`, 'user_email_in_use');
      const pending = await invites.find({ organizationId, emailLower, status: 'pending' });
      if (pending.some((invite) => inviteOpen(invite, now())))
        throw new ConflictError(`email: ${body.email} has a pending invite; resend it instead`, 'invite_pending');
      const id = idsOf(ctx)();
      const { secret, hash } = newInviteSecret();
      const link = inviteLink(deps.publicUrl, id, secret);
      // Mailed first: a refused mail leaves no invite behind.
      await mailInvite(ctx, caller, body, link);
      await run(ctx, userInviteAggregate, id, {
        type: 'CreateUserInvite',
        invite: {
          id,
          organizationId,
          email: body.email,
          role: body.role,
          tokenHash: hash,
          invitedBy: ctx.state.tenant.actor,
        },
      });
      return presentInvite((await invites.get(id))!, now(), link);
    },
  );

  api.route(
    {
      method: 'post',
      path: '/invites/:id/resend',
      summary: 'Send an invite again',
      description: `A new link (the old one stops working), valid 7 days from now. Not for an accepted or revoked invite.${LIVE_ONLY}`,
      params: idParams('invite'),
      response: InviteSchema,
      errors: [
        notFound('invite'),
        FORBIDDEN,
        { status: 400, codes: ['invite_closed'], description: 'The invite was accepted or revoked' },
        MAIL_FAILED,
      ],
    },
    async (ctx, { params: { id } }) => {
      const invite = await loadInvite(ctx, id);
      const caller = await authorize(ctx, invite.role === 'owner' ? 'owner' : 'manage');
      if (invite.status !== 'pending') throw new InvalidStateError(`the invite is ${invite.status}`, 'invite_closed');
      const { secret, hash } = newInviteSecret();
      const link = inviteLink(deps.publicUrl, invite.id, secret);
      await mailInvite(ctx, caller, invite, link);
      await run(ctx, userInviteAggregate, invite.id, { type: 'ResendUserInvite', tokenHash: hash });
      return presentInvite((await invites.get(invite.id))!, now(), link);
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/invites/:id',
      summary: 'Revoke an invite',
      description: `Its link stops working. An accepted invite stays as it is (remove the user instead).${LIVE_ONLY}`,
      params: idParams('invite'),
      response: DeletedMessage,
      errors: [
        notFound('invite'),
        FORBIDDEN,
        { status: 400, codes: ['invite_closed'], description: 'The invite was accepted' },
      ],
    },
    async (ctx, { params: { id } }) => {
      const invite = await loadInvite(ctx, id);
      await authorize(ctx, invite.role === 'owner' ? 'owner' : 'manage');
      await run(ctx, userInviteAggregate, invite.id, { type: 'RevokeUserInvite' });
      return { statusCode: 200 as const, message: `invite ${invite.id} revoked` };
    },
  );

  return router;
}
