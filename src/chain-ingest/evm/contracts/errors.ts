/** An input to the deposit-address derivation is malformed; `field` names it. */
export class DepositAddressInputError extends Error {
  override readonly name = 'DepositAddressInputError';
  constructor(
    readonly field: 'factoryAddress' | 'merchantAddress' | 'sessionId' | 'sessionSalt',
    readonly value: string,
    message: string,
  ) {
    super(`${field} ${JSON.stringify(value)}: ${message}`);
  }
}

/** A contract deployment transaction failed or did not produce the expected contract. */
export class ContractDeployError extends Error {
  override readonly name = 'ContractDeployError';
  constructor(
    readonly contractName: string,
    message: string,
  ) {
    super(`deploying ${contractName} failed: ${message}`);
  }
}

/**
 * Why a node did not take a signed flush it answered with an error: `refused` outright (it does not
 * have it: never sent), `nonce-used` (another transaction of the account with its nonce was mined:
 * it never can be), `nonce-held` (another one with its nonce is pending, or the node's answers
 * disagree: it may yet be mined, sent again once that one goes).
 */
export type FlushRefusal = 'refused' | 'nonce-used' | 'nonce-held';

/**
 * A batched flush (sweep) of forwarders did not go through, or its outcome is not known. Without
 * `transactionHash` nothing was signed (the node refused to prepare it, say a revert at estimate
 * time). When it was mined and reverted, `transactionHash` and `paid` (its gas units and their cost
 * in wei) say what it cost. With `refusal`, the node answered the send with an error and does not
 * have the transaction (see {@link FlushRefusal}). With `transactionHash` alone it was sent, or may
 * have been (the node did not answer), and its receipt was not had (the cause says why): it may
 * still be mined, look it up by that hash.
 */
export class ForwarderFlushError extends Error {
  override readonly name = 'ForwarderFlushError';
  readonly refusal: FlushRefusal | null;
  constructor(
    message: string,
    readonly transactionHash?: `0x${string}`,
    readonly paid?: { blockNumber?: bigint; gasUsed: bigint; gasCost: bigint },
    options?: { cause?: unknown; refusal?: FlushRefusal },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.refusal = options?.refusal ?? null;
  }
}
