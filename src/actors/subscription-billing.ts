import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CheckoutSessionCommand } from '../../machines/checkout-session.decide.ts';
import type {
  Invoice,
  InvoiceLineItem,
  InvoiceRecurring,
  RecurringIntervalCount,
} from '../../machines/invoice.types.ts';
import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import { newInvoiceDraft } from '../../machines/invoice.decide.ts';
import { newSubscription } from '../../machines/subscription.decide.ts';
import { subscriptionAggregate } from '../../machines/subscription.aggregate.ts';
import type {
  Subscription,
  SubscriptionBill,
  SubscriptionItem,
  SubscriptionStatus,
} from '../../machines/subscription.types.ts';
import type { Environment } from '../event-store/event-store.ts';
import { PRICES, PRODUCTS, type PriceDoc, type ProductDoc } from '../projections/catalog.projection.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../projections/collections.ts';
import { INVOICES, type InvoiceDoc } from '../projections/invoices.projection.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import {
  hasEnded,
  isPartlyPaid,
  SUBSCRIPTION_BILLS,
  SUBSCRIPTION_WORK,
  SUBSCRIPTIONS,
  type SubscriptionBillDoc,
  type SubscriptionDoc,
  type SubscriptionWorkDoc,
} from '../projections/subscriptions.projection.ts';
import { invoicePageUrl } from '../hosted/urls.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import { InvalidStateError, NotFoundError } from '../shared/errors.ts';
import { deterministicId } from '../shared/ids.ts';
import type { Aggregate, DomainEvent } from './aggregate.ts';
import type { CommandContext, CommandHandler } from './command-handler.ts';
import { customerAggregate, customerFromDetails } from './customer.ts';
import { claimInvoiceNumber } from './invoice-number-claim.ts';
import { subscriptionItemsOf } from './subscription-items.ts';
import { createReadModelQueue, type ReadModelQueue } from '../processing/read-model-queue.ts';

/** Days a renewal invoice of a subscription started at checkout may stay unpaid before it is past due. */
export const SESSION_SUBSCRIPTION_DAYS_UNTIL_DUE = 7;
const DAY_MS = 24 * 60 * 60 * 1000;
const RECURRING_COUNTS: readonly number[] = [1, 3, 6, 12];

/**
 * How the billing process closes the still open checkout session that was the first bill of a
 * subscription that ended before it started: expired with it (`incomplete_expired`, at or after the
 * session's own expiry), or canceled (ended by the merchant).
 */
export function firstSessionClosing(status: SubscriptionStatus): CheckoutSessionCommand {
  return status === 'incomplete_expired'
    ? { type: 'ExpireCheckoutSession' }
    : { type: 'CancelCheckoutSession', reason: 'the subscription was canceled' };
}

/** The recurring schedule of a renewal invoice, when the invoice schedules can express it. */
function invoiceRecurringOf(s: Subscription): InvoiceRecurring | null {
  const months = s.interval === 'year' ? 12 * s.intervalCount : s.intervalCount;
  return RECURRING_COUNTS.includes(months)
    ? { interval: 'month', intervalCount: months as RecurringIntervalCount }
    : null;
}

/**
 * The process manager of subscription billing. Its work list is the `subscription_work` read
 * model, so a crash between any two steps resumes where it was, and every step is idempotent
 * (derived ids, deciders that answer nothing for a repeat):
 * - a `mode: subscription` checkout session creates its subscription (and the customer from the
 *   payer's email, collected by a payment link page or given as `customerData.email`, when the
 *   session named no `customerId`), the session collecting the first period;
 * - the first invoice of a recurring series creates its subscription, that invoice collecting
 *   the first period;
 * - a renewal issued by the subscription becomes an invoice: created, finalized with its hosted
 *   payment page and sent to the customer (mailed by the mail dispatcher);
 * - a paid bill (checkout session or invoice) is recorded on the subscription;
 * - the first bill of a subscription that never started (it expired unpaid, `incomplete_expired`,
 *   or the merchant ended it while `incomplete`) is closed: an invoice is voided, a checkout
 *   session still open is expired or canceled;
 * - the renewal invoice of a subscription that ended after it started, still payable and unpaid,
 *   is voided, and one left a draft (its issue crashed before the send) is deleted (one not issued
 *   yet at the end is not issued);
 * - a renewal draft the merchant deleted while its subscription goes on is recorded on the
 *   subscription: that period is not billed (`recordDeletedRenewal`).
 */
