import test from 'ava';
import { givenWhenThen } from './given-when-then.ts';
import { INVITE_LIFETIME_MS, userInviteAggregate, type UserInviteEvent } from './user-invite.ts';

const NOW = '2026-01-01T00:30:00.000Z';
const later = (ms: number) => new Date(Date.parse(NOW) + ms).toISOString();
const given = givenWhenThen(userInviteAggregate);
const create = {
  type: 'CreateUserInvite',
  invite: {
    id: 'i-1',
    organizationId: 'org-1',
    email: 'Grace@Example.com',
    role: 'developer',
    tokenHash: 'hash-1',
    invitedBy: 'user:u-1',
  },
} as const;
const created = given([]).when(create, NOW) as UserInviteEvent[];

test('an invite is made pending, with its expiry a week on from the clock that decides', (t) => {
  t.deepEqual(created, [
    {
      type: 'UserInviteCreated',
      data: { invite: { ...create.invite, expiresAt: later(INVITE_LIFETIME_MS), createdAt: NOW } },
    },
  ]);
  t.like(given(created).state(), { status: 'pending', emailLower: 'grace@example.com' });
  t.deepEqual(given(created).when(create), [], 'a retry records nothing');
});

test('accepting takes the right link before the expiry only, and once', (t) => {
  const accept = { type: 'AcceptUserInvite', tokenHash: 'hash-1', userId: 'u-2' } as const;
  const justBefore = later(INVITE_LIFETIME_MS - 1);
  t.deepEqual(given(created).when(accept, justBefore), [
    { type: 'UserInviteAccepted', data: { userId: 'u-2', at: justBefore } },
  ]);
  t.throws(() => given(created).when(accept, later(INVITE_LIFETIME_MS)), {
    message: 'this invite link is not valid or has expired',
  });
  t.throws(() => given(created).when({ ...accept, tokenHash: 'hash-2' }, NOW), {
    message: 'this invite link is not valid or has expired',
  });
  const accepted = [...created, ...given(created).when(accept, NOW)];
  t.deepEqual(given(accepted).when(accept, NOW), [], 'the same acceptance again');
  t.throws(() => given(accepted).when({ ...accept, userId: 'u-3' }, NOW));
  t.throws(() => given(accepted).when({ type: 'RevokeUserInvite' }), { message: 'the invite is accepted' });
});

test('resending replaces the link and starts a new week, even once expired; a revoked invite takes nothing', (t) => {
  const expiredAt = later(INVITE_LIFETIME_MS + 60_000);
  const resent = given(created).when({ type: 'ResendUserInvite', tokenHash: 'hash-2' }, expiredAt);
  t.deepEqual(resent, [
    {
      type: 'UserInviteResent',
      data: {
        tokenHash: 'hash-2',
        expiresAt: new Date(Date.parse(expiredAt) + INVITE_LIFETIME_MS).toISOString(),
        at: expiredAt,
      },
    },
  ]);
  const after = [...created, ...resent];
  t.throws(() => given(after).when({ type: 'AcceptUserInvite', tokenHash: 'hash-1', userId: 'u-2' }, expiredAt));
  t.is(given(after).when({ type: 'AcceptUserInvite', tokenHash: 'hash-2', userId: 'u-2' }, expiredAt).length, 1);
  const revoked = [...after, ...given(after).when({ type: 'RevokeUserInvite' })];
  t.is(given(revoked).state()?.status, 'revoked');
  t.throws(() => given(revoked).when({ type: 'AcceptUserInvite', tokenHash: 'hash-2', userId: 'u-2' }, expiredAt));
  t.throws(() => given(revoked).when({ type: 'ResendUserInvite', tokenHash: 'hash-3' }), {
    message: 'the invite is revoked',
  });
});
