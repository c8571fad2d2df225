import type { ChainAsset, ChainFinalMessage, ChainReorgMessage, ChainTransferMessage } from '../../chain-messages.ts';
import type { WatchedAddresses } from '../../watched-addresses.ts';
import type { CheckpointBlock } from './checkpoint.ts';
import { ChainChangedWhileReadingError } from './errors.ts';
import { extractTransfers, nativeTransferCandidates, type FollowedToken } from './extract-transfers.ts';
import {
  checkLinks,
  dueFinals,
  finalThrough,
  markProcessed,
  recordBlocks,
  removeAbove,
  dueTransactionFinals,
  settleTransactionFinals,
  settleFinals,
  windowBlockAt,
  type FollowerState,
} from './follower-state.ts';
import type { BlockWithTransactions } from './get-blocks.ts';
import type { ReceiptStatus } from './get-receipt-statuses.ts';
import type { TokenTransferLog } from './get-transfer-logs.ts';

/**
 * The follower's sync step: pure functions from its state and data already read from the chain to
 * the messages it owes (`transfer | reorg | final`) and the state that holds once they are out.
 * Reading (fetch-batches.ts, head-source.ts) and saving and publishing (follower-sink.ts) happen
 * elsewhere, so every rule here is tested without a node.
 */

export type SyncContext = {
  network: string;
  chainId: number;
  confirmations: number;
  nativeAsset: ChainAsset;
  tokens: readonly FollowedToken[];
  watched: WatchedAddresses;
  /** `observedAt` of the messages. */
  observedAt: string;
};

/** A message to publish and the follower's state once it (and every one before it) is published. */
export type SyncEvent =
  | { type: 'transfer'; message: ChainTransferMessage; state: FollowerState }
  | { type: 'reorg'; message: ChainReorgMessage; state: FollowerState }
  | { type: 'final'; message: ChainFinalMessage; state: FollowerState };

/**
 * What the sink does, in order: save `writeAhead` (when set) before publishing anything, publish
 * `events`, then save `state`. Transfers go out only after the checkpoint names their blocks, so a
 * reorg of them is still reported after a crash.
 */
export type SyncPlan = {
  writeAhead: FollowerState | null;
  events: SyncEvent[];
  state: FollowerState;
};

/** Blocks read from `from` on (up to `to`, fewer when the endpoint has no more yet) with the data they need. */
export type FetchedBatch = {
  from: number;
  to: number;
  blocks: readonly BlockWithTransactions[];
  /** Registry-token Transfer logs in `from..to` (the range answer and any rechecks by block hash). */
  logs: readonly TokenTransferLog[];
  /** Receipt status by transaction hash of native transfers to watched addresses; null: the node had none. */
  receipts: ReadonlyMap<string, FetchedReceipt | null>;
};

/**
 * A receipt as a batch holds it: `succeeded` is the receipt's own status; `nonNativeValue` is set
 * when the transaction's value is not the native coin (a Tron TRC-10 transfer shows its token
 * amount as `value`), so it moved no native coin whatever its status.
 */
export type FetchedReceipt = ReceiptStatus & { nonNativeValue?: boolean };

export type BatchOutcome =
  /** The endpoint does not have block `from` yet. */
  | { type: 'waiting' }
  /** Block `atBlock` does not continue the known chain: find the common ancestor (see {@link syncReorg}). */
  | { type: 'reorg'; atBlock: number }
  /** Native transfers to watched addresses whose receipts were not read (an address watched since the batch was read). */
  | { type: 'receipts-missing'; transactionHashes: string[] }
  /**
   * Blocks through `through` are processed once `plan` is carried out. `through < batch.to` when the
   * endpoint had fewer blocks or they stopped chaining (the chain moved while they were read).
   */
  | { type: 'processed'; through: number; plan: SyncPlan };

