import { hash, randomUUID } from 'node:crypto';

export const newId = (): string => randomUUID();

/** Where a request's new ids come from: `newId`, or `seededIds` for a request that may be repeated. */
export type IdSource = () => string;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID_RE.test(value);

/** Weir's namespace for name-based ids (RFC 9562 v5). */
const WEIR_NAMESPACE = '3c8d2f4e-6a1b-5c7d-9e0f-1a2b3c4d5e6f';

/** The uuid variant digit (RFC 9562: binary 10xx) for each value of the two low bits of the hash's. */
const VARIANT_DIGITS = '89ab';

/** Namespace bytes followed by the name's UTF-8, reused from call to call (ids are hashed one at a time). */
let scratch = Buffer.alloc(256);
let scratchNamespace = '';

/**
 * A deterministic uuid (v5) for `name`: the same name always gives the same id. One SHA-1 of the
 * namespace's 16 bytes and the name's UTF-8, with the version and variant bits set. A replay
 * hashes an id per webhook delivery, so this writes into one reused buffer and uses the one-shot
 * `crypto.hash` rather than a Hash object per id.
 */
export function deterministicId(name: string, namespace: string = WEIR_NAMESPACE): string {
  const capacity = 16 + name.length * 3;
  if (capacity > scratch.length) {
    scratch = Buffer.alloc(capacity);
    scratchNamespace = '';
  }
  if (namespace !== scratchNamespace) {
    scratch.write(namespace.replace(/-/g, ''), 0, 16, 'hex');
    scratchNamespace = namespace;
  }
  const length = scratch.write(name, 16, 'utf8');
  const hex = hash('sha1', scratch.subarray(0, 16 + length), 'hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${VARIANT_DIGITS[parseInt(hex[16]!, 16) & 3]}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The same ids, in the same order, every time for one `seed`: a request with an Idempotency-Key
 * that is run again (its first run failed after writing) names the records it creates as the
 * first run did, so the creates find them and change nothing instead of writing them twice.
 */
export function seededIds(seed: string): IdSource {
  let next = 0;
  return () => deterministicId(`request-ids:${seed}:${next++}`);
}
