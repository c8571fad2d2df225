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
 * A batched flush (sweep) of forwarders did not go through, or its outcome is not known. When it
 * was mined and reverted, `transactionHash` and `paid` (its gas units and their cost in wei) say
 * what it cost. With `transactionHash` and no `paid`, it was sent but waiting for its receipt
 * failed (the cause says why): it may still be mined, look it up by that hash.
 */
export class ForwarderFlushError extends Error {
  override readonly name = 'ForwarderFlushError';
  constructor(
    message: string,
    readonly transactionHash?: `0x${string}`,
    readonly paid?: { gasUsed: bigint; gasCost: bigint },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
