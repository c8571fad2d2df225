/**
 * Tron: what a sweep used of the sweeper account's energy and bandwidth, the TRX burnt for what
 * its own did not cover (sun), where its energy came from, and what renting it cost (sun).
 */
export type TronSweepResources = {
  energyUsed: bigint;
  bandwidthUsed: bigint;
  trxBurnt: bigint;
  energySource: 'burn' | 'staked' | 'rented';
  rentalCost?: bigint;
};

/**
 * A sweep transaction as mined: its hash, the block it is in (absent where the executor does not
 * say) and what the operator paid for it (`gasCost` in the coin's smallest unit; on Tron, the sun burnt).
 */
export type SweepTransaction = {
  transactionHash: string;
  blockNumber?: bigint;
  gasUsed: bigint;
  gasCost: bigint;
  tron?: TronSweepResources;
};

/**
 * A flush was mined but reverted: nothing moved, yet the operator paid for the transaction. The
 * sweeper records its gas on the sessions of the batch and retries them as after other failures.
 */
export class SweepRevertedError extends Error {
  override readonly name = 'SweepRevertedError';
  constructor(
    message: string,
    readonly transaction: SweepTransaction,
  ) {
    super(message);
  }
}

/**
 * The node did not answer a flush or a balance read (connection refused, timeout, HTTP 5xx): the
 * failure says nothing about the deposits, so none is blamed; the network's round backs off.
 */
export class SweepNodeError extends Error {
  override readonly name: string = 'SweepNodeError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * The sweeping account lacks a resource the operator chose to wait for (Tron's staked energy):
 * nothing was signed. Like a node failure it blames no deposit, and the network's round backs off.
 */
export class SweepResourcesShortError extends SweepNodeError {
  override readonly name = 'SweepResourcesShortError';
}

/**
 * A flush signed and recorded as broadcast (`transactionHash`) that did not come to a receipt: the
 * sweeper settles it by that hash (see the subclasses for how).
 */
export class SweepFlightError extends Error {
  override readonly name: string = 'SweepFlightError';
  constructor(
    message: string,
    readonly transactionHash: string,
    options?: { cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
  }
}

/**
 * A flush was sent, or may have been (`transactionHash`), but its outcome is not known: the node did
 * not answer the send, or waiting for its receipt failed. It may be mined later, or never: the
 * sweeper does not flush its deposits again but looks the transaction up by its hash
 * (SweepExecutor.minedSweep, SweepExecutor.rebroadcast) until it is mined or dropped.
 */
export class SweepReceiptLostError extends SweepFlightError {
  override readonly name = 'SweepReceiptLostError';
}

/**
 * A flush signed and recorded as broadcast (`transactionHash`) was refused by the node, which does
 * not have it (its nonce taken, the account unable to pay for it): it was never sent. The sweeper
 * records it dropped at once and treats the flush as failed; `nonceUsed` when another transaction
 * of the account was mined with its nonce, which says nothing of the deposits: they are flushed
 * again at once, with the account's next nonce.
 */
export class SweepRejectedError extends SweepFlightError {
  override readonly name = 'SweepRejectedError';
  readonly nonceUsed: boolean;
  constructor(message: string, transactionHash: string, options?: { cause?: unknown; nonceUsed?: boolean }) {
    super(message, transactionHash, options);
    this.nonceUsed = options?.nonceUsed ?? false;
  }
}

/**
 * A flush signed and recorded as broadcast (`transactionHash`) that the node did not take for now:
 * another pending transaction of the account has its nonce ("replacement transaction
 * underpriced"), or the node's answers disagree. It may yet be mined, so the sweeper handles it as
 * a {@link SweepReceiptLostError}: its deposits are not flushed again while it is looked up and
 * sent again (the very same transaction) until mined, or dropped once its nonce is used.
 */
export class SweepWaitingError extends SweepFlightError {
  override readonly name = 'SweepWaitingError';
}
