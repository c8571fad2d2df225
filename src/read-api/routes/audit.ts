import { Readable } from 'node:stream';
import Router from '@koa/router';
import { createAuditVerifier } from '../../audit/audit-verifier.ts';
import type { ApiDeps, ApiState } from '../api-context.ts';
import { AuditVerificationSchema } from '../schema/audit.ts';
import { invalidFields, withCode, z } from '../schema/fields.ts';
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

const FORMATS = ['json', 'ndjson'] as const;
/** Log events read per batch; a JSON page scans at most `SCAN_LIMIT` of them (other tenants' included). */
const BATCH = 500;
const SCAN_LIMIT = 20_000;

const EventsQuery = z.object({
  after: z
    .string()
    .regex(/^(0|[1-9][0-9]{0,18})$/, withCode('must be a log position: a whole number'))
    .optional()
    .openapi({ description: 'Only events after this log position (a previous page’s `nextAfter`)' }),
  limit: z.coerce
    .number({ error: withCode('must be a whole number from 1 to 1000') })
    .int(withCode('must be a whole number from 1 to 1000'))
    .min(1, withCode('must be a whole number from 1 to 1000'))
    .max(1000, withCode('must be a whole number from 1 to 1000'))
    .default(100)
    .openapi({ description: 'Events in a JSON page (NDJSON streams them all)' }),
  format: z
    .enum(FORMATS, { error: withCode('must be json or ndjson') })
    .default('json')
    .openapi({ description: '`json` (a page) or `ndjson` (every event after `after`, streamed, one per line)' }),
});

const LoggedEventSchema = z
  .object({
    position: z.string(),
    id: z.string(),
    streamId: z.string(),
    revision: z.number(),
    type: z.string(),
    data: z.string().openapi({ description: 'The event’s data as the log stores it (JSON text)' }),
    metadata: z.string().openapi({ description: 'Its metadata as the log stores it (JSON text)' }),
    previous: z
      .string()
      .nullable()
      .openapi({ description: 'The chain hash before it (null: written before the chain)' }),
    hash: z
      .string()
      .nullable()
      .openapi({ description: 'sha256 over `previous` and the content: see the README’s Audit' }),
  })
  .openapi('LoggedEvent');

type LoggedEvent = z.output<typeof LoggedEventSchema>;

/** The tenant's events after `after`, in log order, a batch at a time, up to the head as it was at the start. */
async function* tenantEvents(
  eventStore: ApiDeps['eventStore'],
  tenant: { organizationId: string; environment: string },
  after: bigint | null,
  scanLimit: number,
): AsyncGenerator<LoggedEvent | { scannedThrough: bigint }> {
  const head = (await eventStore.chain.head())?.position ?? null;
  let from = after;
  let scanned = 0;
  while (head !== null && (from === null || from < head) && scanned < scanLimit) {
    const batch = await eventStore.chain.read(from, BATCH);
    if (batch.length === 0) break;
    for (const { position, content, link } of batch) {
      if (position > head) return;
      scanned += 1;
      from = position;
      const metadata = JSON.parse(content.metadata) as { organizationId?: string; environment?: string };
      if (metadata.organizationId === tenant.organizationId && metadata.environment === tenant.environment)
        yield { position: position.toString(), ...content, previous: link?.previous ?? null, hash: link?.hash ?? null };
      if (scanned >= scanLimit) break;
    }
    yield { scannedThrough: from! };
  }
}

/**
 * `GET /events`: the key's organization and environment's own events, in log order, each with the
 * content its chain hash is over and its link, so an auditor replays the tenant's history and
 * checks each hash (`sha256(previous, content)`) and, against the signed checkpoints, the chain.
 */
export function eventRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1/events' });
  const api = schemaRoutes(router, { tag: 'Audit', auth: 'secretKey' });
  api.route(
    {
      method: 'get',
      path: '/',
      summary: "List the tenant's events from the log",
      description:
        'In log order after `after`, with each event’s stored content and chain link. A JSON page holds up to `limit` events and scans at most 20,000 of the log; continue from `nextAfter` while `hasMore`. NDJSON streams every one up to the log’s head.',
      query: EventsQuery,
      response: z.object({
        object: z.literal('list'),
        data: z.array(LoggedEventSchema),
        nextAfter: z.string().nullable(),
        hasMore: z.boolean(),
      }),
      errors: [
        invalidFields(),
        {
          status: 403,
          codes: [SCOPE_REFUSED],
          description: 'A key of the `read` scope: this needs `audit` or a full key',
        },
      ],
      before: (ctx) => requireScope(ctx, 'audit'),
    },
    async (ctx, { query }) => {
      ctx.set('Cache-Control', 'no-store');
      const after = query.after === undefined ? null : BigInt(query.after);
      const { organizationId, environment } = ctx.state.tenant;
      if (query.format === 'ndjson') {
        ctx.set('Content-Type', 'application/x-ndjson; charset=utf-8');
        const lines = async function* () {
          for await (const item of tenantEvents(
            deps.eventStore,
            { organizationId, environment },
            after,
            Number.POSITIVE_INFINITY,
          ))
            if (!('scannedThrough' in item)) yield `${JSON.stringify(item)}\n`;
        };
        ctx.body = Readable.from(lines());
        return undefined;
      }
      const data: LoggedEvent[] = [];
      let nextAfter: bigint | null = after;
      let full = false;
      for await (const item of tenantEvents(deps.eventStore, { organizationId, environment }, after, SCAN_LIMIT)) {
        if ('scannedThrough' in item) {
          if (!full) nextAfter = item.scannedThrough;
          continue;
        }
        if (full) break;
        data.push(item);
        nextAfter = BigInt(item.position);
        full = data.length >= query.limit;
      }
      const head = (await deps.eventStore.chain.head())?.position ?? null;
      return {
        object: 'list' as const,
        data,
        nextAfter: nextAfter === null ? null : nextAfter.toString(),
        hasMore: head !== null && (nextAfter === null || nextAfter < head),
      };
    },
  );
  return router;
}
