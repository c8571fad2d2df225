import type { Environment, EventStore } from '../event-store/event-store.ts';
import type { ReadDocument, ReadStore } from '../read-store/read-store.ts';
import { verifyAudit, type AuditReport } from './audit-verify.ts';

/** Whether a read-model document is one tenant's: its organization, and its environment (or both, for organization-wide ones). */
export function belongsTo(doc: ReadDocument, organizationId: string, environment: Environment): boolean {
  if (doc.organizationId !== organizationId) return false;
  if (Array.isArray(doc.environments)) return doc.environments.includes(environment);
  return doc.environment === undefined || doc.environment === environment;
}

export type AuditVerifier = {
  /** The whole chain, and the tenant's read models compared with a rebuild. */
  verify(tenant: { organizationId: string; environment: Environment }): Promise<AuditReport>;
};

/**
 * Verification inside `weir serve`, for `GET /api/v1/audit/verify`. A run replays the whole log
 * into a scratch store, so runs go one at a time (whoever asks), and a tenant asking again while
 * its run is under way or waiting gets that run. No report is kept for later: a read store
 * changed behind Weir's back moves no position, so only a new run sees it.
 */
export function createAuditVerifier(deps: {
  eventStore: EventStore;
  readStore: ReadStore;
  /** The log position the live projections have processed. */
  livePosition: () => bigint | null;
  trustedKeys: readonly string[];
  now: () => number;
}): AuditVerifier {
  const running = new Map<string, Promise<AuditReport>>();
  let queue: Promise<unknown> = Promise.resolve();

  const run = (organizationId: string, environment: Environment): Promise<AuditReport> =>
    verifyAudit({
      eventStore: deps.eventStore,
      trustedKeys: deps.trustedKeys,
      live: { readStore: deps.readStore, position: async () => deps.livePosition() },
      includes: (doc) => belongsTo(doc, organizationId, environment),
      within: { field: 'organizationId', value: organizationId },
      now: deps.now,
    });

  return {
    verify({ organizationId, environment }) {
      const key = `${environment}:${organizationId}`;
      const underWay = running.get(key);
      if (underWay !== undefined) return underWay;
      const next = queue.then(() => run(organizationId, environment));
      queue = next.catch(() => undefined);
      running.set(key, next);
      const forget = () => running.delete(key);
      next.then(forget, forget);
      return next;
    },
  };
}
