/** A sweep transaction as mined: its hash and what the operator paid for it. */
export type SweepTransaction = { transactionHash: string; gasUsed: bigint; gasCost: bigint };

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
  override readonly name = 'SweepNodeError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * A flush was sent (`transactionHash`) but its outcome is not known: waiting for its receipt
 * failed (or recording the broadcast did). It may be mined later, or never: the sweeper does not
 * flush its deposits again but looks the transaction up by its hash (SweepExecutor.minedSweep)
 * until it is mined, or forgets it once it has not been for long enough.
 */
export class SweepReceiptLostError extends Error {
  override readonly name = 'SweepReceiptLostError';
  constructor(
    message: string,
    readonly transactionHash: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
