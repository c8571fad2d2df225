/**
 * The contract between chain-ingest and the actors: what followers publish on the bus.
 *
 *   chain.<network>.transfer  a transfer to some address seen in a block (not yet final)
 *   chain.<network>.reorg     blocks that left the canonical chain; their transfers are void
 *   chain.<network>.final     a block that reached its network's confirmation depth
 *
 * Amounts are integer strings in the asset's own chain units. Every message carries a
 * deterministic `messageId`, so the bus drops a republished duplicate and consumers can dedupe.
 */
export type ChainAsset = {
  /** Token contract address, or `native` for the network's coin. */
  address: string;
  symbol: string;
  decimals: number;
};

export type ChainTransferMessage = {
  type: 'transfer';
  network: string;
  chainId: number;
  transactionHash: string;
  /**
   * Log index of an ERC-20 Transfer; -1 for a transaction's own native value; -2 and below for
   * native coin a contract sent inside it, -1 - (the call's ordinal among the trace's frames moving
   * value, depth-first: the same from every node), found by recovery only (see evm/internal-transfers.ts).
   */
  logIndex: number;
  blockNumber: number;
  blockHash: string;
  from: string;
  to: string;
  asset: ChainAsset;
  amount: string;
  /** Solana Pay reference key, when the rail identifies payments by reference instead of address. */
  reference: string | null;
  observedAt: string;
};

export type ChainReorgMessage = {
  type: 'reorg';
  network: string;
  chainId: number;
  /** Blocks no longer on the canonical chain. */
  removedBlocks: { number: number; hash: string }[];
  /**
   * The chain is final past the removed blocks already (Solana reports a slot gone only then): the
   * chain never comes back to them. Absent when it may (an EVM reorg: their heights are not final).
   */
  final?: true;
  /** Only this transaction's transfers of the removed blocks: see `ChainFinalMessage.transactionHash`. */
  transactionHash?: string;
  observedAt: string;
};

export type ChainFinalMessage = {
  type: 'final';
  network: string;
  chainId: number;
  blockNumber: number;
  blockHash: string;
  /**
   * Only this transaction's transfers of the block are final (Solana: finality is learnt per
   * signature, and a slot holds many); absent, every transfer of the block is.
   */
  transactionHash?: string;
  observedAt: string;
};

export type ChainMessage = ChainTransferMessage | ChainReorgMessage | ChainFinalMessage;

export class ChainMessageError extends Error {
  override readonly name = 'ChainMessageError';
}

export const chainSubject = (network: string, type: ChainMessage['type']) => `chain.${network}.${type}`;
export const CHAIN_SUBJECTS = 'chain.>';
/** Every chain message of one network. */
export const chainSubjects = (network: string) => `chain.${network}.>`;

/** Whether the transfer id `id` names a transfer of `transactionHash` (ids are network:hash:index). */
export const ofTransaction = (id: string, network: string, transactionHash: string) =>
  id.startsWith(transferId({ network, transactionHash, logIndex: 0 }).slice(0, -1));

/** Hex hashes are case-insensitive and keyed lowercase; a base58 Solana signature is case-sensitive and kept. */
export const transferId = (m: Pick<ChainTransferMessage, 'network' | 'transactionHash' | 'logIndex'>) =>
  `${m.network}:${/^(0x)?[0-9a-fA-F]+$/.test(m.transactionHash) ? m.transactionHash.toLowerCase() : m.transactionHash}:${m.logIndex}`;

export function chainMessageId(message: ChainMessage): string {
  switch (message.type) {
    case 'transfer':
      return `transfer:${transferId(message)}:${message.blockHash.toLowerCase()}`;
    case 'reorg':
      return `reorg:${message.network}:${message.removedBlocks.map((b) => b.hash.toLowerCase()).join(',')}${ofOne(message)}`;
    case 'final':
      return `final:${message.network}:${message.blockHash.toLowerCase()}${ofOne(message)}`;
  }
}

