/**
 * Issue 14: which node runs the local chain `weir serve` starts, and what it costs `npm start`.
 *
 * 1. hardhat node vs anvil, each `--runs` times, alternating: spawn → first eth_chainId answered
 *    (ready) → ForwarderFactory, test USDC/USDT/DAI deployed and both payers funded (deployed);
 *    resident memory of the node process after deploying (VmRSS) and its peak (VmHWM).
 * 2. `node bin/weir.js serve` (what `npm start` runs) on a fresh data dir until `/health` answers
 *    200, with the local chain (the default) and with `--local-chain off`, alternating in the same run.
 *
 * Run: npm run bench:local-chain -- --runs 5
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeLoopbackPort, startAnvilNode } from '../src/chain-ingest/evm/devnet/anvil-node.ts';
import type { HardhatNode } from '../src/chain-ingest/evm/devnet/hardhat-node.ts';
import { startHardhatNode } from '../src/chain-ingest/evm/devnet/hardhat-node.ts';
import { deployDevnet } from '../src/chain-ingest/evm/devnet/start-devnet.ts';
import { loadAverage1m, machineInfo } from './evm/support/bench-env.ts';
import { cliArgs } from './support/cli-args.ts';

const runs = cliArgs(process.argv.slice(2)).integer('--runs', 5, 50);
const WEIR_BIN = fileURLToPath(new URL('../bin/weir.js', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));

type NodeRun = { readyMs: number; deployedMs: number; rssMiB: number; peakRssMiB: number };

/** VmRSS and VmHWM of a process in MiB (Linux). */
function memoryOf(pid: number): { rssMiB: number; peakRssMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rssMiB: +(kib('VmRSS') / 1024).toFixed(1), peakRssMiB: +(kib('VmHWM') / 1024).toFixed(1) };
}

async function measureNode(start: () => Promise<HardhatNode>): Promise<NodeRun> {
  const started = performance.now();
  const node = await start();
  const readyMs = performance.now() - started;
  try {
    await deployDevnet(node);
    const deployedMs = performance.now() - started;
    return { readyMs: Math.round(readyMs), deployedMs: Math.round(deployedMs), ...memoryOf(node.pid) };
  } finally {
    await node.stop();
  }
}

/** `node bin/weir.js serve` on a fresh data dir: ms until /health answers 200. */
async function measureServe(localChain: 'on' | 'off'): Promise<number> {
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-bench-start-'));
  const port = await freeLoopbackPort();
  const started = performance.now();
  const child = spawn(process.execPath, [WEIR_BIN, 'serve', '--local-chain', localChain], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', WEIR_DATA_DIR: dataDir },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    for (let attempt = 0; attempt < 3000; attempt++) {
      if (child.exitCode !== null) throw new Error(`weir serve exited: ${stderr}`);
      const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
        (response) => response.ok,
        () => false,
      );
      if (ok) return Math.round(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`weir serve did not answer /health within 30 s: ${stderr}`);
  } finally {
    child.kill('SIGTERM');
    await exited;
    await rm(dataDir, { recursive: true, force: true });
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

const machine = machineInfo();
const loadBefore = loadAverage1m();
const nodes: Record<'hardhat' | 'anvil', NodeRun[]> = { hardhat: [], anvil: [] };
for (let i = 0; i < runs; i++) {
  nodes.hardhat.push(await measureNode(() => startHardhatNode({ port: 0 })));
  nodes.anvil.push(await measureNode(() => startAnvilNode({ port: 0 })));
  process.stderr.write(`[bench:local-chain] node run ${i + 1}/${runs}\n`);
}
const serve: Record<'with' | 'without', number[]> = { with: [], without: [] };
await measureServe('off'); // warm-up: the first start after install compiles the sources (tsx cache)
for (let i = 0; i < runs; i++) {
  serve.with.push(await measureServe('on'));
  serve.without.push(await measureServe('off'));
  process.stderr.write(`[bench:local-chain] serve run ${i + 1}/${runs}\n`);
}

const summary = {
  date: new Date().toISOString(),
  machine,
  loadAverage1m: { before: loadBefore, after: loadAverage1m() },
  runs,
  nodes: Object.fromEntries(
    Object.entries(nodes).map(([name, list]) => [
      name,
      {
        readyMs: median(list.map((r) => r.readyMs)),
        deployedMs: median(list.map((r) => r.deployedMs)),
        rssMiB: median(list.map((r) => r.rssMiB)),
        peakRssMiB: median(list.map((r) => r.peakRssMiB)),
        all: list,
      },
    ]),
  ),
  npmStartToHealthMs: {
    withLocalChain: { median: median(serve.with), min: Math.min(...serve.with), all: serve.with },
    withoutLocalChain: { median: median(serve.without), min: Math.min(...serve.without), all: serve.without },
  },
};
process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
