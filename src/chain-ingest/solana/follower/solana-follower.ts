import type { Bus } from '../../../bus/bus.ts';
import {
  encodeChainMessage,
  type ChainFinalMessage,
  type ChainReorgMessage,
  type ChainTransferMessage,
} from '../../chain-messages.ts';
import type { SolanaNetwork } from '../define-network.ts';
import type { SolanaJsonRpc } from './json-rpc.ts';
import { referencePayments, slotBlockHash } from './solana-transfers.ts';
import type { SolanaReferences, WatchedReference } from './solana-references.ts';

export type SolanaFollowerStatus = {
  network: string;
  running: boolean;
  /** References polled (open sessions, and closed ones within the grace period). */
  references: number;
  /** Signatures published at `confirmed` whose `finalized` (or withdrawal) is still owed. */
  pending: number;
  published: { transfer: number; reorg: number; final: number };
  rounds: number;
  lastError: string | null;
  /** RPC calls and HTTP requests made so far. */
  rpc: { calls: number; requests: number };
};

export type SolanaFollower = {
  start(): Promise<void>;
  stop(): Promise<void>;
  status(): SolanaFollowerStatus;
  /** One polling round now (tests and the bench drive it; the loop calls it on its own). */
  poll(): Promise<void>;
  /** Owes `signature` (published at `confirmed` by recovery) its `final` or withdrawal, as for its own. */
  adopt(signature: string, slot: bigint, reference: string): void;
};

type Poll = { until: string | null; intervalMs: number; nextAt: number };
type Owed = { slot: bigint; reference: string };

/**
 * Follows a Solana network by reference, as Solana Pay prescribes: each round asks
 * `getSignaturesForAddress(reference, { until: last seen })` at `confirmed` for every reference
 * due (one JSON-RPC batch for all of them), reads each new transaction (`getTransaction`, json),
 * checks it as `validateTransfer` does and publishes a `transfer` per payment, keyed by
 * (signature, instruction index). Signatures published are then asked for with
 * `getSignatureStatuses` (batched): at `finalized` their slot's `final` is published; one the
 * node no longer knows once the cluster finalized past its slot is withdrawn (`reorg`).
 *
 * A reference with nothing new backs off (×1.5 per empty poll, up to `maxPollIntervalMs`), so an
 * idle session costs a few calls a minute; a closed session's reference is polled for
 * `closedGraceMs` more (late and overpayments), then forgotten. Nothing is checkpointed: after a
 * restart every reference is read from its start again and what was published is published again
 * (the bus and the matcher drop the repeats).
 */
