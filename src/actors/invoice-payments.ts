import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import type { Environment } from '../event-store/event-store.ts';
import { INVOICE_PAYMENT_OUTCOMES, type InvoicePaymentOutcomeDoc } from '../projections/invoices.projection.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { InvalidStateError, NotFoundError } from '../shared/errors.ts';
import type { CommandHandler } from './command-handler.ts';

const RETRY_AFTER_FAILURE_MS = 1000;
const BATCH = 200;

export type InvoicePaymentLinker = { start(): void; stop(): Promise<void>; /** Run one pass now (tests). */ runOnce(): Promise<void> };

/**
 * Process manager between checkout sessions and invoices: when a session opened for an invoice
 * completes, the invoice records the payment (and becomes paid); when it expires or is canceled,
 * the invoice records the failed attempt. The pending work is the `invoice_payment_outcomes` read
 * model (a session's end not yet recorded by its invoice), so a restart resumes where it was;
 * the decider answers nothing for a repeat, so a redelivery changes nothing.
 */
export function createInvoicePaymentLinker(deps: { readStore: ReadStore; projections: ProjectionRunner; commands: CommandHandler; log?: (line: string) => void }): InvoicePaymentLinker {
  const { readStore, projections, commands } = deps;
  const log = deps.log ?? ((line: string) => console.error(line));
  const outcomes = readStore.collection<InvoicePaymentOutcomeDoc>(INVOICE_PAYMENT_OUTCOMES);
  /** Outcomes whose command changed nothing (the invoice had moved on); not tried again in this process. */
  const spent = new Set<string>();
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  let retry: NodeJS.Timeout | null = null;
  let unsubscribe: (() => void) | null = null;

  async function settle(outcome: InvoicePaymentOutcomeDoc): Promise<void> {
    const ctx = {
      organizationId: outcome.organizationId, environment: outcome.environment as Environment, actor: 'system:invoice-payments',
      causationId: outcome.checkoutSessionId,
    };
    try {
      const result = outcome.outcome === 'paid'
        ? await commands.handle(invoiceAggregate, outcome.invoiceId, {
          type: 'RecordInvoicePayment', checkoutSessionId: outcome.checkoutSessionId, transactionHash: outcome.transactionHash, amountReceived: outcome.amountReceived,
        }, ctx)
        : await commands.handle(invoiceAggregate, outcome.invoiceId, { type: 'RecordInvoicePaymentFailure', checkoutSessionId: outcome.checkoutSessionId, reason: outcome.reason ?? 'payment failed' }, ctx);
      if (result.position !== null) await projections.waitFor(result.position);
      else spent.add(outcome._id);
    } catch (error) {
      // The invoice cannot take it (deleted, or never finalized): nothing to do, ever.
      if (error instanceof InvalidStateError || error instanceof NotFoundError) {
        log(`[invoice-payments] session ${outcome.checkoutSessionId} ended (${outcome.outcome}) but invoice ${outcome.invoiceId} cannot record it: ${error.message}`);
        spent.add(outcome._id);
        return;
      }
      throw error;
    }
  }

  async function pass(): Promise<void> {
    const due = await outcomes.find({}, { sort: { at: 1, _id: 1 }, limit: BATCH + spent.size });
    for (const outcome of due) if (!spent.has(outcome._id) && !stopped) await settle(outcome);
  }

  function poke(): Promise<void> {
    if (stopped) return Promise.resolve();
    if (running) { again = true; return running; }
    running = (async () => {
      try {
        do { again = false; await pass(); } while (again && !stopped);
      } catch (error) {
        log(`[invoice-payments] failed; retrying in ${RETRY_AFTER_FAILURE_MS} ms: ${(error as Error).message}`);
        if (!stopped && !retry) { retry = setTimeout(() => { retry = null; void poke(); }, RETRY_AFTER_FAILURE_MS); retry.unref(); }
      } finally {
        running = null;
      }
    })();
    return running;
  }

  return {
    start() {
      stopped = false;
      unsubscribe = projections.onAdvanced((_position, touched) => { if (touched.has(INVOICE_PAYMENT_OUTCOMES)) void poke(); });
      void poke();
    },
    runOnce: () => poke(),
    async stop() {
      stopped = true;
      unsubscribe?.();
      if (retry) clearTimeout(retry);
      while (running) await running;
    },
  };
}