/** The transactions whose receipts a batch needs: native value to a watched address. */
export function receiptsNeeded(
  network: string,
  blocks: readonly BlockWithTransactions[],
  watched: WatchedAddresses,
): string[] {
  return nativeTransferCandidates(network, blocks, watched).map((candidate) => candidate.transaction.hash);
}

/**
 * One batch of blocks read from `state.nextBlock` on: checks they continue the known chain, finds
 * the transfers to watched addresses, records the blocks and owes/publishes the finals now due.
 * Throws {@link ChainChangedWhileReadingError} when the logs or receipts read belong to other blocks
 * than the ones read (an endpoint answering from two versions of the chain; retrying helps).
 */
export function syncBatch(state: FollowerState, batch: FetchedBatch, context: SyncContext): BatchOutcome {
  const { network } = context;
  if (batch.from !== state.nextBlock)
    throw new RangeError(`syncBatch: the batch starts at ${batch.from}, the follower at ${state.nextBlock}`);
  const read = batch.blocks.filter((block) => block.number <= batch.to);
  if (read.length === 0) return { type: 'waiting' };
  const links = checkLinks(state, read);
  if (links.type === 'reorg') return { type: 'reorg', atBlock: links.atBlock };
  const linked = read.slice(0, links.count);
  const last = linked.at(-1)!.number;

  const logs = batch.logs.filter((entry) => entry.blockNumber >= batch.from && entry.blockNumber <= last);
  for (const entry of logs) {
    const block = linked[entry.blockNumber - batch.from]!;
    if (block.hash !== entry.blockHash)
      throw new ChainChangedWhileReadingError(
        network,
        BigInt(entry.blockNumber),
        `eth_getLogs saw block ${entry.blockHash}, eth_getBlockByNumber ${block.hash}`,
      );
  }
  const candidates = nativeTransferCandidates(network, linked, context.watched);
  const missing = candidates.filter(({ transaction }) => !batch.receipts.has(transaction.hash));
  if (missing.length > 0)
    return { type: 'receipts-missing', transactionHashes: missing.map(({ transaction }) => transaction.hash) };
  const succeededNative = new Set<string>();
  for (const { block, transaction } of candidates) {
    const status = batch.receipts.get(transaction.hash) ?? null;
    if (status === null || status.blockHash !== block.hash)
      throw new ChainChangedWhileReadingError(
        network,
        BigInt(block.number),
        `the receipt of ${transaction.hash} is ${status === null ? 'missing' : `in block ${status.blockHash}`}`,
      );
    if (status.succeeded && status.nonNativeValue !== true) succeededNative.add(transaction.hash);
  }
  const transfers = extractTransfers({
    network,
    chainId: context.chainId,
    nativeAsset: context.nativeAsset,
    tokens: context.tokens,
    watched: context.watched,
    blocks: linked,
    logs,
    succeededNative,
    observedAt: context.observedAt,
  });
  const heightsWithTransfers = new Set(transfers.map((transfer) => transfer.blockNumber));
  const recorded = recordBlocks(
    state,
    linked.map((block) => ({
      number: block.number,
      hash: block.hash,
      parentHash: block.parentHash,
      transfers: heightsWithTransfers.has(block.number),
    })),
  );
  const processed = markProcessed(recorded, last);
  const finals = finalsOf(processed, context);
  // Until the last transfer is out the batch is not processed: a failed publish repeats it (same ids).
  const events: SyncEvent[] = transfers.map((message, index) => ({
    type: 'transfer',
    message,
    state: index === transfers.length - 1 ? settleFinals(processed, context.confirmations, []) : recorded,
  }));
  return {
    type: 'processed',
    through: last,
    plan: {
      writeAhead: transfers.length > 0 ? recorded : null,
      events: [...events, ...finals.events],
      state: finals.state,
    },
  };
}

/**
 * The finals owed now: window blocks with transfers that reached `confirmations`, then heights owed a
 * final that the follower never read, named by the canonical block read at each (`unreadHashes`;
 * heights missing from it stay owed).
 */
