import { CheckpointStoreError } from './errors.ts';

/**
 * One block the follower has read (or was about to publish transfers of), kept until it is final.
 * Block numbers are JavaScript numbers: every EVM chain is far below 2^53 blocks.
 */
export type CheckpointBlock = {
  number: number;
  hash: string;
  parentHash: string;
  /**
   * Transfers were published at this height, in this block or in a block of a branch that has since
   * been removed (by the follower, or by a recovery that handed them to it): a `final` message is
   * owed for this height.
   */
  transfers: boolean;
  /** The `final` message of this height has been published. */
  finalPublished: boolean;
};

/**
 * Where a follower stands, enough to resume exactly after a restart:
 *
 * - `nextBlock`: the first block whose transfers are not known to be published.
 * - `window`: consecutive blocks, ascending, from the newest final block (kept as the anchor that
 *   reorg detection compares against) to the newest block read. Blocks at or above `nextBlock`
 *   are in flight: written down before their transfers were published, so that a crash between
 *   the two never leaves a published transfer that no later `reorg` or `final` message covers.
 * - `orphanedHeights`: heights owed a final whose block the window does not hold: transfers were
 *   published there in a block since removed by a reorg, or by a recovery in a block the follower
 *   had not read. At or beyond `nextBlock` the height is marked in the window when its block is
 *   read; below the window (a recovered block before the follower's starting block) its final names
 *   the canonical block read at that height once it is final.
 */
export type EvmFollowerCheckpoint = {
  version: 1;
  network: string;
  chainId: number;
  nextBlock: number;
  /** The last block whose transfers are all published (redundant with `window`, for people reading the file). */
  lastProcessed: { number: number; hash: string } | null;
  window: CheckpointBlock[];
  orphanedHeights: number[];
  /**
   * Finals owed for one transaction each (absent: none): a recovered transfer in a block whose own
   * final went out before, named by its transaction (another message id, so the bus does not drop
   * it as that final again).
   */
  transactionFinals?: TransactionFinal[];
  updatedAt: string;
};

/** A final owed for one transaction's transfers at a height (see `EvmFollowerCheckpoint.transactionFinals`). */
export type TransactionFinal = { number: number; hash: string; transactionHash: string };

/** The checkpoint port: one checkpoint per network. */
export type CheckpointStore = {
  /** The stored checkpoint, or undefined when there is none yet. Throws CheckpointStoreError when it cannot be read. */
  get(network: string): Promise<EvmFollowerCheckpoint | undefined>;
  /** Replaces the stored checkpoint; when it resolves, the checkpoint survives a crash. */
  set(network: string, checkpoint: EvmFollowerCheckpoint): Promise<void>;
};

/** A checkpoint store in memory, for tests and for followers that may start over after a restart. */
export function createInMemoryCheckpointStore(initial: Iterable<EvmFollowerCheckpoint> = []): CheckpointStore & {
  /** Every checkpoint written, per network, oldest first (for tests). */
  history(network: string): EvmFollowerCheckpoint[];
} {
  const current = new Map<string, EvmFollowerCheckpoint>();
  const written = new Map<string, EvmFollowerCheckpoint[]>();
  for (const checkpoint of initial)
    current.set(checkpoint.network, parseCheckpoint(structuredClone(checkpoint), checkpoint.network, 'memory'));
  return {
    async get(network) {
      const checkpoint = current.get(network);
      return checkpoint === undefined ? undefined : structuredClone(checkpoint);
    },
    async set(network, checkpoint) {
      const copy = parseCheckpoint(structuredClone(checkpoint), network, 'memory');
      current.set(network, copy);
      let list = written.get(network);
      if (list === undefined) {
        list = [];
        written.set(network, list);
      }
      list.push(structuredClone(copy));
    },
    history: (network) => structuredClone(written.get(network) ?? []),
  };
}

/**
 * Checks that `value` is a follower checkpoint of `network` (as read back from storage) and
 * returns it typed. Throws CheckpointStoreError naming the first bad field.
 */
