import { HttpRequestError, RpcError, TimeoutError, http } from 'viem';
import { endpointLabel } from '../../../shared/mask-userinfo.ts';
import { RpcEndpointsError, type EndpointFailure } from './errors.ts';

/** RPC usage of one follower, for benchmarks and status. */
export type RpcCounters = {
  /** JSON-RPC requests sent, by method (a request retried on another endpoint counts twice). */
  calls: Record<string, number>;
  /** HTTP requests sent (a JSON-RPC batch is one). */
  httpRequests: number;
  /** Requests an endpoint failed, by kind. */
  failures: Record<EndpointFailure['kind'], number>;
  /** Times the follower moved to another endpoint. */
  endpointSwitches: number;
};

export type RpcEndpoints = {
  /**
   * Sends one JSON-RPC request to the current endpoint, moving on to the next endpoints when it
   * fails (the first that answers becomes current). Requests started in the same tick go out as
   * one JSON-RPC batch. Throws RpcEndpointsError when every endpoint failed, or an abort error
   * once the pool's `signal` is aborted.
   */
  request(method: string, params: readonly unknown[]): Promise<unknown>;
  /** The URL requests go to first. */
  current(): string;
  counters(): RpcCounters;
};

export type CreateRpcEndpointsParameters = {
  network: string;
  urls: readonly string[];
  /** Per-request timeout. */
  timeoutMs: number;
  /** Most JSON-RPC requests in one HTTP batch. */
  batchSize: number;
  /** After moving off the first endpoint, try it again after this long. */
  preferredRetryMs: number;
  log: (line: string) => void;
  now: () => number;
  /** Aborting it cancels every request in flight (the follower stops). */
  signal: AbortSignal;
};

/**
 * Sticky failover over several HTTP endpoints. viem's `fallback` transport is not used: without
 * ranking it sends every request to the first endpoint again (a stalled first endpoint then costs
 * a full timeout per request), and its ranking runs a ping loop that cannot be stopped. Here the
 * endpoint that last answered stays current, and the preferred (first) one is retried now and then.
 * Each endpoint is a viem `http` transport with batching and without its own retries (the
 * follower retries whole steps with backoff).
 */
export function createRpcEndpoints(parameters: CreateRpcEndpointsParameters): RpcEndpoints {
  const { network, urls, log, now } = parameters;
  const calls: Record<string, number> = {};
  const failures: Record<EndpointFailure['kind'], number> = { unreachable: 0, timeout: 0, rejected: 0 };
  let httpRequests = 0;
  let endpointSwitches = 0;
  let current = 0;
  let movedAt = 0;

  const endpoints = urls.map((url) =>
    http(url, {
      batch: { batchSize: parameters.batchSize },
      retryCount: 0,
      timeout: parameters.timeoutMs,
      onFetchRequest: () => {
        httpRequests += 1;
      },
    })({ retryCount: 0, timeout: parameters.timeoutMs }),
  );

  // viem's http transport drops its own timeout when it is given a signal, and batches only
  // requests that share one. So the requests started in one turn of the event loop share one
  // signal that fires on stop or on the timeout. A controller and a plain timer, not
  // AbortSignal.any() over AbortSignal.timeout(): on Node 20 the latter can lose the timeout
  // signal to garbage collection, and a stalled endpoint would then hang the follower.
  // Many turns may overlap (each lives until its timer ends): the stop signal carries one
  // listener that aborts them all, not one per turn.
  const liveTurns = new Set<AbortController>();
  const stop = parameters.signal;
  stop.addEventListener(
    'abort',
    () => {
      for (const turn of liveTurns) turn.abort(stop.reason);
    },
    { once: true },
  );
  let turnSignal: AbortSignal | undefined;
  const requestSignal = (): AbortSignal => {
    if (turnSignal === undefined) {
      const controller = new AbortController();
      if (stop.aborted) controller.abort(stop.reason);
      else liveTurns.add(controller);
      const timer = setTimeout(() => {
        controller.abort(new DOMException(`no answer within ${parameters.timeoutMs} ms`, 'TimeoutError'));
      }, parameters.timeoutMs);
      timer.unref();
      controller.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          liveTurns.delete(controller);
        },
        { once: true },
      );
      turnSignal = controller.signal;
      setImmediate(() => {
        turnSignal = undefined;
      });
    }
    return turnSignal;
  };

  const moveTo = (index: number, reason: string): void => {
    if (index === current) return;
    log(`rpc: using ${endpointLabel(urls[index]!)} instead of ${endpointLabel(urls[current]!)} (${reason})`);
    current = index;
    movedAt = now();
    endpointSwitches += 1;
  };

  return {
    async request(method, params) {
      if (current !== 0 && now() - movedAt >= parameters.preferredRetryMs) {
        current = 0;
        movedAt = now();
      }
      const failed: EndpointFailure[] = [];
      for (let attempt = 0; attempt < endpoints.length; attempt++) {
        const index = (current + attempt) % endpoints.length;
        const endpoint = endpoints[index]!;
        const url = urls[index]!;
        calls[method] = (calls[method] ?? 0) + 1;
        const signal = requestSignal();
        try {
          const result: unknown = await endpoint.request({ method, params: [...params] }, { signal });
          if (index !== current) moveTo(index, `${method} failed there: ${failed.at(-1)?.message ?? 'unknown error'}`);
          return result;
        } catch (error) {
          if (parameters.signal.aborted) throw error;
          const failure = signal.aborted
            ? { url, kind: 'timeout' as const, message: `no answer within ${parameters.timeoutMs} ms` }
            : classify(url, error);
          failures[failure.kind] += 1;
          failed.push(failure);
        }
      }
      throw new RpcEndpointsError(network, method, failed);
    },
    current: () => urls[current]!,
    counters: () => ({ calls: { ...calls }, httpRequests, failures: { ...failures }, endpointSwitches }),
  };
}

function classify(url: string, error: unknown): EndpointFailure {
  const message = shortMessage(error);
  if (error instanceof TimeoutError) return { url, kind: 'timeout', message };
  if (error instanceof HttpRequestError) return { url, kind: 'unreachable', message };
  if (error instanceof RpcError) return { url, kind: 'rejected', message };
  return { url, kind: 'unreachable', message };
}

function shortMessage(error: unknown): string {
  if (error instanceof Error) {
    const short =
      'shortMessage' in error && typeof error.shortMessage === 'string' ? error.shortMessage : error.message;
    const details =
      'details' in error && typeof error.details === 'string' && error.details !== '' ? `: ${error.details}` : '';
    return `${short}${details}`.split('\n')[0] ?? short;
  }
  return String(error);
}
