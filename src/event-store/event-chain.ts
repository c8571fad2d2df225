import { createHash } from 'node:crypto';
import type { NewEvent, RecordedEvent } from './event-store.ts';

/**
 * The hash chain over the global log: each event's `hash` is SHA-256 over the previous event's hash,
 * the digest of the event's own content and its tenant tag, so an edit, a removal, an insertion or a
 * reordering of events anywhere changes every hash after it, and a signed checkpoint of one hash
 * vouches for everything before it. The digest stands apart so a bundle can withhold another
 * tenant's content and still let the verifier recompute that event's link from its digest; the
 * tenant tag (whose event it is, salted with `previous` so one tenant's tags are unlinkable) stands
 * apart so the verifier can tell that a withheld event is not the bundle's own organization's.
 *
 * The content is what the writer knows before the append: id, stream, revision, type, data and
 * metadata. Not the position: KurrentDB assigns it at commit, after the hash is written; the order
 * is held by the links themselves.
 *
 * Chain v1 (events appended before the tenant tag existed, and the seal of a log written before the
 * chain) hashed `previous` and the digest only: those links stay as written and verify as v1.
 */

/** The `previous` of the log's first chained event when nothing comes before it. */
export const GENESIS_HASH = '0'.repeat(64);

/** One event's place in the chain: the hash it follows and its own (both lowercase hex SHA-256). */
export type ChainLink = { previous: string; hash: string };

/** What the hash covers; `data` and `metadata` as their JSON text (`JSON.stringify` of the values). */
export type ChainContent = {
  id: string;
  streamId: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
};

/**
 * The SHA-256 of one event's content. The parts are separated by newlines, which none of them holds
 * (the header and the data are JSON text, written without raw newlines), so no two contents hash the
 * same input.
 */
export function contentDigest(content: ChainContent): string {
  const header = JSON.stringify([content.id, content.streamId, content.revision, content.type]);
  // One string, one update: a third cheaper than an update per part (the append path pays it per event).
  return createHash('sha256').update(`${header}\n${content.data}\n${content.metadata}`).digest('hex');
}

/** Whose event it is, as the chain binds it: its metadata's organization and environment. */
export type ChainTenant = { organizationId: string; environment: string };

/** The tenant of an event's metadata ('' for what it lacks: a checkpoint is no organization's). */
export const tenantOf = (metadata: unknown): ChainTenant => {
  const { organizationId, environment } = (typeof metadata === 'object' && metadata !== null ? metadata : {}) as Record<
    string,
    unknown
  >;
  return {
    organizationId: typeof organizationId === 'string' ? organizationId : '',
    environment: typeof environment === 'string' ? environment : '',
  };
};

/** The tenant of an event as the chain covers it (its metadata's JSON text; none when it is not JSON). */
export const tenantOfContent = (content: Pick<ChainContent, 'metadata'>): ChainTenant => {
  try {
    return tenantOf(JSON.parse(content.metadata));
  } catch {
    return tenantOf(null);
  }
};

/**
 * The tenant tag of an event after `previous`: SHA-256 of "weir-tenant", `previous`, the
 * organization and the environment, newline-separated. Salted with `previous`, so the tags of one
 * tenant's events are all different and a bundle's withheld tags tell nothing of whose they are,
 * except to whoever knows the tenant (the verifier knows its own). Neither part holds a newline
 * (organization ids are generated, the environment is `test` or `live`).
 */
export const tenantTag = (previous: string, tenant: ChainTenant): string =>
  createHash('sha256')
    .update(`weir-tenant\n${previous}\n${tenant.organizationId}\n${tenant.environment}`)
    .digest('hex');

/** The hash of the event whose content has `digest` and whose tenant has `tag`, after `previous`. */
export const linkHash = (previous: string, digest: string, tag: string): string =>
  createHash('sha256').update(`${previous}\n${digest}\n${tag}`).digest('hex');

/** The hash of one event after `previous`. */
export const chainHash = (previous: string, content: ChainContent): string =>
  linkHash(previous, contentDigest(content), tenantTag(previous, tenantOfContent(content)));

/** Chain v1's hash of the event whose content has `digest`: no tenant tag (see the top of this file). */
export const linkHashV1 = (previous: string, digest: string): string =>
  createHash('sha256').update(`${previous}\n${digest}`).digest('hex');

/** Chain v1's hash of one event after `previous`. */
export const chainHashV1 = (previous: string, content: ChainContent): string =>
  linkHashV1(previous, contentDigest(content));

/** The content of an event as read back from the log (its values written again as JSON text). */
export const contentOf = (event: Omit<RecordedEvent, 'position'>): ChainContent => ({
  id: event.id,
  streamId: event.streamId,
  revision: event.revision,
  type: event.type,
  data: JSON.stringify(event.data),
  metadata: JSON.stringify(event.metadata),
});

/** The content of an event about to be appended at `revision` of `streamId`. */
export const newContentOf = (streamId: string, revision: number, event: NewEvent): ChainContent => ({
  id: event.id,
  streamId,
  revision,
  type: event.type,
  data: JSON.stringify(event.data),
  metadata: JSON.stringify(event.metadata),
});

/**
 * The link of an event with this content after `previous`. `tenant`: `tenantOf` the metadata the
 * content's text was written from (the append has it as an object: no parse of the text again).
 */
export const linkAfter = (previous: string, content: ChainContent, tenant: ChainTenant): ChainLink => ({
  previous,
  hash: linkHash(previous, contentDigest(content), tenantTag(previous, tenant)),
});

/**
 * The hash the chain would have after these events (in log order) starting from `previous`: how a
 * log written before the chain existed is sealed, so its first chained event vouches for it. It
 * stays v1: the seal covers events written before the chain, and the seals already recorded are v1.
 */
export function foldChain(previous: string, contents: Iterable<ChainContent>): string {
  let hash = previous;
  for (const content of contents) hash = chainHashV1(hash, content);
  return hash;
}

/** A hash as the chain writes it: 64 lowercase hex digits. */
export const isChainHash = (value: unknown): value is string =>
  typeof value === 'string' && /^[0-9a-f]{64}$/.test(value);
