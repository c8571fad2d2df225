import type { Aggregate } from './aggregate.ts';
import { InvalidStateError } from '../shared/errors.ts';

/** Why a dashboard session ended. */
export type DashboardSessionEndReason = 'signed_out' | 'idle' | 'expired' | 'user_removed';

/**
 * A signed-in dashboard session. The cookie's token is `<id>.<secret>`; the log keeps only the
 * secret's SHA-256, so reading the log (or the read store) does not let anyone act as the user.
 */
export type DashboardSession = {
  id: string;
  userId: string;
  organizationId: string;
  tokenHash: string;
  /** The client address it was started from (for the audit trail and the user's sessions list). */
  clientAddress: string;
  startedAt: string;
  /** Last activity recorded in the log (activity is recorded at most every few minutes). */
  lastActiveAt: string;
  /** It ends here whatever the activity. */
  expiresAt: string;
  endedAt: string | null;
  endReason: DashboardSessionEndReason | null;
};

export type DashboardSessionEvent =
  | { type: 'DashboardSessionStarted'; data: { session: Omit<DashboardSession, 'endedAt' | 'endReason'> } }
  | { type: 'DashboardSessionActive'; data: { at: string } }
  | { type: 'DashboardSessionEnded'; data: { reason: DashboardSessionEndReason; at: string } };

export type DashboardSessionCommand =
  | { type: 'StartDashboardSession'; session: Omit<DashboardSession, 'endedAt' | 'endReason' | 'lastActiveAt'> }
  | { type: 'RecordDashboardSessionActivity' }
  | { type: 'EndDashboardSession'; reason: DashboardSessionEndReason };

export function evolveDashboardSession(
  session: DashboardSession | null,
  event: DashboardSessionEvent,
): DashboardSession | null {
  if (event.type === 'DashboardSessionStarted') return { ...event.data.session, endedAt: null, endReason: null };
  if (!session) return null;
  if (event.type === 'DashboardSessionActive') return { ...session, lastActiveAt: event.data.at };
  return { ...session, endedAt: event.data.at, endReason: event.data.reason };
}

export const dashboardSessionAggregate: Aggregate<
  DashboardSession | null,
  DashboardSessionEvent,
  DashboardSessionCommand
> = {
  category: 'dashboard_session',
  initialState: () => null,
  evolve: evolveDashboardSession,
  decide(session, command, { now }) {
    if (command.type === 'StartDashboardSession') {
      if (session) return [];
      return [{ type: 'DashboardSessionStarted', data: { session: { ...command.session, lastActiveAt: now } } }];
    }
    if (!session) throw new InvalidStateError('dashboard session does not exist', 'resource_missing');
    // An ended session stays ended: activity or a second sign-out changes nothing.
    if (session.endedAt) return [];
    if (command.type === 'RecordDashboardSessionActivity')
      return [{ type: 'DashboardSessionActive', data: { at: now } }];
    return [{ type: 'DashboardSessionEnded', data: { reason: command.reason, at: now } }];
  },
};
