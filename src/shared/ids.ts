import { createHash, randomUUID } from 'node:crypto';

export const newId = (): string => randomUUID();

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID_RE.test(value);

/** Weir's namespace for name-based ids (RFC 9562 v5). */
const WEIR_NAMESPACE = '3c8d2f4e-6a1b-5c7d-9e0f-1a2b3c4d5e6f';

/** A deterministic uuid (v5) for `name`: the same name always gives the same id. */
const namespaceBytes = new Map<string, Buffer>();

export function deterministicId(name: string, namespace: string = WEIR_NAMESPACE): string {
  let ns = namespaceBytes.get(namespace);
  if (!ns) { ns = Buffer.from(namespace.replace(/-/g, ''), 'hex'); namespaceBytes.set(namespace, ns); }
  const hash = createHash('sha1').update(ns).update(name).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
