import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CommandHandler } from '../actors/command-handler.ts';
import { EXPIRY_TIMER } from '../projections/checkout-sessions.projection.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../projections/collections.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { ChainReadGate } from './chain-read-gate.ts';
import type { TimerHandler } from './timer-runner.ts';

/**
 * A checkout session expires at its `expiresAt` unless it completed first; but not before the
 * chain followers of the networks it offers a deposit address on have read the chain up to then
 * and the matcher has recorded what they published (see `createChainReadGate`): after downtime,
 * or while a follower's endpoint is out, a payment made in time may sit in blocks not read yet,
 * and the expiry waits for them (`notYet`) for at most the gate's longest wait.
 */
export function checkoutSessionTimerHandlers(
  commands: CommandHandler,
  chains?: { readStore: ReadStore; gate: ChainReadGate },
): Record<string, TimerHandler> {
  const unread = async (sessionId: string): Promise<boolean> => {
    if (!chains) return false;
    const session = await chains.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(sessionId);
    if (!session) return false;
    return chains.gate.holds(
      session.addresses.map((address) => address.network),
      Date.parse(session.expiresAt),
    );
  };
  return {
    [EXPIRY_TIMER]: async (timer, ctx) => {
      if (await unread(timer.recordId)) return { notYet: true };
      return commands.handle(checkoutSessionAggregate, timer.recordId, { type: 'ExpireCheckoutSession' }, ctx);
    },
  };
}
