import { decodeTransferLog, type TokenTransferLog } from './get-transfer-logs.ts';
import type { RpcEndpoints } from './rpc-endpoints.ts';
import { rpcValueReader, type RpcValueReader } from './rpc-values.ts';

export type ReceiptStatus = { transactionHash: string; blockHash: string; blockNumber: number; succeeded: boolean };

/** A receipt with the ERC-20 Transfer logs it holds, of any token contract. */
export type TransactionReceipt = ReceiptStatus & { transferLogs: TokenTransferLog[] };

function parseReceiptStatus(
  read: RpcValueReader,
  value: unknown,
  where: string,
): ReceiptStatus & { raw: Record<string, unknown> } {
  const receipt = read.record(value, where);
  // Receipts before Byzantium have a state root instead of a status; none of the followed chains has such blocks in reach.
  const succeeded =
    receipt.status === undefined || receipt.status === null
      ? true
      : read.quantity(receipt.status, `${where} status`) === 1n;
  return {
    transactionHash: read.hash(receipt.transactionHash, `${where} transactionHash`),
    blockHash: read.hash(receipt.blockHash, `${where} blockHash`),
    blockNumber: read.smallQuantity(receipt.blockNumber, `${where} blockNumber`),
    succeeded,
    raw: receipt,
  };
}

/**
 * Reads the receipts of the given transactions (sent together, so one JSON-RPC batch) and says
 * whether each succeeded. A transaction with value to a contract can revert, and then moved
 * nothing. Null for a receipt the node does not have (yet).
 */
export async function getReceiptStatuses(
  rpc: RpcEndpoints,
  parameters: { network: string; transactionHashes: readonly string[] },
): Promise<(ReceiptStatus | null)[]> {
  const { network, transactionHashes } = parameters;
  const raw = await Promise.all(transactionHashes.map((hash) => rpc.request('eth_getTransactionReceipt', [hash])));
  const read = rpcValueReader(network, 'eth_getTransactionReceipt');
  return raw.map((value, index) => {
    if (value === null) return null;
    const { raw: _raw, ...status } = parseReceiptStatus(read, value, `receipt of ${transactionHashes[index]}`);
    return status;
  });
}

/**
 * Reads one transaction's receipt with its ERC-20 Transfer logs decoded (every token contract, not
 * only the registry's: a payer may have sent a token Weir does not take). Null when the node has no
 * receipt (unknown or not yet mined transaction).
 */
export async function getTransactionReceipt(
  rpc: RpcEndpoints,
  parameters: { network: string; transactionHash: string },
): Promise<TransactionReceipt | null> {
  const value = await rpc.request('eth_getTransactionReceipt', [parameters.transactionHash]);
  if (value === null) return null;
  const read = rpcValueReader(parameters.network, 'eth_getTransactionReceipt');
  const where = `receipt of ${parameters.transactionHash}`;
  const { raw, ...status } = parseReceiptStatus(read, value, where);
  if (status.transactionHash !== parameters.transactionHash.toLowerCase())
    read.fail(`${where} is the receipt of ${status.transactionHash}`);
  const logs = Array.isArray(raw.logs) ? (raw.logs as unknown[]) : read.fail(`${where} has no logs array`);
  const transferLogs = logs.flatMap(
    (item, position) => decodeTransferLog(read, item, `${where} log ${position}`) ?? [],
  );
  return { ...status, transferLogs };
}
