import type { ChainAsset, ChainTransferMessage } from '../../chain-messages.ts';
import type { WatchedAddresses } from '../../watched-addresses.ts';
import type { BlockWithTransactions } from './get-blocks.ts';
import type { TokenTransferLog } from './get-transfer-logs.ts';

/** A registry token of the followed network. */
export type FollowedToken = { address: string; symbol: string; decimals: number };

/**
 * Native transfers worth a receipt check: value > 0 to a watched address. Only top-level
 * transactions are seen; value moved by a contract (an internal call, e.g. from a smart wallet or
 * a multisend) is not, since that would need a trace API most endpoints do not offer.
 */
export function nativeTransferCandidates(
  network: string,
  blocks: readonly BlockWithTransactions[],
  watched: WatchedAddresses,
) {
  return blocks.flatMap((block) =>
    block.transactions
      .filter(
        (transaction) => transaction.to !== null && transaction.value > 0n && watched.has(network, transaction.to),
      )
      .map((transaction) => ({ block, transaction })),
  );
}

/**
 * The transfer messages of some blocks, in chain order (block, transaction index, then the native
 * value before the transaction's logs): native transfers of `succeeded` candidates and token
 * Transfer logs of a non-zero value to watched addresses.
 */
export function extractTransfers(parameters: {
  network: string;
  chainId: number;
  nativeAsset: ChainAsset;
  tokens: readonly FollowedToken[];
  watched: WatchedAddresses;
  blocks: readonly BlockWithTransactions[];
  logs: readonly TokenTransferLog[];
  /** Hashes of native candidates whose transaction succeeded. */
  succeededNative: ReadonlySet<string>;
  observedAt: string;
}): ChainTransferMessage[] {
  const { network, chainId, watched, observedAt } = parameters;
  const tokens = new Map(parameters.tokens.map((token) => [token.address.toLowerCase(), token]));
  const found: { order: [number, number, number]; message: ChainTransferMessage }[] = [];
  for (const { block, transaction } of nativeTransferCandidates(network, parameters.blocks, watched)) {
    if (!parameters.succeededNative.has(transaction.hash) || transaction.to === null) continue;
    found.push({
      order: [block.number, transaction.transactionIndex, -1],
      message: {
        type: 'transfer',
        network,
        chainId,
        transactionHash: transaction.hash,
        logIndex: -1,
        blockNumber: block.number,
        blockHash: block.hash,
        from: transaction.from,
        to: transaction.to,
        asset: parameters.nativeAsset,
        amount: transaction.value.toString(),
        reference: null,
        observedAt,
      },
    });
  }
  for (const log of parameters.logs) {
    const token = tokens.get(log.token);
    // A zero-value Transfer moves nothing (and is the address-poisoning trick): never a payment.
    if (token === undefined || log.value === 0n || !watched.has(network, log.to)) continue;
    found.push({
      order: [log.blockNumber, log.transactionIndex, log.logIndex],
      message: {
        type: 'transfer',
        network,
        chainId,
        transactionHash: log.transactionHash,
        logIndex: log.logIndex,
        blockNumber: log.blockNumber,
        blockHash: log.blockHash,
        from: log.from,
        to: log.to,
        asset: { address: token.address, symbol: token.symbol, decimals: token.decimals },
        amount: log.value.toString(),
        reference: null,
        observedAt,
      },
    });
  }
  return found
    .sort((a, b) => a.order[0] - b.order[0] || a.order[1] - b.order[1] || a.order[2] - b.order[2])
    .map((entry) => entry.message);
}
