import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { eventually } from '../../../../test/support/api-client.ts';
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

test('anvil, in its own process group, is stopped with the process that started it when that one is ended by a signal it does not handle (a test runner timing out)', async (t) => {
  // A process that starts anvil, says its pid, and waits: as a test file's worker does.
  const starter = spawn(
    process.execPath,
    [
      '--import=tsx',
      '--input-type=module',
      '-e',
      `const { startAnvilNode } = await import(${JSON.stringify(new URL('./anvil-node.ts', import.meta.url).href)});
       const anvil = await startAnvilNode();
       console.log(anvil.pid);
       setInterval(() => {}, 1_000);`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const anvilPid = Number(
    await new Promise<string>((resolve, reject) => {
      starter.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString('utf8').trim()));
      starter.once('exit', (code) => reject(new Error(`the starter exited (${String(code)}) before anvil started`)));
    }),
  );
  const groupAlive = () => {
    try {
      process.kill(-anvilPid, 0);
      return true;
    } catch {
      return false;
    }
  };
  t.teardown(() => {
    if (groupAlive()) process.kill(-anvilPid, 'SIGKILL');
  });
  t.true(groupAlive());

  starter.kill('SIGTERM');
  const [, signal] = (await once(starter, 'exit')) as [number | null, NodeJS.Signals | null];
  t.is(signal, 'SIGTERM', 'ended by the signal, as it would have been');
  await eventually(async () => (groupAlive() ? undefined : true), "anvil's process group gone", 10_000);
  t.false(groupAlive());
});
