/**
 * What start-up opened, each with how to close it: closed last first, by `stop` or by a start that
 * fails midway. A close that fails is reported and the others still run.
 */
export type ShutdownStack = {
  add(close: () => unknown): void;
  close(): Promise<void>;
};

export function createShutdownStack(report: (error: unknown) => void): ShutdownStack {
  const closers: (() => unknown)[] = [];
  return {
    add: (close) => void closers.push(close),
    async close() {
      for (let close = closers.pop(); close; close = closers.pop()) {
        try {
          await close();
        } catch (error) {
          report(error);
        }
      }
    },
  };
}
