import { subscriptionAggregate } from '../../machines/subscription.aggregate.ts';
import type { SubscriptionCommand } from '../../machines/subscription.decide.ts';
import type { CommandHandler } from '../actors/command-handler.ts';
import { SUBSCRIPTION_TIMERS } from '../projections/subscriptions.projection.ts';
import type { TimerDoc } from '../projections/collections.ts';
import type { TimerHandler } from './timer-runner.ts';

const COMMANDS: Record<string, (timer: TimerDoc) => SubscriptionCommand> = {
  [SUBSCRIPTION_TIMERS.expireFirst]: () => ({ type: 'ExpireFirstPayment' }),
  [SUBSCRIPTION_TIMERS.renew]: (timer) => ({ type: 'RenewSubscription', invoiceId: String(timer.args?.invoiceId) }),
  [SUBSCRIPTION_TIMERS.pastDue]: () => ({ type: 'MarkRenewalPaymentMissed' }),
  [SUBSCRIPTION_TIMERS.unpaid]: () => ({ type: 'MarkSubscriptionUnpaid' }),
};

/**
 * The subscription's clock: the first payment's expiry, the period end (renewal or scheduled
 * cancellation), the renewal invoice's due time (past due) and seven days later (unpaid). The
 * decider checks the time itself, so a timer that fires early or twice changes nothing.
 */
export function subscriptionTimerHandlers(commands: CommandHandler): Record<string, TimerHandler> {
  return Object.fromEntries(Object.entries(COMMANDS).map(([kind, commandOf]): [string, TimerHandler] => [
    kind,
    (timer, ctx) => commands.handle(subscriptionAggregate, timer.recordId, commandOf(timer), ctx),
  ]));
}
