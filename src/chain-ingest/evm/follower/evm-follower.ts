import type { Tracer } from '@opentelemetry/api';
import type { Metrics } from '../../../shared/metrics.ts';
import type { Bus } from '../../../bus/bus.ts';
import type { Clock } from '../../../shared/clock.ts';
import type { ChainAsset, ChainTransferMessage } from '../../chain-messages.ts';
import type { WatchedAddresses } from '../../watched-addresses.ts';
import { NATIVE_ASSET_ADDRESS, type EvmNetwork } from '../networks/define-network.ts';
import type { CheckpointStore } from './checkpoint.ts';
import {
  ChainChangedWhileReadingError,
  CheckpointMismatchError,
  DeepReorgError,
  EvmFollowerStateError,
  WrongChainError,
} from './errors.ts';
import type { FollowedToken } from './extract-transfers.ts';
import { createBatchFetcher } from './fetch-batches.ts';
import { checkConfig } from './follower-config.ts';
import { createFollowerSink } from './follower-sink.ts';
import {
  dueFinals,
  dueTransactionFinals,
  dueUnreadFinals,
  initialState,
  lastProcessed,
  oweFinal,
  pendingFinalCount,
  stateFromCheckpoint,
  windowBlockAt,
  type FollowerState,
} from './follower-state.ts';
import { getBlockHeader } from './get-blocks.ts';
import { getChainId } from './get-chain-head.ts';
import { createAdaptiveRange } from './get-transfer-logs.ts';
import { createHeadSource, type HeadUpdate } from './head-source.ts';
import { createPollingProcessor, type Processor } from '../../../processing/processor.ts';
import { inSpan, noTracer } from '../../../shared/tracing.ts';
import { createRpcEndpoints, type RpcCounters } from './rpc-endpoints.ts';
import { endpointLabel } from '../../../shared/mask-userinfo.ts';
import {
  findAncestor,
  syncBatch,
  syncFinals,
  syncReorg,
  tipReplaced,
  type FetchedBatch,
  type SyncContext,
} from './sync-step.ts';

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
  /** See BatchFetcherDeps.watchedCurrent. */
  watchedCurrent?(): Promise<void>;
  /**
   * Of native-value transactions to watched addresses whose receipts succeeded, the ones whose value
   * is the native coin; every one unless given (EVM). Tron's eth_ JSON-RPC shows a TRC-10 transfer's
   * token amount as its `value` (tron/trx-transfers.ts).
   */
  nativeTransfers?(transactionHashes: readonly string[]): Promise<ReadonlySet<string>>;
  checkpoints: CheckpointStore;
  /** Where to start when there is no checkpoint: a block number, or the head at the first look ('latest', the default). */
  startBlock?: bigint | 'latest';
  /** How often to poll eth_blockNumber when there is no live WebSocket; 1000 ms unless given. */
  pollIntervalMs?: number;
  log?: (line: string) => void;
  /** Each batch of blocks synced is a span ('follower batch', with the network and block range). */
  tracer?: Tracer;
  /** Where its processor counts failed passes (`weir_processor_failures_total`, `weir_processor_failing`). */
  metrics?: Metrics;
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
  /** The HTTP endpoint requests go to first, by scheme and host (its path or query may hold an API key). */
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
 * needs a trace API most endpoints lack; the balance reconciler (../reconciler.ts) credits it from
 * the deposit's balance, and recovery by hash from the transaction's trace.
 *
 * Three stages, run as passes of a processor: the head source (head-source.ts, WebSocket or
 * polling) gives the head and pokes on news; for each, the batch fetcher (fetch-batches.ts) reads batch after batch up to the head, one
 * batch ahead of the pure sync step (sync-step.ts), which turns state plus fetched data into
 * `transfer | reorg | final` messages and the next state; the sink (follower-sink.ts) saves the
 * checkpoint and publishes them. This closure only sequences them and owns the state.
 */
