import type { Environment, RecordedEvent } from '../event-store/event-store.ts';
import type { ReadDocument } from '../read-store/read-store.ts';
import { categoryOf, type Projection } from './projection.ts';

export const AUDIT_TRAIL = 'audit_trail';

/** Who an actor string names: `user:<id>`, `api_key:<id>`, `system:<part>`, the CLI, a payer or the first-run setup. */
export type ActorKind = 'user' | 'api_key' | 'system' | 'cli' | 'payer' | 'setup' | 'other';

/**
 * An index entry of the audit trail: where one event is in the log and what the filters need. Not
 * a second record of what happened: the page reads the event itself (its data) from the log.
 */
export type AuditEntryDoc = ReadDocument & {
  organizationId: string;
  /** The environments whose trail shows it: its own, or both for the organization's team and sign-ins. */
  environments: Environment[];
  /** The global log position, as a number: the trail's order. */
  seq: number;
  streamId: string;
  revision: number;
  recordType: string;
  recordId: string;
  type: string;
  actor: string;
  actorKind: ActorKind;
  /** Changes the merchant's side made are not `system`: the matcher, timers, dispatchers and payers are. */
  system: boolean;
  clientAddress: string | null;
  occurredAt: string;
};

/** Bookkeeping streams (request keys, number claims) and a session's heartbeats: no change of anyone's to show. */
const QUIET_CATEGORIES = new Set(['idempotency', 'invoice_number_claim', 'promotion_code_claim']);
const QUIET_TYPES = new Set(['DashboardSessionActive']);
/** Streams of the organization as a whole (its team and their sign-ins): shown in test and live alike. */
const ORGANIZATION_WIDE = new Set(['user', 'dashboard_session']);

export function actorKindOf(actor: string): ActorKind {
  const kind = actor.split(':', 1)[0];
  if (
    kind === 'user' ||
    kind === 'api_key' ||
    kind === 'system' ||
    kind === 'cli' ||
    kind === 'payer' ||
    kind === 'setup'
  )
    return kind;
  return 'other';
}

export function auditEntryOf(event: RecordedEvent): AuditEntryDoc | null {
  const { metadata } = event;
  const recordType = categoryOf(event.streamId);
  if (!metadata.organizationId || QUIET_CATEGORIES.has(recordType) || QUIET_TYPES.has(event.type)) return null;
  const actorKind = actorKindOf(metadata.actor);
  return {
    _id: event.id,
    organizationId: metadata.organizationId,
    environments: ORGANIZATION_WIDE.has(recordType) ? ['test', 'live'] : [metadata.environment],
    seq: Number(event.position),
    streamId: event.streamId,
    revision: event.revision,
    recordType,
    recordId: event.streamId.slice(recordType.length + 1),
    type: event.type,
    actor: metadata.actor,
    actorKind,
    system: actorKind === 'system' || actorKind === 'payer' || actorKind === 'other',
    clientAddress: metadata.clientAddress ?? null,
    occurredAt: metadata.occurredAt,
  };
}

/**
 * The audit trail's index, rebuilt from the log like every read model: one entry per event a tenant's
 * record got, so the page filters and pages through them without reading the whole log.
 */
export const auditTrailProjection: Projection = {
  name: 'audit_trail',
  collections: [AUDIT_TRAIL],
  async apply(event, store) {
    const entry = auditEntryOf(event);
    if (entry) await store.collection<AuditEntryDoc>(AUDIT_TRAIL).put(entry);
  },
};