export function syncFinals(
  state: FollowerState,
  context: SyncContext,
  unreadHashes: ReadonlyMap<number, string> = new Map(),
): SyncPlan {
  const { events, state: next } = finalsOf(state, context, unreadHashes);
  return { writeAhead: null, events, state: next };
}

function finalsOf(
  state: FollowerState,
  context: SyncContext,
  unreadHashes: ReadonlyMap<number, string> = new Map(),
): { events: SyncEvent[]; state: FollowerState } {
  const { network, chainId, confirmations, observedAt } = context;
  const due: { number: number; hash: string }[] = dueFinals(state, confirmations).map(({ number, hash }) => ({
    number,
    hash,
  }));
  const through = finalThrough(state, confirmations);
  for (const number of state.orphanedHeights) {
    const hash = unreadHashes.get(number);
    if (number < state.nextBlock && number <= through && hash !== undefined) due.push({ number, hash });
  }
  const done: number[] = [];
  const events: SyncEvent[] = due.map(({ number, hash }) => {
    done.push(number);
    return {
      type: 'final',
      message: { type: 'final', network, chainId, blockNumber: number, blockHash: hash, observedAt },
      state: settleFinals(state, confirmations, [...done]),
    };
  });
  let settled = settleFinals(state, confirmations, done);
  // One transaction's final, after its block's own went out (a recovered transfer found later).
  for (const owed of dueTransactionFinals(state, confirmations)) {
    settled = settleTransactionFinals(settled, [owed]);
    events.push({
      type: 'final',
      message: {
        type: 'final',
        network,
        chainId,
        blockNumber: owed.number,
        blockHash: owed.hash,
        transactionHash: owed.transactionHash,
        observedAt,
      },
      state: settled,
    });
  }
  return { events, state: settled };
}

export type ReorgStep = {
  plan: SyncPlan;
  removed: CheckpointBlock[];
  /** The reorg went below the window's oldest block, which was already final: messages may be missing. */
  deep: boolean;
};

/**
 * The chain no longer continues the window above `ancestor` (the newest window block still
 * canonical; null when none is): one `reorg` naming every block above it, and the state rewound
 * there. Null when nothing known was replaced (the endpoint serves blocks that do not chain).
 */
export function syncReorg(state: FollowerState, ancestor: number | null, context: SyncContext): ReorgStep | null {
  const { state: rewound, removed } = removeAbove(state, ancestor);
  if (removed.length === 0) return null;
  const oldest = state.window[0]!;
  const deep =
    ancestor === null && (oldest.finalPublished || oldest.number <= finalThrough(state, context.confirmations));
  const message: ChainReorgMessage = {
    type: 'reorg',
    network: context.network,
    chainId: context.chainId,
    removedBlocks: removed.map((block) => ({ number: block.number, hash: block.hash })),
    observedAt: context.observedAt,
  };
  return {
    plan: { writeAhead: null, events: [{ type: 'reorg', message, state: rewound }], state: rewound },
    removed,
    deep,
  };
}

/**
 * The newest window block still canonical, given the canonical hashes read walking down from the
 * top (`canonical(number)`, null when the endpoint has no block there). Walks no further than needed.
 */
export async function findAncestor(
  state: FollowerState,
  canonical: (number: number) => Promise<string | null>,
): Promise<number | null> {
  for (let index = state.window.length - 1; index >= 0; index--) {
    const known = state.window[index]!;
    if ((await canonical(known.number)) === known.hash) return known.number;
  }
  return null;
}

/** A head announced at a processed height with another hash than the one read: a same-height reorg there. */
export function tipReplaced(state: FollowerState, tip: { number: number; hash: string }): boolean {
  if (tip.number >= state.nextBlock) return false;
  const known = windowBlockAt(state, tip.number);
  return known !== undefined && known.hash !== tip.hash;
}
