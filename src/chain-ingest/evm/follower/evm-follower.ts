import type { Hex } from 'viem';
import type { Bus } from '../../../bus/bus.ts';
import type { Clock } from '../../../shared/clock.ts';
import {
  encodeChainMessage,
  type ChainAsset,
  type ChainMessage,
  type ChainTransferMessage,
} from '../../chain-messages.ts';
import type { WatchedAddresses } from '../../watched-addresses.ts';
import { NATIVE_ASSET_ADDRESS, type EvmNetwork } from '../networks/define-network.ts';
import type { CheckpointStore } from './checkpoint.ts';
import {
  ChainChangedWhileReadingError,
  CheckpointMismatchError,
  DeepReorgError,
  EvmFollowerConfigError,
  EvmFollowerStateError,
  LogRangeError,
  RpcEndpointsError,
  WrongChainError,
} from './errors.ts';
import { extractTransfers, nativeTransferCandidates, type FollowedToken } from './extract-transfers.ts';
import {
  checkLinks,
  checkpointOf,
  dueFinals,
  dueUnreadFinals,
  finalThrough,
  initialState,
  lastProcessed,
  markProcessed,
  oweFinal,
  pendingFinalCount,
  recordBlocks,
  removeAbove,
  settleFinals,
  stateFromCheckpoint,
  windowBlockAt,
  type FollowerState,
} from './follower-state.ts';
import { getBlockHeader, getBlocksWithTransactions, type BlockWithTransactions } from './get-blocks.ts';
import { getBlockNumber, getChainId } from './get-chain-head.ts';
import { getReceiptStatuses } from './get-receipt-statuses.ts';
import {
  createAdaptiveRange,
  ERC20_TRANSFER_TOPIC,
  getTransferLogs,
  type TokenTransferLog,
} from './get-transfer-logs.ts';
import { bloomMayContain } from './logs-bloom.ts';
import { subscribeNewHeads, type NewHead, type NewHeadsSubscription } from './new-heads.ts';
import { createRpcEndpoints, type RpcCounters } from './rpc-endpoints.ts';
import { doublingDelay } from '../../../shared/backoff.ts';

/** The followed network, as the network registry describes it. */
export type EvmFollowerNetwork = {
  /** Bus name: the `<network>` of `chain.<network>.*`. */
  network: string;
  chainId: number;
  /** A block is final once `head - blockNumber + 1 >= confirmations`. */
  confirmations: number;
  /** The registry's ERC-20 tokens on this chain (an entry with address `native` is ignored). */
  tokens: readonly FollowedToken[];
  nativeSymbol: string;
  nativeDecimals: number;
};

/** The follower's view of a registry network: its registry tokens (the native coin apart) and its confirmation depth. */
export function followedNetwork(network: EvmNetwork): EvmFollowerNetwork {
  return {
    network: network.network,
    chainId: network.chainId,
    confirmations: network.confirmations,
    tokens: network.assets
      .filter((a) => a.address !== NATIVE_ASSET_ADDRESS)
      .map((a) => ({ address: a.address, symbol: a.symbol, decimals: a.decimals })),
    nativeSymbol: network.nativeCurrency.symbol,
    nativeDecimals: network.nativeCurrency.decimals,
  };
}

export type EvmFollowerDeps = {
  network: EvmFollowerNetwork;
  /** HTTP endpoints in order of preference (at least one); WebSocket endpoints for new heads (optional). */
  rpc: { http: readonly string[]; ws: readonly string[] };
  bus: Bus;
  watched: WatchedAddresses;
  checkpoints: CheckpointStore;
  /** Where to start when there is no checkpoint: a block number, or the head at the first look ('latest', the default). */
  startBlock?: bigint | 'latest';
  /** How often to poll eth_blockNumber when there is no live WebSocket; 1000 ms unless given. */
  pollIntervalMs?: number;
  log?: (line: string) => void;
  /** Widest eth_getLogs block range when catching up; 2000 unless given. */
  maxLogRange?: bigint;
  /** Blocks read per JSON-RPC batch (with full transactions); 50 unless given. */
  blockBatchSize?: number;
  /** Timeout of one JSON-RPC request or batch; 10 s unless given. */
  rpcTimeoutMs?: number;
  /** Longest wait between retries after errors; 30 s unless given. */
  maxBackoffMs?: number;
  /**
   * With a live WebSocket, still ask eth_blockNumber over HTTP this often; 10 poll intervals unless
   * given. It also bounds how late the socket may be: a head this shows that the socket has not
   * announced a heartbeat later (on `clock`) means the socket stalled, and polling takes over.
   */
  heartbeatMs?: number;
  /** First wait before connecting again after a WebSocket failed (doubling on each failure, up to 60 s); 1 s unless given. */
  webSocketRetryMs?: number;
  /** After failing over from the first HTTP endpoint, try it again after this long; 60 s unless given. */
  preferredEndpointRetryMs?: number;
  /** Source of `observedAt`, `caughtUpAt` and the time a head may go unannounced by the WebSocket; the system clock unless given. */
  clock?: Pick<Clock, 'now'>;
  /** Called when `caughtUpAt` (see the status) moves on. */
  onCaughtUp?: (caughtUpAt: number) => void;
};

