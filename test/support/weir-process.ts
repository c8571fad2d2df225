import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connectionPerRequest } from '../../src/chain-ingest/evm/devnet/local-node-transport.ts';
import { fileURLToPath } from 'node:url';
import { findFreePort } from './free-port.ts';
import type { ExecutionContext } from 'ava';
import { ADMIN_TOKEN } from './weir-harness.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const WEIR_BIN = fileURLToPath(new URL('../../bin/weir.js', import.meta.url));
/** `weir serve` with the test rail injected (no operator setting offers it): see serve-with-test-rail.ts. */
const SERVE_WITH_TEST_RAIL = fileURLToPath(new URL('./serve-with-test-rail.ts', import.meta.url));

/** Environment for a child Weir: only what it needs, never the parent's service URLs. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { NATS_URL: _n, KURRENTDB_URL: _k, MONGODB_URL: _m, ...rest } = process.env;
  return { ...rest, ...extra };
}

type SpawnWeirOptions = {
  dataDir: string;
  env?: Record<string, string>;
  /** Options after `serve` on the command line. */
  args?: string[];
  testRail?: boolean;
};
type SpawnedWeir = {
  url: string;
  child: ChildProcess;
  output: () => string;
  kill(signal?: NodeJS.Signals): Promise<void>;
};

/**
 * `weir serve` as a real child process, ready once /health answers. The local chain is off unless
 * `env` turns it on (WEIR_LOCAL_CHAIN: 'on'); `testRail: true` runs serve-with-test-rail.ts instead
 * of bin/weir.js, for tests that publish test-rail transfers by hand. Tried again on another port
 * if its port was taken before it listened.
 */
export async function spawnWeir(options: SpawnWeirOptions): Promise<SpawnedWeir> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnWeirOnce(options);
    } catch (error) {
      // The free port found was bound by another process before Weir listened (other tests run alongside).
      if (attempt >= 3 || !(error instanceof Error && /EADDRINUSE/.test(error.message))) throw error;
    }
  }
}

async function spawnWeirOnce(options: SpawnWeirOptions): Promise<SpawnedWeir> {
  const port = await findFreePort();
  const command = options.testRail
    ? ['--import', 'tsx', SERVE_WITH_TEST_RAIL, ...(options.args ?? [])]
    : [WEIR_BIN, 'serve', ...(options.args ?? [])];
  const child = spawn(process.execPath, command, {
    cwd: ROOT,
    env: childEnv({
      PORT: String(port),
      HOST: '127.0.0.1',
      WEIR_DATA_DIR: options.dataDir,
      WEIR_LOCAL_CHAIN: 'off',
      WEIR_ADMIN_TOKEN: ADMIN_TOKEN,
      ...options.env,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    output += d.toString();
  });
  // 'close': the process has exited and its output has been read to the end.
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  // Generous: in a fresh clone under a full test run, the first start compiles every module. Counted
  // in this loop's own time: a test beside it that blocks the worker (spawnSync) stalls the loop, and
  // the child too once its output pipe is full, so wall time while stalled is no wait for /health.
  let waitedMs = 0;
  let lastTurn = Date.now();
  let lastAnswer = 'none';
  for (;;) {
    waitedMs += Math.min(Date.now() - lastTurn, 1_000);
    lastTurn = Date.now();
    if (child.exitCode !== null) throw new Error(`weir serve exited early:\n${output}`);
    try {
      // No kept-alive connection is left behind: a test that then blocks its loop (spawnSync) past the
      // server's idle timeout would send its next request on a socket the server has closed.
      const response = await fetch(`${url}/health`, { headers: connectionPerRequest });
      const text = await response.text();
      if (response.ok) break;
      lastAnswer = `${response.status} ${text}`;
    } catch {
      /* not listening yet */
    }
    if (waitedMs > 150_000) {
      child.kill('SIGKILL');
      throw new Error(`weir serve did not start (last /health answer: ${lastAnswer}):\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    child,
    output: () => output,
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** Run a `weir` command to completion. */
export function runWeir(
  args: string[],
  env: Record<string, string> = {},
  /** What the command reads on standard input (nothing: it is closed at once). */
  input?: string,
): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [WEIR_BIN, ...args], {
    cwd: ROOT,
    env: childEnv(env),
    encoding: 'utf8',
    timeout: 60_000,
    ...(input === undefined ? {} : { input }),
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** `weir devnet ARGS` as a child process, killed when the test ends; what it wrote to stderr so far. */
export function spawnWeirDevnet(t: ExecutionContext, args: string[]) {
  const child = spawn(process.execPath, [WEIR_BIN, 'devnet', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return { child, stderr: () => stderr };
}
