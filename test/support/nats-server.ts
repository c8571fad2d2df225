import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stoppableChild } from '../../src/shared/stoppable-child.ts';
import { findFreePort } from './free-port.ts';

export type NatsServerHandle = {
  /** `nats://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Terminates the server gracefully (SIGTERM, SIGKILL after 5 s) and removes its store directory. */
  stop(): Promise<void>;
  /** Kills the server at once (SIGKILL), e.g. to test crashes; the store directory is removed once it has exited. */
  kill(): void;
};

const host = '127.0.0.1';
const readyLine = 'Server is ready';
const startTimeoutMs = 15_000;
const maxStartAttempts = 5;

/** `NATS_SERVER_BIN`, else Debian's /usr/sbin/nats-server, else `nats-server` from PATH. */
function natsServerBinary(): string {
  const fromEnv = process.env['NATS_SERVER_BIN'];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  return existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : 'nats-server';
}

/**
 * Starts a throw-away `nats-server` with JetStream on 127.0.0.1, a free port (never 4222; or the
 * `port` given) and a fresh store directory. Resolves once the server logs that it is ready; retries on another port
 * if the chosen one was taken in the meantime.
 */
export async function startNatsServer(options: { port?: number } = {}): Promise<NatsServerHandle> {
  const failures: string[] = [];
  for (let attempt = 1; attempt <= maxStartAttempts; attempt++) {
    const port = options.port ?? (await findFreePort(host));
    const storeDir = await mkdtemp(join(tmpdir(), 'weir-nats-'));
    const outcome = await spawnAndWaitUntilReady(port, storeDir);
    if (outcome.type === 'ready') return handleFor(outcome.child, port, storeDir);
    await rm(storeDir, { recursive: true, force: true });
    failures.push(`port ${port}: ${outcome.reason}`);
    if (!outcome.retryable || options.port !== undefined) break;
  }
  throw new Error(`startNatsServer: nats-server did not start (${natsServerBinary()}):\n${failures.join('\n')}`);
}

type StartOutcome = { type: 'ready'; child: ChildProcess } | { type: 'failed'; reason: string; retryable: boolean };

function spawnAndWaitUntilReady(port: number, storeDir: string): Promise<StartOutcome> {
  return new Promise((resolve) => {
    const child = spawn(natsServerBinary(), ['-js', '-a', host, '-p', String(port), '-sd', storeDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    let settled = false;
    const settle = (outcome: StartOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.stdout?.removeListener('data', onData);
      child.stderr?.removeListener('data', onData);
      // Keep draining the pipes so a chatty server never blocks on a full pipe.
      child.stdout?.resume();
      child.stderr?.resume();
      resolve(outcome);
    };
    const onData = (chunk: Buffer): void => {
      log += chunk.toString('utf8');
      if (log.includes(readyLine)) settle({ type: 'ready', child });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', (error) => {
      settle({ type: 'failed', reason: `cannot spawn: ${error.message}`, retryable: false });
    });
    child.once('exit', (code, signal) => {
      const addressInUse = /address already in use/i.test(log);
      settle({
        type: 'failed',
        reason: `exited (${signal ?? `code ${String(code)}`}) before ready: ${log.trim().split('\n').slice(-3).join(' | ')}`,
        retryable: addressInUse,
      });
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      settle({ type: 'failed', reason: `not ready after ${startTimeoutMs} ms: ${log.trim()}`, retryable: true });
    }, startTimeoutMs);
  });
}

function handleFor(child: ChildProcess, port: number, storeDir: string): NatsServerHandle {
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const removeStore = async (): Promise<void> => {
    await rm(storeDir, { recursive: true, force: true });
  };

  return {
    url: `nats://${host}:${port}`,
    port,
    ...stoppableChild(child, exited, removeStore, { ownedDir: storeDir }),
  };
}
