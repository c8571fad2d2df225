import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CommandHandler } from '../actors/command-handler.ts';
import { EXPIRY_TIMER } from '../projections/checkout-sessions.projection.ts';
import type { TimerHandler } from './timer-runner.ts';

/** A checkout session expires at its `expiresAt` unless it completed first. */
export function checkoutSessionTimerHandlers(commands: CommandHandler): Record<string, TimerHandler> {
  return {
    [EXPIRY_TIMER]: (timer, ctx) => commands.handle(checkoutSessionAggregate, timer.recordId, { type: 'ExpireCheckoutSession' }, ctx),
  };
}