export function parseCheckpoint(value: unknown, network: string, location: string): EvmFollowerCheckpoint {
  const fail = (message: string): never => {
    throw new CheckpointStoreError(
      network,
      location,
      `${message}; repair the checkpoint or delete it to start again from startBlock`,
    );
  };
  const record = asRecord(value) ?? fail('is not a JSON object');
  if (record.version !== 1) fail(`has version ${JSON.stringify(record.version)}, this follower reads version 1`);
  if (record.network !== network) fail(`belongs to network ${JSON.stringify(record.network)}`);
  const chainId = blockNumberField(record, 'chainId') ?? fail('chainId is not a non-negative integer');
  const nextBlock = blockNumberField(record, 'nextBlock') ?? fail('nextBlock is not a non-negative integer');
  if (typeof record.updatedAt !== 'string') fail('updatedAt is not a string');
  if (!Array.isArray(record.window)) fail('window is not an array');
  if (!Array.isArray(record.orphanedHeights)) fail('orphanedHeights is not an array');

  const window: CheckpointBlock[] = [];
  for (const [index, raw] of (record.window as unknown[]).entries()) {
    const entry = asRecord(raw) ?? fail(`window[${index}] is not an object`);
    const number = blockNumberField(entry, 'number') ?? fail(`window[${index}].number is not a non-negative integer`);
    const hash = hashField(entry, 'hash') ?? fail(`window[${index}].hash is not a 32-byte hex hash`);
    const parentHash = hashField(entry, 'parentHash') ?? fail(`window[${index}].parentHash is not a 32-byte hex hash`);
    if (typeof entry.transfers !== 'boolean') fail(`window[${index}].transfers is not a boolean`);
    if (typeof entry.finalPublished !== 'boolean') fail(`window[${index}].finalPublished is not a boolean`);
    const previous = window.at(-1);
    if (previous !== undefined && previous.number + 1 !== number)
      fail(`window[${index}] is block ${number}, expected ${previous.number + 1} (the window must be consecutive)`);
    window.push({
      number,
      hash,
      parentHash,
      transfers: entry.transfers === true,
      finalPublished: entry.finalPublished === true,
    });
  }
  const orphanedHeights: number[] = [];
  for (const [index, raw] of (record.orphanedHeights as unknown[]).entries()) {
    if (!isBlockNumber(raw)) fail(`orphanedHeights[${index}] is not a non-negative integer`);
    orphanedHeights.push(raw as number);
  }

  const transactionFinals: TransactionFinal[] = [];
  if (record.transactionFinals !== undefined && !Array.isArray(record.transactionFinals))
    fail('transactionFinals is not an array');
  for (const [index, raw] of ((record.transactionFinals as unknown[] | undefined) ?? []).entries()) {
    const entry = asRecord(raw) ?? fail(`transactionFinals[${index}] is not an object`);
    const number =
      blockNumberField(entry, 'number') ?? fail(`transactionFinals[${index}].number is not a non-negative integer`);
    const hash = hashField(entry, 'hash') ?? fail(`transactionFinals[${index}].hash is not a 32-byte hex hash`);
    if (typeof entry.transactionHash !== 'string' || entry.transactionHash === '')
      fail(`transactionFinals[${index}].transactionHash is not a string`);
    transactionFinals.push({ number, hash, transactionHash: entry.transactionHash as string });
  }

  const lastNumber = nextBlock - 1;
  const lastInWindow = window.find((block) => block.number === lastNumber);
  const first = window[0];
  if (first !== undefined && (first.number > nextBlock || (first.number < nextBlock && lastInWindow === undefined))) {
    fail(
      `window ${first.number}..${window.at(-1)?.number} does not contain the last processed block ${lastNumber} nor start at nextBlock ${nextBlock}`,
    );
  }
  const lastProcessed = lastInWindow === undefined ? null : { number: lastInWindow.number, hash: lastInWindow.hash };
  return {
    version: 1,
    network,
    chainId,
    nextBlock,
    lastProcessed,
    window,
    orphanedHeights,
    ...(transactionFinals.length > 0 ? { transactionFinals } : {}),
    updatedAt: record.updatedAt as string,
  };
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function isBlockNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function blockNumberField(record: Record<string, unknown>, key: string): number | undefined {
  const value = record[key];
  return isBlockNumber(value) ? value : undefined;
}

const HASH = /^0x[0-9a-fA-F]{64}$/;

function hashField(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' && HASH.test(value) ? value : undefined;
}
