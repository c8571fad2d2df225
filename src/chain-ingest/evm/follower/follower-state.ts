import type { CheckpointBlock, EvmFollowerCheckpoint, TransactionFinal } from './checkpoint.ts';

/**
 * The follower's position as a value, and the pure steps that move it. The follower persists it
 * as its checkpoint; see {@link EvmFollowerCheckpoint} for what each part means.
 */
export type FollowerState = {
  readonly nextBlock: number;
  readonly window: readonly CheckpointBlock[];
  readonly orphanedHeights: readonly number[];
  /** Absent: none (see {@link EvmFollowerCheckpoint.transactionFinals}). */
  readonly transactionFinals?: readonly TransactionFinal[];
};

/** The identity of a block as read from the chain. */
export type BlockLink = { number: number; hash: string; parentHash: string };

/** The state of a follower that has read nothing yet and starts at `startBlock`. */
export function initialState(startBlock: number): FollowerState {
  return { nextBlock: startBlock, window: [], orphanedHeights: [] };
}

export function stateFromCheckpoint(checkpoint: EvmFollowerCheckpoint): FollowerState {
  return {
    nextBlock: checkpoint.nextBlock,
    window: checkpoint.window.map((block) => ({ ...block })),
    orphanedHeights: [...checkpoint.orphanedHeights],
    ...(checkpoint.transactionFinals?.length
      ? { transactionFinals: checkpoint.transactionFinals.map((f) => ({ ...f })) }
      : {}),
  };
}

export function checkpointOf(
  state: FollowerState,
  meta: { network: string; chainId: number; now: Date },
): EvmFollowerCheckpoint {
  const last = windowBlockAt(state, state.nextBlock - 1);
  return {
    version: 1,
    network: meta.network,
    chainId: meta.chainId,
    nextBlock: state.nextBlock,
    lastProcessed: last === undefined ? null : { number: last.number, hash: last.hash },
    window: state.window.map((block) => ({ ...block })),
    orphanedHeights: [...state.orphanedHeights],
    ...(state.transactionFinals?.length ? { transactionFinals: state.transactionFinals.map((f) => ({ ...f })) } : {}),
    updatedAt: meta.now.toISOString(),
  };
}

export function windowBlockAt(state: FollowerState, number: number): CheckpointBlock | undefined {
  const first = state.window[0];
  if (first === undefined) return undefined;
  return state.window[number - first.number];
}

/** The last block whose transfers are all published, if any. */
export function lastProcessed(state: FollowerState): CheckpointBlock | undefined {
  return windowBlockAt(state, state.nextBlock - 1);
}

/** How freshly read blocks (`blocks[0].number === state.nextBlock`, ascending) relate to the window. */
export type LinkCheck =
  /**
   * The first `count` blocks continue the known chain. `count < blocks.length` when the read
   * blocks do not chain among themselves after that (the chain moved while they were read).
   */
  | { type: 'linked'; count: number }
  /** The first block does not continue the known chain, or replaces a block read before: a reorg. */
  | { type: 'reorg'; atBlock: number };

export function checkLinks(state: FollowerState, blocks: readonly BlockLink[]): LinkCheck {
  for (const [index, block] of blocks.entries()) {
    const previous = index === 0 ? windowBlockAt(state, block.number - 1) : blocks[index - 1];
    const parentMismatch =
      previous !== undefined && (previous.number !== block.number - 1 || previous.hash !== block.parentHash);
    const known = windowBlockAt(state, block.number);
    const replacesKnown = known !== undefined && known.hash !== block.hash;
    if (parentMismatch || replacesKnown) {
      return index === 0 ? { type: 'reorg', atBlock: block.number } : { type: 'linked', count: index };
    }
  }
  return { type: 'linked', count: blocks.length };
}

/**
 * Writes blocks from `nextBlock` on into the window (replacing blocks read before at the same
 * heights, keeping any read beyond them). A block is marked as carrying transfers when it has
 * some, or when transfers were published at its height on a removed branch.
 */
export function recordBlocks(
  state: FollowerState,
  blocks: readonly (BlockLink & { transfers: boolean })[],
): FollowerState {
  const first = blocks[0];
  if (first === undefined) return state;
  if (first.number !== state.nextBlock)
    throw new RangeError(`recordBlocks: expected block ${state.nextBlock} first, got ${first.number}`);
  const orphaned = new Set(state.orphanedHeights);
  const kept = state.window.filter((block) => block.number < first.number);
  const recorded: CheckpointBlock[] = blocks.map((block, index) => {
    if (block.number !== first.number + index)
      throw new RangeError(
        `recordBlocks: blocks must be consecutive, got ${block.number} after ${first.number + index - 1}`,
      );
    const transfers = block.transfers || orphaned.has(block.number);
    orphaned.delete(block.number);
    return { number: block.number, hash: block.hash, parentHash: block.parentHash, transfers, finalPublished: false };
  });
  const lastRecorded = first.number + blocks.length - 1;
  const beyond = state.window.filter((block) => block.number > lastRecorded);
  return { ...state, window: [...kept, ...recorded, ...beyond], orphanedHeights: [...orphaned].sort((a, b) => a - b) };
}

/** Every block up to `through` has had its transfers published. */
export function markProcessed(state: FollowerState, through: number): FollowerState {
  if (through < state.nextBlock - 1)
    throw new RangeError(`markProcessed: ${through} is below the processed block ${state.nextBlock - 1}`);
  if (windowBlockAt(state, through) === undefined)
    throw new RangeError(`markProcessed: block ${through} was never recorded`);
  return { ...state, nextBlock: through + 1 };
}

/**
 * The highest final height: a block is final once `processed - number + 1 >= confirmations`,
 * counting only blocks the follower has read and linked to it by parent hash.
 */
