import type { Tracer } from '@opentelemetry/api';
import type { Metrics } from '../../../shared/metrics.ts';
import { createPollingProcessor, type Processor } from '../../../processing/processor.ts';
import { createSystemClock } from '../../../shared/clock.ts';
import type { Log } from '../../../shared/logger.ts';
import { inSpan, noTracer } from '../../../shared/tracing.ts';
import type { Bus } from '../../../bus/bus.ts';
import {
  encodeChainMessage,
  type ChainFinalMessage,
  type ChainReorgMessage,
  type ChainTransferMessage,
} from '../../chain-messages.ts';
import { commitmentReached, type SolanaNetwork } from '../define-network.ts';
import { SOLANA_RPC_BATCH_SIZE, type SolanaJsonRpc } from './json-rpc.ts';
import {
  createMentionsSocket,
  type Mention,
  type MentionsSocket,
  type MentionsSocketEvent,
} from './mentions-socket.ts';
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
  /** The `logsSubscribe` socket, when the network has a WebSocket endpoint. */
  socket: { connected: boolean; subscribed: number; notifications: number; reconnects: number } | null;
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

/**
 * `readAt`: when (on `readClock`) the round that last read the reference through began; null before one did.
 * `resume`: set while a backlog deeper than a round's pages is read: the next round goes on below
 * `before` (down to `until`), and `newest` becomes `until` once the gap is closed.
 */
type Poll = {
  until: string | null;
  intervalMs: number;
  nextAt: number;
  readAt: number | null;
  resume: { before: string; newest: string } | null;
  /** Rounds in a row its read failed (a call refused, a transaction not returned): it holds the network's read-through back. */
  failures: number;
  /** Wake-ups so far: one that comes while the reference is read keeps it due for the next round. */
  wakes: number;
};
/**
 * How long a `logsNotification` may take to reach us after its transaction was confirmed: a live
 * subscription vouches for the chain only up to this long before a round began.
 */
const NOTIFICATION_SLACK_MS = 5_000;
/** A reference failing every round is logged at its first failure and every this many after, not each round. */
const FAILURE_LOG_EVERY = 30;
type SignatureEntry = { signature: string; err: unknown; confirmationStatus: string | null };
type Owed = { slot: bigint; reference: string };

/**
 * Follows a Solana network by reference, as Solana Pay prescribes: each round asks
 * `getSignaturesForAddress(reference, { until: last seen })` at `confirmed` for every reference
 * due (one JSON-RPC batch for all of them; a full page is followed by the next, `before` its
 * oldest, so a burst of more than a page between two polls skips nothing), reads each new transaction (`getTransaction`, json),
 * checks it as `validateTransfer` does and publishes a `transfer` per payment, keyed by
 * (signature, instruction index). Signatures published are then asked for with
 * `getSignatureStatuses` (batched): at `finalized` a `final` of their slot naming them is
 * published (a withdrawal if they are final as failed); one the node no longer knows once the
 * cluster finalized past its slot is withdrawn (`reorg`, naming it too).
 *
 * A reference with nothing new backs off (×1.5 per empty poll, up to `maxPollIntervalMs`), so an
 * idle session costs a few calls a minute; a closed session's reference is polled for a grace
 * more (late and overpayments; `references.pastGrace`, the rule Weir's start applies too), then
 * forgotten. Nothing is checkpointed: after a restart every reference is read from its start
 * again and what was published is published again (the bus and the matcher drop the repeats).
 *
 * With `wsUrl` (the network's `ws://`/`wss://` endpoint) each reference is also subscribed to
 * (`logsSubscribe` by mention at the `seen` commitment, and at `final` while it has a payment owed
 * its finality): a notification makes the reference due and starts a round at once. It is only a
 * wake-up: the round reads and checks the transaction as a poll does. While a reference's
 * subscription is live an idle reference is polled every `socketIdlePollMs` at most (the safety net).
 * An open session's reference is also read in the first round at or after its `expiresAt`, and the
 * chain is not said read past that instant before: its expiry never rests on a notification that
 * may have been dropped (one extra call per session, in the round's batch).
 */
