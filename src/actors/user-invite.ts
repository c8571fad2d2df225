import type { Aggregate } from './aggregate.ts';
import { InvalidStateError } from '../shared/errors.ts';
import type { UserRole } from './user.ts';

/** How long an invite's link works, from when it was made or last sent. */
export const INVITE_LIFETIME_MS = 7 * 24 * 3600_000;

export type UserInviteStatus = 'pending' | 'accepted' | 'revoked';

/**
 * An invitation of an email address to an organization with a role. The link carries
 * `<id>.<secret>`; the log keeps only the secret's SHA-256, and `expiresAt` is on Weir's clock.
 * Accepting makes the user (see tenancy/accept-invite.ts) and spends the invite.
 */
export type UserInvite = {
  id: string;
  organizationId: string;
  email: string;
  emailLower: string;
  role: UserRole;
  tokenHash: string;
  expiresAt: string;
  /** Who invited: `user:<id>` or `api_key:<id>`. */
  invitedBy: string;
  status: UserInviteStatus;
  acceptedUserId: string | null;
  createdAt: string;
  updatedAt: string;
};

export type UserInviteEvent =
  | {
      type: 'UserInviteCreated';
      data: { invite: Omit<UserInvite, 'status' | 'acceptedUserId' | 'updatedAt' | 'emailLower'> };
    }
  | { type: 'UserInviteResent'; data: { tokenHash: string; expiresAt: string; at: string } }
  | { type: 'UserInviteRevoked'; data: { at: string } }
  | { type: 'UserInviteAccepted'; data: { userId: string; at: string } };

export type UserInviteCommand =
  | {
      type: 'CreateUserInvite';
      invite: Pick<UserInvite, 'id' | 'organizationId' | 'email' | 'role' | 'tokenHash' | 'invitedBy'>;
    }
  | { type: 'ResendUserInvite'; tokenHash: string }
  | { type: 'RevokeUserInvite' }
  /** `tokenHash`: the hash of the secret the link carried (checked again here, with the expiry). */
  | { type: 'AcceptUserInvite'; tokenHash: string; userId: string };

/** Whether the invite's link still works at `now` (ms). */
export const inviteOpen = (invite: Pick<UserInvite, 'status' | 'expiresAt'>, now: number): boolean =>
  invite.status === 'pending' && now < Date.parse(invite.expiresAt);

const expiryFrom = (now: string) => new Date(Date.parse(now) + INVITE_LIFETIME_MS).toISOString();

export function evolveUserInvite(invite: UserInvite | null, event: UserInviteEvent): UserInvite | null {
  if (event.type === 'UserInviteCreated') {
    const created = event.data.invite;
    return {
      ...created,
      emailLower: created.email.toLowerCase(),
      status: 'pending',
      acceptedUserId: null,
      updatedAt: created.createdAt,
    };
  }
  if (!invite) return null;
  switch (event.type) {
    case 'UserInviteResent':
      return { ...invite, tokenHash: event.data.tokenHash, expiresAt: event.data.expiresAt, updatedAt: event.data.at };
    case 'UserInviteRevoked':
      return { ...invite, status: 'revoked', updatedAt: event.data.at };
    case 'UserInviteAccepted':
      return { ...invite, status: 'accepted', acceptedUserId: event.data.userId, updatedAt: event.data.at };
  }
}

export const userInviteAggregate: Aggregate<UserInvite | null, UserInviteEvent, UserInviteCommand> = {
  category: 'user_invite',
  initialState: () => null,
  evolve: evolveUserInvite,
  decide(invite, command, { now }) {
    if (command.type === 'CreateUserInvite') {
      if (invite) return [];
      return [
        {
          type: 'UserInviteCreated',
          data: { invite: { ...command.invite, expiresAt: expiryFrom(now), createdAt: now } },
        },
      ];
    }
    if (!invite) throw new InvalidStateError('invite does not exist', 'resource_missing');
    switch (command.type) {
      case 'ResendUserInvite':
        // An expired invite may be sent again (a new link, a new week); an answered one may not.
        if (invite.status !== 'pending') throw new InvalidStateError(`the invite is ${invite.status}`, 'invite_closed');
        return [
          { type: 'UserInviteResent', data: { tokenHash: command.tokenHash, expiresAt: expiryFrom(now), at: now } },
        ];
      case 'RevokeUserInvite':
        if (invite.status === 'revoked') return [];
        if (invite.status !== 'pending') throw new InvalidStateError(`the invite is ${invite.status}`, 'invite_closed');
        return [{ type: 'UserInviteRevoked', data: { at: now } }];
      case 'AcceptUserInvite':
        if (invite.status === 'accepted' && invite.acceptedUserId === command.userId) return [];
        if (command.tokenHash !== invite.tokenHash || !inviteOpen(invite, Date.parse(now)))
          throw new InvalidStateError('this invite link is not valid or has expired', 'invite_closed');
        return [{ type: 'UserInviteAccepted', data: { userId: command.userId, at: now } }];
    }
  },
};
