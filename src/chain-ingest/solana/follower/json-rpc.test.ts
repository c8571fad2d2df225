import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { createSolanaJsonRpc } from './json-rpc.ts';

test("a Solana RPC error (what the follower logs as solana.reference_unread) names the endpoint without the provider's key", async (t) => {
  const server = createServer((_, response) => response.writeHead(503).end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const { port } = server.address() as AddressInfo;
  const rpc = createSolanaJsonRpc({ url: `http://127.0.0.1:${port}/v2/KEY123?api-key=KEY123` });
  const error = await t.throwsAsync(rpc.call('getSlot', []));
  t.regex(error?.message ?? '', /127\.0\.0\.1:\d+\/… answered HTTP 503/);
  t.notRegex(error?.message ?? '', /KEY123/);
});
