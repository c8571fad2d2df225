import type { EventStore, RecordedEvent } from '../../../event-store/event-store.ts';
import { COLLECTIONS, type ApiKeyDoc } from '../../../projections/collections.ts';
import { AUDIT_TRAIL, type AuditEntryDoc } from '../../../projections/audit-trail.projection.ts';
import { USERS, type UserDoc } from '../../../projections/team.projection.ts';
import type { Filter, ReadStore } from '../../../read-store/read-store.ts';
import type { DashboardTenant } from '../../context.ts';
import {
  dateRangeErrors,
  dayRangeCondition,
  type ListQuery,
  pageOf,
  queryValue as one,
} from '../../ui/list-controls.tsx';
import { everyNetwork, type Rail } from '../../../chain-ingest/rail.ts';
import { changeRows, type ChangeRow, type NativeCoins } from './changes.ts';

export const PAGE_SIZE = 25;

/** The record types a merchant filters by, in the order the filter lists them. */
export const RECORD_TYPES = [
  'checkout_session',
  'invoice',
  'subscription',
  'payment_link',
  'customer',
  'product',
  'price',
  'coupon',
  'tax_rate',
  'webhook_endpoint',
  'api_key',
  'organization',
  'user',
  'dashboard_session',
] as const;

export type SystemFilter = 'hide' | 'show' | 'only';

export type AuditQuery = {
  actor: string;
  recordType: string;
  recordId: string;
  type: string;
  from: string;
  to: string;
  system: SystemFilter;
  page: number;
};

/** The filters as typed, and a message per filter that cannot be read (shown at its field). */
export function parseAuditQuery(query: ListQuery): {
  query: AuditQuery;
  errors: Partial<Record<keyof AuditQuery, string>>;
} {
  const system = one(query, 'system');
  const parsed: AuditQuery = {
    actor: one(query, 'actor'),
    recordType: one(query, 'recordType'),
    recordId: one(query, 'recordId'),
    type: one(query, 'type'),
    from: one(query, 'from'),
    to: one(query, 'to'),
    system: system === 'show' || system === 'only' ? system : 'hide',
    page: pageOf(one(query, 'page')),
  };
  const errors: Partial<Record<keyof AuditQuery, string>> = dateRangeErrors(parsed);
  if (parsed.recordType && !(RECORD_TYPES as readonly string[]).includes(parsed.recordType))
    errors.recordType = 'Pick a record type from the list.';
  return { query: parsed, errors };
}

/**
 * The read-store filter of a query (its unreadable parts left out): always the tenant's own entries;
 * `from` / `to` are days of `zone` (the dashboard's, whose times the trail shows).
 */
export function auditFilter(
  tenant: DashboardTenant,
  query: AuditQuery,
  errors: Partial<Record<keyof AuditQuery, string>>,
  zone: string,
): Filter {
  const filter: Filter = { organizationId: tenant.organizationId, environments: tenant.environment };
  if (query.system === 'hide') filter.system = false;
  if (query.system === 'only') filter.system = true;
  if (query.actor) filter.actor = query.actor;
  if (query.recordType && !errors.recordType) filter.recordType = query.recordType;
  if (query.recordId) filter.recordId = query.recordId;
  if (query.type) filter.type = query.type;
  const range = dayRangeCondition(query, errors, zone);
  if (Object.keys(range).length) filter.occurredAt = range;
  return filter;
}

export type AuditEntry = AuditEntryDoc & { actorName: string | null; rows: ChangeRow[] };

/** Each network's native coin by chain id, as the rails offer it: what a sweep's gas is paid in. */
export const nativeCoinsOf = (rail: Pick<Rail, 'networks'>): NativeCoins =>
  new Map(
    everyNetwork(rail).map((n) => [n.chainId, { decimals: n.nativeCurrency.decimals, unit: n.nativeCurrency.symbol }]),
  );

/** Names for actors: a user's email, an API key's name. */
async function actorNames(readStore: ReadStore, entries: AuditEntryDoc[]): Promise<Map<string, string>> {
  const ids = (kind: string) => [
    ...new Set(entries.filter((e) => e.actorKind === kind).map((e) => e.actor.slice(kind.length + 1))),
  ];
  const [users, keys] = await Promise.all([
    readStore.collection<UserDoc>(USERS).find({ id: { $in: ids('user') } }),
    readStore.collection<ApiKeyDoc>(COLLECTIONS.apiKeys).find({ id: { $in: ids('api_key') } }),
  ]);
  return new Map([
    ...users.map((u) => [`user:${u.id}`, u.email] as const),
    ...keys.map((k) => [`api_key:${k.id}`, String(k.name)] as const),
  ]);
}

/**
 * One page of the trail, newest first: the entries from the index, each with its event's data read
 * from the log (the record's stream, read once per page) as the rows of what changed.
 */
export async function loadTrail(
  deps: { readStore: ReadStore; eventStore: EventStore; rail?: Pick<Rail, 'networks'> },
  tenant: DashboardTenant,
  query: AuditQuery,
  errors: Partial<Record<keyof AuditQuery, string>>,
  zone: string,
): Promise<{ entries: AuditEntry[]; count: number }> {
  const index = deps.readStore.collection<AuditEntryDoc>(AUDIT_TRAIL);
  const filter = auditFilter(tenant, query, errors, zone);
  const [count, docs] = await Promise.all([
    index.count(filter),
    index.find(filter, { sort: { seq: -1 }, skip: (query.page - 1) * PAGE_SIZE, limit: PAGE_SIZE }),
  ]);
  const streams = new Map<string, Promise<RecordedEvent[]>>();
  for (const doc of docs)
    if (!streams.has(doc.streamId)) streams.set(doc.streamId, deps.eventStore.readStream(doc.streamId));
  const names = await actorNames(deps.readStore, docs);
  const read = (streamId: string) => {
    if (!streams.has(streamId)) streams.set(streamId, deps.eventStore.readStream(streamId));
    return streams.get(streamId)!;
  };
  const natives = deps.rail ? nativeCoinsOf(deps.rail) : new Map();
  const entries: AuditEntry[] = [];
  for (const doc of docs) {
    const events = await read(doc.streamId);
    const event = events[doc.revision];
    const earlier = events.slice(0, doc.revision).map((e) => ({ type: e.type, data: e.data }));
    // An invoice paid before `InvoicePaid` named the chain: the checkout session that paid it does.
    const payer =
      event?.type === 'InvoicePaid' && event.data.chainId === undefined ? event.data.checkoutSessionId : null;
    const related =
      typeof payer === 'string'
        ? (await read(`checkout_session-${payer}`)).filter(
            (e) => e.metadata.organizationId === event?.metadata.organizationId,
          )
        : [];
    entries.push({
      ...doc,
      actorName: names.get(doc.actor) ?? null,
      rows: event ? changeRows({ type: event.type, data: event.data }, earlier, related, natives) : [],
    });
  }
  return { entries, count };
}
