import type { MatcherStatus } from '../chain-ingest/matcher.ts';
import type { EvmFollowerStatus } from '../chain-ingest/evm/follower/evm-follower.ts';
import type { EventStore } from '../event-store/event-store.ts';
import { COLLECTIONS, type WebhookDeliveryDoc } from '../projections/collections.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import { settleWithin } from '../shared/settle-within.ts';
import type { FailingTimer } from '../timers/timer-runner.ts';

/**
 * `ok`; `degraded`: Weir answers, but something it does is held up (a chain follower is behind,
 * the matcher is stuck on a network's message); `failing`: what it answers is wrong or it cannot write
 * (the log does not answer, the read models no longer follow the log).
 */
export type HealthState = 'ok' | 'degraded' | 'failing';

/** One part of Weir. `reason` says what is wrong in Weir's words; the errors themselves are in the log, never here. */
export type HealthCheck = { name: string; status: HealthState; reason: string | null };

export type HealthReport = {
  status: HealthState;
  /** The log position the read models have processed, and the log's head (null: empty, or the log did not answer). */
  position: string | null;
  head: string | null;
  checks: HealthCheck[];
};

export type Health = { report(): Promise<HealthReport> };

export type HealthDeps = {
  clock: Clock;
  eventStore: Pick<EventStore, 'headPosition'>;
  projections: Pick<ProjectionRunner, 'health'>;
  /** Where the webhook deliveries are; without it, they are not checked. */
  readStore?: ReadStore;
  matcher?: { status(): MatcherStatus };
  /** The bus to NATS; one without a server (in process) is not checked. */
  bus?: { connected?(): boolean };
  timers?: { status(): { failing: FailingTimer[] } };
  followers?: readonly { status(): EvmFollowerStatus }[];
  /** A follower that has not read its chain's head for this long is behind. Default 5 min. */
  followerBehindAfterMs?: number;
  /** A chain message that has kept failing for this long holds up the chain messages behind it. Default 1 min. */
  matcherStuckAfterMs?: number;
  /** A timer whose command has failed for this long makes Weir degraded. Default 5 min. */
  timersFailingAfterMs?: number;
  /** A webhook delivery still not attempted this long after it was due means the dispatcher is behind. Default 5 min. */
  webhooksOverdueAfterMs?: number;
  /** How long the log and the read store may take to answer. Default 2 s. */
  answerTimeoutMs?: number;
};

const SEVERITY: Record<HealthState, number> = { ok: 0, degraded: 1, failing: 2 };
const ok = (name: string): HealthCheck => ({ name, status: 'ok', reason: null });
const iso = (ms: number) => new Date(ms).toISOString();

/** What a store answered within `timeoutMs`, or why it gave nothing, in words fit for the public report. */
async function answerWithin<T>(work: () => Promise<T>, timeoutMs: number): Promise<{ value: T } | { error: string }> {
  const settled = await settleWithin(work(), timeoutMs);
  if ('value' in settled) return settled;
  return {
    error: 'timedOut' in settled ? `did not answer within ${timeoutMs} ms` : 'answered with an error (see the log)',
  };
}

function followerCheck(
  status: EvmFollowerStatus,
  now: number,
  watchingSince: number,
  behindAfterMs: number,
): HealthCheck {
  const name = `follower:${status.network}`;
  if (!status.running)
    return {
      name,
      status: 'degraded',
      reason: `the follower of ${status.network} is stopped: payments on it are not seen`,
    };
  const readAt = status.caughtUpAt ?? watchingSince;
  if (now - readAt < behindAfterMs) return ok(name);
  const since = status.caughtUpAt === null ? 'since Weir started' : `since ${iso(status.caughtUpAt)}`;
  const node = status.lastError ? '; its node fails (see the log)' : '';
  return {
    name,
    status: 'degraded',
    reason: `the follower of ${status.network} has not read the chain's head ${since}${node}: payments on it wait`,
  };
}

/** Timers whose command has failed since before `failingBefore`: what they do (an expiry, a renewal, a reminder, a mail) waits. */
function timersCheck(failing: FailingTimer[], failingBefore: number): HealthCheck {
  const long = failing.filter((timer) => timer.since <= failingBefore);
  if (long.length === 0) return ok('timers');
  const kinds = [...new Set(long.map((timer) => timer.kind))].sort().join(', ');
  const count = long.length === 1 ? '1 timer has' : `${long.length} timers have`;
  return {
    name: 'timers',
    status: 'degraded',
    reason: `${count} failed since ${iso(long[0]!.since)} (${kinds}; retried, see the log): what they do waits`,
  };
}

