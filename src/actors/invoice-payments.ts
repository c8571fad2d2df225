import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import type { Environment } from '../event-store/event-store.ts';
import { INVOICE_PAYMENT_OUTCOMES, type InvoicePaymentOutcomeDoc } from '../projections/invoices.projection.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import type { CommandContext, CommandHandler } from './command-handler.ts';
import { createReadModelQueue, type ReadModelQueue } from '../processing/read-model-queue.ts';

export type InvoicePaymentLinker = ReadModelQueue;

const ACTOR = 'system:invoice-payments';

/** The tenant of a work document, acting as the linker. */
const contextOf = (doc: { organizationId: string; environment: string }, causationId: string): CommandContext => ({
  organizationId: doc.organizationId,
  environment: doc.environment as Environment,
  actor: ACTOR,
  causationId,
});

/**
 * Process manager between checkout sessions and invoices, with a work list of outcomes (a read
 * model of the invoices projection, so a restart resumes where it was; the deciders answer
 * nothing for a repeat, so a redelivery changes nothing): when a session opened for an invoice
 * completes, the invoice records the payment (and becomes paid); when it expires or is canceled,
 * the invoice records the failed attempt. The other way (a settled invoice cancels its sessions
 * still open) is the invoice session closing workflow (`workflows/invoice-session-closing.ts`).
 */
export function createInvoicePaymentLinker(deps: {
  clock: Clock;
  readStore: ReadStore;
  projections: ProjectionRunner;
  commands: CommandHandler;
  log?: (line: string) => void;
}): InvoicePaymentLinker {
  const { commands } = deps;
  const outcomes = createReadModelQueue<InvoicePaymentOutcomeDoc>({
    ...deps,
    name: 'invoice-payments',
    collection: INVOICE_PAYMENT_OUTCOMES,
    sortBy: 'at',
    async work(outcome) {
      const ctx = contextOf(outcome, outcome.checkoutSessionId);
      const result =
        outcome.outcome === 'paid'
          ? await commands.handle(
              invoiceAggregate,
              outcome.invoiceId,
              {
                type: 'RecordInvoicePayment',
                checkoutSessionId: outcome.checkoutSessionId,
                transactionHash: outcome.transactionHash,
                amountReceived: outcome.amountReceived,
              },
              ctx,
            )
          : await commands.handle(
              invoiceAggregate,
              outcome.invoiceId,
              {
                type: 'RecordInvoicePaymentFailure',
                checkoutSessionId: outcome.checkoutSessionId,
                reason: outcome.reason ?? 'payment failed',
              },
              ctx,
            );
      return result.position;
    },
  });
  return outcomes;
}
