import type { Environment } from '../event-store/event-store.ts';
import { CUSTOMER_CHECKOUT_UPDATES, type CustomerCheckoutUpdateDoc } from '../projections/customers.projection.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import type { CommandHandler } from './command-handler.ts';
import { customerAggregate } from './customer.ts';
import { createReadModelQueue, type ReadModelQueue } from '../processing/read-model-queue.ts';

/**
 * The process manager of the reference's `customerUpdate`: when a checkout session created with
 * one completes, its customer takes the details the session collected, for the parts set to
 * `auto`, through the customer's own `UpdateCustomerFromCheckout`. Its work list is the
 * `customer_checkout_updates` read model, so a restart resumes where it was; the customer's decider
 * takes a session's details at most once (a repeat, or a customer deleted in the meantime, appends
 * nothing), and the projection of what it appends, or of the deletion, takes the work off the list.
 */
export function createCustomerCheckoutUpdates(deps: {
  clock: Clock;
  readStore: ReadStore;
  projections: Pick<ProjectionRunner, 'waitFor' | 'onAdvanced'>;
  commands: CommandHandler;
  log?: (line: string) => void;
}): ReadModelQueue {
  return createReadModelQueue<CustomerCheckoutUpdateDoc>({
    ...deps,
    name: 'customer-checkout-updates',
    collection: CUSTOMER_CHECKOUT_UPDATES,
    sortBy: 'completedAt',
    async work(doc) {
      const ctx = {
        organizationId: doc.organizationId,
        environment: doc.environment as Environment,
        actor: 'system:customer-update',
        causationId: doc.checkoutSessionId,
      };
      const command = {
        type: 'UpdateCustomerFromCheckout',
        checkoutSessionId: doc.checkoutSessionId,
        completedAt: doc.completedAt,
        changes: doc.changes,
      } as const;
      return (await deps.commands.handle(customerAggregate, doc.customerId, command, ctx)).position;
    },
  });
}
