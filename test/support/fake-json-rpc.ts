import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExecutionContext } from 'ava';

/**
 * A JSON-RPC server of a test on 127.0.0.1, single calls and batches: `result(method, params)`
 * answers each call; what it throws is answered as a JSON-RPC error. A POST to `/wallet/…` (a Tron
 * node's HTTP API beside its JSON-RPC) is answered by `wallet(path, body)` when given. Closed when the test ends.
 */
export async function startFakeJsonRpc(
  t: Pick<ExecutionContext, 'teardown'>,
  result: (method: string, params: unknown[]) => unknown,
  wallet?: (path: string, body: Record<string, unknown>) => unknown,
): Promise<string> {
  const answer = (call: { id: unknown; method: string; params?: unknown[] }) => {
    try {
      return { jsonrpc: '2.0', id: call.id, result: result(call.method, call.params ?? []) };
    } catch (error) {
      return { jsonrpc: '2.0', id: call.id, error: { code: -32601, message: (error as Error).message } };
    }
  };
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    request.on('end', () => {
      const parsed: unknown = JSON.parse(body);
      response.setHeader('content-type', 'application/json');
      if (wallet && request.url?.startsWith('/wallet/')) {
        response.end(JSON.stringify(wallet(request.url, parsed as Record<string, unknown>)));
        return;
      }
      const calls = (Array.isArray(parsed) ? parsed : [parsed]) as {
        id: unknown;
        method: string;
        params?: unknown[];
      }[];
      response.end(JSON.stringify(Array.isArray(parsed) ? calls.map(answer) : answer(calls[0]!)));
    });
  });
  return listenForTest(t, server);
}

/** Listens on a free port of 127.0.0.1 until the test ends; its URL. */
export async function listenForTest(t: Pick<ExecutionContext, 'teardown'>, server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
