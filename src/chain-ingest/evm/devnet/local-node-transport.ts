import { http, type HttpTransport } from 'viem';

/**
 * Request headers that give every request a connection of its own, closed after the answer.
 *
 * Why: a node's HTTP server closes a kept-alive connection left idle (hardhat's after 5 s), and
 * Node's fetch drops its idle connection earlier only if its event loop gets to run the timer.
 * When it is held up past both (a synchronous solc compile in a loaded test run), the next request
 * goes out on the connection the node has closed and fails with "fetch failed" (other side closed),
 * and a failed send cannot tell whether the node saw the request. A fresh connection has never been
 * idle, so this cannot happen; it costs one loopback connect per request (about 1 ms, measured).
 */
export const connectionPerRequest = { connection: 'close' } as const;

/**
 * viem transport for a node on this machine (a devnet, a test node): one connection per request
 * (see {@link connectionPerRequest}) and no retries, so a revert is never resent (hardhat reports
 * reverts as internal errors, which viem would retry with back-off).
 */
export function localNodeTransport(url: string): HttpTransport {
  return http(url, { retryCount: 0, fetchOptions: { headers: connectionPerRequest } });
}
