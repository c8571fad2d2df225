import test, { type ExecutionContext } from 'ava';
import { createApiBridge } from '../../src/read-api/api-bridge.ts';
import { teamRoutes } from '../../src/read-api/routes/team.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { createUser } from '../../src/tenancy/create-user.ts';
import { acceptInvite, openInvite } from '../../src/tenancy/invites.ts';
import { apiClient } from '../support/api-client.ts';
import { recordingMailer } from '../support/recording-mailer.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';

type User = { id: string; email: string; role: string; firstName: string; lastName: string; twoFactorEnabled: boolean };
type Invite = { id: string; email: string; role: string; status: string; inviteUrl: string | null; expireAt: string };
type Me = {
  id: string;
  accountType: string;
  email: string | null;
  role: string;
  organization: { id: string; name: string; ownerId: string | null };
};

const DAY = 86_400_000;

async function team(t: ExecutionContext) {
  const clock = createManualClock(Date.now());
  const mail = recordingMailer();
  const weir = await startTestWeir(t, {}, { clock, mailer: mail.mailer });
  const merchant = await createMerchant(weir.url, 'Harbour Coffee Roasters');
  const user = async (role: 'owner' | 'admin' | 'developer' | 'viewer', email: string, name = 'Ada Lovelace') => {
    const { userId, position } = await createUser(weir.commands, {
      organizationId: merchant.organizationId,
      email,
      name,
      role,
      password: 'correct horse battery staple',
      actor: 'cli',
    });
    if (position !== null) await weir.projections.waitFor(position);
    return userId;
  };
  const linkOf = (url: string) => url.slice(url.indexOf('/dashboard/invite/') + '/dashboard/invite/'.length);
  // Team changes take a live key (a test key only reads the team): `api` is the live one.
  return { weir, clock, mail, merchant, api: merchant.live, testKey: merchant.api, user, linkOf };
}

test('/auth/me and /organization: a secret key is its own caller, with its organization; the owner appears once there is one', async (t) => {
  const { testKey, merchant, user, weir } = await team(t);
  const before = await testKey.get<Me>('/api/v1/auth/me');
  t.is(before.status, 200);
  t.like(before.body, { accountType: 'api_key', email: null, role: 'api_key', twoFactorEnabled: false });
  t.like(before.body.organization, {
    id: merchant.organizationId,
    name: 'Harbour Coffee Roasters',
    ownerId: null,
    environment: 'test',
  });
  t.is((await testKey.get<{ ownerId: string | null }>('/api/v1/organization')).body.ownerId, null);
  // An admin made first is no owner; the owner is the first member with that role.
  await user('admin', 'ann@harbour.example');
  const owner = await user('owner', 'ada@harbour.example');
  await user('owner', 'otto@harbour.example');
  t.is((await testKey.get<Me>('/api/v1/auth/me')).body.organization.ownerId, owner);
  const live = await merchant.live.get<Me>('/api/v1/auth/me');
  t.like(live.body.organization, { ownerId: owner, environment: 'live' }, 'the same team for a live key');
  t.not(live.body.id, before.body.id, 'each key is named by its own id');
  for (const key of [testKey, merchant.live]) {
    const org = await key.get<{ id: string; ownerId: string | null }>('/api/v1/organization');
    t.is(org.body.ownerId, owner, 'GET /organization names the owner too');
  }
  const renamed = await testKey.put<{ ownerId: string | null }>('/api/v1/organization', { name: 'Harbour Roasters' });
  t.is(renamed.body.ownerId, owner, 'and so does an update');
  t.is((await apiClient(weir.url, 'sk_test_nonsense').get('/api/v1/auth/me')).status, 401);
});