export function createSolanaFollower(deps: {
  network: SolanaNetwork;
  rpc: SolanaJsonRpc;
  bus: Bus;
  references: SolanaReferences;
  pollIntervalMs: number;
  maxPollIntervalMs?: number;
  closedGraceMs?: number;
  now?: () => number;
  /** Called after each round that read every reference due, with `readClock()` taken at its start. */
  onRound?: (startedAt: number) => void;
  /** The clock rounds are dated on for `onRound` (Weir's clock; `now` unless given). */
  readClock?: () => number;
  log?: (line: string) => void;
}): SolanaFollower {
  const { network, rpc, bus, references } = deps;
  const now = deps.now ?? Date.now;
  const log = deps.log ?? ((line: string) => console.warn(`[solana ${network.network}] ${line}`));
  const maxInterval = deps.maxPollIntervalMs ?? Math.max(deps.pollIntervalMs, 15_000);
  const closedGraceMs = deps.closedGraceMs ?? 24 * 3600_000;
  const seen = network.commitment.seen;
  const polls = new Map<string, Poll>();
  const owed = new Map<string, Owed>();
  const published = { transfer: 0, reorg: 0, final: 0 };
  let rounds = 0;
  let lastError: string | null = null;
  let running = false;
  let timer: NodeJS.Timeout | null = null;
  let current: Promise<void> | null = null;

  const publish = async (message: ChainTransferMessage | ChainFinalMessage | ChainReorgMessage, key?: string) => {
    const encoded = encodeChainMessage(message);
    // A slot's `final` (or withdrawal) goes once per signature: another payment of the same slot
    // found later must not be dropped by the bus as a duplicate of the first.
    await bus.publish(encoded.subject, encoded.data, {
      messageId: key === undefined ? encoded.messageId : `${encoded.messageId}:${key}`,
    });
    published[message.type] += 1;
  };

  const finalOf = (slot: bigint): ChainFinalMessage => ({
    type: 'final',
    network: network.network,
    chainId: network.chainId,
    blockNumber: Number(slot),
    blockHash: slotBlockHash(slot),
    observedAt: new Date(now()).toISOString(),
  });

  /** New confirmed signatures of the references due, newest first per reference. */
  async function pollReferences(due: WatchedReference[]): Promise<void> {
    const answers = await Promise.all(
      due.map(async (watched) => {
        const poll = polls.get(watched.reference)!;
        const options = { commitment: seen, limit: 1000, ...(poll.until ? { until: poll.until } : {}) };
        try {
          const list = await rpc.call<{ signature: string; err: unknown; confirmationStatus: string | null }[]>(
            'getSignaturesForAddress',
            [watched.reference, options],
          );
          return { watched, poll, list };
        } catch (error) {
          lastError = error instanceof Error ? error.message : String(error);
          return { watched, poll, list: null };
        }
      }),
    );
    await Promise.all(
      answers.map(async ({ watched, poll, list }) => {
        if (list === null) return;
        let failed = false;
        // Oldest first, so a session sees its payments in the order they were made.
        for (const entry of [...list].reverse()) {
          if (entry.err !== null && entry.err !== undefined) continue;
          if (!(await take(watched, entry.signature, entry.confirmationStatus === 'finalized'))) failed = true;
        }
        const newest = list[0]?.signature;
        if (!failed && newest !== undefined) poll.until = newest;
        poll.intervalMs = list.length > 0 ? deps.pollIntervalMs : Math.min(maxInterval, poll.intervalMs * 1.5);
        poll.nextAt = now() + poll.intervalMs;
      }),
    );
  }

  /** Reads one transaction and publishes its payments to `watched`; false when it should be read again. */
  async function take(watched: WatchedReference, signature: string, finalized: boolean): Promise<boolean> {
    let answer: unknown;
    try {
      answer = await rpc.call('getTransaction', [
        signature,
        { encoding: 'json', commitment: seen, maxSupportedTransactionVersion: 0 },
      ]);
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
      return false;
    }
    if (answer === null) return false;
    const found = await referencePayments(network, answer, watched, new Date(now()).toISOString());
    if (!found.ok) {
      log(`${signature} names reference ${watched.reference} but pays nothing there: ${found.check.message}`);
      return true;
    }
    for (const message of found.messages) await publish(message);
    if (found.messages.length === 0) return true;
    if (finalized) await publish(finalOf(found.slot), signature);
    else owed.set(signature, { slot: found.slot, reference: watched.reference });
    return true;
  }

  /** Finality (or withdrawal) of what was published at `confirmed`. */
  async function settle(): Promise<void> {
    const signatures = [...owed.keys()];
    if (signatures.length === 0) return;
    const statuses: ({ confirmationStatus: string | null; err: unknown } | null)[] = [];
    for (let i = 0; i < signatures.length; i += 256) {
      const answer = await rpc.call<{ value: ({ confirmationStatus: string | null; err: unknown } | null)[] }>(
        'getSignatureStatuses',
        [signatures.slice(i, i + 256), { searchTransactionHistory: true }],
      );
      statuses.push(...answer.value);
    }
    let finalizedSlot: bigint | null = null;
    for (const [i, signature] of signatures.entries()) {
      const status = statuses[i];
      const entry = owed.get(signature)!;
      if (status?.confirmationStatus === network.commitment.final) {
        await publish(finalOf(entry.slot), signature);
        owed.delete(signature);
        continue;
      }
      if (status !== null && status !== undefined) continue;
      // Unknown to the node: gone only once the cluster has finalized its slot without it.
      finalizedSlot ??= BigInt(await rpc.call<number | bigint>('getSlot', [{ commitment: 'finalized' }]));
      if (finalizedSlot < entry.slot) continue;
      await publish(
        {
          type: 'reorg',
          network: network.network,
          chainId: network.chainId,
          removedBlocks: [{ number: Number(entry.slot), hash: slotBlockHash(entry.slot) }],
          observedAt: new Date(now()).toISOString(),
        },
        signature,
      );
      owed.delete(signature);
      log(`${signature} (slot ${entry.slot}) was seen at ${seen} but the cluster finalized past it: withdrawn`);
      // Its reference is read again from the start: the payment may land again in another slot.
      const poll = polls.get(entry.reference);
      if (poll) poll.until = null;
    }
  }

  async function poll(): Promise<void> {
    rounds += 1;
    const at = now();
    const due: WatchedReference[] = [];
    for (const watched of references.of(network.network)) {
      if (watched.closedAt !== null && at - watched.closedAt > closedGraceMs) {
        references.forget(network.network, watched.reference);
        polls.delete(watched.reference);
        continue;
      }
      const state = polls.get(watched.reference) ?? { until: null, intervalMs: deps.pollIntervalMs, nextAt: at };
      polls.set(watched.reference, state);
      if (state.nextAt <= at) due.push(watched);
    }
    const startedAt = (deps.readClock ?? now)();
    try {
      await pollReferences(due);
      await settle();
      deps.onRound?.(startedAt);
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
  }

  const schedule = () => {
    if (!running) return;
    timer = setTimeout(() => {
      current = poll().finally(() => {
        current = null;
        schedule();
      });
    }, deps.pollIntervalMs);
  };

  return {
    async start() {
      if (running) return;
      running = true;
      current = poll().finally(() => {
        current = null;
        schedule();
      });
    },
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      timer = null;
      await current;
    },
    poll,
    adopt(signature, slot, reference) {
      if (!owed.has(signature)) owed.set(signature, { slot, reference });
    },
    status: () => ({
      network: network.network,
      running,
      references: references.of(network.network).length,
      pending: owed.size,
      published: { ...published },
      rounds,
      lastError,
      rpc: rpc.counts(),
    }),
  };
}
