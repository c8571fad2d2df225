import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { CommandHandler } from '../../actors/command-handler.ts';
import {
  dashboardSessionAggregate,
  type DashboardSessionCommand,
  type DashboardSessionEndReason,
} from '../../actors/dashboard-session.ts';
import { USER_ENVIRONMENT } from '../../actors/user.ts';
import type { ProjectionRunner } from '../../projections/projection-runner.ts';
import {
  DASHBOARD_SESSIONS,
  USERS,
  type DashboardSessionDoc,
  type UserDoc,
} from '../../projections/team.projection.ts';
import type { ReadStore } from '../../read-store/read-store.ts';
import type { Clock } from '../../shared/clock.ts';
import { isUuid, newId } from '../../shared/ids.ts';

export type SessionLimits = {
  /** Ended after this long without a request. */
  idleMs: number;
  /** Ended this long after sign-in, however active. */
  absoluteMs: number;
  /** Activity is recorded in the log at most this often (so a restart knows it, to within this much). */
  recordActivityEveryMs: number;
};

export const DEFAULT_SESSION_LIMITS: SessionLimits = {
  idleMs: 30 * 60_000,
  absoluteMs: 12 * 3600_000,
  recordActivityEveryMs: 5 * 60_000,
};

export type SignedIn = { session: DashboardSessionDoc; user: UserDoc };

export type DashboardSessions = {
  /** A new session for `user`; `token` goes in the cookie and is never stored. */
  start(user: UserDoc, clientAddress: string): Promise<{ token: string; session: DashboardSessionDoc }>;
  /**
   * The live session the token names, with its user; null when there is none (unknown, wrong
   * secret, signed out, idle or past its absolute limit, user removed), ending it where it expired.
   */
  resolve(token: string | undefined): Promise<SignedIn | null>;
  end(session: DashboardSessionDoc, reason: DashboardSessionEndReason): Promise<void>;
  limits: SessionLimits;
};

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const TOKEN = /^([0-9a-f-]{36})\.([A-Za-z0-9_-]{43})$/;

/**
 * Server-side dashboard sessions. Each is a record in the log (started, active, ended: the audit
 * trail's sign-ins); the cookie holds `<session id>.<secret>` and the log the secret's SHA-256. Time
 * is the injected clock's; the last activity is kept in memory per request and in the log every
 * `recordActivityEveryMs`, so a restart ends a session idle since then, not one in use.
 */
export function createDashboardSessions(deps: {
  commands: CommandHandler;
  readStore: ReadStore;
  projections: ProjectionRunner;
  clock: Clock;
  limits?: Partial<SessionLimits>;
}): DashboardSessions {
  const limits = { ...DEFAULT_SESSION_LIMITS, ...deps.limits };
  const sessions = deps.readStore.collection<DashboardSessionDoc>(DASHBOARD_SESSIONS);
  const users = deps.readStore.collection<UserDoc>(USERS);
  const lastSeen = new Map<string, number>();

  const run = async (
    session: { id: string; userId: string; organizationId: string },
    command: DashboardSessionCommand,
    clientAddress?: string,
  ) => {
    const result = await deps.commands.handle(dashboardSessionAggregate, session.id, command, {
      organizationId: session.organizationId,
      environment: USER_ENVIRONMENT,
      actor: `user:${session.userId}`,
      ...(clientAddress ? { clientAddress } : {}),
    });
    if (result.position !== null) await deps.projections.waitFor(result.position);
  };

  const end: DashboardSessions['end'] = async (session, reason) => {
    lastSeen.delete(session.id);
    await run(session, { type: 'EndDashboardSession', reason });
  };

  return {
    limits,
    async start(user, clientAddress) {
      const id = newId();
      const secret = randomBytes(32).toString('base64url');
      const now = deps.clock.now();
      await run(
        { id, userId: user.id, organizationId: user.organizationId },
        {
          type: 'StartDashboardSession',
          session: {
            id,
            userId: user.id,
            organizationId: user.organizationId,
            tokenHash: sha256(secret),
            clientAddress,
            startedAt: new Date(now).toISOString(),
            expiresAt: new Date(now + limits.absoluteMs).toISOString(),
          },
        },
        clientAddress,
      );
      lastSeen.set(id, now);
      return { token: `${id}.${secret}`, session: (await sessions.get(id))! };
    },
    async resolve(token) {
      const match = token ? TOKEN.exec(token) : null;
      if (!match || !isUuid(match[1])) return null;
      const session = await sessions.get(match[1]!);
      if (!session || session.endedAt) return null;
      const given = Buffer.from(sha256(match[2]!));
      const stored = Buffer.from(session.tokenHash);
      if (given.length !== stored.length || !timingSafeEqual(given, stored)) return null;
      const now = deps.clock.now();
      if (now >= Date.parse(session.expiresAt)) {
        await end(session, 'expired');
        return null;
      }
      const recorded = Date.parse(session.lastActiveAt);
      if (now - Math.max(recorded, lastSeen.get(session.id) ?? 0) >= limits.idleMs) {
        await end(session, 'idle');
        return null;
      }
      const user = await users.get(session.userId);
      if (!user || user.removed) {
        await end(session, 'user_removed');
        return null;
      }
      lastSeen.set(session.id, now);
      if (now - recorded >= limits.recordActivityEveryMs)
        await run(session, { type: 'RecordDashboardSessionActivity' });
      return { session, user };
    },
    end,
  };
}