export function createSolanaFollower(deps: {
  network: SolanaNetwork;
  rpc: SolanaJsonRpc;
  bus: Bus;
  references: SolanaReferences;
  pollIntervalMs: number;
  maxPollIntervalMs?: number;
  now?: () => number;
  /**
   * Called after each round, with the `readClock()` time the chain is read through for every open
   * reference (the start of the round that last read the one read longest ago; see readThrough),
   * null while one was never read.
   */
  onRound?: (readThrough: number | null) => void;
  /**
   * Weir's clock (`now` unless given): rounds are dated on it for `onRound`, and a closed reference's
   * grace is measured on it, as its `closedAt` (from the log) is.
   */
  readClock?: () => number;
  log?: Log;
  /** Each round that reads references is a span ('follower round', with the network and how many). */
  tracer?: Tracer;
  /** Where its processor counts failed passes (`weir_processor_failures_total`, `weir_processor_failing`). */
  metrics?: Metrics;
  /** The network's PubSub endpoint; polling alone without it. */
  wsUrl?: string;
  /** How often an idle reference with a live subscription is still polled (60 s unless given). */
  socketIdlePollMs?: number;
  /** Signatures asked for per `getSignaturesForAddress` call (1000, the most a node answers, unless given). */
  pageSize?: number;
  /** Pages read per reference in one round (10 unless given); a deeper backlog is read on over the next rounds. */
  maxPages?: number;
  /** Backoff of the socket's reconnection (tests shorten it). */
  socketBackoffMs?: { min: number; max: number };
  /** Socket events, for tests to wait on. */
  onSocketEvent?: (event: MentionsSocketEvent) => void;
}): SolanaFollower {
  const { network, rpc, bus, references } = deps;
  const now = deps.now ?? Date.now;
  const readClock = deps.readClock ?? now;
  const log: Log = deps.log ?? ((line: string) => console.warn(`[solana ${network.network}] ${line}`));
  const maxInterval = deps.maxPollIntervalMs ?? Math.max(deps.pollIntervalMs, 15_000);
  const { seen, final } = network.commitment;
  const polls = new Map<string, Poll>();
  const owed = new Map<string, Owed>();
  const published = { transfer: 0, reorg: 0, final: 0 };
  let rounds = 0;
  let lastError: string | null = null;
  let running = false;
  // Rounds run on the processor, on real time as the RPC node's blocks do (`now` may be a test's clock).
  const timers = createSystemClock();
  let loop: Processor | null = null;
  let socket: MentionsSocket | null = null;
  const socketIdlePollMs = deps.socketIdlePollMs ?? 60_000;
  const pageSize = deps.pageSize ?? 1000;
  const maxPages = deps.maxPages ?? 10;

  /** Makes `reference` due and starts a round now (or right after the current one). */
  const wake = (reference: string) => {
    const poll = polls.get(reference);
    if (poll) {
      poll.nextAt = 0;
      poll.wakes += 1;
    }
    if (running) void loop?.poke();
  };

  const publish = async (message: ChainTransferMessage | ChainFinalMessage | ChainReorgMessage) => {
    const encoded = encodeChainMessage(message);
    await bus.publish(encoded.subject, encoded.data, { messageId: encoded.messageId });
    published[message.type] += 1;
  };

  // Finality is learnt per signature and a slot holds many: a `final` (or withdrawal) names its
  // signature, so it settles that transaction's transfers only, and is another message than the
  // next signature's of the same slot.
  const finalOf = (slot: bigint, signature: string): ChainFinalMessage => ({
    type: 'final',
    network: network.network,
    chainId: network.chainId,
    blockNumber: Number(slot),
    blockHash: slotBlockHash(slot),
    transactionHash: signature,
    observedAt: new Date(now()).toISOString(),
  });

  /** The transfers of `signature` (seen in `slot`) are gone: the cluster is final past it without them. */
  const withdrawalOf = (slot: bigint, signature: string): ChainReorgMessage => ({
    type: 'reorg',
    network: network.network,
    chainId: network.chainId,
    removedBlocks: [{ number: Number(slot), hash: slotBlockHash(slot) }],
    final: true,
    transactionHash: signature,
    observedAt: new Date(now()).toISOString(),
  });

  /**
   * The signatures of `reference` newer than `until` (below `before`), newest first: page after
   * page (`before` the oldest so far) while pages come full, at most `maxPages`; `complete` says
   * whether `until` (or the reference's first signature) was reached. A single page would skip
   * what lies below it when more than a page landed between two polls (spam, a long downtime).
   */
  async function signaturesOf(
    reference: string,
    until: string | null,
    before: string | null,
  ): Promise<{ list: SignatureEntry[]; complete: boolean }> {
    const list: SignatureEntry[] = [];
    let cursor = before;
    for (let page = 0; page < maxPages; page++) {
      const options = {
        commitment: seen,
        limit: pageSize,
        ...(until ? { until } : {}),
        ...(cursor ? { before: cursor } : {}),
      };
      const answer = await rpc.call<SignatureEntry[]>('getSignaturesForAddress', [reference, options]);
      list.push(...answer);
      if (answer.length < pageSize) return { list, complete: true };
      cursor = answer[answer.length - 1]!.signature;
    }
    return { list, complete: false };
  }

  /** New confirmed signatures of the references due, newest first per reference. */
  async function pollReferences(due: WatchedReference[], startedAt: number): Promise<void> {
    const answers = await Promise.all(
      due.map(async (watched) => {
        const poll = polls.get(watched.reference)!;
        const wakes = poll.wakes;
        try {
          const read = await signaturesOf(watched.reference, poll.until, poll.resume?.before ?? null);
          return { watched, poll, wakes, ...read, problem: null };
        } catch (error) {
          lastError = error instanceof Error ? error.message : String(error);
          return {
            watched,
            poll,
            wakes,
            list: null,
            complete: false,
            problem: `getSignaturesForAddress: ${lastError}`,
          };
        }
      }),
    );
    await Promise.all(
      answers.map(async ({ watched, poll, wakes, list, complete, problem }) => {
        if (list === null) return unread(watched, poll, problem);
        let failed: string | null = null;
        // Oldest first, so a session sees its payments in the order they were made; read a batch
        // at a time (one JSON-RPC request each), as a reference named by many transactions would
        // otherwise hold the round for a round trip per transaction.
        const landed = [...list].reverse().filter((entry) => entry.err === null || entry.err === undefined);
        for (let i = 0; i < landed.length; i += SOLANA_RPC_BATCH_SIZE) {
          const chunk = landed.slice(i, i + SOLANA_RPC_BATCH_SIZE);
          const read = await Promise.all(chunk.map((entry) => transactionOf(entry.signature)));
          for (const [j, entry] of chunk.entries()) {
            const problem = await take(
              watched,
              entry.signature,
              read[j],
              commitmentReached(entry.confirmationStatus, final),
            );
            if (problem !== null) failed = `getTransaction ${entry.signature}: ${problem}`;
          }
        }
        unread(watched, poll, failed);
        const newest = poll.resume?.newest ?? list[0]?.signature;
        if (!failed && complete) {
          if (newest !== undefined) poll.until = newest;
          poll.resume = null;
          poll.readAt = startedAt;
        } else if (!failed && newest !== undefined) {
          // A backlog deeper than a round: the next round reads on below what this one read.
          poll.resume = { before: list.at(-1)!.signature, newest };
        }
        poll.intervalMs = list.length > 0 ? deps.pollIntervalMs : Math.min(maxInterval, poll.intervalMs * 1.5);
        const live = list.length === 0 && socket?.subscribed({ address: watched.reference, commitment: seen });
        // Woken while read: what the notification announced may have landed after the answer.
        poll.nextAt =
          poll.resume || poll.wakes !== wakes
            ? 0
            : now() + (live ? Math.max(poll.intervalMs, socketIdlePollMs) : poll.intervalMs);
      }),
    );
  }

  /**
   * Counts a failed read of `watched` (`problem`), or clears the count when it was read. A reference
   * whose reads keep failing holds the network's read-through (and so expiries) back: it is logged,
   * naming it and the error, so an operator sees why.
   */
  function unread(watched: WatchedReference, poll: Poll, problem: string | null): void {
    if (problem === null) {
      poll.failures = 0;
      return;
    }
    poll.failures += 1;
    if (poll.failures !== 1 && poll.failures % FAILURE_LOG_EVERY !== 0) return;
    log(`reference ${watched.reference} could not be read (${poll.failures} rounds in a row): ${problem}`, {
      level: 'warn',
      event: 'solana.reference_unread',
      network: network.network,
      reference: watched.reference,
      checkoutSessionId: watched.checkoutSessionId,
      failures: poll.failures,
      err: problem,
    });
  }

  /** The transaction as the node answers it (null: not yet there); undefined when the call failed. */
  async function transactionOf(signature: string): Promise<unknown> {
    try {
      return await rpc.call('getTransaction', [
        signature,
        { encoding: 'json', commitment: seen, maxSupportedTransactionVersion: 0 },
      ]);
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
      return undefined;
    }
  }

  /** Publishes the payments to `watched` of one transaction read; why it should be read again, or null when done. */
  async function take(
    watched: WatchedReference,
    signature: string,
    answer: unknown,
    finalized: boolean,
  ): Promise<string | null> {
    if (answer === undefined) return String(lastError);
    if (answer === null) return 'not returned by the node yet';
    const found = await referencePayments(network, answer, watched, new Date(now()).toISOString());
    // An answer it cannot read says nothing of the payment: read again (the reference is held and
    // logged as unread), never passed over, or a payment in it would be lost until a restart.
    if (!found.ok && found.check.reason === 'malformed') {
      lastError = `getTransaction ${signature}: the node's answer cannot be read: ${found.check.message}`;
      return `the node's answer cannot be read: ${found.check.message}`;
    }
    if (!found.ok) {
      log(`${signature} names reference ${watched.reference} but pays nothing there: ${found.check.message}`);
      return null;
    }
    for (const message of found.messages) await publish(message);
    if (found.messages.length === 0) return null;
    if (finalized) await publish(finalOf(found.slot, signature));
    else owed.set(signature, { slot: found.slot, reference: watched.reference });
    return null;
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
      if (commitmentReached(status?.confirmationStatus, final)) {
        const failed = status?.err !== null && status?.err !== undefined;
        // Final as failed (it landed again, on the fork the cluster kept, and failed there): it moved nothing.
        await publish(failed ? withdrawalOf(entry.slot, signature) : finalOf(entry.slot, signature));
        owed.delete(signature);
        if (failed) log(`${signature} (seen in slot ${entry.slot}) is final as failed: withdrawn`);
        continue;
      }
      if (status !== null && status !== undefined) continue;
      // Unknown to the node: gone only once the cluster has finalized its slot without it.
      finalizedSlot ??= BigInt(await rpc.call<number | bigint>('getSlot', [{ commitment: 'finalized' }]));
      if (finalizedSlot < entry.slot) continue;
      // The cluster finalized past the slot: no final will name it, and it never comes back.
      await publish(withdrawalOf(entry.slot, signature));
      owed.delete(signature);
      log(`${signature} (slot ${entry.slot}) was seen at ${seen} but the cluster finalized past it: withdrawn`);
      // Its reference is read again from the start: the payment may land again in another slot.
      const poll = polls.get(entry.reference);
      if (poll) {
        poll.until = null;
        poll.resume = null;
      }
    }
  }

  async function poll(): Promise<void> {
    rounds += 1;
    const at = now();
    // The grace on Weir's clock, not `at`: a test's Weir clock runs apart from the host's the rounds are scheduled on.
    const startedAt = readClock();
    const due: WatchedReference[] = [];
    const watchedNow = references.of(network.network);
    // A reference forgotten elsewhere (its session gone) is no longer polled nor subscribed to.
    const names = new Set<string>(watchedNow.map((w) => w.reference));
    for (const reference of polls.keys()) if (!names.has(reference)) polls.delete(reference);
    for (const watched of watchedNow) {
      if (references.pastGrace(watched, startedAt)) {
        references.forget(network.network, watched.reference);
        polls.delete(watched.reference);
        continue;
      }
      const state = polls.get(watched.reference) ?? {
        until: null,
        intervalMs: deps.pollIntervalMs,
        nextAt: at,
        readAt: null,
        resume: null,
        failures: 0,
        wakes: 0,
      };
      polls.set(watched.reference, state);
      if (state.nextAt <= at || unreadPastExpiry(watched, state, startedAt)) due.push(watched);
    }
    syncSubscriptions();
    try {
      const round = async () => {
        await pollReferences(due, startedAt);
        await settle();
      };
      // Rounds with references to read are traced; an idle tick is not worth a span.
      if (due.length === 0) await round();
      else
        await inSpan(
          deps.tracer ?? noTracer,
          'follower round',
          { 'weir.network': network.network, 'weir.references': due.length },
          round,
        );
      // What the round found owed (or settled) changes the finality subscriptions.
      syncSubscriptions();
      deps.onRound?.(readThrough(startedAt));
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
  }

  /**
   * Whether `watched`'s session expired by `at` (Weir's clock) and no complete read began since: the
   * expiry waits on the chain read through it, which a socket's silence does not prove (a provider
   * drops notifications), so the reference is read in the first round at or after its expiry, once.
   */
  function unreadPastExpiry(watched: WatchedReference, poll: Poll, at: number): boolean {
    const { closedAt, expiresAt } = watched;
    return (
      closedAt === null && expiresAt !== null && at >= expiresAt && (poll.readAt === null || poll.readAt < expiresAt)
    );
  }

  /**
   * What a round that began at `startedAt` has read the chain through: when the open reference read
   * longest ago (a backed-off one is not read every round) was last read, so an expiry waits for a
   * payment made before it; null while one was never read. A reference with a live subscription is
   * woken by its payment (unless a backlog of it is still being read), so it vouches for the chain up
   * to `NOTIFICATION_SLACK_MS` before the round (or its last read, if later), unless it was woken and
   * not read since; but never up to its session's expiry before a read that began at or after it
   * (see unreadPastExpiry): a dropped notification would otherwise expire a session paid in time.
   * A closed session's holds no expiry.
   */
  function readThrough(startedAt: number): number | null {
    let through = startedAt;
    const at = now();
    for (const watched of references.of(network.network)) {
      const poll = polls.get(watched.reference);
      if (watched.closedAt !== null || poll === undefined) continue;
      // A backlog still read page by page sends no notification for what lies in it; a reference
      // woken (due) and not read since, or whose last read failed, may hold a payment announced.
      const live = poll.resume === null && socket?.subscribed({ address: watched.reference, commitment: seen });
      if (live && poll.failures === 0 && poll.nextAt > at) {
        let vouched = Math.max(startedAt - NOTIFICATION_SLACK_MS, poll.readAt ?? Number.NEGATIVE_INFINITY);
        if (watched.expiresAt !== null && (poll.readAt === null || poll.readAt < watched.expiresAt))
          vouched = Math.min(vouched, watched.expiresAt - 1);
        through = Math.min(through, vouched);
        continue;
      }
      if (poll.readAt === null) return null;
      through = Math.min(through, poll.readAt);
    }
    return through;
  }

  /** Each watched reference at `seen`, and at `final` while one of its payments awaits finality. */
  function syncSubscriptions(): void {
    if (!socket) return;
    const wanted: Mention[] = [];
    const references = new Set(polls.keys());
    for (const reference of references) wanted.push({ address: reference, commitment: seen });
    if (final !== seen)
      for (const reference of new Set([...owed.values()].map((o) => o.reference)))
        if (references.has(reference)) wanted.push({ address: reference, commitment: final });
    socket.sync(wanted);
  }

  /** One round per pass, the next after `pollIntervalMs` or at once on a wake-up; a round keeps its own errors (per reference). */
  const roundProcessor = (): Processor =>
    createPollingProcessor({
      name: `follower.${network.network}`,
      clock: timers,
      step: poll,
      intervalMs: () => deps.pollIntervalMs,
      backoff: { firstMs: deps.pollIntervalMs, maxMs: maxInterval },
      log,
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
    });

  return {
    async start() {
      if (running) return;
      running = true;
      if (deps.wsUrl !== undefined && socket === null)
        socket = createMentionsSocket({
          url: deps.wsUrl,
          onMention: (address) => wake(address),
          // What landed before the node took the subscription went unnotified: read it now.
          onSubscribed: (address) => wake(address),
          onEvent: (event) => {
            // Without the socket, idle references go back to their polling interval, not the minute.
            if (event === 'closed')
              for (const poll of polls.values()) poll.nextAt = Math.min(poll.nextAt, now() + poll.intervalMs);
            deps.onSocketEvent?.(event);
          },
          ...(deps.socketBackoffMs
            ? { minBackoffMs: deps.socketBackoffMs.min, maxBackoffMs: deps.socketBackoffMs.max }
            : {}),
          log,
        });
      loop = roundProcessor();
      void loop.start();
    },
    async stop() {
      running = false;
      socket?.close();
      socket = null;
      await loop?.stop();
      loop = null;
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
      socket: socket?.status() ?? null,
    }),
  };
}
