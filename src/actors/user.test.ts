import test from 'ava';
import { givenWhenThen } from './given-when-then.ts';
import { userAggregate, userEmailClaimAggregate, type UserEvent } from './user.ts';

const NOW = '2026-01-01T00:30:00.000Z';
const given = givenWhenThen(userAggregate);
const create = {
  type: 'CreateUser',
  id: 'u-1',
  organizationId: 'org-1',
  email: 'Pat@Example.com',
  name: 'Pat',
  role: 'admin',
  passwordHash: '$argon2id$hash',
} as const;
const created: UserEvent = {
  type: 'UserCreated',
  data: {
    user: {
      id: 'u-1',
      organizationId: 'org-1',
      email: 'Pat@Example.com',
      emailLower: 'pat@example.com',
      name: 'Pat',
      role: 'admin',
      passwordHash: '$argon2id$hash',
      createdAt: NOW,
    },
  },
};

test('CreateUser records the user with its lower-cased email; a repeat records nothing', (t) => {
  t.deepEqual(given([]).when(create), [created]);
  t.like(given([created]).state(), { role: 'admin', removed: false, updatedAt: NOW, emailLower: 'pat@example.com' });
  t.deepEqual(given([created]).when(create), []);
});

test('role and password changes are recorded; the same role again is not', (t) => {
  t.deepEqual(given([created]).when({ type: 'ChangeUserRole', role: 'viewer' }), [
    { type: 'UserRoleChanged', data: { role: 'viewer', previousRole: 'admin', at: NOW } },
  ]);
  t.deepEqual(given([created]).when({ type: 'ChangeUserRole', role: 'admin' }), []);
  const changed = given([created]).when({ type: 'ChangeUserPassword', passwordHash: '$argon2id$new' });
  t.is(given([created, ...changed]).state()?.passwordHash, '$argon2id$new');
});

test('a removed or unknown user takes no command but its create', (t) => {
  const removed = given([created]).when({ type: 'RemoveUser' });
  t.deepEqual(removed, [{ type: 'UserRemoved', data: { at: NOW } }]);
  t.true(given([created, ...removed]).state()?.removed);
  t.throws(() => given([created, ...removed]).when({ type: 'ChangeUserRole', role: 'owner' }), {
    message: 'user does not exist',
  });
  t.throws(() => given([]).when({ type: 'RemoveUser' }), { message: 'user does not exist' });
});

test('an email is claimed by one user at a time; released, another may take it', (t) => {
  const claims = givenWhenThen(userEmailClaimAggregate);
  const claim = (userId: string, replacingAbandonedUser?: string) =>
    ({
      type: 'ClaimUserEmail',
      email: 'pat@example.com',
      userId,
      organizationId: 'org-1',
      ...(replacingAbandonedUser ? { replacingAbandonedUser } : {}),
    }) as const;
  const first = claims([]).when(claim('u-1'));
  t.deepEqual(first, [
    { type: 'UserEmailClaimed', data: { email: 'pat@example.com', userId: 'u-1', organizationId: 'org-1', at: NOW } },
  ]);
  t.deepEqual(claims(first).when(claim('u-1')), [], 'the same user again');
  t.throws(() => claims(first).when(claim('u-2')), { message: "email: pat@example.com is already a user's" });
  t.is(claims(first).when(claim('u-2', 'u-1')).length, 1, 'the holder was never created');
  const released = claims(first).when({ type: 'ReleaseUserEmail', userId: 'u-1' });
  t.is(claims([...first, ...released]).when(claim('u-2')).length, 1);
  t.deepEqual(claims(first).when({ type: 'ReleaseUserEmail', userId: 'u-9' }), [], 'only its holder releases it');
});

const enabled: UserEvent = {
  type: 'UserTwoFactorEnabled',
  data: { secretSealed: 'v1.sealed', recoveryCodeHashes: ['h1', 'h2'], step: 100, at: NOW },
};

