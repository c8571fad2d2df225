import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';

/** Children to kill (and folders to remove) if this process exits without stopping them. */
const atExit = new Set<() => void>();
let exitHookInstalled = false;

function onProcessExit(task: () => void): () => void {
  if (!exitHookInstalled) {
    process.once('exit', () => {
      for (const run of atExit) run();
    });
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
