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
 * or after `expiresAt`. After downtime, or while a follower's endpoint is out, a payment made in
 * time may sit in blocks not read yet: the expiry waits for them (`notYet`, tried again shortly).
 */
export function checkoutSessionTimerHandlers(commands: CommandHandler, chains?: { readStore: ReadStore; readThrough: ChainReadThrough }): Record<string, TimerHandler> {
  const unread = async (sessionId: string): Promise<boolean> => {
    if (!chains) return false;
    const session = await chains.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(sessionId);
    if (!session) return false;
    const expiresAt = Date.parse(session.expiresAt);
    return session.addresses.some((address) => {
      const readAt = chains.readThrough(address.network);
      return readAt !== undefined && (readAt === null || readAt < expiresAt);
    });
  };
  return {
    [EXPIRY_TIMER]: async (timer, ctx) => {
      if (await unread(timer.recordId)) return { notYet: true };
      return commands.handle(checkoutSessionAggregate, timer.recordId, { type: 'ExpireCheckoutSession' }, ctx);
    },
  };
}