test('a test key reads the team but cannot change it: each write is a 403 naming the live key, nothing written or mailed', async (t) => {
  const { api, testKey, weir, mail, user } = await team(t);
  await user('owner', 'ada@harbour.example');
  const dev = await user('developer', 'grace@harbour.example');
  const invite = (await api.post<Invite>('/api/v1/invites', { email: 'lin@harbour.example', role: 'viewer' })).body;
  const head = await weir.eventStore.headPosition();
  const writes = [
    () => testKey.post('/api/v1/invites', { email: 'mal@harbour.example', role: 'admin' }),
    () => testKey.put(`/api/v1/users/${dev}/role`, { role: 'admin' }),
    () => testKey.delete(`/api/v1/users/${dev}`),
    () => testKey.post(`/api/v1/invites/${invite.id}/resend`),
    () => testKey.delete(`/api/v1/invites/${invite.id}`),
  ];
  for (const write of writes) {
    const answer = await write();
    t.is(answer.status, 403);
    t.like(answer.body, {
      code: 'live_key_required',
      message: 'a test key cannot change the team; use a live key (sk_live_…) or the dashboard',
    });
  }
  t.is(await weir.eventStore.headPosition(), head, 'nothing written');
  t.is(mail.sent.length, 1, 'only the live key’s invite was mailed');
  t.is((await testKey.get<User[]>('/api/v1/users')).body.length, 2, 'the test key still reads the members');
  t.like((await testKey.get<Invite[]>('/api/v1/invites')).body[0], { id: invite.id, status: 'pending' });
  // The documentation says so, at each write.
  const doc = (
    await testKey.get<{ paths: Record<string, Record<string, { description: string }>> }>('/api/v1/openapi.json')
  ).body;
  t.regex(doc.paths['/api/v1/invites']!.post!.description, /a test key is refused \(403 `live_key_required`\)/);
  t.regex(doc.paths['/api/v1/users/{id}/role']!.put!.description, /takes a live key or the dashboard/);
});

test('another organization’s users and invites do not exist for a key: 404 on each, nothing changed', async (t) => {
  const { api, weir, user } = await team(t);
  const owner = await user('owner', 'ada@harbour.example');
  const dev = await user('developer', 'grace@harbour.example');
  const invite = (await api.post<Invite>('/api/v1/invites', { email: 'lin@harbour.example', role: 'viewer' })).body;
  const other = await createMerchant(weir.url, 'Someone Else');
  const head = await weir.eventStore.headPosition();
  const attempts = [
    () => other.live.put(`/api/v1/users/${dev}/role`, { role: 'owner' }),
    () => other.live.put(`/api/v1/users/${owner}/role`, { role: 'viewer' }),
    () => other.live.delete(`/api/v1/users/${dev}`),
    () => other.live.post(`/api/v1/invites/${invite.id}/resend`),
    () => other.live.delete(`/api/v1/invites/${invite.id}`),
  ];
  for (const attempt of attempts) t.is((await attempt()).status, 404);
  t.regex((await other.live.delete<{ message: string }>(`/api/v1/users/${dev}`)).body.message, new RegExp(dev));
  t.deepEqual((await other.live.get<User[]>('/api/v1/users')).body, []);
  t.deepEqual((await other.live.get<Invite[]>('/api/v1/invites')).body, []);
  t.is((await other.live.get<Me>('/api/v1/auth/me')).body.organization.ownerId, null);
  t.is(await weir.eventStore.headPosition(), head, 'nothing written');
  t.like((await api.get<User[]>('/api/v1/users')).body[1], { id: dev, role: 'developer' });
});

test('bad input to /users and /invites: a 400 naming the field, nothing written', async (t) => {
  const { api, weir, mail, user } = await team(t);
  await user('owner', 'ada@harbour.example');
  const dev = await user('developer', 'grace@harbour.example');
  const head = await weir.eventStore.headPosition();
  type Answer = { status: number; body: { message: string } };
  const cases: [string, () => Promise<Answer>, RegExp][] = [
    ['no role', () => api.put(`/api/v1/users/${dev}/role`, {}), /^role: /],
    ['a role of another type', () => api.put(`/api/v1/users/${dev}/role`, { role: 3 }), /^role: /],
    ['no email', () => api.post('/api/v1/invites', { role: 'viewer' }), /^email: /],
    ['an empty email', () => api.post('/api/v1/invites', { email: '', role: 'viewer' }), /^email: /],
    ['no role to invite with', () => api.post('/api/v1/invites', { email: 'x@harbour.example' }), /^role: /],
    [
      'a list for a body',
      () => api.post('/api/v1/invites', [{ email: 'x@harbour.example', role: 'viewer' }]),
      /JSON object/,
    ],
  ];
  for (const [what, send, field] of cases) {
    const { status, body } = await send();
    t.is(status, 400, what);
    t.regex(body.message, field, what);
  }
  t.is(await weir.eventStore.headPosition(), head, 'nothing written');
  t.is(mail.sent.length, 0);
  t.is((await api.put('/api/v1/users/not-a-uuid/role', { role: 'viewer' })).status, 404);
  t.is((await api.post('/api/v1/invites/not-a-uuid/resend')).status, 404);
});

