import type { SnapshotFrom } from 'xstate';
import { machineFold, type Aggregate } from '../src/actors/aggregate.ts';
import { decideSubscription, type SubscriptionCommand } from './subscription.decide.ts';
import { subscriptionMachine } from './subscription.machine.ts';
import type { SubscriptionEvent } from './subscription.types.ts';

export type SubscriptionSnapshot = SnapshotFrom<typeof subscriptionMachine>;

export const subscriptionAggregate: Aggregate<SubscriptionSnapshot, SubscriptionEvent, SubscriptionCommand> = {
  category: 'subscription',
  ...machineFold(subscriptionMachine),
  decide: decideSubscription,
};
