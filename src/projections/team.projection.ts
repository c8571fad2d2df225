import {
  evolveDashboardSession,
  type DashboardSession,
  type DashboardSessionEvent,
} from '../actors/dashboard-session.ts';
import type { TeamPolicyEvent } from '../actors/team-policy.ts';
import { evolveUserInvite, type UserInvite, type UserInviteEvent } from '../actors/user-invite.ts';
import { evolveUser, type TwoFactor, type User, type UserEvent } from '../actors/user.ts';
import type { ReadDocument } from '../read-store/read-store.ts';
import type { Projection } from './projection.ts';

export const USERS = 'users';
export const USER_CREDENTIALS = 'user_credentials';
export const DASHBOARD_SESSIONS = 'dashboard_sessions';
export const USER_INVITES = 'user_invites';
export const TEAM_POLICIES = 'team_policies';

/** A user as pages and the API read it: no password hash nor TOTP secret (those are in `user_credentials`). */
export type UserDoc = ReadDocument &
  Omit<User, 'passwordHash' | 'twoFactor'> & {
    twoFactorEnabled: boolean;
    /** Unspent recovery codes (0 while two-factor is off). */
    recoveryCodesLeft: number;
  };
export type UserCredentialDoc = ReadDocument & {
  userId: string;
  organizationId: string;
  passwordHash: string;
  twoFactor?: TwoFactor | null;
};
/** Keyed by the session id, the selector part of the cookie's token. */
export type DashboardSessionDoc = ReadDocument & DashboardSession;
/** Keyed by the invite id; `tokenHash` is the hash of the link's secret (the link itself is never stored). */
export type UserInviteDoc = ReadDocument & UserInvite;
/** Keyed by the organization id. */
export type TeamPolicyDoc = ReadDocument & { organizationId: string; twoFactorRequired: boolean; updatedAt: string };

const idOf = (streamId: string) => streamId.slice(streamId.indexOf('-') + 1);

/** Dashboard users (with their credentials apart), their sessions, invites, and each organization's team policy. */
export const teamProjection: Projection = {
  name: 'team',
  version: 2,
  collections: [USERS, USER_CREDENTIALS, DASHBOARD_SESSIONS, USER_INVITES, TEAM_POLICIES],
  categories: ['user', 'dashboard_session', 'user_invite', 'team_policy'],
  async apply(event, store) {
    const id = idOf(event.streamId);
    if (event.streamId.startsWith('user-')) {
      const users = store.collection<UserDoc>(USERS);
      const credentials = store.collection<UserCredentialDoc>(USER_CREDENTIALS);
      const [doc, credential] = await Promise.all([users.get(id), credentials.get(id)]);
      const current: User | null =
        doc && credential
          ? {
              ...doc,
              passwordHash: credential.passwordHash,
              twoFactor: credential.twoFactor ?? null,
            }
          : null;
      const next = evolveUser(current, event as unknown as UserEvent);
      if (!next) return;
      const { passwordHash, twoFactor, ...user } = next;
      await users.put({
        ...user,
        _id: id,
        twoFactorEnabled: twoFactor !== null,
        recoveryCodesLeft: twoFactor?.recoveryCodes.filter((code) => !code.usedAt).length ?? 0,
      });
      if (next.removed) await credentials.delete(id);
      else await credentials.put({ _id: id, userId: id, organizationId: next.organizationId, passwordHash, twoFactor });
      return;
    }
    if (event.streamId.startsWith('user_invite-')) {
      const invites = store.collection<UserInviteDoc>(USER_INVITES);
      const next = evolveUserInvite(await invites.get(id), event as unknown as UserInviteEvent);
      if (next) await invites.put({ ...next, _id: id });
      return;
    }
    if (event.streamId.startsWith('team_policy-')) {
      const { required, at } = (event as unknown as TeamPolicyEvent).data;
      await store
        .collection<TeamPolicyDoc>(TEAM_POLICIES)
        .put({ _id: id, organizationId: id, twoFactorRequired: required, updatedAt: at });
      return;
    }
    const sessions = store.collection<DashboardSessionDoc>(DASHBOARD_SESSIONS);
    const next = evolveDashboardSession(await sessions.get(id), event as unknown as DashboardSessionEvent);
    if (next) await sessions.put({ ...next, _id: id });
  },
};
