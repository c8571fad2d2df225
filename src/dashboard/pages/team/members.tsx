import { USER_ROLES, type UserRole } from '../../../actors/user.ts';
import type { ApiAnswer } from '../../../read-api/api-bridge.ts';
import { apiFor } from '../../api.ts';
import { can } from '../../auth/roles.ts';
import type { DashboardContext, DashboardDeps } from '../../context.ts';
import { redirectTo, sendHtml } from '../../http.ts';
import type { PageRoutes } from '../../page.ts';
import {
  Alert,
  Badge,
  Card,
  CsrfField,
  DateTime,
  EmptyState,
  Field,
  TableScroll,
  type Tone,
} from '../../ui/components.tsx';
import { AppLayout } from '../../ui/layout.tsx';
import { SelectField } from '../../ui/form-parts.tsx';

export const TEAM_PATH = '/dashboard/settings/team';

type Member = {
  id: string;
  email: string;
  name: string | null;
  role: UserRole;
  twoFactorEnabled: boolean;
  createdAt: string;
};
type Invite = { id: string; email: string; role: UserRole; status: string; expireAt: string; createdAt: string };

export const ROLE_LABELS: Record<UserRole, string> = {
  owner: 'Owner',
  admin: 'Admin',
  developer: 'Developer',
  viewer: 'Viewer',
};
const ROLE_DUTIES: Record<UserRole, string> = {
  owner: 'Everything, including owners and the two-factor requirement.',
  admin: 'Everything else: payments, invoices, catalog, settings and the team (but owners).',
  developer: 'API keys and webhooks; reads the rest.',
  viewer: 'Reads everything, changes nothing.',
};
const roleOptions = USER_ROLES.map((role) => ({ value: role, label: ROLE_LABELS[role] }));

/** What a redirect after a change says; only these, never text from the address. */
const NOTICES: Record<string, string> = {
  invited: 'Invite sent.',
  resent: 'Invite sent again, with a new link.',
  revoked: 'Invite revoked.',
  role: 'Role changed.',
  removed: 'Member removed.',
};

const INVITE_TONES: Record<string, Tone> = {
  pending: 'info',
  expired: 'warning',
  accepted: 'success',
  revoked: 'neutral',
};

/** An API refusal as a form shows it: the field it names (from the 400's field or the message's `field: ` prefix) and a sentence. */
export function refusal(answer: ApiAnswer): { field: string | null; message: string } {
  const raw = (answer.body as { message?: string } | null)?.message ?? 'That did not work.';
  const prefix = /^([\w.[\]]+): /.exec(raw);
  const field = answer.field ?? prefix?.[1] ?? null;
  const text = prefix ? raw.slice(prefix[0].length) : raw;
  return { field, message: `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}` };
}

type TeamView = {
  status?: number;
  invite?: { email: string; role: string };
  inviteErrors?: { email?: string; role?: string; form?: string };
  actionError?: string;
};