export function finalThrough(state: FollowerState, confirmations: number): number {
  return state.nextBlock - confirmations;
}

/** Final blocks whose height carried transfers and whose `final` message is still owed, ascending. */
export function dueFinals(state: FollowerState, confirmations: number): CheckpointBlock[] {
  const through = finalThrough(state, confirmations);
  return state.window.filter(
    (block) => block.number <= through && block.number < state.nextBlock && block.transfers && !block.finalPublished,
  );
}

/**
 * Final heights owed a `final` that the follower never read (below the window: a recovered transfer
 * in a block before the follower's starting block), ascending. Their final names the canonical
 * block read at that height once it is final.
 */
export function dueUnreadFinals(state: FollowerState, confirmations: number): number[] {
  const through = finalThrough(state, confirmations);
  return state.orphanedHeights.filter((number) => number < state.nextBlock && number <= through);
}

/** Finals owed for one transaction each whose height is final now. */
export function dueTransactionFinals(state: FollowerState, confirmations: number): TransactionFinal[] {
  const through = finalThrough(state, confirmations);
  return (state.transactionFinals ?? []).filter((owed) => owed.number < state.nextBlock && owed.number <= through);
}

/** The state without these transaction finals (published). */
export function settleTransactionFinals(state: FollowerState, published: readonly TransactionFinal[]): FollowerState {
  const left = (state.transactionFinals ?? []).filter(
    (owed) => !published.some((done) => done.number === owed.number && done.transactionHash === owed.transactionHash),
  );
  const { transactionFinals: _gone, ...rest } = state;
  return left.length > 0 ? { ...rest, transactionFinals: left } : rest;
}

/**
 * Owes a `final` at `number` for transfers published from outside the follower (a recovered
 * transaction), exactly as if the follower had published them there: the processed window block at
 * that height is marked as carrying transfers; any other height joins `orphanedHeights` (at or
 * beyond `nextBlock`, in flight or not read yet, its block is marked when read; below the window,
 * its final goes out once the height is final, see {@link dueUnreadFinals}).
 */
export function oweFinal(state: FollowerState, number: number, transactionHash?: string): FollowerState {
  const held = number < state.nextBlock ? windowBlockAt(state, number) : undefined;
  // The block's own final went out already: publishing it again would carry the same message id,
  // which the bus drops (within its window); this transaction's final is a message of its own.
  if (transactionHash !== undefined && held?.finalPublished === true) {
    if ((state.transactionFinals ?? []).some((o) => o.number === number && o.transactionHash === transactionHash))
      return state;
    const owed: TransactionFinal = { number, hash: held.hash, transactionHash };
    return { ...state, transactionFinals: [...(state.transactionFinals ?? []), owed] };
  }
  if (held !== undefined) {
    return {
      ...state,
      window: state.window.map((block) =>
        block.number === number ? { ...block, transfers: true, finalPublished: false } : block,
      ),
    };
  }
  if (state.orphanedHeights.includes(number)) return state;
  return { ...state, orphanedHeights: [...state.orphanedHeights, number].sort((a, b) => a - b) };
}

/**
 * Marks the given heights' finals as published (window blocks, or unread heights, which leave
 * `orphanedHeights`) and lets final blocks leave the window, keeping the newest final block as the
 * anchor that a reorg's walk back can stop at.
 */
export function settleFinals(state: FollowerState, confirmations: number, published: readonly number[]): FollowerState {
  const done = new Set(published);
  const orphanedHeights = state.orphanedHeights.filter((number) => !done.has(number));
  const through = finalThrough(state, confirmations);
  const anchor = Math.min(through, state.nextBlock - 1);
  const marked = state.window.map((block) => (done.has(block.number) ? { ...block, finalPublished: true } : block));
  // Drop the final prefix below the anchor, stopping early at a block still owed a final (the window stays consecutive).
  let keepFrom = marked.findIndex((block) => block.number >= anchor || (block.transfers && !block.finalPublished));
  if (keepFrom === -1) keepFrom = marked.length;
  return { ...state, window: marked.slice(keepFrom), orphanedHeights };
}

/** Heights whose `final` is still owed (for status). */
export function pendingFinalCount(state: FollowerState): number {
  return (
    state.window.filter((block) => block.transfers && !block.finalPublished).length +
    state.orphanedHeights.length +
    (state.transactionFinals?.length ?? 0)
  );
}

/**
 * Drops every block above the common ancestor (all of the window when `ancestor` is null: the
 * reorg went deeper than the window) and rewinds `nextBlock` to the first dropped height. Heights
 * whose transfers were published and not yet finalised stay owed a `final` (`orphanedHeights`).
 */
export function removeAbove(
  state: FollowerState,
  ancestor: number | null,
): { state: FollowerState; removed: CheckpointBlock[] } {
  const removed = state.window.filter((block) => ancestor === null || block.number > ancestor);
  if (removed.length === 0) return { state, removed };
  const window = state.window.filter((block) => ancestor !== null && block.number <= ancestor);
  const orphaned = new Set(state.orphanedHeights);
  for (const block of removed) if (block.transfers && !block.finalPublished) orphaned.add(block.number);
  // A transaction's final owed in a removed block: its height stays owed like the block's transfers.
  const transactionFinals = (state.transactionFinals ?? []).filter((owed) => {
    const gone = removed.some((block) => block.hash === owed.hash);
    if (gone) orphaned.add(owed.number);
    return !gone;
  });
  const firstRemoved = removed[0]!.number;
  const nextBlock = Math.min(state.nextBlock, firstRemoved);
  return {
    state: {
      nextBlock,
      window,
      orphanedHeights: [...orphaned].sort((a, b) => a - b),
      ...(transactionFinals.length > 0 ? { transactionFinals } : {}),
    },
    removed,
  };
}
