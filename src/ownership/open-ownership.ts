import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { CheckpointStore } from '../chain-ingest/evm/follower/checkpoint.ts';
import type { Clock } from '../shared/clock.ts';
import type { Log } from '../shared/logger.ts';
import type { Metrics } from '../shared/metrics.ts';
import { createKvCheckpointStore } from './kv-checkpoint-store.ts';
import { createNatsLeaseStore } from './nats-lease-store.ts';
import { openKvBucket } from './nats-kv.ts';
import { agreeOnKeys } from './shared-keys.ts';
import { createOwnership, type Fence, type Ownership } from './ownership.ts';

/** Default TTL of a work lease: how soon work whose owner died is taken over. */
export const DEFAULT_LEASE_TTL_MS = 5_000;

export type OpenedOwnership = {
  ownership: Ownership;
  /** The followers' checkpoints shared through NATS (fenced by their owner); null without NATS (the data dir's files). */
  sharedCheckpoints: ((fence: Fence, fallback?: CheckpointStore) => CheckpointStore) | null;
  /** With NATS: refuses (throws) when this instance's keys differ from the other instances' (see shared-keys.ts). */
  agreeOnKeys(keys: readonly { setting: string; fingerprint: string }[]): Promise<void>;
  /** Stops every owned work, releases the leases and closes the connection. */
  close(): Promise<void>;
};

/**
 * With NATS: leases in the `weir-leases` KV bucket, one per kind of work, and the followers'
 * checkpoints in `weir-checkpoints`, over a connection of their own. Without NATS (one process):
 * this instance owns every work.
 */
export async function openOwnership(deps: {
  natsUrl: string | undefined;
  leaseTtlMs?: number;
  clock: Clock;
  log: Log;
  metrics: Metrics;
}): Promise<OpenedOwnership> {
  const owner = `${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`;
  const natsUrl = deps.natsUrl?.trim();
  let nc: NatsConnection | null = null;
  let sharedCheckpoints: OpenedOwnership['sharedCheckpoints'] = null;
  let ownership: Ownership;
  if (natsUrl) {
    nc = await connect({ servers: natsUrl, name: `weir-ownership ${owner}`, maxReconnectAttempts: -1 });
    const store = await createNatsLeaseStore(nc, { ttlMs: deps.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS });
    const checkpoints = await openKvBucket(nc, { name: 'weir-checkpoints' });
    sharedCheckpoints = (fence, fallback) => createKvCheckpointStore(checkpoints, fence, fallback);
    ownership = createOwnership({ store, owner, clock: deps.clock, log: deps.log, metrics: deps.metrics });
  } else {
    ownership = createOwnership({ store: null, owner, clock: deps.clock, log: deps.log, metrics: deps.metrics });
  }
  return {
    ownership,
    sharedCheckpoints,
    async agreeOnKeys(keys) {
      if (nc) await agreeOnKeys(await openKvBucket(nc, { name: 'weir-instance-keys' }), keys);
    },
    async close() {
      await ownership.stop();
      await nc?.close();
    },
  };
}