async function renderTeam(ctx: DashboardContext, deps: DashboardDeps, view: TeamView = {}) {
  const api = apiFor(ctx, deps);
  const [members, invites] = await Promise.all([
    api<Member[]>('GET', '/api/v1/users'),
    api<Invite[]>('GET', '/api/v1/invites'),
  ]);
  const { user } = ctx.state;
  const manage = can(user.role, 'manage');
  const owner = can(user.role, 'owner');
  const notice = NOTICES[typeof ctx.query.done === 'string' ? ctx.query.done : ''];
  const open = invites.body.filter((i) => i.status === 'pending' || i.status === 'expired');
  const closed = invites.body.filter((i) => !open.includes(i)).slice(0, 10);
  const errors = view.inviteErrors ?? {};
  /** An admin sees no controls on an owner (owners alone touch owners), nor an owner role to give. */
  const mayChange = (member: Member) => manage && (owner || member.role !== 'owner');
  const options = owner ? roleOptions : roleOptions.filter((o) => o.value !== 'owner');
  await sendHtml(
    ctx,
    <AppLayout ctx={ctx} title="Team" screen="settings">
      <p class="back-link">
        <a href="/dashboard/settings">← Settings</a> · <a href="/dashboard/settings/security">Security</a>
      </p>
      {notice ? (
        <Alert tone="success">
          <span safe>{notice}</span>
        </Alert>
      ) : (
        ''
      )}
      {view.actionError ? (
        <Alert tone="danger">
          <span safe>{view.actionError}</span>
        </Alert>
      ) : (
        ''
      )}
      <Card title="Members" id="members">
        <TableScroll label="Team members with their role">
          <table>
            <thead>
              <tr>
                <th scope="col">Member</th>
                <th scope="col">Role</th>
                <th scope="col">Two-factor</th>
                <th scope="col" class="hide-narrow">
                  Joined
                </th>
                {manage ? <th scope="col">Actions</th> : ''}
              </tr>
            </thead>
            <tbody>
              {members.body.map((member) => (
                <tr>
                  <td>
                    <span class="member-name" safe>
                      {member.name ?? member.email}
                    </span>
                    {member.id === user.id ? <span class="muted"> (you)</span> : ''}
                    {member.name ? (
                      <>
                        <br />
                        <span class="muted" safe>
                          {member.email}
                        </span>
                      </>
                    ) : (
                      ''
                    )}
                  </td>
                  <td>
                    <span safe>{ROLE_LABELS[member.role]}</span>
                  </td>
                  <td>{member.twoFactorEnabled ? <Badge tone="success" label="On" /> : <Badge label="Off" />}</td>
                  <td class="nowrap hide-narrow">
                    <DateTime iso={member.createdAt} timeZone={ctx.state.timeZone} />
                  </td>
                  {manage ? (
                    <td>
                      {mayChange(member) ? (
                        <div class="row-actions">
                          <form method="post" action={`${TEAM_PATH}/members/${member.id}/role`} class="inline-controls">
                            <CsrfField token={ctx.state.csrfToken} />
                            <SelectField
                              name="role"
                              id={`role-${member.id}`}
                              label={`Role of ${member.name ?? member.email}`}
                              hiddenLabel
                              options={options}
                              value={member.role}
                            />
                            <button type="submit" class="button-secondary">
                              Change role
                            </button>
                          </form>
                          <form
                            method="post"
                            action={`${TEAM_PATH}/members/${member.id}/remove`}
                            class="inline-controls"
                          >
                            <CsrfField token={ctx.state.csrfToken} />
                            <button
                              type="submit"
                              class="button-danger"
                              aria-label={`Remove ${member.name ?? member.email}`}
                            >
                              Remove
                            </button>
                          </form>
                        </div>
                      ) : (
                        <span class="muted">Owners only</span>
                      )}
                    </td>
                  ) : (
                    ''
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      </Card>
      <div class="grid grid-2">
        <Card title="Invites" id="invites">
          {open.length + closed.length === 0 ? (
            <EmptyState message="No invites yet." hint={manage ? 'Invite someone with the form beside.' : undefined} />
          ) : (
            <ul class="invite-list">
              {[...open, ...closed].map((invite) => (
                <li>
                  <div>
                    <span class="member-name" safe>
                      {invite.email}
                    </span>{' '}
                    <Badge tone={INVITE_TONES[invite.status] ?? 'neutral'} label={invite.status} />
                    <br />
                    <span class="muted">
                      <span safe>{ROLE_LABELS[invite.role]}</span>
                      {invite.status === 'pending' || invite.status === 'expired' ? (
                        <>
                          {invite.status === 'pending' ? ' · link works until ' : ' · expired '}
                          <DateTime iso={invite.expireAt} timeZone={ctx.state.timeZone} />
                        </>
                      ) : (
                        ''
                      )}
                    </span>
                  </div>
                  {manage && open.includes(invite) && (owner || invite.role !== 'owner') ? (
                    <div class="row-actions">
                      <form method="post" action={`${TEAM_PATH}/invites/${invite.id}/resend`} class="inline-controls">
                        <CsrfField token={ctx.state.csrfToken} />
                        <button
                          type="submit"
                          class="button-secondary"
                          aria-label={`Resend the invite to ${invite.email}`}
                        >
                          Resend
                        </button>
                      </form>
                      <form method="post" action={`${TEAM_PATH}/invites/${invite.id}/revoke`} class="inline-controls">
                        <CsrfField token={ctx.state.csrfToken} />
                        <button type="submit" class="button-quiet" aria-label={`Revoke the invite to ${invite.email}`}>
                          Revoke
                        </button>
                      </form>
                    </div>
                  ) : (
                    ''
                  )}
                </li>
              ))}
            </ul>
          )}
        </Card>
        {manage ? (
          <Card title="Invite someone" id="invite">
            {errors.form ? (
              <Alert tone="danger">
                <span safe>{errors.form}</span>
              </Alert>
            ) : (
              ''
            )}
            <form method="post" action={`${TEAM_PATH}/invites`} novalidate>
              <CsrfField token={ctx.state.csrfToken} />
              <Field
                name="email"
                label="Email"
                type="email"
                value={view.invite?.email}
                error={errors.email}
                hint="They get a link by mail, valid for 7 days, to set a password and join."
                required
              />
              <SelectField
                name="role"
                label="Role"
                options={options}
                value={view.invite?.role ?? 'developer'}
                error={errors.role}
              />
              <button type="submit" class="button-primary">
                Send invite
              </button>
            </form>
          </Card>
        ) : (
          ''
        )}
      </div>
      <Card title="Roles" id="roles">
        <dl class="role-list">
          {USER_ROLES.map((role) => (
            <>
              <dt safe>{ROLE_LABELS[role]}</dt>
              <dd safe>{ROLE_DUTIES[role]}</dd>
            </>
          ))}
        </dl>
      </Card>
    </AppLayout>,
    view.status ?? 200,
  );
}

/**
 * `/dashboard/settings/team`: the members (role change, removal), the invites (resend, revoke), an
 * invite form and what each role may do. Every change goes through `/api/v1/users` and
 * `/api/v1/invites` in process, which hold the rules (owners alone touch owners, the last owner stays).
 */
export function teamRoutes(routes: PageRoutes, deps: DashboardDeps): void {
  routes.get(TEAM_PATH, 'read', (ctx) => renderTeam(ctx, deps));

  routes.post(`${TEAM_PATH}/invites`, 'manage', async (ctx) => {
    const invite = { email: (ctx.state.form.get('email') ?? '').trim(), role: ctx.state.form.get('role') ?? '' };
    const answer = await apiFor(ctx, deps)('POST', '/api/v1/invites', invite);
    if (answer.status === 200) return redirectTo(ctx, `${TEAM_PATH}?done=invited`);
    const { field, message } = refusal(answer);
    const inviteErrors = field === 'email' || field === 'role' ? { [field]: message } : { form: message };
    await renderTeam(ctx, deps, { status: answer.status, invite, inviteErrors });
  });

  type Call = { method: 'POST' | 'PUT' | 'DELETE'; path: string; body?: unknown };
  /** A member or invite action: the API call, then back to the page, or the page with the refusal. */
  const action = (path: string, done: string, call: (id: string, form: URLSearchParams) => Call) =>
    routes.post(`${TEAM_PATH}${path}`, 'manage', async (ctx) => {
      const request = call(encodeURIComponent(ctx.params.id ?? ''), ctx.state.form);
      const answer = await apiFor(ctx, deps)(request.method, request.path, request.body);
      if (answer.status === 200) return redirectTo(ctx, `${TEAM_PATH}?done=${done}`);
      await renderTeam(ctx, deps, { status: answer.status, actionError: refusal(answer).message });
    });
  action('/members/:id/role', 'role', (id, form) => ({
    method: 'PUT',
    path: `/api/v1/users/${id}/role`,
    body: { role: form.get('role') ?? '' },
  }));
  action('/members/:id/remove', 'removed', (id) => ({ method: 'DELETE', path: `/api/v1/users/${id}` }));
  action('/invites/:id/resend', 'resent', (id) => ({ method: 'POST', path: `/api/v1/invites/${id}/resend` }));
  action('/invites/:id/revoke', 'revoked', (id) => ({ method: 'DELETE', path: `/api/v1/invites/${id}` }));
}
