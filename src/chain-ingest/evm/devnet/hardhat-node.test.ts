import test from 'ava';
import { createPublicClient, http, webSocket } from 'viem';
import { startHardhatNode as startOnFreePort, hardhatAccounts } from '../../../../test/support/hardhat-node.ts';
import { HardhatNodeStartError } from './errors.ts';
import { createJsonRpc } from './json-rpc.ts';
import { startHardhatNode } from './hardhat-node.ts';

async function answers(rpcUrl: string): Promise<boolean> {
  try {
    await createJsonRpc(rpcUrl, { timeoutMs: 2_000 })('eth_chainId');
    return true;
  } catch {
    return false;
  }
}

test('a node answers over HTTP and WebSocket with the funded well-known accounts, and stop shuts it down', async (t) => {
  const node = await startOnFreePort();
  t.teardown(() => node.stop());
  t.is(node.chainId, 31337);
  t.is(node.rpcUrl, `http://127.0.0.1:${node.port}`);
  t.is(node.wsUrl, `ws://127.0.0.1:${node.port}`);

  const overHttp = createPublicClient({ transport: http(node.rpcUrl) });
  t.is(await overHttp.getChainId(), 31337);
  for (const account of hardhatAccounts)
    t.is(await overHttp.getBalance({ address: account.address }), 10_000n * 10n ** 18n);

  const overWebSocket = createPublicClient({ transport: webSocket(node.wsUrl) });
  t.is(await overWebSocket.getBlockNumber(), 0n);
  await overWebSocket.transport.getRpcClient().then((client) => client.close());

  await node.stop();
  await node.stop(); // idempotent
  t.false(await answers(node.rpcUrl));
});

test('another chain id, an OS-chosen port, and kill()', async (t) => {
  const node = await startHardhatNode({ chainId: 1337, port: 0 });
  t.teardown(() => node.stop());
  t.true(node.port > 0);
  t.is(await createPublicClient({ transport: http(node.rpcUrl) }).getChainId(), 1337);
  node.kill();
  await node.stop(); // waits for the exit and cleans up
  t.false(await answers(node.rpcUrl));
});

test('a taken port gives a retryable HardhatNodeStartError', async (t) => {
  const first = await startOnFreePort();
  t.teardown(() => first.stop());
  const error = await t.throwsAsync(startHardhatNode({ port: first.port }), { instanceOf: HardhatNodeStartError });
  t.is(error?.reason, 'address-in-use');
  t.true(error?.retryable);
  t.true(await answers(first.rpcUrl), 'the first node is unaffected');
});
