import type { RpcEndpoints } from './rpc-endpoints.ts';
import { rpcValueReader } from './rpc-values.ts';

export type ReceiptStatus = { transactionHash: string; blockHash: string; succeeded: boolean };

/**
 * Reads the receipts of the given transactions (sent together, so one JSON-RPC batch) and says
 * whether each succeeded. A transaction with value to a contract can revert, and then moved
 * nothing. Null for a receipt the node does not have (yet).
 */
export async function getReceiptStatuses(rpc: RpcEndpoints, parameters: { network: string; transactionHashes: readonly string[]}): Promise<(ReceiptStatus | null)[]> {
  const { network, transactionHashes } = parameters;
  const raw = await Promise.all(transactionHashes.map((hash) => rpc.request('eth_getTransactionReceipt', [hash])));
  const read = rpcValueReader(network, 'eth_getTransactionReceipt');
  return raw.map((value, index) => {
    if (value === null) return null;
    const where = `receipt of ${transactionHashes[index]}`;
    const receipt = read.record(value, where);
    // Receipts before Byzantium have a state root instead of a status; none of the followed chains has such blocks in reach.
    const succeeded = receipt.status === undefined || receipt.status === null ? true : read.quantity(receipt.status, `${where} status`) === 1n;
    return { transactionHash: read.hash(receipt.transactionHash, `${where} transactionHash`), blockHash: read.hash(receipt.blockHash, `${where} blockHash`), succeeded };
  });
}
