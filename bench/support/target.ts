/**
 * A server a benchmark runs in a child process of its own (`node --import tsx`), so the load
 * generator never shares its event loop; it talks over IPC (bench/targets/target-ipc.ts).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isTargetMessage, type ParentMessage, type TargetMessage } from '../targets/target-ipc.ts';

/** A server started in a child process, ready when it says so over IPC. */
export type Target = {
  url: string;
  stats(): Promise<Extract<TargetMessage, { type: 'stats' }>>;
  /** Start a V8 CPU profile of the child (sampling every `intervalUs`). */
  startProfile(intervalUs: number): Promise<void>;
  /** Stop it and have the child write it to `file`. */
  stopProfile(file: string): Promise<void>;
  stop(): Promise<void>;
};

/** Start `file` (a path relative to bench/) in a child process and wait for its `ready`. */
export async function startTarget(
  file: string,
  env: Record<string, string> = {},
  extraExecArgv: string[] = [],
): Promise<Target> {
  const child: ChildProcess = fork(fileURLToPath(new URL(file, new URL('../', import.meta.url))), [], {
    execArgv: [...extraExecArgv, '--import', 'tsx'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const nextMessage = <T extends TargetMessage['type']>(type: T, timeoutMs: number) =>
    new Promise<Extract<TargetMessage, { type: T }>>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.off('message', onMessage);
        reject(new Error(`${file}: no ${type} message within ${timeoutMs} ms`));
      }, timeoutMs);
      const onMessage = (message: unknown) => {
        if (!isTargetMessage(message) || message.type !== type) return;
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve(message as Extract<TargetMessage, { type: T }>);
      };
      child.on('message', onMessage);
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`${file} exited with ${code} before sending ${type}`));
      });
    });
  const send = (message: ParentMessage) => child.send(message);
  const ready = await nextMessage('ready', 60_000);
  return {
    url: ready.url,
    async stats() {
      const reply = nextMessage('stats', 10_000);
      send({ type: 'stats' });
      return reply;
    },
    async startProfile(intervalUs) {
      const reply = nextMessage('profiling', 10_000);
      send({ type: 'profile-start', intervalUs });
      await reply;
    },
    async stopProfile(profileFile) {
      const reply = nextMessage('profiled', 60_000);
      send({ type: 'profile-stop', file: profileFile });
      await reply;
    },
    async stop() {
      if (child.exitCode !== null) return;
      send({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