export type EvmFollowerStatus = {
  network: string;
  /** The newest head heard of (WebSocket or eth_blockNumber); null before the first. */
  head: bigint | null;
  /** The last block whose transfers are all published; null before the first. */
  processed: bigint | null;
  /** Heights with published transfers whose `final` is still owed. */
  pendingFinal: number;
  /**
   * When (on the follower's clock) it read the newest head it has since processed through: every
   * transfer in a block mined before then is published. Null until the first head is processed
   * after start (a restarted follower has read nothing since it stopped).
   */
  caughtUpAt: number | null;
  /** The HTTP endpoint requests go to first. */
  endpoint: string;
  /** How new heads arrive now. */
  headSource: 'websocket' | 'polling';
  /** The last error met while following (the follower retries), with its time; null if none yet. */
  lastError: string | null;
  running: boolean;
};

export type EvmFollowerCounters = {
  rpc: RpcCounters;
  published: { transfer: number; reorg: number; final: number };
  blocksRead: number;
  /** Blocks whose Transfer logs were asked for again by hash because the range answer lacked what their bloom suggests. */
  bloomRechecks: number;
  /** Current eth_getLogs range. */
  logRange: number;
  errors: number;
  /** New-heads subscriptions made, subscriptions that failed or stalled, and heads they announced. */
  webSocket: { subscriptions: number; failures: number; heads: number };
};

export type EvmFollower = {
  /** Loads the checkpoint and starts following. Throws on bad configuration or an unusable checkpoint. */
  start(): Promise<void>;
  /**
   * Resolves once the follower has a starting point that survives a crash: its checkpoint, or on a
   * first start the head it saved as one. Until then a payment could land in a block the follower
   * will never read, so Weir takes no sessions before this (see start-weir). Also resolves on stop().
   */
  ready(): Promise<void>;
  /**
   * Takes transfers found without the follower (payment recovery reads a transaction in a block the
   * follower passed without watching its address) as its own: their heights are written into the
   * checkpoint as owing a `final` before they are published, so from then on they are confirmed once
   * their block has `confirmations` and withdrawn if it leaves the chain, across restarts, like
   * transfers the follower saw. Taken between the follower's steps; resolves once they are published.
   * Rejects when the follower does not run or has no starting point yet, or the checkpoint or the
   * bus fails (a height then owed without its transfer costs a `final` that confirms nothing).
   */
  adoptTransfers(transfers: readonly ChainTransferMessage[]): Promise<void>;
  /** Stops following: unsubscribes, cancels timers and in-flight requests, waits for the current step. */
  stop(): Promise<void>;
  status(): EvmFollowerStatus;
  counters(): EvmFollowerCounters;
};

const NETWORK_NAME = /^[a-z0-9][a-z0-9-]*$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * Follows one EVM chain and publishes what happens to watched addresses on the bus:
 * `transfer` (native value and registry-token Transfer logs to a watched address), `reorg`
 * (blocks that left the canonical chain) and `final` (a height that carried transfers reached
 * `confirmations`). Blocks are processed strictly in order from the checkpoint to the head; the
 * checkpoint is saved before publishing transfers (write-ahead) and after each batch, so a restart
 * resumes exactly and no message is ever lost (one may repeat after a crash, with the same id).
 *
 * RPC per block: one `eth_getBlockByNumber(n, true)`, batched 50 to an HTTP request when catching
 * up; one `eth_getLogs` per range (adaptive, up to `maxLogRange` blocks; one per block once caught
 * up, sent in the same HTTP request as the block); `eth_getTransactionReceipt` only for native
 * transfers to watched addresses (a reverted one moved nothing); `eth_getLogs` by block hash only
 * for a block whose bloom names a registry token but the range answer had no log of it. Heads:
 * `eth_subscribe("newHeads")` over WebSocket, with `eth_blockNumber` as a heartbeat every
 * `heartbeatMs`, or `eth_blockNumber` every `pollIntervalMs` without a live socket. A reorg costs
 * one `eth_getBlockByNumber(n, false)` per window block walked back.
 *
 * Finality counts only blocks the follower has read and linked by parent hash: a block is final
 * when `processed - number + 1 >= confirmations`. That equals the network's rule once caught up,
 * and never declares a block final on the word of blocks it has not checked.
 *
 * Transfers a recovery found (`adoptTransfers`) are published and tracked the same way; only a
 * recovered block before the follower's starting block, which it never reads, gets its `final`
 * from the canonical block read at that height once the height is final.
 *
 * Not seen: value moved to a watched address by a contract (internal transactions), since that
 * needs a trace API most endpoints lack; payers must send native coin in a top-level transaction.
 */
