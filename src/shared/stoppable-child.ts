import type { ChildProcess } from 'node:child_process';

/**
 * Stop and kill for a child process that owns resources: `stop` asks politely (SIGTERM), forces
 * after `graceMs`, then cleans up; `kill` is SIGKILL at once. Both clean up exactly once.
 */
export function stoppableChild(child: ChildProcess, exited: Promise<unknown>, cleanUp: () => Promise<void>, graceMs = 5_000): { stop(): Promise<void>; kill(): void } {
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        child.kill('SIGTERM');
        const forceKill = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(forceKill);
        await cleanUp();
      })();
      return stopping;
    },
    kill() {
      child.kill('SIGKILL');
      stopping ??= cleanUp().catch(() => undefined);
    },
  };
}
