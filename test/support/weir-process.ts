import { spawn, type ChildProcess } from 'node:child_process';
import { connectionPerRequest } from '../../src/chain-ingest/evm/devnet/local-node-transport.ts';
import { onProcessExit } from '../../src/shared/stoppable-child.ts';
import { join } from 'node:path';
import { childWeirSlots } from './child-weir-slots.ts';
import { childCommands, REPOSITORY_ROOT } from './compiled-tree.ts';
import { findFreePort } from './free-port.ts';
import type { ExecutionContext } from 'ava';
import {
  describe,
  descendantsOf,
  processesNaming,
  type RunningProcess,
  stillRunning,
  stopProcesses,
} from './child-processes.ts';
import { ADMIN_TOKEN } from './weir-harness.ts';

export const ROOT = REPOSITORY_ROOT;
/** `weir` as a user runs it (README commands); child Weirs started here run `childCommands()` instead. */
export const WEIR_BIN = join(REPOSITORY_ROOT, 'bin/weir.js');

/** Environment for a child Weir: only what it needs, never the parent's service URLs. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { NATS_URL: _n, KURRENTDB_URL: _k, MONGODB_URL: _m, ...rest } = process.env;
  return { ...rest, ...extra };
}

/** Weirs spawned here and still running: they and theirs are not strays of another Weir on the same data dir. */
const liveWeirs = new Set<ChildProcess>();
const ofLiveWeir = (process_: RunningProcess) =>
  [...liveWeirs].some(
    (weir) =>
      weir.pid === process_.pid ||
      (weir.pid !== undefined && descendantsOf(weir.pid).some((each) => each.pid === process_.pid)),
  );

type WeirOptions = {
  dataDir: string;
  env?: Record<string, string>;
  /** Options after `serve` on the command line. */
  args?: string[];
};
type SpawnWeirOptions = WeirOptions &
  (
    | { testRail?: boolean; startedFrom?: undefined }
    /** Started from this folder by bin/weir.js, as an operator outside the repository runs it (not the compiled tree; no test rail). */
    | { testRail?: false; startedFrom: string }
  );
type SpawnedWeir = {
  url: string;
  child: ChildProcess;
  output: () => string;
  /**
   * Ends this Weir and everything it started. SIGKILL (the default, for teardowns) then stops what
   * it left running (its anvils, in process groups of their own). SIGTERM or SIGINT is a clean
   * stop: Weir must stop them itself, so any left running is an error. Either way, then, a process
   * still naming the data dir (left by an earlier Weir on it) is an error too.
   */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** SIGKILL to Weir alone, as a crash: its anvils stay running for the next start on the data dir to find (kill() stops them if it did not). */
  crash(): Promise<void>;
};

/**
 * `weir serve` as a real child process, ready once /health answers. Its local chains are off
 * (WEIR_LOCAL_CHAIN 'off') unless `env` or `args` (--local-chain) say otherwise, in any form serve
 * reads: 'on' (or '1'/'true'; '' is unset, so on, as `npm start` runs it) for all three, or a comma
 * list of families ('evm', 'tron', 'solana', 'evm,solana', …) for those alone; `--devnet FILE` in
 * `args` replaces them with the chains that file names. `testRail: true` runs
 * serve-with-test-rail.ts instead of bin/weir.js, for tests that publish test-rail transfers by
 * hand. Tried again on another port if its port was taken before it listened. It holds one of the
 * worker's child slots until /health answers or it fails, never while it keeps running (a test may
 * run several at once).
 */
export async function spawnWeir(options: SpawnWeirOptions): Promise<SpawnedWeir> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await childWeirSlots.run(() => spawnWeirOnce(options));
    } catch (error) {
      // The free port found was bound by another process before Weir listened (other tests run alongside).
      if (attempt >= 3 || !(error instanceof Error && /EADDRINUSE/.test(error.message))) throw error;
    }
  }
}

