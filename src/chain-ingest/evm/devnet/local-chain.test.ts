import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { createLineLogger, logTo } from '../../../shared/logger.ts';
import { createFileCheckpointStore } from '../follower/file-checkpoint-store.ts';
import { createJsonRpc } from './json-rpc.ts';
import { startLocalChain } from './local-chain.ts';

type Line = Record<string, unknown> & { msg: string };

/** A `Log` onto pino, as weir serve gives, and the JSON lines it wrote. */
const pinoLines = () => {
  const records: Line[] = [];
  return { records, log: logTo(createLineLogger((line) => records.push(JSON.parse(line) as Line))) };
};

const hash = (digit: string) => `0x${digit.repeat(64)}`;

test('the local chain deploys once, keeps its state across a stop, starts a new chain from an unreadable state file, and mines up to a follower checkpoint it fell behind', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-local-chain-unit-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const { records, log } = pinoLines();
  const lines = () => records.map((record) => record.msg);
  const eventOf = (event: string) => records.find((record) => record.event === event);

  const first = await startLocalChain({ dataDir, log, port: 0 });
  t.teardown(() => first.stop());
  t.true(lines().some((line) => line.includes('deployed the forwarder factory')));
  // Structured: an operator filters the local chain's lines by event (and family).
  t.like(eventOf('local_chain.deployed'), { level: 30, component: 'local chain', family: 'evm', chainId: 31337 });
  t.like(eventOf('anvil.started'), {
    level: 30,
    component: 'local chain',
    family: 'evm',
    chainId: 31337,
    rpcUrl: first.info.rpcUrl,
    stateFile: join(dataDir, 'local-chain', 'state.json'),
    pid: process.pid,
  });
  t.true(Number.isInteger(eventOf('anvil.started')?.['anvilPid']));
  t.not(eventOf('anvil.started')?.['anvilPid'], process.pid);
  const head = await createJsonRpc(first.info.rpcUrl)('eth_blockNumber');
  await first.stop();
  t.deepEqual((await readdir(join(dataDir, 'local-chain'))).sort(), ['devnet.json', 'state.json'], 'pid file removed');

  records.length = 0;
  const second = await startLocalChain({ dataDir, log, port: 0 });
  t.teardown(() => second.stop());
  t.false(
    lines().some((line) => line.includes('deployed')),
    lines().join('\n'),
  );
  t.deepEqual(second.info.contracts, first.info.contracts);
  t.is(await createJsonRpc(second.info.rpcUrl)('eth_blockNumber'), head);
  await second.stop();

  // A torn state file and a follower that had read up to block 40 of the lost chain.
  await writeFile(join(dataDir, 'local-chain', 'state.json'), '{"block":');
  await createFileCheckpointStore(join(dataDir, 'ingest')).set('devnet', {
    version: 1,
    network: 'devnet',
    chainId: 31337,
    nextBlock: 41,
    lastProcessed: { number: 40, hash: hash('a') },
    window: [{ number: 40, hash: hash('a'), parentHash: hash('b'), transfers: false, finalPublished: true }],
    orphanedHeights: [],
    updatedAt: new Date().toISOString(),
  });
  records.length = 0;
  const third = await startLocalChain({ dataDir, log, port: 0 });
  t.teardown(() => third.stop());
  t.true(
    lines().some((line) => /cannot read its state file \(moved to .*state\.json\.unreadable-/.test(line)),
    lines().join('\n'),
  );
  t.like(eventOf('anvil.state_unreadable'), { level: 40, family: 'evm' });
  t.regex(String(eventOf('anvil.state_unreadable')?.['movedTo']), /state\.json\.unreadable-/);
  t.true(lines().some((line) => line.includes('deployed the forwarder factory')));
  t.deepEqual(third.info.contracts, first.info.contracts, 'a new chain deploys to the same addresses');
  t.true(
    lines().some((line) =>
      /the chain is at block 10 but Weir had read up to block 40 .*mined 31 empty blocks/.test(line),
    ),
  );
  t.like(eventOf('local_chain.blocks_mined'), { level: 40, family: 'evm', head: 10, readUpTo: 40, mined: 31 });
  t.is(await createJsonRpc(third.info.rpcUrl)('eth_blockNumber'), '0x29');
});