/** A final or reorg of one transaction is another message than its block's, or another transaction's. */
const ofOne = (message: { transactionHash?: string }) =>
  message.transactionHash === undefined ? '' : `:${message.transactionHash}`;

export function encodeChainMessage(message: ChainMessage): { subject: string; data: Uint8Array; messageId: string } {
  return {
    subject: chainSubject(message.network, message.type),
    data: Buffer.from(JSON.stringify(message)),
    messageId: chainMessageId(message),
  };
}

const NETWORK = /^[a-z0-9][a-z0-9-]*$/;
const HEX = /^0x[0-9a-fA-F]+$/;

function need<T>(ok: boolean, value: T, what: string): T {
  if (!ok) throw new ChainMessageError(`${what} is missing or malformed`);
  return value;
}

const str = (o: Record<string, unknown>, k: string) =>
  need(typeof o[k] === 'string' && (o[k] as string).length > 0, o[k] as string, k);
const int = (o: Record<string, unknown>, k: string, min = 0) =>
  need(Number.isSafeInteger(o[k]) && (o[k] as number) >= min, o[k] as number, k);

/** The transaction a final or reorg is limited to, when it names one. */
const transactionOf = (o: Record<string, unknown>): { transactionHash?: string } =>
  o.transactionHash === undefined ? {} : { transactionHash: str(o, 'transactionHash') };

/** Parse and check a bus message; throws ChainMessageError naming the bad field. */
export function parseChainMessage(subject: string, data: Uint8Array): ChainMessage {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(data).toString('utf8'));
  } catch {
    throw new ChainMessageError('message is not JSON');
  }
  if (typeof raw !== 'object' || raw === null) throw new ChainMessageError('message is not an object');
  const o = raw as Record<string, unknown>;
  const type = o.type;
  const network = need(typeof o.network === 'string' && NETWORK.test(o.network), o.network as string, 'network');
  if (type !== 'transfer' && type !== 'reorg' && type !== 'final')
    throw new ChainMessageError('type must be transfer, reorg or final');
  if (subject !== chainSubject(network, type))
    throw new ChainMessageError(`subject ${subject} does not match ${chainSubject(network, type)}`);
  const chainId = int(o, 'chainId', 1);
  const observedAt = str(o, 'observedAt');
  if (type === 'transfer') {
    const asset = need(typeof o.asset === 'object' && o.asset !== null, o.asset as Record<string, unknown>, 'asset');
    const amount = need(typeof o.amount === 'string' && /^[0-9]+$/.test(o.amount), o.amount as string, 'amount');
    const decimals = need(
      Number.isInteger(asset.decimals) && (asset.decimals as number) >= 0 && (asset.decimals as number) <= 36,
      asset.decimals as number,
      'asset.decimals',
    );
    return {
      type,
      network,
      chainId,
      observedAt,
      transactionHash: str(o, 'transactionHash'),
      logIndex: int(o, 'logIndex', Number.MIN_SAFE_INTEGER),
      blockNumber: int(o, 'blockNumber'),
      blockHash: need(typeof o.blockHash === 'string' && HEX.test(o.blockHash), o.blockHash as string, 'blockHash'),
      from: str(o, 'from'),
      to: str(o, 'to'),
      asset: { address: str(asset, 'address'), symbol: str(asset, 'symbol'), decimals },
      amount,
      reference: typeof o.reference === 'string' ? o.reference : null,
    };
  }
  if (type === 'reorg') {
    const blocks = need(
      Array.isArray(o.removedBlocks) && o.removedBlocks.length > 0,
      o.removedBlocks as Record<string, unknown>[],
      'removedBlocks',
    );
    return {
      type,
      network,
      chainId,
      observedAt,
      removedBlocks: blocks.map((b) => ({ number: int(b, 'number'), hash: str(b, 'hash') })),
      ...(o.final === true ? { final: true as const } : {}),
      ...transactionOf(o),
    };
  }
  return {
    type,
    network,
    chainId,
    observedAt,
    blockNumber: int(o, 'blockNumber'),
    blockHash: str(o, 'blockHash'),
    ...transactionOf(o),
  };
}