export function createSubscriptionBilling(deps: {
  clock: Clock;
  readStore: ReadStore;
  projections: ProjectionRunner;
  commands: CommandHandler;
  publicUrl: string;
  log?: (line: string) => void;
}): ReadModelQueue {
  const { readStore, commands } = deps;
  const sessions = readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  const invoices = readStore.collection<InvoiceDoc>(INVOICES);
  const subscriptions = readStore.collection<SubscriptionDoc>(SUBSCRIPTIONS);
  const bills = readStore.collection<SubscriptionBillDoc>(SUBSCRIPTION_BILLS);
  const products = readStore.collection<ProductDoc>(PRODUCTS);
  const prices = readStore.collection<PriceDoc>(PRICES);

  async function createFromSession(work: SubscriptionWorkDoc, ctx: CommandContext): Promise<bigint | null> {
    const session = await sessions.get(work.sourceId);
    if (!session) throw new NotFoundError('checkout session', work.sourceId);
    let customerId = session.customerId;
    let position: bigint | null = null;
    const details = session.customerDetails;
    if (!customerId && details?.email) {
      // The payer's details (collected by a payment link page, or the API's `customerData`) become
      // the subscription's customer, so renewal invoices reach them.
      customerId = deterministicId(`customer:subscription:${work.subscriptionId}`);
      position = (
        await commands.handle(
          customerAggregate,
          customerId,
          customerFromDetails(customerId, session, { ...details, email: details.email }),
          ctx,
        )
      ).position;
    }
    const subscription = newSubscription({
      id: work.subscriptionId,
      organizationId: session.organizationId,
      environment: session.environment,
      customerId,
      items: subscriptionItemsOf(session.lineItems.data),
      createdAt: session.createdAt,
      daysUntilDue: SESSION_SUBSCRIPTION_DAYS_UNTIL_DUE,
      firstBill: { id: session.id, kind: 'checkout_session', dueAt: session.expiresAt },
      clientReferenceId: session.clientReferenceId,
      metadata: session.metadata,
    });
    return (
      (
        await commands.handle(
          subscriptionAggregate,
          work.subscriptionId,
          { type: 'CreateSubscription', subscription },
          ctx,
        )
      ).position ?? position
    );
  }

  async function createFromInvoice(work: SubscriptionWorkDoc, ctx: CommandContext): Promise<bigint | null> {
    const invoice = await invoices.get(work.sourceId);
    if (!invoice || !invoice.recurring) throw new NotFoundError('recurring invoice', work.sourceId);
    const issueDate = invoice.issueDate ?? invoice.finalizedAt ?? invoice.createdAt;
    const items: SubscriptionItem[] = await Promise.all(
      invoice.lineItems.data.map(async (line) => ({
        priceId: line.priceId ?? '',
        productId: line.priceId ? ((await prices.get(line.priceId))?.productId ?? '') : '',
        quantity: line.quantity,
        unitAmount: line.unitAmount,
        currency: invoice.currency,
        interval: 'month' as const,
        intervalCount: invoice.recurring!.intervalCount,
      })),
    );
    const subscription = newSubscription({
      id: work.subscriptionId,
      organizationId: invoice.organizationId,
      environment: invoice.environment,
      customerId: invoice.customerId,
      items,
      createdAt: issueDate,
      daysUntilDue: Math.max(0, Math.round((Date.parse(invoice.dueDate) - Date.parse(issueDate)) / DAY_MS)),
      firstBill: { id: invoice.id, kind: 'invoice', dueAt: invoice.dueDate },
      description: invoice.description,
      metadata: invoice.metadata,
    });
    return (
      await commands.handle(
        subscriptionAggregate,
        work.subscriptionId,
        { type: 'CreateSubscription', subscription },
        ctx,
      )
    ).position;
  }

  /** The invoice a subscription's renewal was first billed by, when it started from a recurring invoice. */
  async function seriesTemplate(subscriptionId: string): Promise<InvoiceDoc | null> {
    const [first] = await bills.find({ subscriptionId, first: true }, { limit: 1 });
    return first ? invoices.get(first._id) : null;
  }

  async function lineItemsOf(s: Subscription): Promise<InvoiceLineItem[]> {
    return Promise.all(
      s.items.map(async (item) => ({
        description: (await products.get(item.productId))?.name ?? null,
        priceId: item.priceId || null,
        quantity: item.quantity,
        unitAmount: item.unitAmount,
        amountTotal: (BigInt(item.unitAmount) * BigInt(item.quantity)).toString(),
      })),
    );
  }

  async function issueInvoice(work: SubscriptionWorkDoc, ctx: CommandContext): Promise<bigint | null> {
    const subscription = await subscriptions.get(work.subscriptionId);
    const bill: SubscriptionBill | null | undefined = subscription?.latestInvoice;
    if (!subscription || !bill || bill.id !== work.sourceId)
      throw new NotFoundError('renewal invoice of subscription', work.sourceId);
    // Ended since the renewal (the projection of the end takes this work off the list): not issued.
    if (hasEnded(subscription)) return null;
    const existing = await invoices.get(bill.id);
    // Sent already, or deleted by the merchant as a draft (the projection of the delete replaces this work).
    if (existing?.sentAt || (existing && existing.deletedAt !== null)) return null;
    if (!existing) {
      const template = await seriesTemplate(subscription.id);
      const recurring = template?.recurring ?? invoiceRecurringOf(subscription);
      const number = await claimInvoiceNumber({ commands, invoices }, ctx, bill.id, undefined);
      const invoice: Invoice = {
        ...newInvoiceDraft({
          id: bill.id,
          organizationId: subscription.organizationId,
          environment: subscription.environment,
          createdAt: bill.issuedAt,
        }),
        number,
        customerId: subscription.customerId ?? '',
        description: template?.description ?? subscription.description,
        currency: subscription.currency,
        lineItems: {
          object: 'list',
          data: template ? template.lineItems.data.map((line) => ({ ...line })) : await lineItemsOf(subscription),
        },
        // A series taxes each renewal as its first invoice (its lines carry their rates).
        ...(template?.taxRateIds ? { taxRateIds: [...template.taxRateIds] } : {}),
        dueDate: bill.dueAt,
        issueDate: bill.periodStart,
        memo: template?.memo ?? null,
        footer: template?.footer ?? null,
        invoiceType: recurring ? 'recurring' : 'one_time',
        recurring,
        billingReason: 'subscription_cycle',
        subscriptionId: subscription.id,
        paymentMethods: template?.paymentMethods ?? { chainIds: [], assetIds: [] },
        metadata: { ...(template?.metadata ?? subscription.metadata) },
        ...(template ? { reminders: template.reminders } : {}),
      };
      await commands.handle(invoiceAggregate, bill.id, { type: 'CreateInvoice', invoice }, ctx);
    }
    const sent = await commands.handle(
      invoiceAggregate,
      bill.id,
      {
        type: 'SendInvoice',
        to: null,
        url: invoicePageUrl(deps.publicUrl, bill.id),
        mailed: false,
        nextIssueDate: bill.periodEnd,
      },
      ctx,
    );
    return sent.position;
  }

  /**
   * Send `command` to a bill of a subscription that has ended, as the billing process because of
   * that subscription. A bill that can no longer take the command because it was paid (even partly),
   * ended or was finalized first (`settled` says which states those are) is done: nothing is
   * appended, and it is not a refusal.
   */
  async function closeBill<TState extends { value: unknown }, TEvent extends DomainEvent, TCommand>(
    aggregate: Aggregate<TState, TEvent, TCommand>,
    command: TCommand,
    settled: readonly string[],
    work: SubscriptionWorkDoc,
    ctx: CommandContext,
  ): Promise<bigint | null> {
    const why: CommandContext = { ...ctx, actor: 'system:subscription-billing', causationId: work.subscriptionId };
    try {
      return (await commands.handle(aggregate, work.sourceId, command, why)).position;
    } catch (error) {
      if (!(error instanceof InvalidStateError)) throw error;
      const { state } = await commands.load(aggregate, work.sourceId, ctx);
      if (settled.includes(String(state.value))) return null;
      throw error;
    }
  }

  /**
   * Void the first invoice of a subscription that never started (expired unpaid, or ended by the
   * merchant while incomplete), with the invoice's own void command, so the customer can no longer
   * pay for a subscription that will never start; what follows any void follows (pending invoice
   * and reminder mails are dropped; Weir announces no `invoice.voided` webhook, the reference API
   * has none). Voiding twice answers nothing.
   * If the invoice was paid in the meantime (the payment raced the expiry or the end), it is not
   * voided: the invoice stays paid with the money recorded on it, while the subscription stays
   * `incomplete_expired` or `canceled` (its decider ignores any payment after the end). The
   * merchant learns both from `invoice.paid` and `customer.subscription.incomplete_expired` or
   * `customer.subscription.deleted`, and refunds or starts a new subscription. The projection of
   * that payment removes this work.
   */
  const voidFirstInvoice = (work: SubscriptionWorkDoc, ctx: CommandContext): Promise<bigint | null> =>
    closeBill(invoiceAggregate, { type: 'VoidInvoice' }, ['paid'], work, ctx);

  /**
   * Void a renewal invoice of a subscription that ended after it started (canceled by the merchant
   * at once or at period end, from trialing, active, past due, unpaid or paused), with the
   * invoice's own void command: the period it bills will not be served. What follows every void
   * follows: its pending invoice and reminder mails are dropped, its pay page answers that it was
   * voided, and each checkout session still open for it is canceled by the invoice session closing workflow
   * (money sent there afterwards is a late payment of that session). Voiding twice answers nothing.
   * An invoice paid in full in the meantime stays paid (the subscription ignores the payment; the
   * projection of the payment removes this work). One partly paid stays open: the money is
   * recorded on its checkout session, which the payer may still complete or the merchant complete
   * as is; it is the merchant's to settle.
   */
  async function voidUnpaidInvoice(work: SubscriptionWorkDoc, ctx: CommandContext): Promise<bigint | null> {
    if (
      await isPartlyPaid(sessions, {
        id: work.sourceId,
        organizationId: work.organizationId,
        environment: work.environment,
      })
    )
      return null;
    return closeBill(invoiceAggregate, { type: 'VoidInvoice' }, ['paid'], work, ctx);
  }

  /**
   * Delete the renewal invoice of a subscription that ended after it started, left a draft because
   * its issue stopped (a crash) between creating it and sending it, with the invoice's own delete
   * command, as a merchant deletes a draft (`DELETE /invoices/:id`; only a draft can be deleted, the
   * reference voids the others): it was never finalized, so never mailed nor payable, and no mail
   * follows. Afterwards it is gone from the merchant's invoices (404, not listed), as a renewal that
   * was not issued before the end; the subscription still names it as its latest invoice. Deleting
   * twice answers nothing. A draft finalized in the meantime (its issue was under way as the end
   * came) can no longer be deleted: the projection of its finalize replaces this work with its void.
   */
  const deleteDraftInvoice = (work: SubscriptionWorkDoc, ctx: CommandContext): Promise<bigint | null> =>
    closeBill(invoiceAggregate, { type: 'DeleteInvoice' }, ['open', 'uncollectible', 'paid', 'void'], work, ctx);

  /**
   * Record on a subscription that goes on that the merchant deleted its latest renewal's invoice
   * while a draft (its issue stopped between creating and sending it): the subscription's own
   * `RecordRenewalInvoiceDeleted`, so that period is not billed. Its past due timer is dropped (a
   * past due or unpaid subscription becomes active again), and the next period's renewal is issued
   * at the period end. Recording it twice answers nothing.
   */
  const recordDeletedRenewal = async (work: SubscriptionWorkDoc, ctx: CommandContext): Promise<bigint | null> =>
    (
      await commands.handle(
        subscriptionAggregate,
        work.subscriptionId,
        { type: 'RecordRenewalInvoiceDeleted', invoiceId: work.sourceId },
        ctx,
      )
    ).position;

  /**
   * Close the checkout session that was the first bill of a subscription that never started, with
   * the session's own commands, so it can no longer be paid for a subscription that will never
   * start; its webhooks follow as for any session (`checkout_session.canceled` or `.expired`, and
   * `payment_intent.canceled`). Ended by the merchant, it is canceled. Expired unpaid, it is
   * expired: the subscription's expiry is the session's own. The subscription's expiry timer
   * expires the session first and waits while a payment to it is pending on chain (see
   * `subscription-timers.ts`), so the session is normally expired already; this closes one the log
   * shows open after the subscription expired (recorded before the timer did so). Either way it
   * ends `expired` once. Money that still reaches its deposit address is recorded on it as a late
   * payment, and the subscription ignores it.
   * A session paid in full or in part before it could be closed is left as it is (its decider
   * refuses the cancel; an incomplete session does not expire): the payment is handled like every other
   * payment of a first bill after the end (the subscription stays ended, the money stays recorded
   * on the session; `checkout_session.completed` tells the merchant). The projection of the
   * session's end removes this work.
   */
  async function closeFirstSession(work: SubscriptionWorkDoc, ctx: CommandContext): Promise<bigint | null> {
    const subscription = await subscriptions.get(work.subscriptionId);
    if (!subscription) throw new NotFoundError('subscription', work.subscriptionId);
    return closeBill(
      checkoutSessionAggregate,
      firstSessionClosing(subscription.status),
      ['incomplete', 'complete', 'expired'],
      work,
      ctx,
    );
  }

  return createReadModelQueue<SubscriptionWorkDoc>({
    ...deps,
    name: 'subscription-billing',
    collection: SUBSCRIPTION_WORK,
    sortBy: 'at',
    async work(work) {
      const ctx: CommandContext = {
        organizationId: work.organizationId,
        environment: work.environment as Environment,
        actor: 'system:subscriptions',
        causationId: work.sourceId,
      };
      switch (work.kind) {
        case 'create_from_session':
          return createFromSession(work, ctx);
        case 'create_from_invoice':
          return createFromInvoice(work, ctx);
        case 'issue_invoice':
          return issueInvoice(work, ctx);
        case 'record_payment':
          return (
            await commands.handle(
              subscriptionAggregate,
              work.subscriptionId,
              { type: 'RecordSubscriptionPayment', invoiceId: work.sourceId },
              ctx,
            )
          ).position;
        case 'void_first_invoice':
          return voidFirstInvoice(work, ctx);
        case 'close_first_session':
          return closeFirstSession(work, ctx);
        case 'void_unpaid_invoice':
          return voidUnpaidInvoice(work, ctx);
        case 'delete_draft_invoice':
          return deleteDraftInvoice(work, ctx);
        case 'record_deleted_renewal':
          return recordDeletedRenewal(work, ctx);
      }
    },
  });
}
