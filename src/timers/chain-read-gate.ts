import type { Clock } from '../shared/clock.ts';

/**
 * How far the chain follower of a network in this process has read: `caughtUpAt` is when (on its
 * clock) it read the newest head it has processed through, null while it has not caught up since
 * it started; `processed` is the last block whose transfers are all published.
 */
export type FollowerReading = { caughtUpAt: number | null; processed: bigint | null };

/** The reading of the follower of `network`; undefined when no follower of it runs here (nothing to wait for). */
export type ChainReadThrough = (network: string) => FollowerReading | undefined;

export type ChainReadGate = {
  /**
   * Whether something that depends on what was paid to `networks` up to `through` (ms) must wait
   * (`notYet`): true until every follower of those networks has read the chain up to a head it read
   * at or after `through`, and the matcher has handled every chain message of those networks
   * published so far (a
   * follower publishes a transfer before it says it read further, but the matcher records it a
   * little later; a matcher whose bus cannot answer has not). False once the clock is past `through` plus the longest wait, whatever the
   * followers read: the follower still behind is logged once per network and outage, and a payment
   * it reads later is handled as a late one.
   */
  holds(networks: Iterable<string>, through: number): Promise<boolean>;
};

/**
 * One gate for every timer that must not act on a payment the chain followers have not read yet
 * (after downtime, or while a follower's endpoint is out): a checkout session's expiry, an invoice
 * reminder. The followers and the matcher call the timer runner's `retryWaiting()` when they move
 * on, so what the gate holds is tried again then.
 */
export function createChainReadGate(deps: {
  clock: Pick<Clock, 'now'>;
  readThrough: ChainReadThrough;
  /** Whether the matcher has handled every chain message of these networks published so far. */
  matcherDrained: (networks: readonly string[]) => Promise<boolean>;
  /** How long past `through` to wait for a follower at most. */
  maxWaitMs: number;
  log: (line: string) => void;
}): ChainReadGate {
  const { clock, readThrough, matcherDrained, maxWaitMs, log } = deps;
  /**
   * Per network, a follower reading taken before the matcher last answered drained. While a
   * follower still reports that reading, what it published since comes from blocks after the head
   * behind it, so the answer still holds for that network: a pass over many timers asks once.
   */
  const drainedThrough = new Map<string, number>();
  /**
   * Per network, the `caughtUpAt` of the follower when the gate last stopped waiting for it: the
   * same reading is the same outage, logged once; a follower that read further and fell behind
   * again is a new one.
   */
  const gaveUpAt = new Map<string, number | null>();

  const giveUp = (network: string, reading: FollowerReading, through: number): void => {
    if (gaveUpAt.has(network) && gaveUpAt.get(network) === reading.caughtUpAt) return;
    gaveUpAt.set(network, reading.caughtUpAt);
    const read =
      reading.caughtUpAt === null
        ? 'has read no new head since it started'
        : `has read only through the head it saw at ${new Date(reading.caughtUpAt).toISOString()}`;
    const block = reading.processed === null ? 'no block processed yet' : `last block processed ${reading.processed}`;
    log(
      `[timers] ${network}: the chain follower ${read} (${block}); after waiting ${maxWaitMs / 1000} s (WEIR_CHAIN_WAIT_MAX), expiries and invoice reminders due by ${new Date(through).toISOString()} go ahead without it and a payment it reads later is handled as late; not logged again until it reads further`,
    );
  };

  return {
    async holds(networks, through) {
      const capped = clock.now() > through + maxWaitMs;
      const readings = new Map<string, number>();
      const behind = new Map<string, FollowerReading>();
      for (const network of networks) {
        if (readings.has(network) || behind.has(network)) continue;
        const reading = readThrough(network);
        if (reading === undefined) continue;
        const { caughtUpAt } = reading;
        if (caughtUpAt !== null && caughtUpAt >= through) readings.set(network, caughtUpAt);
        else if (capped) behind.set(network, reading);
        else return true;
      }
      if (capped) {
        for (const [network, reading] of behind) giveUp(network, reading, through);
        return false;
      }
      const unconfirmed = [...readings].filter(([network, readAt]) => drainedThrough.get(network) !== readAt);
      if (unconfirmed.length === 0) return false;
      // Only these networks' messages: one held up elsewhere holds nothing here. The bus logs once
      // when it cannot say (its server is out) and once when it can again; here that is one more
      // reason to wait, tried again like the others, not a failure of each timer.
      if (!(await matcherDrained(unconfirmed.map(([network]) => network)).catch(() => false))) return true;
      for (const [network, readAt] of unconfirmed) drainedThrough.set(network, readAt);
      return false;
    },
  };
}
