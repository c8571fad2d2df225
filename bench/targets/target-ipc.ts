/**
 * The messages between a benchmark (parent) and a server it runs in a child process (forked
 * with `--import tsx`, so the server never shares the load generator's event loop).
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';

export type TargetMessage =
  | { type: 'ready'; url: string }
  | { type: 'stats'; rssBytes: number; heapUsedBytes: number; maxRssBytes: number; cpuMicros: number }
  | { type: 'profiling' }
  | { type: 'profiled' };

export type ParentMessage =
  | { type: 'stats' }
  | { type: 'stop' }
  | { type: 'profile-start'; intervalUs: number }
  | { type: 'profile-stop'; file: string };

const parentTypes = new Set(['stats', 'stop', 'profile-start', 'profile-stop']);
const targetTypes = new Set(['ready', 'stats', 'profiling', 'profiled']);

const typed = (value: unknown, types: Set<string>): boolean =>
  typeof value === 'object' && value !== null && types.has(String((value as { type?: unknown }).type));

export const isParentMessage = (value: unknown): value is ParentMessage => typed(value, parentTypes);

export const isTargetMessage = (value: unknown): value is TargetMessage => typed(value, targetTypes);

/**
 * Answer the parent's messages: `stats`; `profile-start` / `profile-stop` (a CPU profile of just
 * the window between them, taken in this process through the inspector); `stop` runs `close`
 * and then exits.
 */
export function serveParent(url: string, close: () => Promise<void>): void {
  const send = (message: TargetMessage) => process.send?.(message);
  let profiler: Session | null = null;
  const fail = (error: unknown) => {
    console.error(error);
    process.exit(1);
  };
  process.on('message', (message: unknown) => {
    if (!isParentMessage(message)) return;
    if (message.type === 'stats') {
      const memory = process.memoryUsage();
      const cpu = process.cpuUsage();
      send({
        type: 'stats',
        rssBytes: memory.rss,
        heapUsedBytes: memory.heapUsed,
        maxRssBytes: process.resourceUsage().maxRSS * 1024,
        // The server's own CPU time (user + system): its cost per request, whatever else runs on the machine.
        cpuMicros: cpu.user + cpu.system,
      });
      return;
    }
    if (message.type === 'profile-start') {
      const session = new Session();
      session.connect();
      profiler = session;
      session
        .post('Profiler.enable')
        .then(() => session.post('Profiler.setSamplingInterval', { interval: message.intervalUs }))
        .then(() => session.post('Profiler.start'))
        .then(() => send({ type: 'profiling' }), fail);
      return;
    }
    if (message.type === 'profile-stop') {
      const session = profiler;
      profiler = null;
      if (!session) return fail(new Error('profile-stop without profile-start'));
      session
        .post('Profiler.stop')
        .then(({ profile }) => writeFile(message.file, JSON.stringify(profile)))
        .then(() => {
          session.disconnect();
          send({ type: 'profiled' });
        }, fail);
      return;
    }
    close().then(() => process.exit(0), fail);
  });
  // The parent died without saying stop: do not linger.
  process.on('disconnect', () => {
    void close().finally(() => process.exit(0));
  });
  send({ type: 'ready', url });
}