export function createEvmFollower(deps: EvmFollowerDeps): EvmFollower {
  const config = checkConfig(deps);
  const { network, chainId, confirmations } = deps.network;
  const { bus, watched, checkpoints } = deps;
  const clock = deps.clock ?? { now: () => Date.now() };
  const log = (line: string): void =>
    (deps.log ?? ((text: string) => console.warn(`[evm-follower] ${text}`)))(`${network}: ${line}`);
  const nativeAsset: ChainAsset = {
    address: 'native',
    symbol: deps.network.nativeSymbol,
    decimals: deps.network.nativeDecimals,
  };
  const tokens = deps.network.tokens.filter((token) => token.address !== 'native');
  const tokenAddresses = tokens.map((token) => token.address);

  const stopController = new AbortController();
  const signal = stopController.signal;
  const rpc = createRpcEndpoints({
    network,
    urls: deps.rpc.http,
    timeoutMs: config.rpcTimeoutMs,
    batchSize: config.blockBatchSize,
    preferredRetryMs: config.preferredEndpointRetryMs,
    log,
    now: () => Date.now(),
    signal,
  });
  const logRange = createAdaptiveRange(config.maxLogRange);
  const published = { transfer: 0, reorg: 0, final: 0 };
  let blocksRead = 0;
  let bloomRechecks = 0;
  let errorCount = 0;

  let lifecycle: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  let loop: Promise<void> | undefined;
  let stopping: Promise<void> | undefined;

  let state: FollowerState | undefined;
  let markReady: () => void = () => {};
  const readiness = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  let head: number | undefined;
  /** When `head` was read (the HTTP request sent or the WebSocket announcement heard), on the clock. */
  let headAt = 0;
  let caughtUpAt: number | null = null;
  /** A head announced with its hash at or below the processed height: checked once for a same-height reorg. */
  let tipToCheck: NewHead | undefined;
  let lastHttpHeadAt = 0;
  let lastError: string | null = null;
  const verifiedEndpoints = new Set<string>();

  // Waking the loop: a head arrived, the socket failed, transfers to adopt, or stop().
  let wakeRequested = false;
  let wakeWaiter: (() => void) | undefined;
  const wake = (): void => {
    wakeRequested = true;
    wakeWaiter?.();
  };

  // Transfers handed over by a recovery, taken by the loop between its steps (it alone changes `state`).
  type Adoption = { transfers: readonly ChainTransferMessage[]; resolve(): void; reject(error: unknown): void };
  const adoptions: Adoption[] = [];
  /** Ends a retry's back-off early when transfers are handed over. */
  let interruptBackoff: (() => void) | undefined;

  // WebSocket heads.
  let socket: NewHeadsSubscription | undefined;
  let socketConnecting: Promise<void> | undefined;
  let socketRetry: NodeJS.Timeout | undefined;
  let socketFailures = 0;
  let socketIndex = 0;
  /**
   * The highest block the current subscription accounts for: the node's head when it subscribed,
   * or the highest head it announced since. Undefined while no subscription is being made or live.
   */
  let socketCovers: number | undefined;
  /** The first head polling showed above `socketCovers`, and when (on the clock): the socket has a heartbeat to announce it. */
  let unannounced: { height: number; seenAt: number } | undefined;
  const webSocketCounts = { subscriptions: 0, failures: 0, heads: 0 };
  const background = new Set<Promise<unknown>>();
  const track = (promise: Promise<unknown>): void => {
    const settled = promise.catch(() => undefined).finally(() => background.delete(settled));
    background.add(settled);
  };

  const now = (): Date => new Date(clock.now());
  const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));

  const save = async (next: FollowerState): Promise<void> => {
    await checkpoints.set(network, checkpointOf(next, { network, chainId, now: now() }));
  };

  const publish = async (message: ChainMessage): Promise<void> => {
    const { subject, data, messageId } = encodeChainMessage(message);
    await bus.publish(subject, data, { messageId });
    published[message.type] += 1;
  };

  // ------------------------------------------------------------------------------------------
  // Heads
  // ------------------------------------------------------------------------------------------

  const socketLive = (): boolean => socket !== undefined;

  const onSocketHead = (announced: NewHead): void => {
    if (lifecycle !== 'running') return;
    head = announced.number;
    headAt = clock.now();
    webSocketCounts.heads += 1;
    socketCovers = Math.max(socketCovers ?? announced.number, announced.number);
    if (unannounced !== undefined && announced.number >= unannounced.height) unannounced = undefined;
    tipToCheck = announced;
    wake();
  };

  const connectSocket = async (): Promise<void> => {
    if (lifecycle !== 'running' || deps.rpc.ws.length === 0) return;
    const url = deps.rpc.ws[socketIndex % deps.rpc.ws.length]!;
    socketCovers = undefined;
    unannounced = undefined;
    try {
      const subscription = await subscribeNewHeads({
        network,
        url,
        timeoutMs: config.rpcTimeoutMs,
        onHead: onSocketHead,
        onFailure: (error) => onSocketFailure(url, error),
      });
      if (lifecycle !== 'running') {
        await subscription.close();
        return;
      }
      socket = subscription;
      socketFailures = 0;
      webSocketCounts.subscriptions += 1;
      // Heads announced while the follower asked for the node's head count as well.
      socketCovers = Math.max(subscription.subscribedAtHead, socketCovers ?? subscription.subscribedAtHead);
      log(`new heads from websocket ${url}`);
    } catch (error) {
      onSocketFailure(url, error);
    }
  };

  const onSocketFailure = (url: string, error: unknown): void => {
    const failed = socket;
    socket = undefined;
    socketCovers = undefined;
    unannounced = undefined;
    if (failed !== undefined) track(failed.close());
    if (lifecycle !== 'running') return;
    socketFailures += 1;
    webSocketCounts.failures += 1;
    socketIndex += 1;
    const delay = backoff(socketFailures, config.webSocketRetryMs, 60_000);
    lastError = `${now().toISOString()} websocket ${url} failed: ${describe(error)}`;
    log(
      `websocket ${url} failed (${describe(error)}); polling eth_blockNumber every ${config.pollIntervalMs} ms, websocket again in ${delay} ms`,
    );
    clearTimeout(socketRetry);
    socketRetry = setTimeout(() => {
      socketRetry = undefined;
      socketConnecting = connectSocket();
      track(socketConnecting);
    }, delay);
    wake();
  };

  /**
   * A live socket stalled when polling shows a head above what it accounts for, and that head has
   * gone unannounced for a heartbeat since polling first showed it. Quiet alone is no stall: an idle
   * chain (or a devnet that mines on demand) announces nothing, before the first head as after.
   */
  const checkSocketStall = (httpHead: number, seenAt: number): void => {
    if (socket === undefined || socketCovers === undefined) return;
    if (httpHead <= socketCovers) {
      unannounced = undefined;
      return;
    }
    if (unannounced === undefined) {
      unannounced = { height: httpHead, seenAt };
      return;
    }
    const waited = seenAt - unannounced.seenAt;
    if (waited >= config.heartbeatMs) {
      onSocketFailure(
        socket.url,
        new Error(
          `stalled: block ${unannounced.height} was seen over HTTP ${waited} ms ago and is still not announced; the subscription covers blocks up to ${socketCovers}`,
        ),
      );
    }
  };

  // ------------------------------------------------------------------------------------------
  // Following
  // ------------------------------------------------------------------------------------------

  const verifyChain = async (): Promise<void> => {
    const endpoint = rpc.current();
    if (verifiedEndpoints.has(endpoint)) return;
    const served = await getChainId(rpc, { network });
    if (served !== chainId) throw new WrongChainError(network, rpc.current(), chainId, served);
    verifiedEndpoints.add(endpoint);
  };

  const step = async (): Promise<void> => {
    await verifyChain();
    const pollDue = !socketLive() || head === undefined || Date.now() - lastHttpHeadAt >= config.heartbeatMs;
    if (pollDue) {
      // The time the question went out: the answer holds every block mined before it.
      const askedAt = clock.now();
      const httpHead = await getBlockNumber(rpc, { network });
      headAt = askedAt;
      lastHttpHeadAt = Date.now();
      checkSocketStall(httpHead, clock.now());
      head = httpHead;
    }
    if (head === undefined) return;
    if (state === undefined) {
      const start = config.startBlock === 'latest' ? head : config.startBlock;
      const fresh = initialState(start);
      await save(fresh);
      state = fresh;
      markReady();
      log(`no checkpoint: starting at block ${start}`);
    }
    const target = { head, at: headAt };
    await followToHead();
    if (await checkTip()) await followToHead();
    if (state.nextBlock > target.head && (caughtUpAt === null || target.at > caughtUpAt)) {
      caughtUpAt = target.at;
      deps.onCaughtUp?.(caughtUpAt);
    }
  };

  const followToHead = async (): Promise<void> => {
    await takeAdoptions();
    // Finals left owed by a failed publish (or owed for recovered blocks) go out before anything new.
    if (
      state !== undefined &&
      (dueFinals(state, confirmations).length > 0 || dueUnreadFinals(state, confirmations).length > 0)
    ) {
      await publishFinals();
      await save(state);
    }
    while (lifecycle === 'running' && state !== undefined && head !== undefined && state.nextBlock <= head) {
      const outcome = await processRange(state.nextBlock, head);
      await takeAdoptions();
      if (outcome === 'waiting') return;
    }
  };

  /**
   * Publishes the transfers handed over by recoveries as the follower's own: their heights owe a
   * `final` in the checkpoint first (write-ahead, as for the follower's transfers). Each hand-over
   * succeeds or fails on its own; this never throws.
   */
  const takeAdoptions = async (): Promise<void> => {
    while (state !== undefined && adoptions.length > 0) {
      const adoption = adoptions.shift()!;
      try {
        const owing = [...new Set(adoption.transfers.map((transfer) => transfer.blockNumber))].reduce(oweFinal, state);
        await save(owing);
        state = owing;
        for (const transfer of adoption.transfers) await publish(transfer);
        adoption.resolve();
      } catch (error) {
        adoption.reject(error);
      }
    }
  };

  /** Processes from `from` on, one eth_getLogs range at most. 'waiting': the endpoint does not have block `from` yet. */
  const processRange = async (from: number, upTo: number): Promise<'progress' | 'waiting'> => {
    let to = Math.min(upTo, from + (tokens.length > 0 ? logRange.current() : config.blockBatchSize) - 1);
    // The first chunk of blocks is read alongside eth_getLogs, so that once caught up a new block
    // costs one HTTP request (a JSON-RPC batch of both).
    const firstChunk = readBlocks(from, Math.min(to, from + config.blockBatchSize - 1));
    firstChunk.catch(() => undefined);
    let logs: TokenTransferLog[] = [];
    if (tokens.length > 0) {
      for (;;) {
        try {
          logs = await getTransferLogs(rpc, { network, tokens: tokenAddresses, from, to });
          logRange.succeeded();
          break;
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
    }
    for (let chunkFrom = from; chunkFrom <= to; ) {
      const chunkTo = Math.min(to, chunkFrom + config.blockBatchSize - 1);
      // Blocks read before the log range shrank are cut to it: a block is never processed without its logs.
      const blocks =
        chunkFrom === from
          ? (await firstChunk).filter((block) => block.number <= chunkTo)
          : await readBlocks(chunkFrom, chunkTo);
      const outcome = await processChunk(chunkFrom, blocks, logs);
      if (outcome.type === 'waiting') return chunkFrom === from ? 'waiting' : 'progress';
      if (outcome.type === 'reorg' || outcome.through < chunkTo) return 'progress';
      chunkFrom = chunkTo + 1;
    }
    return 'progress';
  };

  const readBlocks = async (from: number, to: number): Promise<BlockWithTransactions[]> => {
    const blocks = await getBlocksWithTransactions(rpc, { network, from, to });
    blocksRead += blocks.length;
    return blocks;
  };

  type ChunkOutcome = { type: 'processed'; through: number } | { type: 'reorg' } | { type: 'waiting' };

  /** Publishes what `blocks` (read from `from` on, consecutive) hold, if they continue the known chain. */
  const processChunk = async (
    from: number,
    blocks: readonly BlockWithTransactions[],
    rangeLogs: readonly TokenTransferLog[],
  ): Promise<ChunkOutcome> => {
    if (blocks.length === 0) return { type: 'waiting' };
    const current = state!;
    const links = checkLinks(current, blocks);
    if (links.type === 'reorg') {
      if (await resolveReorg(links.atBlock)) return { type: 'reorg' };
      // Nothing known was replaced, yet the block does not link to it: the endpoint serves blocks
      // that do not chain. Back off rather than spin; the next attempt may read a settled chain.
      const first = blocks[0]!;
      throw new ChainChangedWhileReadingError(
        network,
        BigInt(first.number),
        `its parentHash ${first.parentHash} is not the hash of block ${first.number - 1}, which is still canonical (${windowBlockAt(current, first.number - 1)?.hash ?? 'unknown'}); the endpoint serves blocks that do not chain`,
      );
    }
    const linked = blocks.slice(0, links.count);
    const last = linked.at(-1)!.number;
    if (links.count < blocks.length)
      log(
        `block ${last + 1} does not follow block ${last} as read a moment ago (the chain is moving); reading again from there`,
      );

    const logs = rangeLogs.filter((entry) => entry.blockNumber >= from && entry.blockNumber <= last);
    for (const entry of logs) {
      const block = linked[entry.blockNumber - from]!;
      if (block.hash !== entry.blockHash) {
        throw new ChainChangedWhileReadingError(
          network,
          BigInt(entry.blockNumber),
          `eth_getLogs saw block ${entry.blockHash}, eth_getBlockByNumber ${block.hash}`,
        );
      }
    }
    logs.push(...(await recheckByBloom(linked, logs)));
    const candidates = nativeTransferCandidates(network, linked, watched);
    const succeededNative = new Set<string>();
    if (candidates.length > 0) {
      const statuses = await getReceiptStatuses(rpc, {
        network,
        transactionHashes: candidates.map((candidate) => candidate.transaction.hash),
      });
      for (const [index, status] of statuses.entries()) {
        const { block, transaction } = candidates[index]!;
        if (status === null || status.blockHash !== block.hash) {
          throw new ChainChangedWhileReadingError(
            network,
            BigInt(block.number),
            `the receipt of ${transaction.hash} is ${status === null ? 'missing' : `in block ${status.blockHash}`}`,
          );
        }
        if (status.succeeded) succeededNative.add(transaction.hash);
      }
    }
    const transfers = extractTransfers({
      network,
      chainId,
      nativeAsset,
      tokens,
      watched,
      blocks: linked,
      logs,
      succeededNative,
      observedAt: now().toISOString(),
    });
    const heightsWithTransfers = new Set(transfers.map((transfer) => transfer.blockNumber));

    const recorded = recordBlocks(
      current,
      linked.map((block) => ({
        number: block.number,
        hash: block.hash,
        parentHash: block.parentHash,
        transfers: heightsWithTransfers.has(block.number),
      })),
    );
    // Write ahead: the blocks whose transfers are about to go out are in the checkpoint first, so
    // that after a crash a later reorg of them is still reported.
    if (transfers.length > 0) await save(recorded);
    state = recorded;
    for (const transfer of transfers) await publish(transfer);
    state = markProcessed(state, last);
    await publishFinals();
    await save(state);
    return { type: 'processed', through: last };
  };

  /**
   * A block for which the range query returned no Transfer log, though its logs bloom says it may
   * hold one of a registry token: the range may have been answered from another version of the
   * chain, or by a backend whose log index lags. Ask again for exactly that block (by hash).
   */
  const recheckByBloom = async (
    blocks: readonly BlockWithTransactions[],
    found: readonly TokenTransferLog[],
  ): Promise<TokenTransferLog[]> => {
    if (tokens.length === 0) return [];
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

  const publishFinals = async (): Promise<void> => {
    const current = state!;
    const due = dueFinals(current, confirmations);
    const done: number[] = [];
    try {
      for (const block of due) {
        await publish({
          type: 'final',
          network,
          chainId,
          blockNumber: block.number,
          blockHash: block.hash,
          observedAt: now().toISOString(),
        });
        done.push(block.number);
      }
      // Recovered heights the follower never read: the block now at that height is the final one.
      for (const number of dueUnreadFinals(current, confirmations)) {
        const block = await getBlockHeader(rpc, { network, number });
        if (block === null)
          throw new ChainChangedWhileReadingError(
            network,
            BigInt(number),
            'the endpoint has no block at this final height',
          );
        await publish({
          type: 'final',
          network,
          chainId,
          blockNumber: number,
          blockHash: block.hash,
          observedAt: now().toISOString(),
        });
        done.push(number);
      }
    } finally {
      state = settleFinals(current, confirmations, done);
    }
  };

  /**
   * The chain no longer continues the window at `atBlock`: walk down the window to the newest
   * block that is still canonical, report everything above it in one `reorg` message, and rewind.
   */
  const resolveReorg = async (atBlock: number): Promise<boolean> => {
    const current = state!;
    let ancestor: number | null = null;
    for (let index = current.window.length - 1; index >= 0; index--) {
      const known = current.window[index]!;
      const canonical = await getBlockHeader(rpc, { network, number: known.number });
      if (canonical !== null && canonical.hash === known.hash) {
        ancestor = known.number;
        break;
      }
    }
    const { state: rewound, removed } = removeAbove(current, ancestor);
    if (removed.length === 0) return false;
    const oldest = current.window[0]!;
    if (ancestor === null && (oldest.finalPublished || oldest.number <= finalThrough(current, confirmations))) {
      const deep = new DeepReorgError(network, BigInt(oldest.number), confirmations);
      lastError = `${now().toISOString()} ${deep.message}`;
      log(deep.message);
    }
    await publish({
      type: 'reorg',
      network,
      chainId,
      removedBlocks: removed.map((block) => ({ number: block.number, hash: block.hash })),
      observedAt: now().toISOString(),
    });
    state = rewound;
    await save(rewound);
    log(
      `reorg at block ${atBlock}: removed blocks ${removed[0]!.number}..${removed.at(-1)!.number}; following the new chain from block ${rewound.nextBlock}`,
    );
    return true;
  };

  /** A head announced at or below the processed height with another hash than the one read: a same-height reorg. */
  const checkTip = async (): Promise<boolean> => {
    const tip = tipToCheck;
    tipToCheck = undefined;
    if (tip === undefined || state === undefined || tip.number >= state.nextBlock) return false;
    const known = windowBlockAt(state, tip.number);
    if (known === undefined || known.hash === tip.hash) return false;
    return resolveReorg(tip.number);
  };

  const waitForWork = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (wakeRequested || lifecycle !== 'running') {
        wakeRequested = false;
        resolve();
        return;
      }
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        wakeWaiter = undefined;
        wakeRequested = false;
        resolve();
      }
      wakeWaiter = done;
    });

  const backoffPause = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (signal.aborted || adoptions.length > 0) {
        resolve();
        return;
      }
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        interruptBackoff = undefined;
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
      interruptBackoff = done;
    });

  const run = async (): Promise<void> => {
    let failures = 0;
    while (lifecycle === 'running') {
      try {
        await step();
        failures = 0;
      } catch (error) {
        if (lifecycle !== 'running') break;
        failures += 1;
        errorCount += 1;
        const delay = backoff(failures, config.pollIntervalMs, config.maxBackoffMs);
        lastError = `${now().toISOString()} ${describe(error)}`;
        log(`${describe(error)} (retrying in ${delay} ms)`);
        await backoffPause(delay);
        // Transfers handed over meanwhile need no working RPC endpoint: take them now.
        await takeAdoptions();
        continue;
      }
      await waitForWork(socketLive() ? config.heartbeatMs : config.pollIntervalMs);
    }
  };

  return {
    async start() {
      if (lifecycle !== 'new')
        throw new EvmFollowerStateError(
          network,
          `start() was called on a ${lifecycle} follower; create a new follower to start again`,
        );
      lifecycle = 'running';
      try {
        const stored = await checkpoints.get(network);
        if (stored !== undefined && stored.chainId !== chainId)
          throw new CheckpointMismatchError(network, chainId, stored.chainId);
        state = stored === undefined ? undefined : stateFromCheckpoint(stored);
      } catch (error) {
        lifecycle = 'stopped';
        throw error;
      }
      if (state !== undefined) {
        markReady();
        log(
          `resuming at block ${state.nextBlock} (${state.window.length} blocks in the window, ${pendingFinalCount(state)} finals owed)`,
        );
      }
      socketConnecting = connectSocket();
      track(socketConnecting);
      loop = run();
    },

    ready: () => readiness,

    adoptTransfers(transfers) {
      const foreign = transfers.find((transfer) => transfer.network !== network || transfer.chainId !== chainId);
      if (foreign !== undefined)
        return Promise.reject(
          new EvmFollowerStateError(
            network,
            `cannot adopt a transfer of network ${foreign.network} (chain ${foreign.chainId})`,
          ),
        );
      if (lifecycle !== 'running')
        return Promise.reject(
          new EvmFollowerStateError(network, `cannot adopt transfers: the follower is ${lifecycle}`),
        );
      if (state === undefined)
        return Promise.reject(
          new EvmFollowerStateError(
            network,
            'cannot adopt transfers before the follower has read the chain head once; try again in a moment',
          ),
        );
      return new Promise<void>((resolve, reject) => {
        adoptions.push({ transfers, resolve, reject });
        wake();
        interruptBackoff?.();
      });
    },

    stop() {
      markReady();
      stopping ??= (async () => {
        if (lifecycle === 'new') {
          lifecycle = 'stopped';
          return;
        }
        lifecycle = 'stopping';
        stopController.abort(new Error('the follower is stopping'));
        clearTimeout(socketRetry);
        socketRetry = undefined;
        wake();
        await loop;
        for (const adoption of adoptions.splice(0))
          adoption.reject(
            new EvmFollowerStateError(network, 'the follower stopped before it published the adopted transfers'),
          );
        await socketConnecting;
        const open = socket;
        socket = undefined;
        await open?.close();
        while (background.size > 0) await Promise.all([...background]);
        lifecycle = 'stopped';
      })();
      return stopping;
    },

    status() {
      const processed = state === undefined ? undefined : lastProcessed(state);
      return {
        network,
        head: head === undefined ? null : BigInt(head),
        processed: processed === undefined ? null : BigInt(processed.number),
        pendingFinal: state === undefined ? 0 : pendingFinalCount(state),
        caughtUpAt,
        endpoint: rpc.current(),
        headSource: socketLive() ? 'websocket' : 'polling',
        lastError,
        running: lifecycle === 'running',
      };
    },

    counters() {
      return {
        rpc: rpc.counters(),
        published: { ...published },
        blocksRead,
        bloomRechecks,
        logRange: logRange.current(),
        errors: errorCount,
        webSocket: { ...webSocketCounts },
      };
    },
  };
}

