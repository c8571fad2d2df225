import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import type { Environment } from '../event-store/event-store.ts';
import { INVOICE_PAYMENT_OUTCOMES, type InvoicePaymentOutcomeDoc } from '../projections/invoices.projection.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import type { CommandHandler } from './command-handler.ts';
import { createWorkQueue, type WorkQueue } from './work-queue.ts';

export type InvoicePaymentLinker = WorkQueue;

/**
 * Process manager between checkout sessions and invoices: when a session opened for an invoice
 * completes, the invoice records the payment (and becomes paid); when it expires or is canceled,
 * the invoice records the failed attempt. The pending work is the `invoice_payment_outcomes` read
 * model (a session's end not yet recorded by its invoice), so a restart resumes where it was;
 * the decider answers nothing for a repeat, so a redelivery changes nothing.
 */
export function createInvoicePaymentLinker(deps: {
  clock: Clock; readStore: ReadStore; projections: ProjectionRunner; commands: CommandHandler; log?: (line: string) => void;
}): InvoicePaymentLinker {
  const { commands } = deps;
  return createWorkQueue<InvoicePaymentOutcomeDoc>({
    ...deps,
    name: 'invoice-payments',
    collection: INVOICE_PAYMENT_OUTCOMES,
    sortBy: 'at',
    async work(outcome) {
      const ctx = {
        organizationId: outcome.organizationId, environment: outcome.environment as Environment, actor: 'system:invoice-payments',
        causationId: outcome.checkoutSessionId,
      };
      const result = outcome.outcome === 'paid'
        ? await commands.handle(invoiceAggregate, outcome.invoiceId, {
          type: 'RecordInvoicePayment', checkoutSessionId: outcome.checkoutSessionId, transactionHash: outcome.transactionHash, amountReceived: outcome.amountReceived,
        }, ctx)
        : await commands.handle(invoiceAggregate, outcome.invoiceId, { type: 'RecordInvoicePaymentFailure', checkoutSessionId: outcome.checkoutSessionId, reason: outcome.reason ?? 'payment failed' }, ctx);
      return result.position;
    },
  });
}
