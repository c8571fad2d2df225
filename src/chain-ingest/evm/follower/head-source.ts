import type { Clock } from '../../../shared/clock.ts';
import { getBlockNumber } from './get-chain-head.ts';
import { subscribeNewHeads, type NewHead, type NewHeadsSubscription } from './new-heads.ts';
import type { RpcEndpoints } from './rpc-endpoints.ts';
import { jitteredBackoff } from './jittered-backoff.ts';
import { endpointLabel } from '../../../shared/mask-userinfo.ts';

/** A head read: its number and when it was read (on the clock). */
export type HeadUpdate = { number: number; at: number };

export type HeadSource = {
  /**
   * The newest head: read over HTTP when there is no live socket, no head yet, or a heartbeat is
   * due, else the last one the socket announced. Throws what the HTTP read met.
   */
  look(): Promise<HeadUpdate>;
  /** How long until the next look is due (a heartbeat with a live socket, the poll interval without). */
  interval(): number;
  /** The newest head heard of, undefined before the first. */
  latest(): number | undefined;
  /** A head the WebSocket announced since last asked, once: the follower checks it for a same-height reorg. */
  takeTip(): NewHead | undefined;
  kind(): 'websocket' | 'polling';
  counters(): { subscriptions: number; failures: number; heads: number };
  start(): void;
  /** Unsubscribes and cancels the reconnect timer; no `onWake` after. */
  close(): Promise<void>;
};

export type HeadSourceDeps = {
  network: string;
  rpc: RpcEndpoints;
  /** WebSocket endpoints for `newHeads` (may be empty: polling only). */
  ws: readonly string[];
  clock: Pick<Clock, 'now'>;
  pollIntervalMs: number;
  heartbeatMs: number;
  webSocketRetryMs: number;
  rpcTimeoutMs: number;
  /** Runs before each HTTP head read (the follower checks the endpoint's chain id). */
  beforePoll(): Promise<void>;
  log(line: string): void;
  /** A WebSocket failure, for the follower's status. */
  onError(message: string): void;
  /** Time to look now: the socket announced a head, or it failed (polling takes over). */
  onWake(): void;
};

/**
 * The chain heads: `eth_subscribe("newHeads")` over a WebSocket when one is live, with
 * `eth_blockNumber` over HTTP as a heartbeat every `heartbeatMs`, or `eth_blockNumber` every
 * `pollIntervalMs` without one. The follower looks when `onWake` says so or `interval()` has
 * passed; `look()` reads the head over HTTP when that is due. A socket that
 * fails, or stalls (polling shows a head it has not announced within a heartbeat), is dropped for
 * polling and tried again after a doubling delay, on the next endpoint.
 */
export function createHeadSource(deps: HeadSourceDeps): HeadSource {
  const { network, rpc, clock, log } = deps;
  const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));
  let closed = false;
  let head: number | undefined;
  /** When `head` was read (the HTTP request sent or the WebSocket announcement heard), on the clock. */
  let headAt = 0;
  let lastHttpHeadAt = 0;
  /** A head announced with its hash: checked once for a same-height reorg. */
  let tip: NewHead | undefined;

  const wake = (): void => {
    if (!closed) deps.onWake();
  };

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
  const counts = { subscriptions: 0, failures: 0, heads: 0 };
  const background = new Set<Promise<unknown>>();
  const track = (promise: Promise<unknown>): void => {
    const settled = promise.catch(() => undefined).finally(() => background.delete(settled));
    background.add(settled);
  };

  const onSocketHead = (announced: NewHead): void => {
    if (closed) return;
    head = announced.number;
    headAt = clock.now();
    counts.heads += 1;
    socketCovers = Math.max(socketCovers ?? announced.number, announced.number);
    if (unannounced !== undefined && announced.number >= unannounced.height) unannounced = undefined;
    tip = announced;
    wake();
  };

  const connectSocket = async (): Promise<void> => {
    if (closed || deps.ws.length === 0) return;
    const url = deps.ws[socketIndex % deps.ws.length]!;
    socketCovers = undefined;
    unannounced = undefined;
    try {
      const subscription = await subscribeNewHeads({
        network,
        url,
        timeoutMs: deps.rpcTimeoutMs,
        onHead: onSocketHead,
        onFailure: (error) => onSocketFailure(url, error),
      });
      if (closed) {
        await subscription.close();
        return;
      }
      socket = subscription;
      socketFailures = 0;
      counts.subscriptions += 1;
      // Heads announced while the follower asked for the node's head count as well.
      socketCovers = Math.max(subscription.subscribedAtHead, socketCovers ?? subscription.subscribedAtHead);
      log(`new heads from websocket ${endpointLabel(url)}`);
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
    if (closed) return;
    socketFailures += 1;
    counts.failures += 1;
    socketIndex += 1;
    const delay = jitteredBackoff(socketFailures, deps.webSocketRetryMs, 60_000);
    deps.onError(`${new Date(clock.now()).toISOString()} websocket ${endpointLabel(url)} failed: ${describe(error)}`);
    log(
      `websocket ${endpointLabel(url)} failed (${describe(error)}); polling eth_blockNumber every ${deps.pollIntervalMs} ms, websocket again in ${delay} ms`,
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
    if (waited >= deps.heartbeatMs) {
      onSocketFailure(
        socket.url,
        new Error(
          `stalled: block ${unannounced.height} was seen over HTTP ${waited} ms ago and is still not announced; the subscription covers blocks up to ${socketCovers}`,
        ),
      );
    }
  };

  return {
    async look() {
      await deps.beforePoll();
      const pollDue = socket === undefined || head === undefined || Date.now() - lastHttpHeadAt >= deps.heartbeatMs;
      if (pollDue) {
        // The time the question went out: the answer holds every block mined before it.
        const askedAt = clock.now();
        const httpHead = await getBlockNumber(rpc, { network });
        headAt = askedAt;
        lastHttpHeadAt = Date.now();
        checkSocketStall(httpHead, clock.now());
        head = httpHead;
      }
      return { number: head!, at: headAt };
    },
    interval: () => (socket !== undefined ? deps.heartbeatMs : deps.pollIntervalMs),
    latest: () => head,
    takeTip() {
      const taken = tip;
      tip = undefined;
      return taken;
    },
    kind: () => (socket !== undefined ? 'websocket' : 'polling'),
    counters: () => ({ ...counts }),
    start() {
      socketConnecting = connectSocket();
      track(socketConnecting);
    },
    async close() {
      closed = true;
      clearTimeout(socketRetry);
      socketRetry = undefined;
      await socketConnecting;
      const open = socket;
      socket = undefined;
      await open?.close();
      while (background.size > 0) await Promise.all([...background]);
    },
  };
}
