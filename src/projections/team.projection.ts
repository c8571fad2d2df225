import {
  evolveDashboardSession,
  type DashboardSession,
  type DashboardSessionEvent,
} from '../actors/dashboard-session.ts';
import { evolveUser, type User, type UserEvent } from '../actors/user.ts';
import type { ReadDocument } from '../read-store/read-store.ts';
import type { Projection } from './projection.ts';

export const USERS = 'users';
export const USER_CREDENTIALS = 'user_credentials';
export const DASHBOARD_SESSIONS = 'dashboard_sessions';

/** A user as pages and the API read it: no password hash (that is in `user_credentials`). */
export type UserDoc = ReadDocument & Omit<User, 'passwordHash'>;
export type UserCredentialDoc = ReadDocument & { userId: string; organizationId: string; passwordHash: string };
/** Keyed by the session id, the selector part of the cookie's token. */
export type DashboardSessionDoc = ReadDocument & DashboardSession;

const idOf = (streamId: string) => streamId.slice(streamId.indexOf('-') + 1);

/** Dashboard users (with their credentials apart) and their signed-in sessions. */
export const teamProjection: Projection = {
  name: 'team',
  collections: [USERS, USER_CREDENTIALS, DASHBOARD_SESSIONS],
  categories: ['user', 'dashboard_session'],
  async apply(event, store) {
    if (event.streamId.startsWith('user-')) {
      const users = store.collection<UserDoc>(USERS);
      const credentials = store.collection<UserCredentialDoc>(USER_CREDENTIALS);
      const id = idOf(event.streamId);
      const [doc, credential] = await Promise.all([users.get(id), credentials.get(id)]);
      const current: User | null = doc && credential ? { ...doc, passwordHash: credential.passwordHash } : null;
      const next = evolveUser(current, event as unknown as UserEvent);
      if (!next) return;
      const { passwordHash, ...user } = next;
      await users.put({ ...user, _id: id });
      if (next.removed) await credentials.delete(id);
      else await credentials.put({ _id: id, userId: id, organizationId: next.organizationId, passwordHash });
      return;
    }
    const sessions = store.collection<DashboardSessionDoc>(DASHBOARD_SESSIONS);
    const id = idOf(event.streamId);
    const next = evolveDashboardSession(await sessions.get(id), event as unknown as DashboardSessionEvent);
    if (next) await sessions.put({ ...next, _id: id });
  },
};
