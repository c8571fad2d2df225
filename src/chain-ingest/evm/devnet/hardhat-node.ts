import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { stripVTControlCharacters } from 'node:util';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { stoppableChild } from '../../../shared/stoppable-child.ts';
import { createJsonRpc } from './json-rpc.ts';
import { HardhatNodeStartError } from './errors.ts';

export type HardhatNodeOptions = {
  /** `networks.hardhat.chainId`; 31337 (hardhat's default) unless given. */
  chainId?: number;
  /** Only loopback: a devnet never listens on a public interface. */
  host?: '127.0.0.1';
  /** TCP port; 0 (the default) lets the OS pick a free one, which is then reported in `port`. */
  port?: number;
  /** How long to wait for `eth_chainId` to answer; 60 s unless given. */
  startTimeoutMs?: number;
};

export type HardhatNode = {
  /** `http://127.0.0.1:<port>` */
  rpcUrl: string;
  /** `ws://127.0.0.1:<port>`: hardhat serves JSON-RPC over WebSocket on the same port. */
  wsUrl: string;
  port: number;
  chainId: number;
  /** The node's process id (for measurements). */
  pid: number;
  /** Stops the node (SIGTERM, SIGKILL after 5 s) and removes its temporary config directory. */
  stop(): Promise<void>;
  /** Kills the node at once (SIGKILL), e.g. to test a crashed chain; cleans up once it has exited. */
  kill(): void;
};

const defaultChainId = 31337;
const defaultStartTimeoutMs = 60_000;
const readyLine = /Started HTTP and WebSocket JSON-RPC server at http:\/\/([^:/\s]+):(\d+)\//;
const maxLogChars = 20_000;

/**
 * Starts `hardhat node` (hardhat 2, in-process EDR chain) bound to 127.0.0.1, with automine,
 * request logging off and the given chain id, and resolves once `eth_chainId` answers with that
 * id. The node runs from a throw-away config in a temporary directory; it exits by itself when
 * this process goes away (its stdin is a pipe from here), so no node outlives a crashed run.
 *
 * Throws {@link HardhatNodeStartError}; its `retryable` is true when the port was taken.
 */
