import {
  BaseError,
  ContractFunctionRevertedError,
  getAddress,
  parseEventLogs,
  TransactionReceiptNotFoundError,
  zeroAddress,
  type Address,
  type Hash,
  type TransactionReceipt,
} from 'viem';
import { forwarderAbi, forwarderFactoryAbi } from './abis.ts';
import type { EvmWriteClients } from './clients.ts';
import { deriveDepositAddress, sessionSaltOf } from './deposit-address.ts';
import { ForwarderFlushError } from './errors.ts';

export type ForwarderFlushRequest = {
  merchantAddress: Address;
  /** The checkout session id (uuid) the deposit address was derived from. */
  sessionId: string;
  /** ERC-20 contracts to sweep (their whole balance). */
  tokens?: readonly Address[];
  /** Sweep the native coin too; true unless given. */
  native?: boolean;
};

export type FlushForwardersParameters = {
  factoryAddress: Address;
  requests: readonly ForwarderFlushRequest[];
  /**
   * Called with the transaction's hash once it is sent and awaited before waiting for the
   * receipt: the place to record durably what was broadcast.
   */
  onSent?: (transactionHash: Hash) => Promise<void>;
};

/** The factory's ABI plus the forwarder's, so reverts inside a forwarder (NativeTransferFailed, ...) are decoded too. */
const factoryAndForwarderAbi = [...forwarderFactoryAbi, ...forwarderAbi] as const;

/** One transfer a forwarder made to its merchant (`token` null for the native coin). */
export type ForwardedTransfer = { forwarder: Address; merchant: Address; token: Address | null; amount: bigint };

export type FlushForwardersReturnType = {
  transactionHash: Hash;
  gasUsed: bigint;
  /** gasUsed × effective gas price, in wei. */
  gasCost: bigint;
  /** The deposit address of each request, in request order. */
  forwarders: Address[];
  transfers: ForwardedTransfer[];
};

/**
 * Sweeps deposit addresses in one transaction through `ForwarderFactory.flush`: each forwarder is
 * deployed if needed, then its native coin (unless `native: false`) and `tokens` go to its
 * merchant. Any account may send it; funds only ever reach the merchants. Throws
 * {@link ForwarderFlushError} if the transaction cannot be sent (its cause the node's error),
 * reverts (with the gas it cost), or was sent but its receipt could not be had (with its hash,
 * the cause the failure of `onSent` or of the wait; {@link findFlush} looks it up later).
 */
export async function flushForwarders(
  clients: EvmWriteClients,
  parameters: FlushForwardersParameters,
): Promise<FlushForwardersReturnType> {
  const { factoryAddress, requests } = parameters;
  if (requests.length === 0)
    throw new ForwarderFlushError('flushForwarders: no requests; pass at least one deposit address to sweep');
  const forwarders = requests.map((request) =>
    deriveDepositAddress({ factoryAddress, merchantAddress: request.merchantAddress, sessionId: request.sessionId }),
  );
  const args = requests.map((request) => ({
    merchant: request.merchantAddress,
    sessionSalt: sessionSaltOf(request.sessionId),
    tokens: [...(request.tokens ?? [])],
    native: request.native ?? true,
  }));

  let transactionHash: Hash;
  try {
    transactionHash = await clients.walletClient.writeContract({
      address: factoryAddress,
      abi: factoryAndForwarderAbi,
      functionName: 'flush',
      args: [args],
    });
  } catch (error) {
    const reason = reasonOf(error);
    throw new ForwarderFlushError(
      `sweeping ${requests.length} deposit address(es) through factory ${factoryAddress} was rejected: ${reason}. ` +
        'Check that the factory is deployed on this chain, the tokens are ERC-20 contracts and every merchant wallet accepts the funds.',
      undefined,
      undefined,
      { cause: error },
    );
  }
  let receipt: TransactionReceipt;
  try {
    await parameters.onSent?.(transactionHash);
    receipt = await clients.publicClient.waitForTransactionReceipt({ hash: transactionHash });
  } catch (error) {
    throw new ForwarderFlushError(
      `sweep transaction ${transactionHash} was sent but its receipt could not be had: ${reasonOf(error)}. It may still be mined: look it up by its hash before sweeping these deposit addresses again.`,
      transactionHash,
      undefined,
      { cause: error },
    );
  }
  const mined = minedFlushOf(receipt);
  if (mined.reverted) {
    throw new ForwarderFlushError(
      `sweep transaction ${transactionHash} reverted; nothing moved, retry after checking the requests`,
      transactionHash,
      {
        gasUsed: mined.gasUsed,
        gasCost: mined.gasCost,
      },
    );
  }
  return { transactionHash, gasUsed: mined.gasUsed, gasCost: mined.gasCost, forwarders, transfers: mined.transfers };
}

/** A flush transaction as mined: whether it reverted, its gas, and the transfers it made (none when reverted). */
export type MinedFlush = {
  transactionHash: Hash;
  reverted: boolean;
  gasUsed: bigint;
  gasCost: bigint;
  transfers: ForwardedTransfer[];
};

function minedFlushOf(receipt: TransactionReceipt): MinedFlush {
  const reverted = receipt.status !== 'success';
  const transfers = reverted
    ? []
    : parseEventLogs({ abi: forwarderAbi, eventName: 'Flushed', logs: receipt.logs }).map((log) => ({
        forwarder: getAddress(log.address),
        merchant: log.args.merchant,
        token: log.args.token === zeroAddress ? null : log.args.token,
        amount: log.args.amount,
      }));
  return {
    transactionHash: receipt.transactionHash,
    reverted,
    gasUsed: receipt.gasUsed,
    gasCost: receipt.gasUsed * receipt.effectiveGasPrice,
    transfers,
  };
}

/**
 * The flush `transactionHash` as mined, or null when it is not mined (not yet, or never: dropped
 * or replaced). For a flush whose receipt {@link flushForwarders} could not get. Node failures are
 * thrown as viem raises them.
 */
export async function findFlush(
  clients: Pick<EvmWriteClients, 'publicClient'>,
  transactionHash: Hash,
): Promise<MinedFlush | null> {
  try {
    return minedFlushOf(await clients.publicClient.getTransactionReceipt({ hash: transactionHash }));
  } catch (error) {
    if (error instanceof TransactionReceiptNotFoundError) return null;
    throw error;
  }
}

/** viem's short message, with the decoded custom error (e.g. `NativeTransferFailed(0x…, 1000)`) when there is one. */
function reasonOf(error: unknown): string {
  if (!(error instanceof BaseError)) return error instanceof Error ? error.message : String(error);
  const reverted = error.walk((cause) => cause instanceof ContractFunctionRevertedError);
  if (reverted instanceof ContractFunctionRevertedError && reverted.data !== undefined) {
    const args = (reverted.data.args ?? []).map((arg) => String(arg)).join(', ');
    return `reverted with ${reverted.data.errorName}(${args})`;
  }
  return error.shortMessage;
}
