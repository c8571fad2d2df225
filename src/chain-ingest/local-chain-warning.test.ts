import { createServer } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { createLineLogger, logTo } from '../shared/logger.ts';
import { HardhatNodeStartError } from './evm/devnet/errors.ts';
import { startLocalChainOrWarn } from './evm/devnet/local-chain.ts';
import { localChainWarning } from './local-chain-warning.ts';
import { startLocalSolanaOrWarn } from './solana/devnet/local-cluster.ts';
import { LOCAL_TRON_CHAIN, startEmbeddedLocalTronOrWarn } from './tron/devnet/tron-devnet.ts';

test('a local chain that could not start is named with the WEIR_LOCAL_CHAIN list that leaves it out', (t) => {
  const error = new Error('boom');
  t.is(
    localChainWarning('solana', 'local solana', 'local Solana', error),
    '[local solana] could not start, so test keys have no local Solana: boom (WEIR_LOCAL_CHAIN=evm,tron leaves it out, off turns every local chain off)',
  );
  t.true(
    localChainWarning('tron', 'local tron', 'local Tron', error).endsWith(
      '(WEIR_LOCAL_CHAIN=evm,solana leaves it out, off turns every local chain off)',
    ),
  );
  t.true(
    localChainWarning('evm', 'local chain', 'local chain', error).endsWith(
      '(WEIR_LOCAL_CHAIN=tron,solana leaves it out, off turns every local chain off)',
    ),
  );
});

test('without anvil, the EVM and Tron warnings name the list that leaves out both chains needing it, once', (t) => {
  const error = new HardhatNodeStartError(
    'anvil-missing',
    'anvil is not installed (@foundry-rs/anvil-linux-amd64): run `npm ci` (it is a dependency of Weir)',
  );
  for (const [family, label] of [
    ['evm', 'local chain'],
    ['tron', 'local tron'],
  ] as const) {
    const line = localChainWarning(family, label, label, error);
    t.true(
      line.endsWith(
        'run `npm ci` (it is a dependency of Weir) (WEIR_LOCAL_CHAIN=solana leaves out the chains that need anvil (evm, tron), off turns every local chain off)',
      ),
      line,
    );
    t.is(line.split('WEIR_LOCAL_CHAIN').length, 2, line);
  }
});

test("a local EVM chain or Tron that cannot start is a warning naming the list that leaves it out, and Weir goes on without it; startLocalChainOrWarn names the kind's chain, not always the EVM one", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'weir-local-chain-unit-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  // A data dir that is a file: the chain's directory cannot be made (before any anvil starts).
  const dataDir = join(dir, 'file');
  await writeFile(dataDir, '');
  const lines: string[] = [];
  const log = (line: string) => lines.push(line);
  t.is(await startLocalChainOrWarn({ dataDir, log, port: 0 }), null);
  t.is(await startEmbeddedLocalTronOrWarn({ dataDir, log }), null);
  t.is(lines.length, 2);
  t.regex(lines[0]!, /^\[local chain\] could not start, so test keys have no local chain: /);
  t.true(lines[0]!.endsWith('(WEIR_LOCAL_CHAIN=tron,solana leaves it out, off turns every local chain off)'), lines[0]);
  t.regex(lines[1]!, /^\[local tron\] could not start, so test keys have no local Tron: /);
  t.true(lines[1]!.endsWith('(WEIR_LOCAL_CHAIN=evm,solana leaves it out, off turns every local chain off)'), lines[1]);
  // The local Tron's anvil started directly is warned of as the local Tron too.
  t.is(await startLocalChainOrWarn({ dataDir, log, kind: LOCAL_TRON_CHAIN }), null);
  t.is(lines[2], lines[1]);
});

test('a local Solana that cannot start is a warning naming the list that leaves it out, and Weir goes on without it', async (t) => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => taken.close(() => resolve())));
  const address = taken.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const lines: string[] = [];
  t.is(await startLocalSolanaOrWarn((line) => lines.push(line), { port }), null);
  t.is(lines.length, 1);
  t.regex(lines[0]!, /^\[local solana\] could not start, so test keys have no local Solana: /);
  t.true(lines[0]!.endsWith('(WEIR_LOCAL_CHAIN=evm,tron leaves it out, off turns every local chain off)'), lines[0]);
});

test.serial(
  'on a platform anvil has no build for, the local chain and local Tron each say so once, with the list that leaves both out',
  async (t) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'weir-no-anvil-unit-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));
    // This test file's process only: anvil's platform package is chosen from process.platform.
    const platform = Object.getOwnPropertyDescriptor(process, 'platform')!;
    Object.defineProperty(process, 'platform', { value: 'aix' });
    const lines: string[] = [];
    try {
      t.is(await startLocalChainOrWarn({ dataDir, log: (line) => lines.push(line), port: 0 }), null);
      t.is(await startEmbeddedLocalTronOrWarn({ dataDir, log: (line) => lines.push(line) }), null);
    } finally {
      Object.defineProperty(process, 'platform', platform);
    }
    t.is(lines.length, 2, lines.join('\n'));
    for (const line of lines) {
      t.true(
        line.includes(
          `: anvil has no build for aix/${process.arch} (WEIR_LOCAL_CHAIN=solana leaves out the chains that need anvil (evm, tron), off turns every local chain off)`,
        ),
        line,
      );
      t.is(line.split('WEIR_LOCAL_CHAIN').length, 2, line);
    }
  },
);

test('each warning is a structured line: event local_chain.start_failed, its family, level warn, so an operator can filter it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'weir-local-chain-unit-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const dataDir = join(dir, 'file');
  await writeFile(dataDir, '');
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => taken.close(() => resolve())));
  const address = taken.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const lines: Record<string, unknown>[] = [];
  const log = logTo(createLineLogger((line) => lines.push(JSON.parse(line) as Record<string, unknown>)));
  t.is(await startLocalChainOrWarn({ dataDir, log, port: 0 }), null);
  t.is(await startEmbeddedLocalTronOrWarn({ dataDir, log }), null);
  t.is(await startLocalSolanaOrWarn(log, { port }), null);
  t.is(lines.length, 3);
  for (const [i, [family, component]] of [
    ['evm', 'local chain'],
    ['tron', 'local tron'],
    ['solana', 'local solana'],
  ].entries())
    t.like(lines[i], { level: 40, component, event: 'local_chain.start_failed', family });
});

test('a local Solana that starts says so in a structured line: event local_chain.started, family solana, its RPC URL', async (t) => {
  const lines: Record<string, unknown>[] = [];
  const log = logTo(createLineLogger((line) => lines.push(JSON.parse(line) as Record<string, unknown>)));
  const cluster = await startLocalSolanaOrWarn(log, { port: 0 });
  t.teardown(() => cluster?.stop());
  t.truthy(cluster);
  t.is(lines.length, 1);
  t.like(lines[0], {
    level: 30,
    component: 'local solana',
    event: 'local_chain.started',
    family: 'solana',
    rpcUrl: cluster?.rpcUrl,
  });
});
