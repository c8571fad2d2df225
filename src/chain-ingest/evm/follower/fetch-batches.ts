import type { Hex } from 'viem';
import type { WatchedAddresses } from '../../watched-addresses.ts';
import { LogRangeError, RpcEndpointsError } from './errors.ts';
import type { FollowedToken } from './extract-transfers.ts';
import { getBlocksWithTransactions, type BlockWithTransactions } from './get-blocks.ts';
import { getReceiptStatuses } from './get-receipt-statuses.ts';
import {
  ERC20_TRANSFER_TOPIC,
  getTransferLogs,
  type AdaptiveRange,
  type TokenTransferLog,
} from './get-transfer-logs.ts';
import { bloomMayContain } from './logs-bloom.ts';
import type { RpcEndpoints } from './rpc-endpoints.ts';
import { receiptsNeeded, type FetchedBatch, type FetchedReceipt } from './sync-step.ts';

export type BatchFetcherDeps = {
  rpc: RpcEndpoints;
  network: string;
  tokens: readonly FollowedToken[];
  watched: WatchedAddresses;
  /** Blocks per batch (one JSON-RPC batch of eth_getBlockByNumber). */
  blockBatchSize: number;
  /** The eth_getLogs span; one range serves several batches. */
  logRange: AdaptiveRange;
  signal: AbortSignal;
  log(line: string): void;
  /**
   * Resolves once `watched` holds every address created before now (see RailFollowerContext): asked
   * after a batch's blocks are read, so a payment in them was sent to an address already watched.
   */
  watchedCurrent?(): Promise<void>;
  /** See EvmFollowerDeps.nativeTransfers. */
  nativeTransfers?(transactionHashes: readonly string[]): Promise<ReadonlySet<string>>;
};

export type BatchFetcher = {
  /**
   * The batches from `from` on, in order, up to `upTo()` (asked again for each batch, so new heads
   * extend the run). While the caller handles one batch the next is already being read; it is read
   * only when the one before was complete (a short batch means the endpoint has no more yet). Leaving
   * the loop early waits for that read, so nothing is in flight once it returns.
   */
  batches(from: number, upTo: () => number): AsyncGenerator<FetchedBatch>;
  /** Reads the receipt statuses of transactions a batch lacks (see `receipts-missing`). */
  receipts(transactionHashes: readonly string[]): Promise<Map<string, FetchedReceipt | null>>;
  counters(): { blocksRead: number; bloomRechecks: number };
};

/** The eth_getLogs answer for `from..to` (`to` may have shrunk from what was planned after a refusal). */
type LogSpan = { from: number; to: number; logs: TokenTransferLog[] };

/**
 * Reads what the sync step needs, batch by batch: blocks with their transactions, the registry
 * tokens' Transfer logs (one adaptive eth_getLogs range for several batches), logs rechecked by block
 * hash where a block's bloom disagrees with the range answer, and the receipts of native transfers
 * to watched addresses.
 */
