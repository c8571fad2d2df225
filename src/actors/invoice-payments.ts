import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import type { Environment } from '../event-store/event-store.ts';
import {
  INVOICE_PAYMENT_OUTCOMES,
  INVOICE_SESSIONS_TO_CLOSE,
  type InvoicePaymentOutcomeDoc,
  type InvoiceSessionToCloseDoc,
} from '../projections/invoices.projection.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import type { CommandContext, CommandHandler } from './command-handler.ts';
import { combineWorkQueues, createWorkQueue, type WorkQueue } from './work-queue.ts';

export type InvoicePaymentLinker = WorkQueue;

const ACTOR = 'system:invoice-payments';

/** The tenant of a work document, acting as the linker. */
const contextOf = (doc: { organizationId: string; environment: string }, causationId: string): CommandContext => ({
  organizationId: doc.organizationId,
  environment: doc.environment as Environment,
  actor: ACTOR,
  causationId,
});

/**
 * Process manager between checkout sessions and invoices, with two work lists (read models of
 * the invoices projection, so a restart resumes where it was; the deciders answer nothing for a
 * repeat, so a redelivery changes nothing):
 * - outcomes: when a session opened for an invoice completes, the invoice records the payment
 *   (and becomes paid); when it expires or is canceled, the invoice records the failed attempt;
 * - sessions to close: once the invoice is paid (through another session or marked as paid) or
 *   voided, each of its sessions still open is canceled with the session's own cancel command
 *   (`checkout_session.canceled` and `payment_intent.canceled` follow), so it can no longer be
 *   paid a second time. Money that still reaches a canceled session's deposit address is recorded
 *   on the session as a late payment and changes nothing on the invoice. A session that was paid
 *   (even partly) before it could be canceled is left as it is: its decider refuses the cancel.
 */
export function createInvoicePaymentLinker(deps: {
  clock: Clock;
  readStore: ReadStore;
  projections: ProjectionRunner;
  commands: CommandHandler;
  log?: (line: string) => void;
}): InvoicePaymentLinker {
  const { commands } = deps;
  const outcomes = createWorkQueue<InvoicePaymentOutcomeDoc>({
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
  const closings = createWorkQueue<InvoiceSessionToCloseDoc>({
    ...deps,
    name: 'invoice-sessions',
    collection: INVOICE_SESSIONS_TO_CLOSE,
    sortBy: 'at',
    async work(item) {
      const result = await commands.handle(
        checkoutSessionAggregate,
        item.checkoutSessionId,
        { type: 'CancelCheckoutSession', reason: item.reason },
        contextOf(item, item.invoiceId),
      );
      return result.position;
    },
  });
  return combineWorkQueues(outcomes, closings);
}
