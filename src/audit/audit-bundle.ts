import { z } from 'zod';
import {
  type ChainContent,
  type ChainLink,
  type ChainTenant,
  contentDigest,
  linkHash,
  tenantOfContent,
  tenantTag,
} from '../event-store/event-chain.ts';
import type { EventStore } from '../event-store/event-store.ts';
import { CHECKPOINT_STREAM } from './checkpoints.ts';

/**
 * An organization's audit bundle: one NDJSON file an auditor checks offline (`weir audit verify
 * --bundle`). The chain runs over the whole log, every tenant's events mixed, so the bundle holds
 * every position: the organization's own events (and the checkpoint events, which are no tenant's)
 * in full with their links, every other event as its position, content digest, tenant tag and link
 * only. Every link is recomputed (own events from their content, withheld ones from their digest
 * and tag), so an edit of an own event cannot be hidden by rewriting the withheld links after it,
 * and the tag tells the verifier that no withheld event is the organization's own.
 *
 * Line 1 is the header; then one line per log position, in log order:
 * - `{position, id, streamId, revision, type, data, metadata, previous, hash}` (as `GET /api/v1/events`)
 * - `{position, withheld: true, digest, tenant, previous, hash}`; no `tenant` when the event's link
 *   is chain v1 (appended before the tenant tag), and in a version-1 bundle (exported before it)
 */
export const BUNDLE_FORMAT = 'weir-audit-bundle';
export const BUNDLE_VERSION = 2;

const Hash = z.string().regex(/^[0-9a-f]{64}$/);
const Position = z.string().regex(/^(0|[1-9][0-9]*)$/);

export const BundleHeaderSchema = z.object({
  format: z.literal(BUNDLE_FORMAT),
  /** 1: exported before withheld lines carried their tenant tag (still read). */
  version: z.union([z.literal(1), z.literal(BUNDLE_VERSION)]),
  organizationId: z.string().min(1),
  /** null: both environments of the organization. */
  environment: z.enum(['test', 'live']).nullable(),
  exportedAt: z.string(),
  /** The log's head when the export began: the bundle's last line is at this position, with this hash. */
  head: z.object({ position: Position, hash: Hash }).nullable(),
  /** Where the chain starts (see ChainStart); null when the log holds no record of it. */
  chainStart: z.object({ unchainedThrough: Position.nullable(), seal: Hash }).nullable(),
  /** The operator's public key(s) when exported (base64url ed25519): what the checkpoints are checked against by default. */
  publicKeys: z.array(z.string().min(1)),
});
export type BundleHeader = z.output<typeof BundleHeaderSchema>;

export const BundleEventSchema = z.object({
  position: Position,
  id: z.string(),
  streamId: z.string(),
  revision: z.number().int(),
  type: z.string(),
  data: z.string(),
  metadata: z.string(),
  previous: Hash.nullable(),
  hash: Hash.nullable(),
});
export const BundleWithheldSchema = z.object({
  position: Position,
  withheld: z.literal(true),
  // Required: a withheld link whose digest could be left out would be taken on trust.
  digest: Hash,
  /** The tenant tag its link hashes (chain v2); absent for a v1 link. */
  tenant: Hash.optional(),
  previous: Hash.nullable(),
  hash: Hash.nullable(),
});

export type BundleScope = { organizationId: string; environment: 'test' | 'live' | null };

/** Whether the bundle may hold this event's content: the organization's own, or a checkpoint (no tenant's). */
export function belongsToBundle(scope: BundleScope, content: Pick<ChainContent, 'streamId' | 'metadata'>): boolean {
  return content.streamId === CHECKPOINT_STREAM || isOwn(scope, tenantOfContent(content));
}

const isOwn = (scope: BundleScope, { organizationId, environment }: ChainTenant): boolean =>
  organizationId === scope.organizationId && (scope.environment === null || environment === scope.environment);

/** The tenant tags the bundle's own events have after `previous`: a withheld line must carry none of them. */
export const ownTags = (scope: BundleScope, previous: string): string[] =>
  (scope.environment === null ? ['test', 'live'] : [scope.environment]).map((environment) =>
    tenantTag(previous, { organizationId: scope.organizationId, environment }),
  );

export type BundleCounts = { own: number; checkpoints: number; withheld: number };

const linkFields = (link: ChainLink | null) => ({ previous: link?.previous ?? null, hash: link?.hash ?? null });

/** A withheld event's digest, and its tenant tag when its link hashes one (a v1 link does not: no tag). */
const withheldFields = (content: ChainContent, link: ChainLink | null): { digest: string; tenant?: string } => {
  const digest = contentDigest(content);
  if (link === null) return { digest };
  const tenant = tenantTag(link.previous, tenantOfContent(content));
  return linkHash(link.previous, digest, tenant) === link.hash ? { digest, tenant } : { digest };
};

const BATCH = 1000;

/**
 * The bundle's lines (each ending in a newline), read from the log a batch at a time up to the head
 * as it was when the export began: memory stays flat whatever the log's size.
 */
export async function* auditBundleLines(deps: {
  eventStore: EventStore;
  scope: BundleScope;
  publicKeys: readonly string[];
  now: () => number;
  /** Told how many events of each kind every batch wrote: the organization's, checkpoints, withheld. */
  onWritten?: (counts: BundleCounts) => void;
}): AsyncGenerator<string> {
  const { eventStore, scope } = deps;
  const head = await eventStore.chain.head();
  const start = await eventStore.chain.start();
  const header: BundleHeader = {
    format: BUNDLE_FORMAT,
    version: BUNDLE_VERSION,
    organizationId: scope.organizationId,
    environment: scope.environment,
    exportedAt: new Date(deps.now()).toISOString(),
    head: head && { position: String(head.position), hash: head.hash },
    chainStart: start && {
      unchainedThrough: start.unchainedThrough === null ? null : String(start.unchainedThrough),
      seal: start.seal,
    },
    publicKeys: [...deps.publicKeys],
  };
  yield `${JSON.stringify(header)}\n`;
  if (head === null) return;
  for (let after: bigint | null = null; after === null || after < head.position; ) {
    const page = await eventStore.chain.read(after, BATCH);
    if (page.length === 0) return;
    let lines = '';
    const counts: BundleCounts = { own: 0, checkpoints: 0, withheld: 0 };
    for (const { position, content, link } of page) {
      if (position > head.position) break;
      const held = belongsToBundle(scope, content);
      const line = held
        ? { position: String(position), ...content, ...linkFields(link) }
        : { position: String(position), withheld: true, ...withheldFields(content, link), ...linkFields(link) };
      counts[!held ? 'withheld' : content.streamId === CHECKPOINT_STREAM ? 'checkpoints' : 'own'] += 1;
      lines += `${JSON.stringify(line)}\n`;
    }
    deps.onWritten?.(counts);
    yield lines;
    after = page.at(-1)!.position;
  }
}