test('two-factor: enabled once with its confirming step spent; a TOTP step works once and only forward', (t) => {
  t.deepEqual(
    given([created]).when({
      type: 'EnableTwoFactor',
      secretSealed: 'v1.sealed',
      recoveryCodeHashes: ['h1', 'h2'],
      step: 100,
    }),
    [enabled],
  );
  t.like(given([created, enabled]).state()?.twoFactor, { lastStep: 100, enabledAt: NOW });
  t.throws(
    () =>
      given([created, enabled]).when({ type: 'EnableTwoFactor', secretSealed: 'x', recoveryCodeHashes: [], step: 1 }),
    { message: 'two-factor sign-in is on already' },
  );
  t.throws(() => given([created, enabled]).when({ type: 'UseTwoFactorCode', step: 100 }), {
    message: 'that code has been used already',
  });
  const used = given([created, enabled]).when({ type: 'UseTwoFactorCode', step: 101 });
  t.deepEqual(used, [{ type: 'UserTwoFactorCodeUsed', data: { step: 101, at: NOW } }]);
  t.throws(() => given([created, enabled, ...used]).when({ type: 'UseTwoFactorCode', step: 101 }));
  t.throws(() => given([created]).when({ type: 'UseTwoFactorCode', step: 101 }), {
    message: 'two-factor sign-in is off',
  });
});

test('two-factor: each recovery code works once; unknown ones never; turning it off forgets them', (t) => {
  const first = given([created, enabled]).when({ type: 'UseRecoveryCode', hash: 'h2' });
  t.deepEqual(first, [{ type: 'UserRecoveryCodeUsed', data: { index: 1, remaining: 1, at: NOW } }]);
  const after = [created, enabled, ...first];
  t.deepEqual(
    given(after)
      .state()
      ?.twoFactor?.recoveryCodes.map((c) => c.usedAt),
    [null, NOW],
  );
  t.throws(() => given(after).when({ type: 'UseRecoveryCode', hash: 'h2' }), {
    message: 'that code has been used already',
  });
  t.throws(() => given(after).when({ type: 'UseRecoveryCode', hash: 'nope' }), {
    message: 'that is not one of your recovery codes',
  });
  t.is(given(after).when({ type: 'UseRecoveryCode', hash: 'h1' }).length, 1);
  const off = given(after).when({ type: 'DisableTwoFactor' });
  t.deepEqual(off, [{ type: 'UserTwoFactorDisabled', data: { at: NOW } }]);
  t.is(given([...after, ...off]).state()?.twoFactor, null);
  t.deepEqual(given([...after, ...off]).when({ type: 'DisableTwoFactor' }), [], 'off already');
});

test('two-factor: renewed recovery codes replace the old ones, spent or not; only while two-factor is on', (t) => {
  const spent = given([created, enabled]).when({ type: 'UseRecoveryCode', hash: 'h1' });
  const renewed = given([created, enabled, ...spent]).when({ type: 'RenewRecoveryCodes', recoveryCodeHashes: ['h3'] });
  t.deepEqual(renewed, [{ type: 'UserRecoveryCodesRenewed', data: { recoveryCodeHashes: ['h3'], at: NOW } }]);
  const after = [created, enabled, ...spent, ...renewed];
  t.deepEqual(given(after).state()?.twoFactor?.recoveryCodes, [{ hash: 'h3', usedAt: null }]);
  t.like(given(after).state()?.twoFactor, { lastStep: 100 }, 'the TOTP secret and its last step stay');
  t.throws(() => given(after).when({ type: 'UseRecoveryCode', hash: 'h2' }), {
    message: 'that is not one of your recovery codes',
  });
  t.is(given(after).when({ type: 'UseRecoveryCode', hash: 'h3' }).length, 1);
  t.throws(() => given([created]).when({ type: 'RenewRecoveryCodes', recoveryCodeHashes: ['h3'] }), {
    message: 'two-factor sign-in is off',
  });
});
