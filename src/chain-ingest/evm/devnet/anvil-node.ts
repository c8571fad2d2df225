import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { onProcessExit } from '../../../shared/stoppable-child.ts';
import { HardhatNodeStartError } from './errors.ts';
import type { HardhatNode } from './hardhat-node.ts';
import { createJsonRpc } from './json-rpc.ts';

export type AnvilNodeOptions = {
  /** 31337 unless given. */
  chainId?: number;
  /** TCP port; 0 (the default) takes a free one the OS picks, reported in `port`. */
  port?: number;
  /** `--state FILE`: loaded at start when it exists, written at a clean stop (SIGTERM) and every `stateIntervalSeconds`. */
  stateFile?: string;
  /** `--state-interval`: how often the state is also written while running (bounds what a kill -9 loses). */
  stateIntervalSeconds?: number;
  /** How long to wait for `eth_chainId` to answer; 30 s unless given. */
  startTimeoutMs?: number;
  /** Base fee 0, so a transaction may pay no gas (gas price 0; the local Tron, whose wei are sun). */
  zeroFees?: boolean;
};

/** A running anvil: the same handle as a hardhat node (`stop` is SIGTERM, so anvil writes its state). */
export type AnvilNode = HardhatNode;

const defaultChainId = 31337;
const maxLogChars = 20_000;

/** npm package holding the anvil binary for this platform (installed by `@foundry-rs/anvil` as an optional dependency). */
function platformPackage(): string {
  const os = ({ linux: 'linux', darwin: 'darwin', win32: 'win32' } as Record<string, string>)[process.platform];
  const cpu = ({ x64: 'amd64', arm64: 'arm64' } as Record<string, string>)[process.arch];
  if (os === undefined || cpu === undefined)
    throw new HardhatNodeStartError('anvil-missing', `anvil has no build for ${process.platform}/${process.arch}`);
  return `@foundry-rs/anvil-${os}-${cpu}`;
}

/**
 * Path of the anvil binary, resolved through npm packages the way Node resolves any dependency:
 * the platform package `@foundry-rs/anvil` installs as an optional dependency, else the binary its
 * postinstall downloads next to it when that package could not be installed.
 */
export function anvilBinary(): string {
  const name = platformPackage();
  const file = process.platform === 'win32' ? 'anvil.exe' : 'anvil';
  const require = createRequire(import.meta.url);
  const candidates: (() => string)[] = [
    () => join(dirname(require.resolve(`${name}/package.json`)), 'bin', file),
    () => join(dirname(require.resolve('@foundry-rs/anvil/package.json')), file),
  ];
  for (const candidate of candidates) {
    try {
      const path = candidate();
      if (existsSync(path)) return path;
    } catch {
      // not installed: try the next place
    }
  }
  throw new HardhatNodeStartError(
    'anvil-missing',
    `anvil is not installed (${name}): run \`npm ci\` (it is a dependency of Weir)`,
  );
}

/** A port nobody listens on at 127.0.0.1 now: `preferred` when it is free, else one the OS picks. */
export async function freeLoopbackPort(preferred = 0): Promise<number> {
  const tryListen = (port: number) =>
    new Promise<number | null>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(null));
      server.listen(port, '127.0.0.1', () => {
        const address = server.address();
        const bound = typeof address === 'object' && address !== null ? address.port : null;
        server.close(() => resolve(bound));
      });
    });
  if (preferred !== 0) {
    const port = await tryListen(preferred);
    if (port !== null) return port;
  }
  const port = await tryListen(0);
  if (port === null) throw new HardhatNodeStartError('spawn-failed', 'no free TCP port on 127.0.0.1');
  return port;
}

/**
 * Starts anvil (Foundry's local EVM node, automine) on 127.0.0.1 with the given chain id and
 * resolves once `eth_chainId` answers with it. Anvil's accounts are the same publicly known
 * development accounts as hardhat's. Throws {@link HardhatNodeStartError}.
 */
