import { connectionPerRequest } from './local-node-transport.ts';

/** Thrown when a node answers a JSON-RPC call with an error object. */
export class JsonRpcCallError extends Error {
  override readonly name = 'JsonRpcCallError';
  constructor(
    readonly method: string,
    message: string,
  ) {
    super(`${method}: ${message}`);
  }
}

/**
 * A plain JSON-RPC client for node-specific calls viem has no action for (evm_mine, evm_snapshot,
 * the devnet's start-up probe). Resolves with `result`; throws JsonRpcCallError on an error answer.
 */
export function createJsonRpc(
  url: string,
  options: { timeoutMs?: number } = {},
): (method: string, params?: unknown[]) => Promise<unknown> {
  let id = 0;
  return async (method, params = []) => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), options.timeoutMs ?? 10_000);
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...connectionPerRequest },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
        signal: controller.signal,
      });
      const body = (await response.json()) as { result?: unknown; error?: { message?: string } };
      if (body.error !== undefined)
        throw new JsonRpcCallError(method, body.error.message ?? JSON.stringify(body.error));
      return body.result;
    } finally {
      clearTimeout(timer);
    }
  };
}
