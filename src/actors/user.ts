import type { Aggregate } from './aggregate.ts';
import type { Environment } from '../event-store/event-store.ts';
import { ConflictError, InvalidStateError } from '../shared/errors.ts';
import { deterministicId } from '../shared/ids.ts';

/**
 * What a dashboard user may do: `owner` everything; `admin` everything but the owner's own matters
 * (owners, two-factor policy); `developer` API keys and webhooks; `viewer` reads only.
 */
export const USER_ROLES = ['owner', 'admin', 'developer', 'viewer'] as const;
export type UserRole = (typeof USER_ROLES)[number];

/**
 * A user belongs to its organization, not to one environment; its events are recorded under
 * `live`, where the organization's own settings belong (the tenancy metadata needs one).
 */
export const USER_ENVIRONMENT: Environment = 'live';

/** A dashboard user. The password is kept only as its argon2id hash (PHC string). */
export type User = {
  id: string;
  organizationId: string;
  email: string;
  emailLower: string;
  name: string | null;
  role: UserRole;
  passwordHash: string;
  createdAt: string;
  updatedAt: string;
  removed: boolean;
  /** Two-factor sign-in (TOTP), once the user has turned it on. */
  twoFactor: TwoFactor | null;
};

/**
 * A user's TOTP: the shared secret sealed with the master key (it must be read back to check a
 * code), the last step a code was taken at (a code works once), and the recovery codes as hashes,
 * each spent once.
 */
export type TwoFactor = {
  secretSealed: string;
  enabledAt: string;
  lastStep: number;
  recoveryCodes: { hash: string; usedAt: string | null }[];
};

export type UserEvent =
  | { type: 'UserCreated'; data: { user: Omit<User, 'updatedAt' | 'removed' | 'twoFactor'> } }
  | { type: 'UserRoleChanged'; data: { role: UserRole; previousRole: UserRole; at: string } }
  | { type: 'UserPasswordChanged'; data: { passwordHash: string; at: string } }
  | { type: 'UserRemoved'; data: { at: string } }
  | {
      type: 'UserTwoFactorEnabled';
      data: { secretSealed: string; recoveryCodeHashes: string[]; step: number; at: string };
    }
  | { type: 'UserTwoFactorDisabled'; data: { at: string } }
  | { type: 'UserTwoFactorCodeUsed'; data: { step: number; at: string } }
  | { type: 'UserRecoveryCodeUsed'; data: { index: number; remaining: number; at: string } }
  | { type: 'UserRecoveryCodesRenewed'; data: { recoveryCodeHashes: string[]; at: string } };

export type UserCommand =
  | {
      type: 'CreateUser';
      id: string;
      organizationId: string;
      email: string;
      name: string | null;
      role: UserRole;
      passwordHash: string;
    }
  | { type: 'ChangeUserRole'; role: UserRole }
  | { type: 'ChangeUserPassword'; passwordHash: string }
  | { type: 'RemoveUser' }
  /** `step`: the step of the code that confirmed the secret (it is spent). */
  | { type: 'EnableTwoFactor'; secretSealed: string; recoveryCodeHashes: string[]; step: number }
  | { type: 'DisableTwoFactor' }
  /** A TOTP code, checked against the secret by the caller, at this step. */
  | { type: 'UseTwoFactorCode'; step: number }
  | { type: 'UseRecoveryCode'; hash: string }
  /** A new set of recovery codes (as hashes); the old ones, spent or not, stop working. */
  | { type: 'RenewRecoveryCodes'; recoveryCodeHashes: string[] };

const codeRefused = () => new InvalidStateError('that code has been used already', 'two_factor_code_used');

export function evolveUser(user: User | null, event: UserEvent): User | null {
  if (event.type === 'UserCreated')
    return { ...event.data.user, updatedAt: event.data.user.createdAt, removed: false, twoFactor: null };
  if (!user) return null;
  const twoFactor = user.twoFactor ?? null;
  switch (event.type) {
    case 'UserRoleChanged':
      return { ...user, role: event.data.role, updatedAt: event.data.at };
    case 'UserPasswordChanged':
      return { ...user, passwordHash: event.data.passwordHash, updatedAt: event.data.at };
    case 'UserRemoved':
      return { ...user, removed: true, updatedAt: event.data.at };
    case 'UserTwoFactorEnabled': {
      const { secretSealed, recoveryCodeHashes, step, at } = event.data;
      const recoveryCodes = recoveryCodeHashes.map((hash) => ({ hash, usedAt: null }));
      return { ...user, twoFactor: { secretSealed, enabledAt: at, lastStep: step, recoveryCodes }, updatedAt: at };
    }
    case 'UserTwoFactorDisabled':
      return { ...user, twoFactor: null, updatedAt: event.data.at };
    case 'UserTwoFactorCodeUsed':
      return twoFactor ? { ...user, twoFactor: { ...twoFactor, lastStep: event.data.step } } : user;
    case 'UserRecoveryCodeUsed':
      return twoFactor
        ? {
            ...user,
            twoFactor: {
              ...twoFactor,
              recoveryCodes: twoFactor.recoveryCodes.map((code, i) =>
                i === event.data.index ? { ...code, usedAt: event.data.at } : code,
              ),
            },
          }
        : user;
    case 'UserRecoveryCodesRenewed':
      return twoFactor
        ? {
            ...user,
            twoFactor: {
              ...twoFactor,
              recoveryCodes: event.data.recoveryCodeHashes.map((hash) => ({ hash, usedAt: null })),
            },
            updatedAt: event.data.at,
          }
        : user;
  }
}

