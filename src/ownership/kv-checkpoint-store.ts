import { parseCheckpoint, type CheckpointStore } from '../chain-ingest/evm/follower/checkpoint.ts';
import type { KvBucket } from './nats-kv.ts';
import type { Fence } from './ownership.ts';

/**
 * The followers' checkpoints in a NATS KV bucket instead of the data dir, so the instance that
 * takes a network's follower over resumes where the last owner got to (a checkpoint in a dead
 * instance's data dir would leave a gap of blocks nobody reads). Writes go through the owner's
 * fence: a stale follower cannot move the checkpoint back.
 */
export function createKvCheckpointStore(
  bucket: KvBucket,
  fence: Fence = (write) => write(),
  /** Read when the bucket has none yet: the data dir's checkpoint of a Weir that ran without NATS. */
  fallback?: CheckpointStore,
): CheckpointStore {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const key = (network: string) => `evm-follower.${network}`;
  return {
    async get(network) {
      const entry = await bucket.get(key(network));
      if (!entry) return fallback?.get(network);
      return parseCheckpoint(JSON.parse(decoder.decode(entry.value)), network, `NATS KV ${key(network)}`);
    },
    async set(network, checkpoint) {
      await fence(() => bucket.put(key(network), encoder.encode(JSON.stringify(checkpoint))));
    },
  };
}
