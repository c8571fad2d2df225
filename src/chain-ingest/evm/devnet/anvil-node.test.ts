import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { freeLoopbackPort, startAnvilNode } from './anvil-node.ts';
import { HardhatNodeStartError } from './errors.ts';
import { createJsonRpc } from './json-rpc.ts';

test('anvil starts on a free port with the chain id, keeps its blocks in the state file across a stop, and stop ends it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'weir-anvil-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const stateFile = join(dir, 'state.json');
  const first = await startAnvilNode({ stateFile });
  t.teardown(() => first.stop());
  t.regex(first.rpcUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.is(first.wsUrl, first.rpcUrl.replace('http', 'ws'));
  const rpc = createJsonRpc(first.rpcUrl);
  t.is(await rpc('eth_chainId'), '0x7a69');
  await rpc('anvil_mine', ['0x3']);
  const block = (await rpc('eth_getBlockByNumber', ['0x3', false])) as { hash: string };
  await first.stop();
  await t.throwsAsync(rpc('eth_chainId'));

  const second = await startAnvilNode({ stateFile });
  t.teardown(() => second.stop());
  const again = createJsonRpc(second.rpcUrl);
  t.is(await again('eth_blockNumber'), '0x3');
  t.is(((await again('eth_getBlockByNumber', ['0x3', false])) as { hash: string }).hash, block.hash);
});

test('a taken port: freeLoopbackPort picks another; anvil told to use it fails with a retryable error', async (t) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const taken = (server.address() as { port: number }).port;
  t.not(await freeLoopbackPort(taken), taken);
  const error = await t.throwsAsync(startAnvilNode({ port: taken }), { instanceOf: HardhatNodeStartError });
  t.true(error?.retryable, error?.message);
});
