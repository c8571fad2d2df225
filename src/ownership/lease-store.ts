import type { Clock } from '../shared/clock.ts';

/** What a lease key holds: its owner, or a mark that the owner let go. */
export type LeaseValue = { owner: string; released: boolean };

/** A lease key's current value and revision (the revision is the fencing token). */
export type LeaseRecord = LeaseValue & { revision: number };

/**
 * The lease port: a key-value bucket whose entries expire `ttlMs` after their last write, and whose
 * writes are checked against the revision the writer last saw. NATS JetStream KV in production;
 * in memory (on an injected clock) for tests.
 */
export type LeaseStore = {
  readonly ttlMs: number;
  /** The key's current record; null when it was never written or has expired. */
  read(key: string): Promise<LeaseRecord | null>;
  /**
   * Writes `value` if the key's revision is still `expected` (0: absent or expired). Resolves with
   * the new revision, or null when the revision moved (someone else wrote): the write is refused.
   */
  write(key: string, value: LeaseValue, expected: number): Promise<number | null>;
  close(): Promise<void>;
};

/**
 * Leases in memory, expiring on the injected clock: the lease logic tested without a server and
 * without sleeping. One store shared by every "instance" of a test.
 */
export function createMemoryLeaseStore(options: { clock: Pick<Clock, 'now'>; ttlMs: number }): LeaseStore & {
  /** Every write refused so far (a stale owner fenced off), for tests. */
  refused(): number;
} {
  const { clock, ttlMs } = options;
  const entries = new Map<string, LeaseValue & { revision: number; writtenAt: number }>();
  let lastRevision = 0;
  let refusals = 0;
  const live = (key: string) => {
    const entry = entries.get(key);
    if (entry && clock.now() - entry.writtenAt >= ttlMs) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  };
  return {
    ttlMs,
    async read(key) {
      const entry = live(key);
      return entry ? { owner: entry.owner, released: entry.released, revision: entry.revision } : null;
    },
    async write(key, value, expected) {
      if ((live(key)?.revision ?? 0) !== expected) {
        refusals += 1;
        return null;
      }
      lastRevision += 1;
      entries.set(key, { ...value, revision: lastRevision, writtenAt: clock.now() });
      return lastRevision;
    },
    async close() {},
    refused: () => refusals,
  };
}