async function spawnWeirOnce(options: SpawnWeirOptions): Promise<SpawnedWeir> {
  const port = await findFreePort();
  // The test rail is injected by serve-with-test-rail.ts (no operator setting offers it).
  const command = options.testRail
    ? [...childCommands().testRail, ...(options.args ?? [])]
    : [...(options.startedFrom === undefined ? childCommands().weir : [WEIR_BIN]), 'serve', ...(options.args ?? [])];
  const child = spawn(process.execPath, command, {
    cwd: options.startedFrom ?? ROOT,
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
  const output = collectOutput(child).both;
  // 'close': the process has exited and its output has been read to the end.
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  liveWeirs.add(child);
  // ava ends a worker that timed out with SIGTERM, before any teardown: Weir and its anvils go with it.
  const forget = onProcessExit(() => killTreeNow(child));
  child.once('exit', () => {
    liveWeirs.delete(child);
    forget();
  });
  const url = `http://127.0.0.1:${port}`;
  // Generous: in a fresh clone under a full test run, the first start compiles every module.
  const startedAt = Date.now();
  let lastAnswer = 'none';
  for (;;) {
    if (child.exitCode !== null) throw new Error(`weir serve exited early:\n${output()}`);
    try {
      // No kept-alive connection is left behind: the test's next request could otherwise go out on
      // a socket the server is closing as idle.
      const response = await fetch(`${url}/health`, { headers: connectionPerRequest });
      const text = await response.text();
      if (response.ok) break;
      lastAnswer = `${response.status} ${text}`;
    } catch {
      /* not listening yet */
    }
    if (Date.now() - startedAt > 150_000) {
      child.kill('SIGKILL');
      throw new Error(`weir serve did not start (last /health answer: ${lastAnswer}):\n${output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // What a crash left running: stopped by kill() if the next Weir on the data dir did not stop it.
  const crashedOut: RunningProcess[] = [];
  const signalWeir = async (signal: NodeJS.Signals): Promise<RunningProcess[]> => {
    const started = child.pid === undefined || child.exitCode !== null ? [] : descendantsOf(child.pid);
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
    return started;
  };
  return {
    url,
    child,
    output,
    async crash() {
      crashedOut.push(...(await signalWeir('SIGKILL')));
    },
    async kill(signal = 'SIGKILL') {
      const wasRunning = child.exitCode === null && child.signalCode === null;
      const started = await signalWeir(signal);
      const leftAfterCleanStop = signal === 'SIGKILL' || !wasRunning ? [] : started.filter(stillRunning);
      await stopProcesses([...started, ...crashedOut]);
      // Anything else naming this data dir: an anvil an earlier Weir on it left, which this one should have replaced.
      const strays = processesNaming(options.dataDir).filter((each) => !ofLiveWeir(each));
      await stopProcesses(strays);
      const problems = [
        leftAfterCleanStop.length > 0
          ? `weir serve stopped by ${signal} but left running (it must stop what it started):\n${describe(leftAfterCleanStop)}`
          : '',
        strays.length > 0
          ? `still running, naming the data dir ${options.dataDir} (stopped now):\n${describe(strays)}`
          : '',
      ].filter(Boolean);
      if (problems.length > 0) throw new Error(`${problems.join('\n')}\n${output()}`);
    },
  };
}

export type WeirRun = { status: number | null; stdout: string; stderr: string };

/**
 * Run a `weir` command to completion, holding one of the worker's child slots. The worker is not
 * blocked meanwhile: the file's other tests go on, and their servers' output is still read.
 */
export function runWeir(
  args: string[],
  env: Record<string, string> = {},
  /** What the command reads on standard input (nothing: it is closed at once). */
  input?: string,
): Promise<WeirRun> {
  return childWeirSlots.run(() => runWeirChild(args, env, input));
}

/** Past this the command is stopped (SIGTERM, then SIGKILL if it lingers) and its status is null. */
const RUN_TIMEOUT_MS = 60_000;

function runWeirChild(args: string[], env: Record<string, string>, input: string | undefined): Promise<WeirRun> {
  const child = spawn(process.execPath, [...childCommands().weir, ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const ended = runToEnd(child, RUN_TIMEOUT_MS);
  // A command that exits without reading its input closes the pipe: not this run's failure.
  child.stdin!.on('error', () => {});
  child.stdin!.end(input);
  return ended;
}

/** What `child` writes, read as it comes (a pipe left unread fills and blocks it): each stream, and both as they came. */
export function collectOutput(child: ChildProcess): { stdout: () => string; stderr: () => string; both: () => string } {
  let stdout = '';
  let stderr = '';
  let both = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
    both += d;
  });
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
    both += d;
  });
  return { stdout: () => stdout, stderr: () => stderr, both: () => both };
}

/**
 * `child`, just spawned, run to its end without blocking this worker: its exit status (null when
 * a signal ended it or it could not start) and its output. Past `timeoutMs` it and what it started are stopped (SIGTERM,
 * then SIGKILL if it lingers); if this process exits first, it goes too.
 */
export function runToEnd(child: ChildProcess, timeoutMs: number): Promise<WeirRun> {
  return new Promise((resolve) => {
    const written = collectOutput(child);
    let failedToStart = '';
    const forget = onProcessExit(() => killTreeNow(child));
    let lingering: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      // What it started too: a shell's running command outlives the shell and holds the pipes, so the run, open.
      const tree = child.pid === undefined ? [] : [child.pid, ...descendantsOf(child.pid).map((each) => each.pid)];
      signalAll(tree, 'SIGTERM');
      lingering = setTimeout(() => signalAll(tree, 'SIGKILL'), 5_000);
    }, timeoutMs);
    let settled = false;
    const done = (status: number | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(lingering);
      forget();
      resolve({ status, stdout: written.stdout(), stderr: written.stderr() + failedToStart });
    };
    // 'close': exited and its output read to the end; 'error': it could not be started.
    child.once('close', (code) => done(code));
    child.once('error', (error) => {
      failedToStart = String(error);
      done(null);
    });
  });
}

/** At once, synchronously (this process is exiting): SIGKILL to `child`, SIGTERM to what it started. */
function signalAll(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids)
    try {
      process.kill(pid, signal);
    } catch {
      // gone already
    }
}

function killTreeNow(child: ChildProcess): void {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const started = descendantsOf(child.pid);
  child.kill('SIGKILL');
  signalAll(
    started.map((each) => each.pid),
    'SIGTERM',
  );
}

/** SIGKILL to `child` and SIGTERM to what it started: in process groups of their own (anvil), they would outlive it. */
export async function killWithWhatItStarted(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const started = descendantsOf(child.pid);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  await stopProcesses(started);
}

/** A clean stop of `child` by `signal`: its exit code, once it has exited; rejects if it left any of what it started running. */
export async function stopCleanly(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  const started = child.pid === undefined ? [] : descendantsOf(child.pid);
  const exited = new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
  child.kill(signal);
  const code = await exited;
  const left = started.filter(stillRunning);
  if (left.length > 0) {
    await stopProcesses(left);
    throw new Error(`stopped by ${signal} but left running (it must stop what it started):\n${describe(left)}`);
  }
  return code;
}

/** `weir devnet ARGS` as a child process, killed with what it started when the test ends; what it wrote to stderr so far. */
export function spawnWeirDevnet(t: ExecutionContext, args: string[]) {
  const child = spawn(process.execPath, [...childCommands().weir, 'devnet', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const forget = onProcessExit(() => killTreeNow(child));
  child.once('exit', forget);
  t.teardown(() => killWithWhatItStarted(child));
  const { stderr } = collectOutput(child);
  return { child, stderr, stop: (signal?: NodeJS.Signals) => stopCleanly(child, signal) };
}
