import { BaseError, ContractFunctionRevertedError, getAddress, parseEventLogs, zeroAddress, type Address, type Hash } from 'viem';
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
 * {@link ForwarderFlushError} if the transaction cannot be sent (its cause the node's error) or
 * reverts (with the gas it cost); a failure waiting for the receipt is thrown as is.
 */
export async function flushForwarders(clients: EvmWriteClients, parameters: FlushForwardersParameters): Promise<FlushForwardersReturnType> {
  const { factoryAddress, requests } = parameters;
  if (requests.length === 0) throw new ForwarderFlushError('flushForwarders: no requests; pass at least one deposit address to sweep');
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
    transactionHash = await clients.walletClient.writeContract({ address: factoryAddress, abi: factoryAndForwarderAbi, functionName: 'flush', args: [args] });
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
  const receipt = await clients.publicClient.waitForTransactionReceipt({ hash: transactionHash });
  if (receipt.status !== 'success') {
    throw new ForwarderFlushError(`sweep transaction ${transactionHash} reverted; nothing moved, retry after checking the requests`, transactionHash, {
      gasUsed: receipt.gasUsed,
      gasCost: receipt.gasUsed * receipt.effectiveGasPrice,
    });
  }
  const transfers = parseEventLogs({ abi: forwarderAbi, eventName: 'Flushed', logs: receipt.logs }).map((log) => ({
    forwarder: getAddress(log.address),
    merchant: log.args.merchant,
    token: log.args.token === zeroAddress ? null : log.args.token,
    amount: log.args.amount,
  }));
  return { transactionHash, gasUsed: receipt.gasUsed, gasCost: receipt.gasUsed * receipt.effectiveGasPrice, forwarders, transfers };
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