export function createEvmFollower(deps: EvmFollowerDeps): EvmFollower {
  const config = checkConfig(deps);
  const { network, chainId, confirmations } = deps.network;
  const { checkpoints } = deps;
  const clock = deps.clock ?? { now: () => Date.now() };
  const tracer = deps.tracer ?? noTracer;
  const log = (line: string): void =>
    (deps.log ?? ((text: string) => console.warn(`[evm-follower] ${text}`)))(`${network}: ${line}`);
  const nativeAsset: ChainAsset = {
    address: 'native',
    symbol: deps.network.nativeSymbol,
    decimals: deps.network.nativeDecimals,
  };
  const tokens = deps.network.tokens.filter((token) => token.address !== 'native');

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
  const now = (): Date => new Date(clock.now());
  const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));
  const sink = createFollowerSink({ network, chainId, bus: deps.bus, checkpoints, now });
  const fetcher = createBatchFetcher({
    rpc,
    network,
    tokens,
    watched: deps.watched,
    ...(deps.watchedCurrent ? { watchedCurrent: deps.watchedCurrent } : {}),
    ...(deps.nativeTransfers ? { nativeTransfers: deps.nativeTransfers } : {}),
    blockBatchSize: config.blockBatchSize,
    logRange,
    signal,
    log,
  });
  let errorCount = 0;
  let lastError: string | null = null;
  const verifiedEndpoints = new Set<string>();

  /** The endpoint requests go to serves the followed chain (asked once per endpoint). */
  const verifyChain = async (): Promise<void> => {
    const endpoint = rpc.current();
    if (verifiedEndpoints.has(endpoint)) return;
    const served = await getChainId(rpc, { network });
    if (served !== chainId) throw new WrongChainError(network, rpc.current(), chainId, served);
    verifiedEndpoints.add(endpoint);
  };

  const heads = createHeadSource({
    network,
    rpc,
    ws: deps.rpc.ws,
    clock,
    pollIntervalMs: config.pollIntervalMs,
    heartbeatMs: config.heartbeatMs,
    webSocketRetryMs: config.webSocketRetryMs,
    rpcTimeoutMs: config.rpcTimeoutMs,
    beforePoll: verifyChain,
    log,
    onError: (message) => {
      lastError = message;
    },
    onWake: () => void loop?.poke(),
  });

  let lifecycle: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  let loop: Processor | undefined;
  let stopping: Promise<void> | undefined;

  let state: FollowerState | undefined;
  const setState = (next: FollowerState): void => {
    state = next;
  };
  let markReady: () => void = () => {};
  const readiness = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  let caughtUpAt: number | null = null;

  // Transfers handed over by a recovery, taken by the loop between its steps (it alone changes `state`).
  type Adoption = { transfers: readonly ChainTransferMessage[]; resolve(): void; reject(error: unknown): void };
  const adoptions: Adoption[] = [];

  const context = (): SyncContext => ({
    network,
    chainId,
    confirmations,
    nativeAsset,
    tokens,
    watched: deps.watched,
    observedAt: now().toISOString(),
  });

  // ------------------------------------------------------------------------------------------
  // Following: heads in, sync steps over fetched batches, plans out through the sink.
  // ------------------------------------------------------------------------------------------

  const onHead = async (update: HeadUpdate): Promise<void> => {
    if (state === undefined) {
      const start = config.startBlock === 'latest' ? update.number : config.startBlock;
      const fresh = initialState(start);
      await sink.save(fresh);
      state = fresh;
      markReady();
      log(`no checkpoint: starting at block ${start}`);
    }
    await followToHead();
    if (await checkTip()) await followToHead();
    if (state.nextBlock > update.number && (caughtUpAt === null || update.at > caughtUpAt)) {
      caughtUpAt = update.at;
      deps.onCaughtUp?.(caughtUpAt);
    }
  };

  const followToHead = async (): Promise<void> => {
    await takeAdoptions();
    // Finals left owed by a failed publish (or owed for recovered blocks) go out before anything new.
    if (
      state !== undefined &&
      (dueFinals(state, confirmations).length > 0 ||
        dueUnreadFinals(state, confirmations).length > 0 ||
        dueTransactionFinals(state, confirmations).length > 0)
    )
      await publishFinals();
    for (;;) {
      const head = heads.latest();
      if (lifecycle !== 'running' || state === undefined || head === undefined || state.nextBlock > head) return;
      const outcome = await followBatches(state.nextBlock);
      await takeAdoptions();
      if (outcome === 'waiting') return;
    }
  };

  /**
   * Syncs batch after batch from `from` while they continue one another; the fetcher reads the next
   * batch while this one is synced and published. 'waiting': the endpoint has no block at `from` yet.
   */
  const followBatches = async (from: number): Promise<'progress' | 'waiting'> => {
    for await (const fetched of fetcher.batches(from, () => heads.latest() ?? from)) {
      if (lifecycle !== 'running') return 'progress';
      const outcome = await inSpan(
        tracer,
        'follower batch',
        { 'weir.network': network, 'weir.block.first': fetched.from, 'weir.block.last': fetched.to },
        () => syncFetched(fetched),
      );
      if (outcome !== 'next') return outcome;
      // Hand-overs wait for a batch, not a whole catch-up.
      if (adoptions.length > 0) return 'progress';
    }
    return 'progress';
  };

  const syncFetched = async (fetched: FetchedBatch): Promise<'next' | 'progress' | 'waiting'> => {
    let batch = fetched;
    for (;;) {
      const current = state!;
      const outcome = syncBatch(current, batch, context());
      switch (outcome.type) {
        case 'waiting':
          return 'waiting';
        case 'receipts-missing': {
          const more = await fetcher.receipts(outcome.transactionHashes);
          batch = { ...batch, receipts: new Map([...batch.receipts, ...more]) };
          continue;
        }
        case 'reorg': {
          if (await resolveReorg(outcome.atBlock)) return 'progress';
          // Nothing known was replaced, yet the block does not link to it: the endpoint serves blocks
          // that do not chain. Back off rather than spin; the next attempt may read a settled chain.
          const first = batch.blocks[0]!;
          throw new ChainChangedWhileReadingError(
            network,
            BigInt(first.number),
            `its parentHash ${first.parentHash} is not the hash of block ${first.number - 1}, which is still canonical (${windowBlockAt(current, first.number - 1)?.hash ?? 'unknown'}); the endpoint serves blocks that do not chain`,
          );
        }
        case 'processed': {
          await sink.apply(outcome.plan, setState);
          if (dueUnreadFinals(state!, confirmations).length > 0) await publishFinals();
          if (outcome.through === batch.to) return 'next';
          if (outcome.through < batch.blocks.at(-1)!.number)
            log(
              `block ${outcome.through + 1} does not follow block ${outcome.through} as read a moment ago (the chain is moving); reading again from there`,
            );
          return 'progress';
        }
      }
    }
  };

  /** Publishes the finals owed now, reading the canonical block at each owed height the follower never read. */
  const publishFinals = async (): Promise<void> => {
    const current = state!;
    const unread = new Map<number, string>();
    for (const number of dueUnreadFinals(current, confirmations)) {
      const block = await getBlockHeader(rpc, { network, number });
      if (block === null) {
        // The finals read so far still go out; this height stays owed.
        await sink.apply(syncFinals(current, context(), unread), setState);
        throw new ChainChangedWhileReadingError(
          network,
          BigInt(number),
          'the endpoint has no block at this final height',
        );
      }
      unread.set(number, block.hash);
    }
    await sink.apply(syncFinals(current, context(), unread), setState);
  };

  /**
   * The chain no longer continues the window at `atBlock`: walk down the window to the newest
   * block that is still canonical, report everything above it in one `reorg` message, and rewind.
   */
  const resolveReorg = async (atBlock: number): Promise<boolean> => {
    const current = state!;
    const ancestor = await findAncestor(
      current,
      async (number) => (await getBlockHeader(rpc, { network, number }))?.hash ?? null,
    );
    const step = syncReorg(current, ancestor, context());
    if (step === null) return false;
    if (step.deep) {
      const deep = new DeepReorgError(network, BigInt(current.window[0]!.number), confirmations);
      lastError = `${now().toISOString()} ${deep.message}`;
      log(deep.message);
    }
    await sink.apply(step.plan, setState);
    log(
      `reorg at block ${atBlock}: removed blocks ${step.removed[0]!.number}..${step.removed.at(-1)!.number}; following the new chain from block ${step.plan.state.nextBlock}`,
    );
    return true;
  };

  /** A head announced at or below the processed height with another hash than the one read: a same-height reorg. */
  const checkTip = async (): Promise<boolean> => {
    const tip = heads.takeTip();
    if (tip === undefined || state === undefined || !tipReplaced(state, tip)) return false;
    return resolveReorg(tip.number);
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
        const owing = adoption.transfers.reduce(
          (owed, transfer) => oweFinal(owed, transfer.blockNumber, transfer.transactionHash),
          state,
        );
        await sink.save(owing);
        state = owing;
        for (const transfer of adoption.transfers) await sink.publish(transfer);
        adoption.resolve();
      } catch (error) {
        adoption.reject(error);
      }
    }
  };

  /**
   * Each pass takes the transfers handed over (they need no working endpoint), looks at the head
   * and follows to it. The processor retries a failed pass with jittered doubling back-off, passes
   * again on a socket's head or a hand-over, and else after the poll interval or heartbeat, on real
   * time (as the node's blocks come; `clock` may be a test's).
   */
  const followingProcessor = (): Processor =>
    createPollingProcessor({
      name: `follower.${network}`,
      intervalMs: () => heads.interval(),
      backoff: { firstMs: config.pollIntervalMs, maxMs: config.maxBackoffMs },
      log,
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
      failureLine: ({ error, waitMs }) => `${describe(error)} (retrying in ${waitMs} ms)`,
      idle: () => lifecycle !== 'running',
      step: async () => {
        await takeAdoptions();
        if (lifecycle !== 'running') return;
        try {
          const update = await heads.look();
          if (lifecycle !== 'running') return;
          await onHead(update);
        } catch (error) {
          if (lifecycle !== 'running') return;
          errorCount += 1;
          lastError = `${now().toISOString()} ${describe(error)}`;
          throw error;
        }
      },
    });

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
      heads.start();
      loop = followingProcessor();
      // The first pass may be a long catch-up: start returns before it (ready() tells the starting point).
      void loop.start();
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
        void loop?.poke();
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
        const closing = heads.close();
        await loop?.stop();
        for (const adoption of adoptions.splice(0))
          adoption.reject(
            new EvmFollowerStateError(network, 'the follower stopped before it published the adopted transfers'),
          );
        await closing;
        lifecycle = 'stopped';
      })();
      return stopping;
    },

    status() {
      const processed = state === undefined ? undefined : lastProcessed(state);
      const head = heads.latest();
      return {
        network,
        head: head === undefined ? null : BigInt(head),
        processed: processed === undefined ? null : BigInt(processed.number),
        pendingFinal: state === undefined ? 0 : pendingFinalCount(state),
        caughtUpAt,
        endpoint: endpointLabel(rpc.current()),
        headSource: heads.kind(),
        lastError,
        running: lifecycle === 'running',
      };
    },

    counters() {
      const { blocksRead, bloomRechecks } = fetcher.counters();
      return {
        rpc: rpc.counters(),
        published: sink.published(),
        blocksRead,
        bloomRechecks,
        logRange: logRange.current(),
        errors: errorCount,
        webSocket: heads.counters(),
      };
    },
  };
}