export async function startAnvilNode(options: AnvilNodeOptions = {}): Promise<AnvilNode> {
  const chainId = options.chainId ?? defaultChainId;
  const port = options.port === undefined || options.port === 0 ? await freeLoopbackPort() : options.port;
  // Not --silent: anvil says "Listening on" only once it has bound the port, which tells our anvil
  // from another one already answering there (the same chain id, so eth_chainId cannot).
  const args = ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(chainId)];
  if (options.zeroFees) args.push('--base-fee', '0');
  if (options.stateFile !== undefined) {
    args.push('--state', options.stateFile);
    if (options.stateIntervalSeconds !== undefined) args.push('--state-interval', String(options.stateIntervalSeconds));
  }
  const child = spawn(anvilBinary(), args, {
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: Ctrl-C in a terminal reaches Weir alone, which stops anvil after its followers.
    detached: process.platform !== 'win32',
  });
  // Only the tail of the output, for error messages.
  let log = '';
  const collect = (chunk: Buffer): void => {
    log = (log + stripVTControlCharacters(chunk.toString('utf8'))).slice(-maxLogChars);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const handle = handleFor(child);
  const rpcUrl = `http://127.0.0.1:${port}`;
  try {
    await waitForChainId(rpcUrl, chainId, child, options.startTimeoutMs ?? 30_000, () => log);
  } catch (error) {
    await handle.stop();
    throw error;
  }
  return { rpcUrl, wsUrl: `ws://127.0.0.1:${port}`, port, chainId, pid: child.pid ?? 0, ...handle };
}

async function waitForChainId(
  rpcUrl: string,
  chainId: number,
  child: ChildProcess,
  timeoutMs: number,
  log: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const rpc = createJsonRpc(rpcUrl, { timeoutMs: 2_000 });
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });
  let lastProblem = 'no answer yet';
  while (Date.now() < deadline) {
    if (spawnError !== undefined)
      throw new HardhatNodeStartError('spawn-failed', `cannot start anvil: ${spawnError.message}`, log());
    if (child.exitCode !== null || child.signalCode !== null) {
      const inUse = /address already in use/i.test(log());
      throw new HardhatNodeStartError(
        inUse ? 'address-in-use' : 'exited',
        inUse
          ? `anvil could not listen on ${rpcUrl}: the port is already in use`
          : `anvil exited (${child.signalCode ?? `code ${String(child.exitCode)}`}) before it was ready: ${lastLines(log())}`,
        log(),
      );
    }
    if (!log().includes(`Listening on 127.0.0.1:${new URL(rpcUrl).port}`)) {
      lastProblem = 'not listening yet';
      await new Promise((resolve) => setTimeout(resolve, 50));
      continue;
    }
    try {
      const result = await rpc('eth_chainId');
      if (typeof result === 'string' && Number.parseInt(result, 16) === chainId) return;
      throw new HardhatNodeStartError(
        'wrong-chain',
        `the node at ${rpcUrl} answers chain id ${String(result)}, expected ${chainId}: another process may own the port`,
      );
    } catch (error) {
      if (error instanceof HardhatNodeStartError) throw error;
      lastProblem = error instanceof Error ? error.message : String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new HardhatNodeStartError(
    'timeout',
    `anvil at ${rpcUrl} did not answer within ${timeoutMs} ms: ${lastProblem}`,
    log(),
  );
}

/**
 * `signal` to anvil's whole process group (its own, see startAnvilNode): nothing it started is
 * left behind; to anvil alone where it has no group of its own (Windows).
 */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (process.platform !== 'win32' && child.pid !== undefined) {
    try {
      process.kill(-child.pid, signal);
      return;
    } catch {
      // The group is gone already (or was never made): anvil alone, if it is still there.
    }
  }
  child.kill(signal);
}

/**
 * stop: SIGTERM to anvil's process group (anvil writes its state and exits), SIGKILL after 10 s.
 * If this process exits first, or is ended by a signal it does not handle (a test runner's
 * timeout), the group gets SIGTERM too: in its own group, nothing else would reach it.
 */
function handleFor(child: ChildProcess): Pick<HardhatNode, 'stop' | 'kill'> {
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  child.on('error', () => undefined);
  const forget = onProcessExit(() => signalGroup(child, 'SIGTERM'));
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        signalGroup(child, 'SIGTERM');
        const force = setTimeout(() => signalGroup(child, 'SIGKILL'), 10_000);
        await exited;
        clearTimeout(force);
        forget();
      })();
      return stopping;
    },
    kill() {
      signalGroup(child, 'SIGKILL');
      stopping ??= exited.then(forget);
    },
  };
}

function lastLines(log: string): string {
  const lines = log.trim().split('\n').slice(-5).join(' | ');
  return lines === '' ? '(no output)' : lines;
}
