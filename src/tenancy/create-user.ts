import type { CommandHandler } from '../actors/command-handler.ts';
import { organizationAggregate, organizationRecordId } from '../actors/organization.ts';
import {
  USER_ENVIRONMENT,
  USER_ROLES,
  userAggregate,
  userEmailClaimAggregate,
  userEmailClaimId,
  type UserRole,
} from '../actors/user.ts';
import { hashPassword, passwordProblem } from '../dashboard/auth/password.ts';
import { NotFoundError, ValidationError } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';

export type NewUser = {
  organizationId: string;
  email: string;
  name?: string | null;
  role: string;
  password: string;
  /** Who creates it: `cli`, `setup`, `user:<id>`. */
  actor: string;
};

/** An address with one @, something on each side and a dot in the domain; anything more is the mail server's to judge. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The fields of a new user, checked: each problem names its field, and nothing is written. */
export function checkNewUser(input: Omit<NewUser, 'actor' | 'organizationId'>): {
  email: string;
  role: UserRole;
  name: string | null;
} {
  const email = input.email.trim();
  if (!EMAIL.test(email) || email.length > 254) throw new ValidationError('email', 'must be an email address');
  if (!(USER_ROLES as readonly string[]).includes(input.role))
    throw new ValidationError('role', `must be one of ${USER_ROLES.join(', ')}`);
  const problem = passwordProblem(input.password);
  if (problem) throw new ValidationError('password', problem);
  const name = input.name?.trim() || null;
  if (name && name.length > 200) throw new ValidationError('name', 'must be at most 200 characters');
  return { email, role: input.role as UserRole, name };
}

/**
 * A dashboard user of an existing organization: its email claimed first (unique across Weir,
 * since signing in names no organization), then the user recorded with its password's argon2id
 * hash. A claim left by a create that failed before recording its user is taken over.
 */
export async function createUser(
  commands: CommandHandler,
  input: NewUser,
): Promise<{ userId: string; position: bigint | null }> {
  const { email, role, name } = checkNewUser(input);
  const org = await commands.load(organizationAggregate, organizationRecordId(input.organizationId, 'live'), null);
  if (!org.state) throw new NotFoundError('organization', input.organizationId);
  const passwordHash = await hashPassword(input.password);
  const userId = newId();
  const ctx = { organizationId: input.organizationId, environment: USER_ENVIRONMENT, actor: input.actor };
  const claimId = userEmailClaimId(email);
  const held = (await commands.load(userEmailClaimAggregate, claimId, null)).state?.userId;
  const abandoned = held && (await commands.load(userAggregate, held, null)).state === null ? held : undefined;
  await commands.handle(
    userEmailClaimAggregate,
    claimId,
    {
      type: 'ClaimUserEmail',
      email,
      userId,
      organizationId: input.organizationId,
      ...(abandoned ? { replacingAbandonedUser: abandoned } : {}),
    },
    ctx,
  );
  const created = await commands.handle(
    userAggregate,
    userId,
    { type: 'CreateUser', id: userId, organizationId: input.organizationId, email, name, role, passwordHash },
    { ...ctx, assumeNew: true },
  );
  return { userId, position: created.position };
}
