import {
  erc20Abi,
  getAddress,
  HttpRequestError,
  SocketClosedError,
  TimeoutError,
  WaitForTransactionReceiptTimeoutError,
  WebSocketRequestError,
  type Address,
  type Hash,
  type Hex,
} from 'viem';
import {
  SweepNodeError,
  SweepReceiptLostError,
  SweepRejectedError,
  SweepRevertedError,
  SweepWaitingError,
} from '../../sweeper/sweep-errors.ts';
import type { SweepExecutor } from '../../sweeper/sweeper.ts';
import type { EvmWriteClients } from './contracts/clients.ts';
import { ForwarderFlushError } from './contracts/errors.ts';
import {
  findFlush,
  flushForwarders,
  nodeHasTransaction,
  sendFlushAgain,
  type MinedFlush,
} from './contracts/flush-forwarders.ts';

/** Node.js network error codes: the node could not be reached or dropped the connection. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
]);

/**
 * Whether `error` (or one of its causes) is the node failing rather than the transaction: no
 * connection, a timeout, an HTTP 5xx or 429. A revert is never one.
 */
export function isNodeFailure(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 10; depth += 1, current = current.cause) {
    if (current instanceof HttpRequestError)
      return current.status === undefined || current.status >= 500 || current.status === 429;
    if (
      current instanceof TimeoutError ||
      current instanceof WaitForTransactionReceiptTimeoutError ||
      current instanceof SocketClosedError ||
      current instanceof WebSocketRequestError
    )
      return true;
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return true;
  }
  return false;
}

/**
 * A flush's failure as the sweeper's port names it: a mined revert with its gas, a signed flush the
 * node refused (never sent; `nonceUsed` when another transaction took its nonce), one it did not
 * take for now (another pending transaction has its nonce), a flush sent or maybe sent whose
 * receipt was not had (with its hash), the node's failure, or as it came.
 */
export function sweepFailureOf(error: unknown): unknown {
  if (error instanceof ForwarderFlushError && error.transactionHash !== undefined) {
    const { transactionHash, refusal } = error;
    if (error.paid !== undefined) return new SweepRevertedError(error.message, { transactionHash, ...error.paid });
    if (refusal === 'nonce-held') return new SweepWaitingError(error.message, transactionHash, { cause: error });
    if (refusal !== null)
      return new SweepRejectedError(error.message, transactionHash, {
        cause: error,
        nonceUsed: refusal === 'nonce-used',
      });
    return new SweepReceiptLostError(error.message, transactionHash, { cause: error });
  }
  if (isNodeFailure(error))
    return new SweepNodeError(error instanceof Error ? error.message : String(error), { cause: error });
  return error;
}

/**
 * Sweeps through the network's ForwarderFactory with the operator's gas key (never a merchant
 * key): deploys each forwarder if needed and flushes its tokens and native coin to its merchant.
 * A flush's receipt is waited for `receiptTimeoutMs` at most (see {@link flushForwarders}).
 */
export function createEvmSweepExecutor(deps: {
  clients: EvmWriteClients;
  factoryAddress: Address;
  receiptTimeoutMs?: number;
}): SweepExecutor {
  const { publicClient } = deps.clients;
  /** Whether the deposit holds a nonzero balance of one of `assets` ('native' for the coin). */
  async function holdsFunds(depositAddress: string, assets: string[]): Promise<boolean> {
    const address = getAddress(depositAddress);
    const balances = await Promise.all(
      assets.map((asset) =>
        asset === 'native'
          ? publicClient.getBalance({ address })
          : publicClient.readContract({
              address: getAddress(asset),
              abi: erc20Abi,
              functionName: 'balanceOf',
              args: [address],
            }),
      ),
    );
    return balances.some((balance) => balance > 0n);
  }
  return {
    async funded(requests) {
      try {
        return await Promise.all(requests.map((r) => holdsFunds(r.depositAddress, r.assets)));
      } catch (error) {
        throw sweepFailureOf(error);
      }
    },
    async flush(requests, beforeSend) {
      // The hook's own failure (recording the broadcast; nothing was sent) is thrown as it came.
      let hookFailed = false;
      try {
        const result = await flushForwarders(deps.clients, {
          factoryAddress: deps.factoryAddress,
          receiptTimeoutMs: deps.receiptTimeoutMs,
          beforeSend: async (signed) => {
            try {
              await beforeSend({
                transactionHash: signed.transactionHash,
                signedTransaction: signed.serializedTransaction,
              });
            } catch (error) {
              hookFailed = true;
              throw error;
            }
          },
          requests: requests.map((r) => ({
            merchantAddress: getAddress(r.merchantAddress),
            sessionId: r.checkoutSessionId,
            tokens: r.assets.filter((a) => a !== 'native').map((a) => getAddress(a)),
            native: r.assets.includes('native'),
          })),
        });
        const { transactionHash, blockNumber, gasUsed, gasCost } = result;
        return { transactionHash, blockNumber, gasUsed, gasCost };
      } catch (error) {
        if (hookFailed) throw error;
        throw sweepFailureOf(error);
      }
    },
    async minedSweep(transactionHash, signedTransaction) {
      const hash = transactionHash as Hash;
      let mined: MinedFlush | null;
      try {
        mined = await findFlush(
          deps.clients,
          hash,
          signedTransaction === null
            ? undefined
            : { transactionHash: hash, serializedTransaction: signedTransaction as Hex },
        );
      } catch (error) {
        throw sweepFailureOf(error);
      }
      return (
        mined && {
          transaction: {
            transactionHash: mined.transactionHash,
            blockNumber: mined.blockNumber,
            gasUsed: mined.gasUsed,
            gasCost: mined.gasCost,
          },
          reverted: mined.reverted,
        }
      );
    },
    async rebroadcast(transactionHash, signedTransaction) {
      const hash = transactionHash as Hash;
      try {
        if (signedTransaction === null) return (await nodeHasTransaction(deps.clients, hash)) ? 'pending' : 'absent';
        const outcome = await sendFlushAgain(deps.clients, {
          transactionHash: hash,
          serializedTransaction: signedTransaction as Hex,
        });
        return outcome === 'refused' ? 'absent' : outcome;
      } catch (error) {
        throw sweepFailureOf(error);
      }
    },
  };
}
