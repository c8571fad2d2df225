import Router from '@koa/router';
import { createAuditVerifier } from '../../audit/audit-verifier.ts';
import type { ApiDeps, ApiState } from '../api-context.ts';
import { AuditVerificationSchema } from '../schema/audit.ts';
import { schemaRoutes } from '../schema/route.ts';
import { SCOPE_REFUSED, requireScope } from '../scopes.ts';

/**
 * `GET /audit/verify`: `weir audit verify` for one tenant, for its auditors' keys (`audit` scope) and full keys. The chain and its checkpoints are the
 * whole log's (positions and hashes only, nothing of another tenant's events); the read models
 * compared are the key's organization and environment's.
 */
export function auditRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1/audit' });
  const verifier = createAuditVerifier({
    eventStore: deps.eventStore,
    readStore: deps.readStore,
    livePosition: () => deps.projections.position(),
    trustedKeys: deps.auditKeys ?? [],
    now: () => deps.clock.now(),
  });
  const api = schemaRoutes(router, { tag: 'Audit', auth: 'secretKey' });
  api.route(
    {
      method: 'get',
      path: '/verify',
      summary: 'Verify the event log and the read models',
      description:
        "Walks the whole log, recomputes its hash chain and checks every signed checkpoint (the first broken link is `chain.firstProblem`, with its position), then rebuilds every read model from the log in a scratch store and compares the key's organization and environment's documents with the live ones. A run replays the whole log: runs go one at a time, and asking again while a run is under way answers that run.",
      response: AuditVerificationSchema,
      errors: [
        {
          status: 403,
          codes: [SCOPE_REFUSED],
          description: 'A key of the `read` scope: this needs `audit` or a full key',
        },
      ],
      before: (ctx) => requireScope(ctx, 'audit'),
    },
    async (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      return verifier.verify(ctx.state.tenant);
    },
  );
  return router;
}