export const userAggregate: Aggregate<User | null, UserEvent, UserCommand> = {
  category: 'user',
  initialState: () => null,
  evolve: evolveUser,
  decide(user, command, { now }) {
    if (command.type === 'CreateUser') {
      // The same create again (a retry) changes nothing; the id is never reused for another user.
      if (user) return [];
      const { type: _type, ...fields } = command;
      return [
        {
          type: 'UserCreated',
          data: { user: { ...fields, emailLower: fields.email.toLowerCase(), createdAt: now } },
        },
      ];
    }
    if (!user || user.removed) throw new InvalidStateError('user does not exist', 'resource_missing');
    switch (command.type) {
      case 'ChangeUserRole':
        if (command.role === user.role) return [];
        return [{ type: 'UserRoleChanged', data: { role: command.role, previousRole: user.role, at: now } }];
      case 'ChangeUserPassword':
        return [{ type: 'UserPasswordChanged', data: { passwordHash: command.passwordHash, at: now } }];
      case 'RemoveUser':
        return [{ type: 'UserRemoved', data: { at: now } }];
      case 'EnableTwoFactor': {
        if (user.twoFactor) throw new ConflictError('two-factor sign-in is on already', 'two_factor_enabled');
        const { secretSealed, recoveryCodeHashes, step } = command;
        return [{ type: 'UserTwoFactorEnabled', data: { secretSealed, recoveryCodeHashes, step, at: now } }];
      }
      case 'DisableTwoFactor':
        return user.twoFactor ? [{ type: 'UserTwoFactorDisabled', data: { at: now } }] : [];
      case 'UseTwoFactorCode':
        if (!user.twoFactor) throw new InvalidStateError('two-factor sign-in is off', 'two_factor_disabled');
        // One code, one use: a code seen on a shoulder or in a proxy's log is spent.
        if (command.step <= user.twoFactor.lastStep) throw codeRefused();
        return [{ type: 'UserTwoFactorCodeUsed', data: { step: command.step, at: now } }];
      case 'UseRecoveryCode': {
        if (!user.twoFactor) throw new InvalidStateError('two-factor sign-in is off', 'two_factor_disabled');
        const codes = user.twoFactor.recoveryCodes;
        const index = codes.findIndex((code) => code.hash === command.hash);
        if (index < 0) throw new InvalidStateError('that is not one of your recovery codes', 'two_factor_code_wrong');
        if (codes[index]!.usedAt) throw codeRefused();
        const remaining = codes.filter((code) => !code.usedAt).length - 1;
        return [{ type: 'UserRecoveryCodeUsed', data: { index, remaining, at: now } }];
      }
      case 'RenewRecoveryCodes':
        if (!user.twoFactor) throw new InvalidStateError('two-factor sign-in is off', 'two_factor_disabled');
        return [
          { type: 'UserRecoveryCodesRenewed', data: { recoveryCodeHashes: command.recoveryCodeHashes, at: now } },
        ];
    }
  },
};

/**
 * The claim of an email address by one user: one stream per lower-cased address (across all
 * organizations, since signing in names no organization), so the log's expected-revision check lets
 * only one user hold it. A removed user releases it.
 */
export type UserEmailClaim = { email: string; userId: string | null; organizationId: string | null };

export type UserEmailClaimEvent =
  | { type: 'UserEmailClaimed'; data: { email: string; userId: string; organizationId: string; at: string } }
  | { type: 'UserEmailReleased'; data: { userId: string; at: string } };

export type UserEmailClaimCommand =
  | {
      type: 'ClaimUserEmail';
      email: string;
      userId: string;
      organizationId: string;
      /** The holder the caller has checked was never created (a create that failed after claiming): it may be replaced. */
      replacingAbandonedUser?: string;
    }
  | { type: 'ReleaseUserEmail'; userId: string };

export const userEmailClaimId = (email: string): string => deterministicId(`user_email:${email.toLowerCase()}`);

export const userEmailClaimAggregate: Aggregate<UserEmailClaim | null, UserEmailClaimEvent, UserEmailClaimCommand> = {
  category: 'user_email',
  initialState: () => null,
  evolve(_claim, event) {
    if (event.type === 'UserEmailClaimed') {
      const { at: _at, ...claim } = event.data;
      return claim;
    }
    return _claim && { ..._claim, userId: null, organizationId: null };
  },
  decide(claim, command, { now }) {
    if (command.type === 'ReleaseUserEmail') {
      if (!claim || claim.userId !== command.userId) return [];
      return [{ type: 'UserEmailReleased', data: { userId: command.userId, at: now } }];
    }
    if (claim?.userId === command.userId) return [];
    if (claim?.userId && claim.userId !== command.replacingAbandonedUser)
      throw new ConflictError(`email: ${command.email} is already a user's`, 'user_email_in_use');
    return [
      {
        type: 'UserEmailClaimed',
        data: { email: command.email, userId: command.userId, organizationId: command.organizationId, at: now },
      },
    ];
  },
};