export async function startHardhatNode(options: HardhatNodeOptions = {}): Promise<HardhatNode> {
  const chainId = options.chainId ?? defaultChainId;
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 0;
  if (!Number.isSafeInteger(chainId) || chainId <= 0) {
    throw new RangeError(`startHardhatNode: chainId must be a positive integer, got ${String(chainId)}`);
  }
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new RangeError(`startHardhatNode: port must be an integer in 0..65535, got ${String(port)}`);
  }
  const hardhat = locateHardhat();
  const configDir = await mkdtemp(join(tmpdir(), 'weir-hardhat-'));
  const configFile = join(configDir, 'hardhat.config.cjs');
  await writeFile(configFile, hardhatConfigSource(chainId));

  const child = spawn(
    process.execPath,
    [hardhat.cliScript, '--config', configFile, 'node', '--hostname', host, '--port', String(port)],
    {
      cwd: hardhat.projectRoot,
      env: {
        ...process.env,
        CI: 'true',
        HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true',
        HARDHAT_HIDE_SOLIDITY_SURVEY_MESSAGE: 'true',
        NO_COLOR: '1',
        FORCE_COLOR: '0',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  const handle = handleFor(child, configDir);
  try {
    const boundPort = await waitForReadyLine(child, options.startTimeoutMs ?? defaultStartTimeoutMs, host);
    const rpcUrl = `http://${host}:${boundPort}`;
    await waitForChainId(rpcUrl, chainId, child, options.startTimeoutMs ?? defaultStartTimeoutMs);
    return {
      rpcUrl,
      wsUrl: `ws://${host}:${boundPort}`,
      port: boundPort,
      chainId,
      pid: child.pid ?? 0,
      stop: handle.stop,
      kill: handle.kill,
    };
  } catch (error) {
    await handle.stop();
    throw error;
  }
}

type HardhatLocation = { cliScript: string; projectRoot: string };

/** hardhat refuses to run unless it resolves from its working directory, so run it from the project that has it. */
function locateHardhat(): HardhatLocation {
  let packageJson: string;
  try {
    packageJson = createRequire(import.meta.url).resolve('hardhat/package.json');
  } catch {
    throw new HardhatNodeStartError(
      'hardhat-missing',
      'hardhat is not installed: the devnet needs the `hardhat` dev dependency. Run `npm install` (without --omit=dev) in the Weir checkout.',
    );
  }
  const packageDir = dirname(packageJson);
  return { cliScript: join(packageDir, 'internal', 'cli', 'bootstrap.js'), projectRoot: dirname(dirname(packageDir)) };
}

function hardhatConfigSource(chainId: number): string {
  return `// Written by Weir's startHardhatNode; removed when the node stops.
// Exit when the process that started this node goes away (its end of our stdin closes),
// removing this throw-away directory, so nothing outlives a crashed run.
const orphaned = () => {
  try { require('node:fs').rmSync(__dirname, { recursive: true, force: true }); } catch {}
  process.exit(0);
};
process.stdin.on('end', orphaned);
process.stdin.on('error', orphaned);
process.stdin.resume();

module.exports = {
  networks: {
    hardhat: {
      chainId: ${chainId},
      mining: { auto: true, interval: 0 },
      loggingEnabled: false,
    },
  },
};
`;
}

function waitForReadyLine(child: ChildProcess, timeoutMs: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let log = '';
    let settled = false;
    const finish = (outcome: { port: number } | { error: HardhatNodeStartError }): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.stdout?.removeListener('data', onData);
      child.stderr?.removeListener('data', onData);
      child.removeListener('error', onError);
      child.removeListener('exit', onExit);
      // Keep draining the pipes so the node never blocks on a full pipe.
      child.stdout?.resume();
      child.stderr?.resume();
      if ('port' in outcome) resolve(outcome.port);
      else reject(outcome.error);
    };
    const onData = (chunk: Buffer): void => {
      log = (log + stripVTControlCharacters(chunk.toString('utf8'))).slice(-maxLogChars);
      const match = readyLine.exec(log);
      if (match?.[2] !== undefined) finish({ port: Number(match[2]) });
    };
    const onError = (error: Error): void => {
      finish({ error: new HardhatNodeStartError('spawn-failed', `cannot spawn hardhat node: ${error.message}`, log) });
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
      const inUse = /EADDRINUSE|address already in use/i.test(log);
      const status = signal ?? `code ${String(code)}`;
      finish({
        error: new HardhatNodeStartError(
          inUse ? 'address-in-use' : 'exited',
          inUse
            ? `hardhat node could not listen on ${host}: the port is already in use; choose another port (or 0 for any free one)`
            : `hardhat node exited (${status}) before it was ready: ${lastLines(log)}`,
          log,
        ),
      });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', onError);
    child.once('exit', onExit);
    const timer = setTimeout(() => {
      finish({
        error: new HardhatNodeStartError(
          'timeout',
          `hardhat node did not report its server within ${timeoutMs} ms (machine overloaded?): ${lastLines(log)}`,
          log,
        ),
      });
    }, timeoutMs);
  });
}

async function waitForChainId(rpcUrl: string, chainId: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastProblem = 'no answer yet';
  const rpc = createJsonRpc(rpcUrl, { timeoutMs: 2_000 });
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new HardhatNodeStartError('exited', `hardhat node at ${rpcUrl} exited while starting up`);
    }
    try {
      const result = await rpc('eth_chainId');
      if (typeof result === 'string') {
        if (Number.parseInt(result, 16) === chainId) return;
        throw new HardhatNodeStartError(
          'wrong-chain',
          `the node at ${rpcUrl} answers chain id ${result}, expected ${chainId}: another process may own the port`,
        );
      }
      lastProblem = `unexpected eth_chainId answer ${JSON.stringify(result)}`;
    } catch (error) {
      if (error instanceof HardhatNodeStartError) throw error;
      lastProblem = error instanceof Error ? error.message : String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new HardhatNodeStartError(
    'timeout',
    `eth_chainId at ${rpcUrl} did not answer within ${timeoutMs} ms: ${lastProblem}`,
  );
}

function handleFor(child: ChildProcess, configDir: string): Pick<HardhatNode, 'stop' | 'kill'> {
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  // An 'error' (e.g. spawn failure) must never become an unhandled exception once startup is over.
  child.on('error', () => undefined);
  child.stdin?.on('error', () => undefined);
  const cleanUp = async (): Promise<void> => {
    child.stdin?.destroy();
    await rm(configDir, { recursive: true, force: true });
  };

  return {
    ...stoppableChild(child, exited, cleanUp, { ownedDir: configDir }),
  };
}

function lastLines(log: string): string {
  const lines = log.trim().split('\n').slice(-5).join(' | ');
  return lines === '' ? '(no output)' : lines;
}
