import { randomUUID } from 'node:crypto';
import { isChainHash } from '../event-store/event-chain.ts';
import type { EventStore, RecordedEvent } from '../event-store/event-store.ts';
import type { Clock } from '../shared/clock.ts';
import type { OperatorKey } from './operator-key.ts';

/**
 * Signed checkpoints of the chain: the head's position and hash, signed with the operator's key and
 * appended to the log itself (one stream, no tenant), so they travel with it (SQLite file or
 * KurrentDB) and are chained like every event. Publishing one elsewhere (`weir audit checkpoint`
 * prints the latest) is what makes rewriting the log before it detectable by someone who holds the
 * data directory, key included.
 */
export const CHECKPOINT_STREAM = 'audit_checkpoint-log';
export const CHECKPOINT_SIGNED = 'AuditCheckpointSigned';

export type Checkpoint = {
  /** The log position signed for, as a decimal string. */
  position: string;
  /** The chain hash at that position. */
  hash: string;
  /** When it was signed (ISO 8601), part of the signed message. */
  signedAt: string;
  /** The signer's ed25519 public key (base64url of its 32 bytes). */
  publicKey: string;
  /** ed25519 signature (base64url) of `checkpointMessage`. */
  signature: string;
};

/** A checkpoint as the log holds it: where its own event is (null: one published elsewhere, given to the verifier). */
export type LoggedCheckpoint = Checkpoint & { loggedAt: string | null };

/** What is signed: a versioned, line-separated text no field can break out of (decimal, hex, ISO time). */
export const checkpointMessage = (checkpoint: Pick<Checkpoint, 'position' | 'hash' | 'signedAt'>): string =>
  `weir audit checkpoint v1\n${checkpoint.position}\n${checkpoint.hash}\n${checkpoint.signedAt}`;

export function signCheckpoint(key: OperatorKey, head: { position: bigint; hash: string }, at: Date): Checkpoint {
  const unsigned = { position: String(head.position), hash: head.hash, signedAt: at.toISOString() };
  return { ...unsigned, publicKey: key.publicKey, signature: key.sign(checkpointMessage(unsigned)) };
}

const text = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

/** The checkpoint an event of the checkpoint stream holds, or null when its data is not one. */
export function checkpointOf(event: RecordedEvent): LoggedCheckpoint | null {
  const checkpoint = event.type === CHECKPOINT_SIGNED ? publishedCheckpointOf(event.data) : null;
  return checkpoint && { ...checkpoint, loggedAt: String(event.position) };
}

/** Every event of the checkpoint stream, in log order, with the checkpoint it holds (null: malformed). */
export async function readCheckpoints(
  eventStore: EventStore,
): Promise<{ event: RecordedEvent; checkpoint: LoggedCheckpoint | null }[]> {
  return (await eventStore.readStream(CHECKPOINT_STREAM)).map((event) => ({ event, checkpoint: checkpointOf(event) }));
}

/** A checkpoint published elsewhere, as `weir audit checkpoint` printed it; null when `value` is not one. */
export function publishedCheckpointOf(value: unknown): LoggedCheckpoint | null {
  if (typeof value !== 'object' || value === null) return null;
  const { position, hash, signedAt, publicKey, signature } = value as Record<string, unknown>;
  if (!text(position) || !/^\d+$/.test(position) || !isChainHash(hash)) return null;
  if (!text(signedAt) || !text(publicKey) || !text(signature)) return null;
  return { position, hash, signedAt, publicKey, signature, loggedAt: null };
}

export async function latestCheckpoint(eventStore: EventStore): Promise<LoggedCheckpoint | null> {
  const all = await readCheckpoints(eventStore);
  for (let index = all.length - 1; index >= 0; index -= 1) if (all[index]!.checkpoint) return all[index]!.checkpoint;
  return null;
}

/**
 * Signs the head and appends the checkpoint; null when there is nothing new to sign (an empty log,
 * or nothing appended since the last checkpoint but that checkpoint itself).
 */
export async function writeCheckpoint(deps: {
  eventStore: EventStore;
  key: OperatorKey;
  clock: Clock;
}): Promise<LoggedCheckpoint | null> {
  const { eventStore, key, clock } = deps;
  const head = await eventStore.chain.head();
  if (head === null) return null;
  const latest = await latestCheckpoint(eventStore);
  if (latest && (latest.loggedAt === String(head.position) || latest.position === String(head.position))) return null;
  const checkpoint = signCheckpoint(key, head, new Date(clock.now()));
  const written = await eventStore.append(
    CHECKPOINT_STREAM,
    [
      {
        id: randomUUID(),
        type: CHECKPOINT_SIGNED,
        data: checkpoint,
        metadata: {
          // The whole log's, no tenant's: tenant read models and the audit trail pass it by.
          organizationId: '',
          environment: 'live',
          actor: 'system:audit',
          correlationId: randomUUID(),
          occurredAt: checkpoint.signedAt,
        },
      },
    ],
    'any',
  );
  return { ...checkpoint, loggedAt: String(written.position) };
}

/**
 * Writes a checkpoint every `intervalMs` on the clock (when the log moved); a failure is logged and
 * the next round tries again. Returns the function that stops it, which signs the head one last
 * time, so a clean stop leaves at most what other work appends while it stops unsigned.
 */
export function scheduleCheckpoints(deps: {
  eventStore: EventStore;
  key: OperatorKey;
  clock: Clock;
  intervalMs: number;
  log: (line: string) => void;
  /** Called with each checkpoint written (the webhook-free way to publish it: a log line). */
  onWritten?: (checkpoint: LoggedCheckpoint) => void;
}): () => Promise<void> {
  const { clock, intervalMs, log } = deps;
  let cancel: (() => void) | null = null;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const sign = async () => {
    try {
      const written = await writeCheckpoint(deps);
      if (written) deps.onWritten?.(written);
    } catch (error) {
      log(`[audit] could not write a checkpoint: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  const arm = () => {
    if (stopped) return;
    cancel = clock.schedule(clock.now() + intervalMs, () => {
      running = sign().then(arm);
    });
  };
  arm();
  return async () => {
    stopped = true;
    cancel?.();
    await running;
    await sign();
  };
}
