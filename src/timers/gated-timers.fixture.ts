import type { Log } from '../shared/logger.ts';
import type { ExecutionContext } from 'ava';
import type { ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import { createChainReadGate, type ChainReadGate, type FollowerReading } from './chain-read-gate.ts';
import { createTimerRunner, type TimerHandler, type TimerRunner } from './timer-runner.ts';

export const T0 = Date.parse('2026-06-01T10:00:00.000Z');
export const SECOND = 1000;
export const HOUR = 3600 * SECOND;

/** Lets the runner's promise chain settle (it runs on promises, not on time). */
export const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
};

/**
 * Chain followers of `networks` in this process, none of which has read a head since it started;
 * `read` moves one on. Other networks have no follower here.
 */
export function fakeFollowers(networks: string[]) {
  const readings = new Map<string, FollowerReading>(
    networks.map((network) => [network, { caughtUpAt: null, processed: null }]),
  );
  /** Networks asked about, in order. */
  const asked: string[] = [];
  return {
    asked,
    readThrough: (network: string): FollowerReading | undefined => {
      asked.push(network);
      return readings.get(network);
    },
    read(network: string, caughtUpAt: number, processed: bigint): void {
      readings.set(network, { caughtUpAt, processed });
    },
  };
}

/**
 * A timer runner over `readStore` with the handlers `handlers` builds around one chain read gate
 * (longest wait `maxWaitMs`, default an hour); what the runner and the gate log is in `lines`.
 */
export function startGatedTimers(
  t: ExecutionContext,
  deps: {
    clock: Clock;
    readStore: ReadStore;
    readThrough: (network: string) => FollowerReading | undefined;
    matcherDrained?: () => Promise<boolean>;
    maxWaitMs?: number;
    handlers: (gate: ChainReadGate) => Record<string, TimerHandler>;
  },
): { runner: TimerRunner; lines: string[] } {
  const lines: string[] = [];
  // What went wrong or waited too long; each timer's own `timer.fired` line is left out.
  const log: Log = (line, fields) => {
    if (fields?.event !== 'timer.fired') lines.push(line);
  };
  const gate = createChainReadGate({
    clock: deps.clock,
    readThrough: deps.readThrough,
    matcherDrained: deps.matcherDrained ?? (async () => true),
    maxWaitMs: deps.maxWaitMs ?? HOUR,
    log,
  });
  const runner = createTimerRunner({
    clock: deps.clock,
    readStore: deps.readStore,
    projections: { waitFor: async () => {}, onDocumentsChanged: () => () => {} },
    handlers: deps.handlers(gate),
    log,
  });
  runner.start();
  t.teardown(() => runner.stop());
  return { runner, lines };
}
