import type { CheckoutSession, CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import { customerAggregate, customerChangesFromCheckout, type CheckoutCustomerChanges } from '../actors/customer.ts';
import { actingFor, commandFor, type Correlation, type Workflow, type WorkflowCommand } from './workflow.ts';

/** A checkout session whose customer takes what it collected: who, what, and whether its completion was decided. */
export type CustomerCheckoutUpdateState = {
  customerId: string | null;
  changes: CheckoutCustomerChanges;
  completed: boolean;
};

const SESSION_PREFIX = 'checkout_session-';

/** What the session's customer takes when it completes: its collected details, for the parts its `customerUpdate` sets to `auto`. */
const changesOf = (session: CheckoutSession): CheckoutCustomerChanges =>
  session.customerUpdate && session.customerId ? customerChangesFromCheckout(session.customerUpdate, session) : {};

/**
 * The reference's `customerUpdate`, per checkout session: when a session created with one (and a
 * `customerId`) completes, its customer takes the details the session collected (given when it was
 * created: a payment link page's form, or the API's `customerData`) for the parts set to `auto`,
 * through the customer's own `UpdateCustomerFromCheckout`. The customer's decider takes a session's
 * details at most once and never an older session's than the latest taken, and a customer deleted
 * in the meantime takes nothing: a repeat or a replay of the log appends nothing.
 */
export const customerCheckoutUpdates: Workflow<CustomerCheckoutUpdateState, WorkflowCommand> = {
  name: 'customer-checkout-updates',
  version: 1,
  categories: ['checkout_session'],
  aggregates: [customerAggregate],
  correlate(event): Correlation {
    const typed = event as unknown as CheckoutSessionEvent;
    if (typed.type === 'CheckoutSessionCreated')
      return Object.keys(changesOf(typed.data.session)).length > 0
        ? event.streamId.slice(SESSION_PREFIX.length)
        : false;
    return typed.type === 'CheckoutSessionCompleted' ? null : false;
  },
  initialState: () => ({ customerId: null, changes: {}, completed: false }),
  evolve(state, event) {
    const typed = event as unknown as CheckoutSessionEvent;
    if (typed.type === 'CheckoutSessionCreated')
      return { customerId: typed.data.session.customerId, changes: changesOf(typed.data.session), completed: false };
    return typed.type === 'CheckoutSessionCompleted' ? { ...state, completed: true } : state;
  },
  decide(event, state) {
    const typed = event as unknown as CheckoutSessionEvent;
    if (typed.type !== 'CheckoutSessionCompleted' || state.completed || state.customerId === null) return [];
    const checkoutSessionId = event.streamId.slice(SESSION_PREFIX.length);
    const command = {
      type: 'UpdateCustomerFromCheckout',
      checkoutSessionId,
      completedAt: typed.data.at,
      changes: state.changes,
    } as const;
    const context = actingFor(event, 'system:customer-update', checkoutSessionId);
    return [commandFor(customerAggregate, state.customerId, command, context)];
  },
};
