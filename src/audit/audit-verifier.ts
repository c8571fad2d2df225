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
 * into a scratch store, so runs go one at a time (whoever asks), a tenant asking again while its
 * run is under way gets that run, and a tenant's last report is answered again while neither the
 * log nor the live read models have moved since.
 */
export function createAuditVerifier(deps: {
  eventStore: EventStore;
  readStore: ReadStore;
  /** The log position the live projections have processed. */
  livePosition: () => bigint | null;
  trustedKeys: readonly string[];
  now: () => number;
}): AuditVerifier {
  type Done = { head: bigint | null; live: bigint | null; report: AuditReport };
  const done = new Map<string, Done>();
  const running = new Map<string, Promise<AuditReport>>();
  let queue: Promise<unknown> = Promise.resolve();

  const run = async (key: string, organizationId: string, environment: Environment): Promise<AuditReport> => {
    const head = await deps.eventStore.headPosition();
    const live = deps.livePosition();
    const last = done.get(key);
    if (last && last.head === head && last.live === live) return last.report;
    const report = await verifyAudit({
      eventStore: deps.eventStore,
      trustedKeys: deps.trustedKeys,
      live: { readStore: deps.readStore, position: async () => deps.livePosition() },
      includes: (doc) => belongsTo(doc, organizationId, environment),
      now: deps.now,
    });
    done.set(key, { head, live, report });
    return report;
  };

  return {
    verify({ organizationId, environment }) {
      const key = `${environment}:${organizationId}`;
      const underWay = running.get(key);
      if (underWay) return underWay;
      const next = queue.then(() => run(key, organizationId, environment));
      queue = next.catch(() => undefined);
      running.set(key, next);
      const forget = () => running.delete(key);
      next.then(forget, forget);
      return next;
    },
  };
}
