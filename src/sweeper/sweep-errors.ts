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
