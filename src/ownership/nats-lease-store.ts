import type { NatsConnection } from '@nats-io/transport-node';
import type { LeaseStore, LeaseValue } from './lease-store.ts';
import { openKvBucket } from './nats-kv.ts';

/** Default bucket of Weir's leases. */
export const LEASE_BUCKET = 'weir-leases';

/**
 * Leases in a NATS JetStream KV bucket whose `max_age` is the TTL: an entry nobody renews is
 * removed by the server itself, so an owner that died (kill -9) loses its lease `ttlMs` after its
 * last renewal without any other instance deciding so.
 */
export async function createNatsLeaseStore(
  nc: NatsConnection,
  options: { ttlMs: number; bucket?: string },
): Promise<LeaseStore> {
  const bucket = await openKvBucket(nc, { name: options.bucket ?? LEASE_BUCKET, ttlMs: options.ttlMs });
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  return {
    ttlMs: options.ttlMs,
    async read(key) {
      const entry = await bucket.get(key);
      if (!entry) return null;
      const value = JSON.parse(decoder.decode(entry.value)) as LeaseValue;
      return { owner: value.owner, released: value.released, revision: entry.revision };
    },
    write: (key, value: LeaseValue, expected) => bucket.put(key, encoder.encode(JSON.stringify(value)), expected),
    async close() {},
  };
}
