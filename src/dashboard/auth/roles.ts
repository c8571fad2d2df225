import type { UserRole } from '../../actors/user.ts';
import { ForbiddenError } from '../../shared/errors.ts';

/**
 * What a page or action needs. `read`: every signed-in user. `developers`: API keys and webhook
 * endpoints. `manage`: every other change (sessions, invoices, catalog, settings, team but owners).
 * `owner`: the owner's own matters (owners, two-factor policy, the organization itself).
 */
export type Permission = 'read' | 'developers' | 'manage' | 'owner';

const GRANTS: Record<UserRole, ReadonlySet<Permission>> = {
  viewer: new Set(['read']),
  developer: new Set(['read', 'developers']),
  admin: new Set(['read', 'developers', 'manage']),
  owner: new Set(['read', 'developers', 'manage', 'owner']),
};

export const can = (role: UserRole, permission: Permission): boolean => GRANTS[role].has(permission);

const NEEDS: Record<Permission, string> = {
  read: 'a signed-in user',
  developers: 'a developer, admin or owner',
  manage: 'an admin or owner',
  owner: 'an owner',
};

/** "a viewer", "an admin": the role with its article, as a sentence says it. */
export const withArticle = (role: UserRole): string => `${/^[aeiou]/.test(role) ? 'an' : 'a'} ${role}`;

/** Throws a 403 saying who may do it, unless `role` grants `permission`. */
export function requirePermission(role: UserRole, permission: Permission): void {
  if (!can(role, permission))
    throw new ForbiddenError(`only ${NEEDS[permission]} can do this; you are ${withArticle(role)}`, 'role_forbidden');
}
