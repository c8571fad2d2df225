import type {
  Invoice,
  InvoiceLineItem,
  InvoiceRecurring,
  RecurringIntervalCount,
} from '../../machines/invoice.types.ts';
import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import { newInvoiceDraft } from '../../machines/invoice.decide.ts';
import { hasEnded, newSubscription } from '../../machines/subscription.decide.ts';
import { subscriptionAggregate } from '../../machines/subscription.aggregate.ts';
import type { Subscription, SubscriptionBill, SubscriptionItem } from '../../machines/subscription.types.ts';
import type { Environment } from '../event-store/event-store.ts';
import { PRICES, PRODUCTS, type PriceDoc, type ProductDoc } from '../projections/catalog.projection.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../projections/collections.ts';
import { INVOICES, type InvoiceDoc } from '../projections/invoices.projection.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import {
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
import { NotFoundError } from '../shared/errors.ts';
import { deterministicId } from '../shared/ids.ts';
import type { CommandContext, CommandHandler } from './command-handler.ts';
import { customerAggregate, customerFromDetails } from './customer.ts';
import { claimInvoiceNumber } from './invoice-number-claim.ts';
import { subscriptionItemsOf } from './subscription-items.ts';
import { createReadModelQueue, type ReadModelQueue } from '../processing/read-model-queue.ts';

/** Days a renewal invoice of a subscription started at checkout may stay unpaid before it is past due. */
export const SESSION_SUBSCRIPTION_DAYS_UNTIL_DUE = 7;
const DAY_MS = 24 * 60 * 60 * 1000;
const RECURRING_COUNTS: readonly number[] = [1, 3, 6, 12];

/** The recurring schedule of a renewal invoice, when the invoice schedules can express it. */
function invoiceRecurringOf(s: Subscription): InvoiceRecurring | null {
  const months = s.interval === 'year' ? 12 * s.intervalCount : s.intervalCount;
  return RECURRING_COUNTS.includes(months)
    ? { interval: 'month', intervalCount: months as RecurringIntervalCount }
    : null;
}

/**
 * The work queue of subscription billing that creates subscriptions and issues renewals. Its work
 * list is the `subscription_work` read model, so a crash between any two steps resumes where it
 * was, and every step is idempotent (derived ids, deciders that answer nothing for a repeat):
 * - a `mode: subscription` checkout session creates its subscription (and the customer from the
 *   payer's email, collected by a payment link page or given as `customerData.email`, when the
 *   session named no `customerId`), the session collecting the first period;
 * - the first invoice of a recurring series creates its subscription, that invoice collecting
 *   the first period;
 * - a renewal issued by the subscription becomes an invoice: created, finalized with its hosted
 *   payment page and sent to the customer (mailed by the mail dispatcher);
 * A renewal not issued yet when its subscription ends is not issued. What a subscription's bills
 * and its end call for (payments to record, first bills and renewals to close, a deleted renewal
 * draft to record) is the subscription billing workflow's (`workflows/subscription-billing.ts`):
 * those steps read nothing but the log, while these read the catalog and claim invoice numbers.
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
    // Sent already, or deleted by the merchant as a draft (the projection of the delete takes this work off the list).
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
      }
    },
  });
}
