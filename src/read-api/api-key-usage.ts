import type { ReadDocument, ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';

/**
 * When each API key last authenticated a request, so a merchant can tell a key still in use from one
 * safe to delete. Kept in the read store beside the projections, not in the log: a use is no fact of
 * the business, and one event per request (or per minute per key) would swell the log and its audit.
 * A rebuild of the read models (`weir replay`) forgets it; uses after that show again.
 */
export const API_KEY_USAGE = 'api_key_usage';

export type ApiKeyUsageDoc = ReadDocument & { keyId: string; lastUsedAt: string };

/** A key's use is written at most this often (per process): `lastUsedAt` is exact to within it. */
export const USAGE_RECORDED_EVERY_MS = 60_000;

/** Past this many keys the oldest throttle entries go: a forgotten one only writes once more. */
const MAX_THROTTLED_KEYS = 10_000;

export type ApiKeyUsage = {
  /** Records that `keyId` authenticated a request now (a write at most once a minute per key). */
  used(keyId: string): Promise<void>;
  /** When each of `keyIds` was last used, by id; absent when never (as far as this read store knows). */
  lastUsed(keyIds: readonly string[]): Promise<Map<string, string>>;
};

export function createApiKeyUsage(readStore: ReadStore, clock: Clock): ApiKeyUsage {
  const usage = readStore.collection<ApiKeyUsageDoc>(API_KEY_USAGE);
  const written = new Map<string, number>();
  return {
    async used(keyId) {
      const now = clock.now();
      const last = written.get(keyId);
      if (last !== undefined && now - last < USAGE_RECORDED_EVERY_MS) return;
      written.delete(keyId);
      if (written.size >= MAX_THROTTLED_KEYS) written.delete(written.keys().next().value!);
      written.set(keyId, now);
      await usage.put({ _id: keyId, keyId, lastUsedAt: new Date(now).toISOString() });
    },
    async lastUsed(keyIds) {
      const found = await Promise.all(keyIds.map((id) => usage.get(id)));
      return new Map(found.flatMap((doc) => (doc ? [[doc.keyId, doc.lastUsedAt] as const] : [])));
    },
  };
}
