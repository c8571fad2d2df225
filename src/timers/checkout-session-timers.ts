import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CommandHandler } from '../actors/command-handler.ts';
import { EXPIRY_TIMER } from '../projections/checkout-sessions.projection.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../projections/collections.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { TimerHandler } from './timer-runner.ts';

/**
 * When the chain follower of `network` in this process read the newest head it has processed
 * through (`caughtUpAt`, on its clock): null while it has not caught up since it started;
 * undefined when no follower of that network runs here (nothing to wait for).
 */
export type ChainReadThrough = (network: string) => number | null | undefined;

/**
 * A checkout session expires at its `expiresAt` unless it completed first; but not before every
 * follower of a network it offers a deposit address on has read the chain up to a head it read at
 * or after `expiresAt`, and the matcher has handled every chain message published so far (a
 * follower publishes a transfer before it says it read further, but the matcher records it on the
 * session a little later). After downtime, or while a follower's endpoint is out, a payment made in
 * time may sit in blocks not read yet: the expiry waits for them (`notYet`, tried again shortly:
 * the followers and the matcher call the timer runner's `retryWaiting()` when they move on).
 */
export function checkoutSessionTimerHandlers(
  commands: CommandHandler,
  chains?: { readStore: ReadStore; readThrough: ChainReadThrough; matcherDrained: () => Promise<boolean> },
): Record<string, TimerHandler> {
  /**
   * Per network, a follower reading taken before the matcher last answered drained. While a
   * follower still reports that reading, what it published since comes from blocks after the head
   * behind it, so the answer still holds for that network: a pass over many sessions asks once.
   */
  const drainedThrough = new Map<string, number>();
  const unread = async (sessionId: string): Promise<boolean> => {
    if (!chains) return false;
    const session = await chains.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(sessionId);
    if (!session) return false;
    const expiresAt = Date.parse(session.expiresAt);
    const readings = new Map<string, number>();
    for (const { network } of session.addresses) {
      if (readings.has(network)) continue;
      const readAt = chains.readThrough(network);
      if (readAt === undefined) continue;
      if (readAt === null || readAt < expiresAt) return true;
      readings.set(network, readAt);
    }
    if ([...readings].every(([network, readAt]) => drainedThrough.get(network) === readAt)) return false;
    if (!(await chains.matcherDrained())) return true;
    for (const [network, readAt] of readings) drainedThrough.set(network, readAt);
    return false;
  };
  return {
    [EXPIRY_TIMER]: async (timer, ctx) => {
      if (await unread(timer.recordId)) return { notYet: true };
      return commands.handle(checkoutSessionAggregate, timer.recordId, { type: 'ExpireCheckoutSession' }, ctx);
    },
  };
}
