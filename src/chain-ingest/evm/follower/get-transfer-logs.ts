import type { Address } from 'viem';
import type { RpcEndpoints } from './rpc-endpoints.ts';
import { rpcValueReader, toQuantity, type RpcValueReader } from './rpc-values.ts';

/** topic0 of `Transfer(address indexed from, address indexed to, uint256 value)`. */
export const ERC20_TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/** An ERC-20 Transfer log, decoded. */
export type TokenTransferLog = {
  blockNumber: number;
  blockHash: string;
  transactionHash: string;
  transactionIndex: number;
  logIndex: number;
  /** The token contract, lowercase. */
  token: string;
  from: Address;
  to: Address;
  value: bigint;
};

/**
 * Reads the Transfer logs of the given token contracts in blocks `from..to`, or in the one block
 * `blockHash` (EIP-234), with one `eth_getLogs` (all contracts at once, topic0 = Transfer). Logs
 * that do not have the ERC-20 shape
 * (two indexed addresses and a 32-byte value, e.g. an ERC-721 Transfer) are left out.
 */
export async function getTransferLogs(
  rpc: RpcEndpoints,
  parameters: { network: string; tokens: readonly string[] } & (
    | { from: number; to: number }
    | { blockHash: string; blockNumber: number }
  ),
): Promise<TokenTransferLog[]> {
  const { network, tokens } = parameters;
  const [from, to] =
    'blockHash' in parameters ? [parameters.blockNumber, parameters.blockNumber] : [parameters.from, parameters.to];
  if (tokens.length === 0 || to < from) return [];
  const span =
    'blockHash' in parameters
      ? { blockHash: parameters.blockHash }
      : { fromBlock: toQuantity(from), toBlock: toQuantity(to) };
  const value = await rpc.request('eth_getLogs', [{ address: [...tokens], topics: [ERC20_TRANSFER_TOPIC], ...span }]);
  const read = rpcValueReader(network, 'eth_getLogs');
  const what = 'blockHash' in parameters ? `block ${parameters.blockHash}` : `blocks ${from}..${to}`;
  if (!Array.isArray(value)) read.fail(`expected an array of logs for ${what}`);
  const logs: TokenTransferLog[] = [];
  for (const [position, item] of (value as unknown[]).entries()) {
    const where = `log ${position} of ${what}`;
    const log = decodeTransferLog(read, item, where);
    if (log === null) continue;
    if (log.blockNumber < from || log.blockNumber > to)
      read.fail(`${where} is in block ${log.blockNumber}, outside the range asked for`);
    if (!tokens.some((address) => address.toLowerCase() === log.token))
      read.fail(`${where} comes from ${log.token}, which was not asked for`);
    if ('blockHash' in parameters && log.blockHash !== parameters.blockHash.toLowerCase())
      read.fail(`${where} is in block ${log.blockHash}`);
    logs.push(log);
  }
  return logs;
}

/**
 * A log as a node answers it (in eth_getLogs or a receipt), decoded as an ERC-20 Transfer of any
 * contract; null for a removed log or one without the ERC-20 shape (two indexed addresses and a
 * 32-byte value, e.g. an ERC-721 Transfer, or another event).
 */
export function decodeTransferLog(read: RpcValueReader, item: unknown, where: string): TokenTransferLog | null {
  const log = read.record(item, where);
  if (log.removed === true) return null;
  const topics = Array.isArray(log.topics) ? (log.topics as unknown[]) : read.fail(`${where} has no topics`);
  const data = read.hexData(log.data, `${where} data`);
  if (topics.length !== 3 || data.length !== 66) return null;
  const topic0 = read.hash(topics[0], `${where} topic0`);
  if (topic0 !== ERC20_TRANSFER_TOPIC) return null;
  return {
    blockNumber: read.smallQuantity(log.blockNumber, `${where} blockNumber`),
    blockHash: read.hash(log.blockHash, `${where} blockHash`),
    transactionHash: read.hash(log.transactionHash, `${where} transactionHash`),
    transactionIndex: read.smallQuantity(log.transactionIndex, `${where} transactionIndex`),
    logIndex: read.smallQuantity(log.logIndex, `${where} logIndex`),
    token: read.address(log.address, `${where} address`).toLowerCase(),
    from: topicAddress(read.hash(topics[1], `${where} topic1`)),
    to: topicAddress(read.hash(topics[2], `${where} topic2`)),
    value: BigInt(data),
  };
}

/**
 * The address in an indexed address topic (its last 20 bytes), lowercase: checksumming costs a
 * keccak per address, which dominated decoding; addresses are compared lowercase everywhere.
 */
function topicAddress(topic: string): Address {
  return `0x${topic.slice(26).toLowerCase()}`;
}

/**
 * The block span of eth_getLogs requests: starts at the maximum, halves when a node refuses or
 * times out, and doubles back after a few successes in a row.
 */
export type AdaptiveRange = {
  current(): number;
  succeeded(): void;
  /** A request over `span` blocks failed: the range becomes half of it. Returns false when `span` was one block already. */
  failed(span: number): boolean;
};

export function createAdaptiveRange(maximum: number, successesToGrow = 3): AdaptiveRange {
  let range = maximum;
  let successes = 0;
  return {
    current: () => range,
    succeeded() {
      successes += 1;
      if (successes >= successesToGrow && range < maximum) {
        range = Math.min(maximum, range * 2);
        successes = 0;
      }
    },
    failed(span) {
      successes = 0;
      if (span <= 1) return false;
      range = Math.max(1, Math.floor(span / 2));
      return true;
    },
  };
}
