import { createHash } from 'node:crypto';
import type { NewEvent, RecordedEvent } from './event-store.ts';

/**
 * The hash chain over the global log: each event's `hash` is SHA-256 over the previous event's hash
 * and the digest of the event's own content, so an edit, a removal, an insertion or a reordering of
 * events anywhere changes every hash after it, and a signed checkpoint of one hash vouches for
 * everything before it. The digest stands apart so a bundle can withhold another tenant's content
 * and still let the verifier recompute that event's link from its digest.
 *
 * The content is what the writer knows before the append: id, stream, revision, type, data and
 * metadata. Not the position: KurrentDB assigns it at commit, after the hash is written; the order
 * is held by the links themselves.
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

/** The hash of the event whose content has `digest`, after `previous`. */
export const linkHash = (previous: string, digest: string): string =>
  createHash('sha256').update(`${previous}\n${digest}`).digest('hex');

/** The hash of one event after `previous`. */
export const chainHash = (previous: string, content: ChainContent): string =>
  linkHash(previous, contentDigest(content));

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

/** The link of an event with this content after `previous`. */
export const linkAfter = (previous: string, content: ChainContent): ChainLink => ({
  previous,
  hash: chainHash(previous, content),
});

/**
 * The hash the chain would have after these events (in log order) starting from `previous`: how a
 * log written before the chain existed is sealed, so its first chained event vouches for it.
 */
export function foldChain(previous: string, contents: Iterable<ChainContent>): string {
  let hash = previous;
  for (const content of contents) hash = chainHash(hash, content);
  return hash;
}

/** A hash as the chain writes it: 64 lowercase hex digits. */
export const isChainHash = (value: unknown): value is string =>
  typeof value === 'string' && /^[0-9a-f]{64}$/.test(value);