test('/users lists the members with the reference’s fields; roles change, but the last owner stays one', async (t) => {
  const { api, user } = await team(t);
  const owner = await user('owner', 'ada@harbour.example');
  const dev = await user('developer', 'grace@harbour.example', 'Grace Brewster Hopper');
  const list = await api.get<User[]>('/api/v1/users');
  t.is(list.status, 200);
  t.deepEqual(
    list.body.map((u) => [u.email, u.role, u.firstName, u.lastName, u.twoFactorEnabled]),
    [
      ['ada@harbour.example', 'owner', 'Ada', 'Lovelace', false],
      ['grace@harbour.example', 'developer', 'Grace', 'Brewster Hopper', false],
    ],
  );

  const bad = await api.put(`/api/v1/users/${dev}/role`, { role: 'boss' });
  t.is(bad.status, 400);
  t.is(bad.body.message, 'role: must be one of owner, admin, developer, viewer');
  const changed = await api.put<User>(`/api/v1/users/${dev}/role`, { role: 'viewer' });
  t.is(changed.status, 200);
  t.is(changed.body.role, 'viewer');

  const demote = await api.put(`/api/v1/users/${owner}/role`, { role: 'admin' });
  t.is(demote.status, 409);
  t.like(demote.body, {
    code: 'last_owner',
    message: "role: the organization's last owner; make another member owner first",
  });
  const removeOwner = await api.delete(`/api/v1/users/${owner}`);
  t.is(removeOwner.status, 409);
  t.is((await api.get(`/api/v1/users/${owner}/role`)).status, 405);
  t.is((await api.put('/api/v1/users/not-a-user/role', { role: 'viewer' })).status, 404);

  const removed = await api.delete(`/api/v1/users/${dev}`);
  t.deepEqual(removed.body, { statusCode: 200, message: `user ${dev} removed` });
  t.deepEqual(
    (await api.get<User[]>('/api/v1/users')).body.map((u) => u.id),
    [owner],
  );
  // The address is free again: it can be invited.
  t.is((await api.post('/api/v1/invites', { email: 'grace@harbour.example', role: 'viewer' })).status, 200);
});

test('/invites: bad input writes and mails nothing; an invite mails a one-time link that makes the user once', async (t) => {
  const { api, weir, mail, merchant, user, linkOf } = await team(t);
  await user('owner', 'ada@harbour.example');
  const badEmail = await api.post('/api/v1/invites', { email: 'not an address', role: 'developer' });
  t.is(badEmail.status, 400);
  t.is(badEmail.body.message, 'email: must be an email address, such as payer@example.com');
  const badRole = await api.post('/api/v1/invites', { email: 'grace@harbour.example', role: 'chief' });
  t.is(badRole.body.message, 'role: must be one of owner, admin, developer, viewer');
  const taken = await api.post('/api/v1/invites', { email: 'ADA@harbour.example', role: 'viewer' });
  t.is(taken.status, 409);
  t.is(taken.body.code, 'user_email_in_use');
  t.deepEqual((await api.get<Invite[]>('/api/v1/invites')).body, []);
  t.is(mail.sent.length, 0);

  const made = await api.post<Invite>('/api/v1/invites', { email: 'grace@harbour.example', role: 'developer' });
  t.is(made.status, 200);
  t.like(made.body, {
    email: 'grace@harbour.example',
    role: 'developer',
    status: 'pending',
    organizationId: merchant.organizationId,
  });
  t.regex(made.body.inviteUrl ?? '', /\/dashboard\/invite\/[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}$/);
  t.is(mail.sent.length, 1);
  t.is(mail.sent[0]!.to, 'grace@harbour.example');
  t.is(mail.sent[0]!.subject, 'Join Harbour Coffee Roasters on Weir');
  t.true(mail.sent[0]!.text.includes(made.body.inviteUrl!));
  const listed = (await api.get<Invite[]>('/api/v1/invites')).body;
  t.like(listed[0], { id: made.body.id, status: 'pending', inviteUrl: null }, 'the link is never shown again');
  t.is(
    (await api.post('/api/v1/invites', { email: 'grace@harbour.example', role: 'viewer' })).body.code,
    'invite_pending',
  );

  const token = linkOf(made.body.inviteUrl!);
  t.is(
    await openInvite(weir.readStore, `${token.slice(0, -1)}x`, weir.clock.now()),
    null,
    'a wrong secret opens nothing',
  );
  const opened = (await openInvite(weir.readStore, token, weir.clock.now()))!;
  await acceptInvite(weir, opened, {
    name: 'Grace Hopper',
    password: 'another good password',
    clientAddress: '127.0.0.1',
  });
  t.like((await api.get<User[]>('/api/v1/users')).body[1], { email: 'grace@harbour.example', role: 'developer' });
  t.like((await api.get<Invite[]>('/api/v1/invites')).body[0], { status: 'accepted' });
  t.is(await openInvite(weir.readStore, token, weir.clock.now()), null, 'used once');
  await t.throwsAsync(
    acceptInvite(weir, opened, { name: 'Again', password: 'another good password', clientAddress: '127.0.0.1' }),
    { message: "email: grace@harbour.example is already a user's" },
  );
  t.is((await api.delete(`/api/v1/invites/${made.body.id}`)).status, 400, 'an accepted invite is not revoked');
});

