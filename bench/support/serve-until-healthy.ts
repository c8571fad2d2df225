import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { freeLoopbackPort } from '../../src/chain-ingest/evm/devnet/anvil-node.ts';

const WEIR_BIN = fileURLToPath(new URL('../../bin/weir.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const START_TIMEOUT_MS = 600_000;

export type Memory = { rssMiB: number; peakRssMiB: number };

/** A process's resident and peak resident memory, from /proc (Linux). */
export function memoryOf(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rssMiB: +(kib('VmRSS') / 1024).toFixed(1), peakRssMiB: +(kib('VmHWM') / 1024).toFixed(1) };
}

/** The environment of a `weir serve` (or `weir replay`) on `dataDir` alone: no services, quiet. */
export const serveEnv = (dataDir: string, port: number) => ({
  ...process.env,
  PORT: String(port),
  HOST: '127.0.0.1',
  WEIR_DATA_DIR: dataDir,
  MONGODB_URL: '',
  KURRENTDB_URL: '',
  NATS_URL: '',
  LOG_LEVEL: 'warn',
});

/**
 * `weir serve` on `dataDir` as it runs by default (embedded stores, no chain): ms from spawn to its
 * first /health 200, then `atHealth(pid)` (memory, a settle); stopped with SIGTERM whatever happens.
 */
export async function serveUntilHealthy<T>(
  dataDir: string,
  atHealth: (pid: number) => Promise<T>,
  options: { pollMs?: number } = {},
): Promise<{ ms: number } & T> {
  const port = await freeLoopbackPort();
  const started = performance.now();
  const child = spawn(process.execPath, [WEIR_BIN, 'serve', '--local-chain', 'off'], {
    cwd: ROOT,
    env: serveEnv(dataDir, port),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    while (performance.now() - started < START_TIMEOUT_MS) {
      if (child.exitCode !== null) throw new Error(`weir serve exited: ${stderr}`);
      const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
        (response) => response.ok,
        () => false,
      );
      if (ok) {
        const ms = Math.round(performance.now() - started);
        return { ms, ...(await atHealth(child.pid!)) };
      }
      await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 10));
    }
    throw new Error(`weir serve did not answer /health within ${START_TIMEOUT_MS / 1000} s: ${stderr}`);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}
