import test from 'ava';
import { USER_ROLES } from '../../actors/user.ts';
import { can, requirePermission, type Permission } from './roles.ts';

test('each role grants what the issue says: viewer reads, developer keys and webhooks, admin all but owner matters', (t) => {
  const table = Object.fromEntries(
    USER_ROLES.map((role) => [
      role,
      (['read', 'developers', 'manage', 'owner'] as Permission[]).filter((p) => can(role, p)),
    ]),
  );
  t.deepEqual(table, {
    owner: ['read', 'developers', 'manage', 'owner'],
    admin: ['read', 'developers', 'manage'],
    developer: ['read', 'developers'],
    viewer: ['read'],
  });
  t.throws(() => requirePermission('viewer', 'developers'), {
    message: 'only a developer, admin or owner can do this; you are a viewer',
  });
  t.throws(() => requirePermission('developer', 'manage'), { message: /only an admin or owner/ });
  t.throws(() => requirePermission('admin', 'owner'), { message: 'only an owner can do this; you are an admin' });
  t.notThrows(() => requirePermission('admin', 'manage'));
});
