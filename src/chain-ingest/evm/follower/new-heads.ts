import { getWebSocketRpcClient, type SocketRpcClient } from 'viem/utils';
import { rpcValueReader } from './rpc-values.ts';
import { endpointLabel } from '../../../shared/mask-userinfo.ts';

/** A new chain head as announced by `eth_subscribe("newHeads")`. */
export type NewHead = { number: number; hash: string; parentHash: string };

export type NewHeadsSubscription = {
  url: string;
  /**
   * The node's `eth_blockNumber`, asked over the same socket once the subscription was made: every
   * block above it is announced, so a block up to it that is never announced is no sign of a stall.
   */
  subscribedAtHead: number;
  /** Unsubscribes and lets go of the socket (closed once no subscription of this process uses it). */
  close(): Promise<void>;
};

export type SubscribeNewHeadsParameters = {
  network: string;
  url: string;
  onHead(head: NewHead): void;
  /** Called at most once, when the socket fails or closes after the subscription was handed over. */
  onFailure(error: Error): void;
  /** How long connecting and subscribing may take. */
  timeoutMs: number;
};

type WebSocketClient = SocketRpcClient<object>;

/**
 * viem caches one socket per URL and options for the whole process, so two followers on the same
 * URL share it. Count the users of each socket and close it when the last one lets go, so that
 * stopping one follower never cuts another's subscription.
 */
const socketUsers = new Map<WebSocketClient, number>();

async function acquireSocket(url: string): Promise<WebSocketClient> {
  let client: WebSocketClient = await getWebSocketRpcClient(url, { reconnect: false });
  if (!isOpen(client)) {
    // A socket that failed stays in viem's cache until closed: close it and connect afresh.
    socketUsers.delete(client);
    client.close();
    client = await getWebSocketRpcClient(url, { reconnect: false });
  }
  socketUsers.set(client, (socketUsers.get(client) ?? 0) + 1);
  return client;
}

function releaseSocket(client: WebSocketClient): void {
  const users = (socketUsers.get(client) ?? 1) - 1;
  if (users > 0) {
    socketUsers.set(client, users);
    return;
  }
  socketUsers.delete(client);
  client.close();
}

function isOpen(client: WebSocketClient): boolean {
  const socket: object = client.socket;
  return 'readyState' in socket && socket.readyState === 1;
}

/**
 * Subscribes to new heads over a WebSocket (viem's socket client, without its reconnects: the
 * follower falls back to polling and reconnects itself), then asks the node for its head over the
 * same socket (`subscribedAtHead`). Rejects when the socket cannot be opened, or the node refuses
 * the subscription or does not give its head within `timeoutMs` each.
 */
export async function subscribeNewHeads(parameters: SubscribeNewHeadsParameters): Promise<NewHeadsSubscription> {
  const { network, url, timeoutMs } = parameters;
  const client = await withTimeout(acquireSocket(url), timeoutMs, `connecting to ${endpointLabel(url)}`, (late) =>
    releaseSocket(late),
  );
  const read = rpcValueReader(network, 'eth_subscription newHeads');
  let subscriptionId: string | undefined;
  let closed = false;
  let failure: Error | undefined;
  /** Failures before the subscription is handed over reject subscribeNewHeads instead. */
  let handedOver = false;

  const fail = (error: Error): void => {
    if (closed || failure !== undefined) return;
    failure = error;
    if (handedOver) parameters.onFailure(error);
  };

  const subscribed = new Promise<string>((resolve, reject) => {
    client.request({
      body: { method: 'eth_subscribe', params: ['newHeads'] },
      onResponse(message: unknown) {
        const response = typeof message === 'object' && message !== null ? (message as Record<string, unknown>) : {};
        if (response.method === 'eth_subscription') {
          if (closed) return;
          try {
            const params = read.record(response.params, 'params');
            const head = read.record(params.result, 'result');
            const number = read.smallQuantity(head.number, 'head number');
            parameters.onHead({
              number,
              hash: read.hash(head.hash, `head ${number} hash`),
              parentHash: read.hash(head.parentHash, `head ${number} parentHash`),
            });
          } catch (error) {
            fail(error instanceof Error ? error : new Error(String(error)));
          }
          return;
        }
        if (response.error !== undefined && response.error !== null) {
          const detail =
            typeof response.error === 'object' && 'message' in response.error
              ? String(response.error.message)
              : JSON.stringify(response.error);
          reject(new Error(`${endpointLabel(url)} refused eth_subscribe newHeads: ${detail}`));
          return;
        }
        if (typeof response.result === 'string') resolve(response.result);
      },
      onError(error) {
        const failure = error instanceof Error ? error : new Error(`websocket ${url} failed`);
        if (subscriptionId === undefined) reject(failure);
        else fail(failure);
      },
    });
  });

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      closed = true;
      if (failure === undefined && isOpen(client) && subscriptionId !== undefined) {
        await client
          .requestAsync({ body: { method: 'eth_unsubscribe', params: [subscriptionId] }, timeout: 1_000 })
          .catch(() => undefined);
      }
      releaseSocket(client);
    })();
    return closing;
  };

  try {
    subscriptionId = await withTimeout(subscribed, timeoutMs, `subscribing to newHeads at ${url}`);
    const answer = await client.requestAsync({ body: { method: 'eth_blockNumber' }, timeout: timeoutMs });
    if (answer.error !== undefined && answer.error !== null)
      throw new Error(`${url} refused eth_blockNumber: ${JSON.stringify(answer.error)}`);
    const subscribedAtHead = rpcValueReader(network, 'eth_blockNumber').smallQuantity(answer.result, 'block number');
    if (failure !== undefined) throw failure;
    handedOver = true;
    return { url, subscribedAtHead, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Races `promise` against a timer; when the timer wins, `onLate` gets the value if it arrives later. */
async function withTimeout<T>(
  promise: Promise<T>,
  timeoutMs: number,
  what: string,
  onLate?: (value: T) => void,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(new Error(`${what} took longer than ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
    if (timedOut)
      promise.then(
        (value) => onLate?.(value),
        () => undefined,
      );
  }
}
