import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';

/** Children to kill (and folders to remove) if this process exits without stopping them. */
const atExit = new Set<() => void>();
let exitHookInstalled = false;

/** Signals that end a process which does not handle them, without its 'exit' event (a test runner's timeout sends SIGTERM). */
const endingSignals = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

function runAtExit(): void {
  for (const run of atExit) run();
  atExit.clear();
}

/**
 * A signal that would end this process unhandled (no other listener): the tasks run, then the
 * signal is raised again to end it as it would have. One another listener handles (a graceful
 * shutdown) is left to it: it stops its children itself.
 */
function onEndingSignal(signal: NodeJS.Signals): void {
  if (process.listenerCount(signal) > 1) return;
  runAtExit();
  for (const each of endingSignals) process.removeListener(each, onEndingSignal);
  process.kill(process.pid, signal);
}

/**
 * Runs `task` (synchronous: kill a child, remove a folder) if this process exits, or is ended by a
 * signal nobody handles, before the returned function is called. Listening first to the signals,
 * it sees whether another listener is there to handle them.
 */
export function onProcessExit(task: () => void): () => void {
  if (!exitHookInstalled) {
    process.once('exit', runAtExit);
    for (const signal of endingSignals) process.prependListener(signal, onEndingSignal);
    exitHookInstalled = true;
  }
  atExit.add(task);
  return () => {
    atExit.delete(task);
  };
}

/**
 * Stop and kill for a child process that owns a folder: `stop` asks politely (SIGTERM), forces
 * after `graceMs`, then cleans up; `kill` is SIGKILL at once. Both clean up exactly once. If this
 * process exits first, the child is killed and the folder removed anyway.
 */
export function stoppableChild(
  child: ChildProcess,
  exited: Promise<unknown>,
  cleanUp: () => Promise<void>,
  options: { ownedDir: string; graceMs?: number },
): { stop(): Promise<void>; kill(): void } {
  const forget = onProcessExit(() => {
    child.kill('SIGKILL');
    rmSync(options.ownedDir, { recursive: true, force: true });
  });
  const finish = async () => {
    await exited;
    forget();
    await cleanUp();
  };
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        child.kill('SIGTERM');
        const forceKill = setTimeout(() => child.kill('SIGKILL'), options.graceMs ?? 5_000);
        await exited;
        clearTimeout(forceKill);
        await finish();
      })();
      return stopping;
    },
    kill() {
      child.kill('SIGKILL');
      stopping ??= finish().catch(() => undefined);
    },
  };
}