test('/invites: a link expires on the clock; resend makes a new one (the old one dead); revoke ends it', async (t) => {
  const { api, weir, clock, mail, linkOf } = await team(t);
  const made = (await api.post<Invite>('/api/v1/invites', { email: 'lin@harbour.example', role: 'viewer' })).body;
  clock.advanceBy(7 * DAY - 1);
  t.truthy(await openInvite(weir.readStore, linkOf(made.inviteUrl!), clock.now()));
  clock.advanceBy(1);
  t.is(await openInvite(weir.readStore, linkOf(made.inviteUrl!), clock.now()), null);
  t.is((await api.get<Invite[]>('/api/v1/invites')).body[0]!.status, 'expired');

  const resent = await api.post<Invite>(`/api/v1/invites/${made.id}/resend`);
  t.is(resent.status, 200);
  t.is(resent.body.status, 'pending');
  t.is(Date.parse(resent.body.expireAt), clock.now() + 7 * DAY);
  t.not(resent.body.inviteUrl, made.inviteUrl);
  t.is(mail.sent.length, 2);
  t.is(await openInvite(weir.readStore, linkOf(made.inviteUrl!), clock.now()), null, 'the first link is dead');
  t.truthy(await openInvite(weir.readStore, linkOf(resent.body.inviteUrl!), clock.now()));

  const revoked = await api.delete(`/api/v1/invites/${made.id}`);
  t.deepEqual(revoked.body, { statusCode: 200, message: `invite ${made.id} revoked` });
  t.is(await openInvite(weir.readStore, linkOf(resent.body.inviteUrl!), clock.now()), null);
  t.is((await api.post(`/api/v1/invites/${made.id}/resend`)).body.code, 'invite_closed');
  t.is((await api.delete('/api/v1/invites/0f8fad5b-d9cb-469f-a165-70867728950e')).status, 404);
});

test('in process, a user acts with their role: admins manage members but not owners; viewers nothing', async (t) => {
  const { weir, merchant, user } = await team(t);
  const owner = await user('owner', 'ada@harbour.example');
  const admin = await user('admin', 'ann@harbour.example');
  const viewer = await user('viewer', 'vic@harbour.example');
  const mail = recordingMailer();
  const bridge = createApiBridge([teamRoutes({ ...weir, publicUrl: 'https://weir.example', mailer: mail.mailer })]);
  const as = (userId: string) => ({
    organizationId: merchant.organizationId,
    environment: 'test' as const,
    actor: `user:${userId}`,
    clientAddress: '127.0.0.1',
  });
  const me = await bridge<Me>(as(admin), 'GET', '/api/v1/auth/me');
  t.like(me.body, { id: admin, accountType: 'email', email: 'ann@harbour.example', role: 'admin' });

  const ownerInvite = await bridge(as(admin), 'POST', '/api/v1/invites', {
    email: 'o2@harbour.example',
    role: 'owner',
  });
  t.is(ownerInvite.status, 403);
  t.like(ownerInvite.body, { code: 'role_forbidden', message: 'only an owner can do this; you are an admin' });
  t.is((await bridge(as(admin), 'PUT', `/api/v1/users/${owner}/role`, { role: 'viewer' })).status, 403);
  t.is((await bridge(as(admin), 'DELETE', `/api/v1/users/${owner}`)).status, 403);
  t.is((await bridge(as(admin), 'PUT', `/api/v1/users/${viewer}/role`, { role: 'developer' })).status, 200);
  t.is(
    (await bridge(as(viewer), 'POST', '/api/v1/invites', { email: 'x@harbour.example', role: 'viewer' })).status,
    403,
  );
  t.is(mail.sent.length, 0);
  const made = await bridge<Invite>(as(owner), 'POST', '/api/v1/invites', {
    email: 'o2@harbour.example',
    role: 'owner',
  });
  t.is(made.status, 200);
  t.regex(mail.sent[0]!.text, /^Ada Lovelace invites you to join Harbour Coffee Roasters on Weir as owner\./);
  t.true(made.body.inviteUrl!.startsWith('https://weir.example/dashboard/invite/'));
});
