import type { SnapshotFrom } from 'xstate';
import { machineFold, type Aggregate } from '../src/actors/aggregate.ts';
import { decideCheckoutSession, type CheckoutSessionCommand } from './checkout-session.decide.ts';
import { checkoutSessionMachine } from './checkout-session.machine.ts';
import type { CheckoutSessionEvent } from './checkout-session.types.ts';

export type CheckoutSessionSnapshot = SnapshotFrom<typeof checkoutSessionMachine>;

export const checkoutSessionAggregate: Aggregate<
  CheckoutSessionSnapshot,
  CheckoutSessionEvent,
  CheckoutSessionCommand
> = {
  category: 'checkout_session',
  ...machineFold(checkoutSessionMachine),
  decide: decideCheckoutSession,
};