export function createBatchFetcher(deps: BatchFetcherDeps): BatchFetcher {
  const { rpc, network, watched, blockBatchSize, logRange, signal, log } = deps;
  const tokenAddresses = deps.tokens.map((token) => token.address);
  let blocksRead = 0;
  let bloomRechecks = 0;

  /** The Transfer logs of `from..to`, narrowing the range while the endpoint refuses it. */
  const readLogSpan = async (from: number, planned: number): Promise<LogSpan> => {
    let to = planned;
    for (;;) {
      try {
        const logs = await getTransferLogs(rpc, { network, tokens: tokenAddresses, from, to });
        logRange.succeeded();
        return { from, to, logs };
      } catch (error) {
        // Any failure narrows the range: a node may refuse, time out, or send an answer larger than
        // the client accepts (viem's 10 MiB limit shows up as a transport error). An endpoint that is
        // really down fails at every size, and the range grows back after successes.
        if (!(error instanceof RpcEndpointsError) || signal.aborted) throw error;
        const span = to - from + 1;
        if (!logRange.failed(span)) throw new LogRangeError(network, BigInt(from), { cause: error });
        to = from + logRange.current() - 1;
        log(
          `eth_getLogs over ${span} blocks failed (${error.failures.map((failure) => failure.message).join('; ')}); trying ${to - from + 1} blocks`,
        );
      }
    }
  };

  const readBlocks = async (from: number, to: number): Promise<BlockWithTransactions[]> => {
    const blocks = await getBlocksWithTransactions(rpc, { network, from, to });
    blocksRead += blocks.length;
    return blocks;
  };

  /**
   * Blocks without a Transfer log in the range answer whose logs bloom says they may hold one of a
   * registry token: the range may have been answered from another version of the chain, or by a
   * backend whose log index lags. Ask again for exactly those blocks (by hash).
   */
  const recheckByBloom = async (
    blocks: readonly BlockWithTransactions[],
    found: readonly TokenTransferLog[],
  ): Promise<TokenTransferLog[]> => {
    if (tokenAddresses.length === 0) return [];
    const withLogs = new Set(found.map((entry) => entry.blockNumber));
    const suspicious = blocks.filter(
      (block) =>
        !withLogs.has(block.number) &&
        block.logsBloom !== null &&
        bloomMayContain(block.logsBloom, ERC20_TRANSFER_TOPIC) &&
        tokenAddresses.some((address) => bloomMayContain(block.logsBloom!, address.toLowerCase() as Hex)),
    );
    if (suspicious.length === 0) return [];
    bloomRechecks += suspicious.length;
    const rechecked = await Promise.all(
      suspicious.map((block) =>
        getTransferLogs(rpc, { network, tokens: tokenAddresses, blockHash: block.hash, blockNumber: block.number }),
      ),
    );
    return rechecked.flat();
  };

  const receipts = async (transactionHashes: readonly string[]): Promise<Map<string, FetchedReceipt | null>> => {
    if (transactionHashes.length === 0) return new Map();
    const statuses = await getReceiptStatuses(rpc, { network, transactionHashes });
    const succeeded = transactionHashes.filter((_, index) => statuses[index]?.succeeded === true);
    const native =
      deps.nativeTransfers && succeeded.length > 0 ? await deps.nativeTransfers(succeeded) : new Set(succeeded);
    // Only succeeded ones are asked about; the receipt's status stays as the node gave it.
    return new Map(
      transactionHashes.map((hash, index) => {
        const status = statuses[index] ?? null;
        if (status === null || !status.succeeded || native.has(hash)) return [hash, status];
        return [hash, { ...status, nonNativeValue: true }];
      }),
    );
  };

  /**
   * One batch from `from`, within `span` (the log range it belongs to, started here when absent).
   * The blocks go out in the same tick as a new eth_getLogs, so that once caught up a new block costs
   * one HTTP request (a JSON-RPC batch of both).
   */
  const readBatch = async (
    from: number,
    upTo: number,
    span: LogSpan | undefined,
  ): Promise<{ batch: FetchedBatch; span: LogSpan }> => {
    const plannedSpanTo =
      span?.to ?? Math.min(upTo, from + (tokenAddresses.length > 0 ? logRange.current() : blockBatchSize) - 1);
    const logSpan =
      span !== undefined
        ? Promise.resolve(span)
        : tokenAddresses.length > 0
          ? readLogSpan(from, plannedSpanTo)
          : Promise.resolve({ from, to: plannedSpanTo, logs: [] });
    const plannedTo = Math.min(plannedSpanTo, from + blockBatchSize - 1);
    const reading = readBlocks(from, plannedTo);
    reading.catch(() => undefined);
    const { from: spanFrom, to: spanTo, logs: spanLogs } = await logSpan;
    const to = Math.min(plannedTo, spanTo);
    // Blocks read before the log range shrank are cut to it: a block is never processed without its logs.
    const blocks = (await reading).filter((block) => block.number <= to);
    const logs = spanLogs.filter((entry) => entry.blockNumber >= from && entry.blockNumber <= to);
    await deps.watchedCurrent?.();
    const [rechecked, statuses] = await Promise.all([
      recheckByBloom(blocks, logs),
      receipts(receiptsNeeded(network, blocks, watched)),
    ]);
    return {
      batch: { from, to, blocks, logs: [...logs, ...rechecked], receipts: statuses },
      span: { from: spanFrom, to: spanTo, logs: spanLogs },
    };
  };

  return {
    async *batches(from, upTo) {
      if (from > upTo()) return;
      let next: Promise<{ batch: FetchedBatch; span: LogSpan }> | undefined = readBatch(from, upTo(), undefined);
      try {
        while (next !== undefined) {
          const { batch, span } = await next;
          next = undefined;
          const complete = batch.blocks.length === batch.to - batch.from + 1;
          const nextFrom = batch.to + 1;
          if (complete && nextFrom <= upTo() && !signal.aborted) {
            next = readBatch(nextFrom, upTo(), nextFrom <= span.to ? span : undefined);
            next.catch(() => undefined);
          }
          yield batch;
        }
      } finally {
        // Left early (a reorg, a short batch, an error, stop()): let the read ahead settle first.
        await next?.catch(() => undefined);
      }
    },
    receipts,
    counters: () => ({ blocksRead, bloomRechecks }),
  };
}
