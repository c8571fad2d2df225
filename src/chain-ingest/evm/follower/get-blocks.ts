import type { Address, Hex } from 'viem';
import type { RpcEndpoints } from './rpc-endpoints.ts';
import { rpcValueReader, toQuantity, type RpcValueReader } from './rpc-values.ts';

export type BlockHeader = { number: number; hash: string; parentHash: string };

/** The fields of a transaction the follower uses. */
export type BlockTransaction = {
  hash: string;
  transactionIndex: number;
  from: Address;
  /** null for a contract creation. */
  to: Address | null;
  value: bigint;
};

export type BlockWithTransactions = BlockHeader & {
  transactions: BlockTransaction[];
  /** The block's logs bloom, when the node reports a well-formed one. */
  logsBloom: Hex | null;
};

/**
 * Reads blocks `from..to` with their full transactions (`eth_getBlockByNumber(n, true)`), sent
 * together so that they go out as JSON-RPC batches. Returns the blocks up to the first one the
 * node does not have yet (an endpoint behind the head the follower heard of).
 */
export async function getBlocksWithTransactions(
  rpc: RpcEndpoints,
  parameters: { network: string; from: number; to: number },
): Promise<BlockWithTransactions[]> {
  const { network, from, to } = parameters;
  const numbers = Array.from({ length: Math.max(0, to - from + 1) }, (_, index) => from + index);
  const raw = await Promise.all(
    numbers.map((number) => rpc.request('eth_getBlockByNumber', [toQuantity(number), true])),
  );
  const read = rpcValueReader(network, 'eth_getBlockByNumber');
  const blocks: BlockWithTransactions[] = [];
  for (const [index, value] of raw.entries()) {
    if (value === null) break;
    const block = parseBlockWithTransactions(read, value, numbers[index]!);
    blocks.push(block);
  }
  return blocks;
}

/** Reads one block's header (`eth_getBlockByNumber(n, false)`); null when the node has no block there. */
export async function getBlockHeader(
  rpc: RpcEndpoints,
  parameters: { network: string; number: number },
): Promise<BlockHeader | null> {
  const value = await rpc.request('eth_getBlockByNumber', [toQuantity(parameters.number), false]);
  if (value === null) return null;
  return parseHeader(rpcValueReader(parameters.network, 'eth_getBlockByNumber'), value, parameters.number);
}

function parseHeader(
  read: RpcValueReader,
  value: unknown,
  expectedNumber: number,
): BlockHeader & { raw: Record<string, unknown> } {
  const raw = read.record(value, `block ${expectedNumber}`);
  const number = read.smallQuantity(raw.number, `block ${expectedNumber} number`);
  if (number !== expectedNumber) read.fail(`asked for block ${expectedNumber}, the node answered with block ${number}`);
  return {
    number,
    hash: read.hash(raw.hash, `block ${number} hash`),
    parentHash: read.hash(raw.parentHash, `block ${number} parentHash`),
    raw,
  };
}

function parseBlockWithTransactions(
  read: RpcValueReader,
  value: unknown,
  expectedNumber: number,
): BlockWithTransactions {
  const { raw, ...header } = parseHeader(read, value, expectedNumber);
  if (!Array.isArray(raw.transactions)) read.fail(`block ${header.number} has no transactions array`);
  const transactions = (raw.transactions as unknown[]).map((item, position): BlockTransaction => {
    const where = `block ${header.number} transaction ${position}`;
    const transaction = read.record(item, `${where} (full transaction objects were asked for)`);
    return {
      hash: read.hash(transaction.hash, `${where} hash`),
      transactionIndex:
        transaction.transactionIndex === undefined || transaction.transactionIndex === null
          ? position
          : read.smallQuantity(transaction.transactionIndex, `${where} transactionIndex`),
      from: read.address(transaction.from, `${where} from`),
      to: transaction.to === null || transaction.to === undefined ? null : read.address(transaction.to, `${where} to`),
      value: read.quantity(transaction.value, `${where} value`),
    };
  });
  const logsBloom =
    typeof raw.logsBloom === 'string' && /^0x[0-9a-fA-F]{512}$/.test(raw.logsBloom)
      ? (raw.logsBloom.toLowerCase() as Hex)
      : null;
  return { ...header, transactions, logsBloom };
}
