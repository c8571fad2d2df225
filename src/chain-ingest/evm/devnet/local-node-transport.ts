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
 * How long a request to a node on this machine may take. Not viem's 10 s, a bound for a remote
 * provider: the node shares this machine's cores, and on a loaded one estimating a large sweep took
 * longer than that while it was working on the answer. A node that died is seen at once (connection
 * refused or reset), so this bound only catches one that hangs.
 */
export const LOCAL_NODE_TIMEOUT_MS = 120_000;

/**
 * viem transport for a node on this machine (a devnet, a test node): one connection per request
 * (see {@link connectionPerRequest}), no retries, so a revert is never resent (hardhat reports
 * reverts as internal errors, which viem would retry with back-off), and {@link LOCAL_NODE_TIMEOUT_MS}.
 */
export function localNodeTransport(url: string): HttpTransport {
  return http(url, { retryCount: 0, timeout: LOCAL_NODE_TIMEOUT_MS, fetchOptions: { headers: connectionPerRequest } });
}