/** Exponential backoff from `base`, capped at `max`, with ±20 % jitter so followers do not retry in step. */
function backoff(attempt: number, base: number, max: number): number {
  const plain = doublingDelay(attempt, base, max);
  return Math.round(plain * (0.8 + Math.random() * 0.4));
}

type CheckedConfig = {
  startBlock: number | 'latest';
  pollIntervalMs: number;
  maxLogRange: number;
  blockBatchSize: number;
  rpcTimeoutMs: number;
  maxBackoffMs: number;
  heartbeatMs: number;
  webSocketRetryMs: number;
  preferredEndpointRetryMs: number;
};

function checkConfig(deps: EvmFollowerDeps): CheckedConfig {
  const fail = (field: string, message: string): never => {
    throw new EvmFollowerConfigError(deps.network.network, field, message);
  };
  const { network } = deps;
  if (!NETWORK_NAME.test(network.network))
    fail(
      'network.network',
      'must be lowercase letters, digits and dashes (the bus subject token), e.g. "base-sepolia"',
    );
  if (!Number.isSafeInteger(network.chainId) || network.chainId <= 0)
    fail('network.chainId', `must be a positive integer, got ${network.chainId}`);
  if (!Number.isSafeInteger(network.confirmations) || network.confirmations < 1)
    fail('network.confirmations', `must be an integer >= 1 (1 = final once mined), got ${network.confirmations}`);
  if (network.nativeSymbol.trim() === '') fail('network.nativeSymbol', 'must not be empty');
  if (!isDecimals(network.nativeDecimals))
    fail('network.nativeDecimals', `must be an integer from 0 to 36, got ${network.nativeDecimals}`);
  const seen = new Set<string>();
  for (const [index, token] of network.tokens.entries()) {
    if (token.address === 'native') continue;
    const field = `network.tokens[${index}]`;
    if (!ADDRESS.test(token.address))
      fail(`${field}.address`, `${JSON.stringify(token.address)} is not a 20-byte hex address`);
    if (seen.has(token.address.toLowerCase())) fail(`${field}.address`, `${token.address} is listed twice`);
    seen.add(token.address.toLowerCase());
    if (token.symbol.trim() === '') fail(`${field}.symbol`, 'must not be empty');
    if (!isDecimals(token.decimals))
      fail(`${field}.decimals`, `must be an integer from 0 to 36, got ${token.decimals}`);
  }
  if (deps.rpc.http.length === 0)
    fail(
      'rpc.http',
      'give at least one HTTP JSON-RPC endpoint (heads and blocks are read over HTTP; WebSocket only announces heads)',
    );
  for (const [index, url] of deps.rpc.http.entries())
    if (!hasProtocol(url, ['http:', 'https:']))
      fail(`rpc.http[${index}]`, `${JSON.stringify(url)} is not an http(s) URL`);
  for (const [index, url] of deps.rpc.ws.entries())
    if (!hasProtocol(url, ['ws:', 'wss:'])) fail(`rpc.ws[${index}]`, `${JSON.stringify(url)} is not a ws(s) URL`);

  const startBlock = deps.startBlock ?? 'latest';
  if (startBlock !== 'latest' && (startBlock < 0n || startBlock > BigInt(Number.MAX_SAFE_INTEGER)))
    fail('startBlock', `must be 'latest' or a block number >= 0, got ${startBlock}`);
  const maxLogRange = deps.maxLogRange ?? 2000n;
  if (maxLogRange < 1n || maxLogRange > 1_000_000n)
    fail('maxLogRange', `must be from 1 to 1000000 blocks, got ${maxLogRange}`);
  const positive = (field: string, value: number | undefined, fallback: number): number => {
    const chosen = value ?? fallback;
    if (!Number.isFinite(chosen) || chosen <= 0) fail(field, `must be a positive number, got ${chosen}`);
    return chosen;
  };
  const pollIntervalMs = positive('pollIntervalMs', deps.pollIntervalMs, 1_000);
  const blockBatchSize = positive('blockBatchSize', deps.blockBatchSize, 50);
  if (!Number.isInteger(blockBatchSize)) fail('blockBatchSize', `must be an integer, got ${blockBatchSize}`);
  return {
    startBlock: startBlock === 'latest' ? 'latest' : Number(startBlock),
    pollIntervalMs,
    maxLogRange: Number(maxLogRange),
    blockBatchSize,
    rpcTimeoutMs: positive('rpcTimeoutMs', deps.rpcTimeoutMs, 10_000),
    maxBackoffMs: positive('maxBackoffMs', deps.maxBackoffMs, 30_000),
    heartbeatMs: positive('heartbeatMs', deps.heartbeatMs, pollIntervalMs * 10),
    webSocketRetryMs: positive('webSocketRetryMs', deps.webSocketRetryMs, 1_000),
    preferredEndpointRetryMs: positive('preferredEndpointRetryMs', deps.preferredEndpointRetryMs, 60_000),
  };
}

function isDecimals(value: number): boolean {
  return Number.isInteger(value) && value >= 0 && value <= 36;
}

function hasProtocol(url: string, protocols: readonly string[]): boolean {
  try {
    return protocols.includes(new URL(url).protocol);
  } catch {
    return false;
  }
}
