import {
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
} from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/transport-node';

/** One entry of a bucket: its bytes and revision (the stream sequence of its last write). */
export type KvEntry = { value: Uint8Array; revision: number };

/**
 * A JetStream KV bucket, laid out as NATS KV lays one out (stream `KV_<name>`, subjects
 * `$KV.<name>.<key>`, one message kept per key, `max_age` as the entries' TTL), with the two
 * operations Weir needs: read the last value, and write with the revision the writer last saw
 * (the server refuses the write when it moved: the header `Nats-Expected-Last-Subject-Sequence`).
 * Built on @nats-io/jetstream directly: @nats-io/kv is not a dependency here.
 */
export type KvBucket = {
  get(key: string): Promise<KvEntry | null>;
  /** Writes when the key's revision is still `expected` (0: absent), or whatever it is when undefined. The new revision, or null when refused. */
  put(key: string, value: Uint8Array, expected?: number): Promise<number | null>;
};

const KEY = /^[-/_=.a-zA-Z0-9]+$/;

export async function openKvBucket(nc: NatsConnection, options: { name: string; ttlMs?: number }): Promise<KvBucket> {
  const stream = `KV_${options.name}`;
  const prefix = `$KV.${options.name}`;
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  const config = {
    name: stream,
    subjects: [`${prefix}.>`],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.New,
    max_msgs_per_subject: 1,
    allow_rollup_hdrs: true,
    deny_delete: true,
    ...(options.ttlMs === undefined
      ? {}
      : // The duplicate window may not outlast the entries.
        { max_age: nanos(options.ttlMs), duplicate_window: nanos(Math.min(options.ttlMs, 120_000)) }),
  };
  await jsm.streams.add(config).catch(async (error: unknown) => {
    // Made by another instance meanwhile (same config), or by an earlier run with another TTL.
    const existing = await jsm.streams.info(stream).catch(() => undefined);
    if (existing === undefined) throw error;
    if (existing.config.max_age !== (config.max_age ?? 0)) await jsm.streams.update(stream, config);
  });
  const subject = (key: string) => {
    if (!KEY.test(key)) throw new Error(`KV key ${JSON.stringify(key)}: letters, digits and -/_=. only`);
    return `${prefix}.${key}`;
  };
  return {
    async get(key) {
      const message = await jsm.streams.getMessage(stream, { last_by_subj: subject(key) });
      return message ? { value: message.data, revision: message.seq } : null;
    },
    async put(key, value, expected) {
      try {
        const ack = await js.publish(
          subject(key),
          value,
          expected === undefined ? {} : { expect: { lastSubjectSequence: expected } },
        );
        return ack.seq;
      } catch (error) {
        if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamWrongLastSequence) return null;
        throw error;
      }
    },
  };
}