/** Deliveries due before `dueBefore` and still not attempted: the dispatcher does not keep up (or does not run). */
async function webhooksCheck(readStore: ReadStore, dueBefore: number): Promise<HealthCheck> {
  const overdue = { status: 'pending', nextAttemptAt: { $lt: dueBefore } };
  const deliveries = readStore.collection<WebhookDeliveryDoc>(COLLECTIONS.webhookDeliveries);
  const [oldest] = await deliveries.find(overdue, { sort: { nextAttemptAt: 1 }, limit: 1 });
  if (!oldest?.nextAttemptAt) return ok('webhooks');
  const count = await deliveries.count(overdue);
  return {
    name: 'webhooks',
    status: 'degraded',
    reason: `${count} webhook ${count === 1 ? 'delivery has' : 'deliveries have'} waited to be sent since ${iso(oldest.nextAttemptAt)}: the dispatcher is behind (see the log)`,
  };
}

/**
 * What `/health` answers: the log, the read models, the matcher, the timers, the webhook deliveries
 * and each chain follower, and the worst of them as the overall status. Reading it changes nothing
 * and logs nothing.
 */
export function createHealth(deps: HealthDeps): Health {
  const behindAfterMs = deps.followerBehindAfterMs ?? 5 * 60_000;
  const stuckAfterMs = deps.matcherStuckAfterMs ?? 60_000;
  const timeoutMs = deps.answerTimeoutMs ?? 2000;
  const overdueAfterMs = deps.webhooksOverdueAfterMs ?? 5 * 60_000;
  const timersAfterMs = deps.timersFailingAfterMs ?? 5 * 60_000;
  const watchingSince = deps.clock.now();
  return {
    async report() {
      const now = deps.clock.now();
      const checks: HealthCheck[] = [];
      const read = await answerWithin(() => deps.eventStore.headPosition(), timeoutMs);
      checks.push(
        'error' in read
          ? { name: 'event_store', status: 'failing', reason: `the log ${read.error}: nothing can be written` }
          : ok('event_store'),
      );

      const projections = deps.projections.health();
      checks.push(
        projections.failing
          ? {
              name: 'projections',
              status: 'failing',
              reason: `the read models have failed to follow the log since ${iso(projections.failing.since)} (${projections.failing.attempts} ${projections.failing.attempts === 1 ? 'attempt' : 'attempts'}, retried on its own; see the log): reads may be stale and writes wait`,
            }
          : ok('projections'),
      );

      if (deps.bus?.connected)
        checks.push(
          deps.bus.connected()
            ? ok('bus')
            : {
                name: 'bus',
                status: 'degraded',
                reason:
                  'the connection to NATS is lost (reconnecting; see the log): chain messages wait, and the background work this instance owns stops once its leases lapse',
              },
        );
      if (deps.matcher) {
        const stuck = deps.matcher.status().failing.filter((message) => now - message.since >= stuckAfterMs);
        checks.push(
          stuck.length > 0
            ? {
                name: 'matcher',
                status: 'degraded',
                reason: `${stuck.map((m) => `a chain message on ${m.subject} has failed since ${iso(m.since)} (${m.deliveries} ${m.deliveries === 1 ? 'delivery' : 'deliveries'}; see the log)`).join('; ')}: the later chain messages of ${stuck.length === 1 ? 'that network wait' : 'those networks wait'}, other networks go on`,
              }
            : ok('matcher'),
        );
      }
      if (deps.timers) checks.push(timersCheck(deps.timers.status().failing, now - timersAfterMs));
      if (deps.readStore) {
        const { readStore } = deps;
        const webhooks = await answerWithin(() => webhooksCheck(readStore, now - overdueAfterMs), timeoutMs);
        checks.push(
          'error' in webhooks
            ? { name: 'read_store', status: 'failing', reason: `the read store ${webhooks.error}: reads fail` }
            : webhooks.value,
        );
      }
      for (const follower of deps.followers ?? [])
        checks.push(followerCheck(follower.status(), now, watchingSince, behindAfterMs));

      const status = checks.reduce<HealthState>(
        (worst, check) => (SEVERITY[check.status] > SEVERITY[worst] ? check.status : worst),
        'ok',
      );
      const head = 'error' in read ? null : (read.value?.toString() ?? null);
      return { status, position: projections.position, head, checks };
    },
  };
}
