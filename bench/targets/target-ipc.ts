/**
 * The messages between a benchmark (parent) and a server it runs in a child process (forked
 * with `--import tsx`, so the server never shares the load generator's event loop).
 */
export type TargetMessage =
  | { type: 'ready'; url: string }
  | { type: 'stats'; rssBytes: number; heapUsedBytes: number; maxRssBytes: number; cpuMicros: number };

export type ParentMessage = { type: 'stats' } | { type: 'stop' };

export const isParentMessage = (value: unknown): value is ParentMessage =>
  typeof value === 'object' &&
  value !== null &&
  ((value as { type?: unknown }).type === 'stats' || (value as { type?: unknown }).type === 'stop');

export const isTargetMessage = (value: unknown): value is TargetMessage =>
  typeof value === 'object' &&
  value !== null &&
  ((value as { type?: unknown }).type === 'ready' || (value as { type?: unknown }).type === 'stats');

/** Answer the parent's `stats` and `stop` messages; `stop` runs `close` and then exits. */
export function serveParent(url: string, close: () => Promise<void>): void {
  const send = (message: TargetMessage) => process.send?.(message);
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
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  });
  // The parent died without saying stop: do not linger.
  process.on('disconnect', () => {
    void close().finally(() => process.exit(0));
  });
  send({ type: 'ready', url });
}
