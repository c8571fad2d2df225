import type {
  Invoice,
  InvoiceLineItem,
  InvoiceRecurring,
  RecurringIntervalCount,
} from '../../machines/invoice.types.ts';
import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import { newInvoiceDraft } from '../../machines/invoice.decide.ts';
import { daysUntilDue } from '../../machines/invoice.due.ts';
import { billsServedPeriod, hasEnded, newSubscription } from '../../machines/subscription.decide.ts';
import { subscriptionAggregate } from '../../machines/subscription.aggregate.ts';
import type { Subscription, SubscriptionItem } from '../../machines/subscription.types.ts';
import type { CommandHandler } from '../actors/command-handler.ts';
import { claimInvoiceNumber } from '../actors/invoice-number-claim.ts';
import { assertPayableAtFinalize } from '../actors/invoice-payability.ts';
import { organizationRecordId } from '../actors/organization.ts';
import type { Rail } from '../chain-ingest/rail.ts';
import { invoicePageUrl } from '../hosted/urls.ts';
import { PRICES, PRODUCTS, type PriceDoc, type ProductDoc } from '../projections/catalog.projection.ts';
import { COLLECTIONS, type OrganizationDoc } from '../projections/collections.ts';
import { INVOICES, type InvoiceDoc } from '../projections/invoices.projection.ts';
import type { Collection, ReadStore } from '../read-store/read-store.ts';
import { UnprocessableError, ValidationError } from '../shared/errors.ts';
import type { JsonObject } from '../shared/json.ts';
import type { Log } from '../shared/logger.ts';
import { isTenants, type TenantOf } from '../tenancy/same-tenant.ts';
import { SUBSCRIPTION_BILLING_EFFECTS } from './subscription-billing.ts';
import type { EffectHandler, WorkflowContext } from './workflow.ts';

const RECURRING_COUNTS: readonly number[] = [1, 3, 6, 12];

/** The recurring schedule of a renewal invoice, when the invoice schedules can express it. */
function invoiceRecurringOf(s: Subscription): InvoiceRecurring | null {
  const months = s.interval === 'year' ? 12 * s.intervalCount : s.intervalCount;
  return RECURRING_COUNTS.includes(months)
    ? { interval: 'month', intervalCount: months as RecurringIntervalCount }
    : null;
}

/**
 * The schedule a series' subscription shows: its recurring price's own (a yearly price is `year`,
 * not 12 months) when that bills the invoice's months, else the invoice's (12 months read as a year).
 * Either bills on the same calendar.
 */
function scheduleOf(
  recurring: InvoiceRecurring,
  linePrices: readonly (PriceDoc | null)[],
): Pick<SubscriptionItem, 'interval' | 'intervalCount'> {
  const months = recurring.intervalCount;
  const price = linePrices.find((p) => p?.type === 'recurring');
  const count = price?.intervalCount ?? 1;
  if (price?.interval === 'year' && 12 * count === months) return { interval: 'year', intervalCount: count };
  if (price?.interval === 'month' && count === months) return { interval: 'month', intervalCount: count };
  return months === 12 ? { interval: 'year', intervalCount: 1 } : { interval: 'month', intervalCount: months };
}

/** A string of the effect's input (the workflow wrote it, so anything else is a bug, retried and logged). */
function text(input: JsonObject, key: string): string {
  const value = input[key];
  if (typeof value !== 'string') throw new Error(`effect input ${key} is not a string`);
  return value;
}

const tenantOf = (ctx: WorkflowContext) => ({ organizationId: ctx.organizationId, environment: ctx.environment });

/**
 * The catalog record `id` of the tenant the effect acts for, as `commands.load` reads a stream: another
 * tenant's is none (its ids come from the tenant's own lines, so one would be a bug, never used).
 */
async function tenantsRecord<T extends TenantOf & { _id: string }>(
  collection: Collection<T>,
  id: string,
  ctx: WorkflowContext,
): Promise<T | null> {
  const record = await collection.get(id);
  return isTenants(record, tenantOf(ctx)) ? record : null;
}

/**
 * The two steps of subscription billing that need more than the log (`workflows/subscription-billing.ts`
 * decides when): the subscription of a recurring series' first invoice (its items' products from
 * the catalog), and a renewal invoice issued (an invoice number claimed, its lines' names from the
 * catalog, its page's address), created and sent, unless the finalize route would refuse it (then
 * left a draft with the refusal recorded, see `finalizable`). Each reads the records it acts on from the log
 * first and does nothing when there is nothing left to do (created, sent or deleted already, the
 * subscription ended, a later bill), so a repeat or a replay of the log changes nothing.
 */
export function subscriptionBillingEffects(deps: {
  commands: CommandHandler;
  readStore: ReadStore;
  publicUrl: string;
  /** Weir's networks: a renewal is checked as the finalize route checks a draft before it is finalized. */
  rail: Pick<Rail, 'networks' | 'unpayableAddress'>;
  /** Where a session that bills nothing, and a renewal that cannot be finalized, are reported (default stderr). */
  log?: Log;
}): Record<string, EffectHandler> {
  const { commands, readStore } = deps;
  const log: Log = deps.log ?? ((line: string) => console.error(line));
  const orgs = readStore.collection<OrganizationDoc>(COLLECTIONS.organizations);
  const invoices = readStore.collection<InvoiceDoc>(INVOICES);
  const products = readStore.collection<ProductDoc>(PRODUCTS);
  const prices = readStore.collection<PriceDoc>(PRICES);

  const invoiceOf = async (id: string, ctx: WorkflowContext): Promise<Invoice | null> =>
    (await commands.load(invoiceAggregate, id, tenantOf(ctx))).state.context.invoice;

  async function createFromInvoice(input: JsonObject, ctx: WorkflowContext): Promise<void> {
    const invoice = await invoiceOf(text(input, 'invoiceId'), ctx);
    const recurring = invoice?.recurring;
    if (!invoice || invoice.subscriptionId || invoice.invoiceType !== 'recurring' || !recurring) return;
    const issueDate = invoice.issueDate ?? invoice.finalizedAt ?? invoice.createdAt;
    const linePrices = await Promise.all(
      invoice.lineItems.data.map(async (line) =>
        line.priceId ? await tenantsRecord(prices, line.priceId, ctx) : null,
      ),
    );
    const schedule = scheduleOf(recurring, linePrices);
    // Named as a checkout's subscription is (its items' products' names when it began): the dashboard
    // and the API show the product, not a generic "Plan".
    const lineProducts = await Promise.all(
      linePrices.map(async (price) => (price?.productId ? await tenantsRecord(products, price.productId, ctx) : null)),
    );
    const items: SubscriptionItem[] = invoice.lineItems.data.map((line, i) => {
      const productName = lineProducts[i]?.name;
      return {
        priceId: line.priceId ?? '',
        productId: linePrices[i]?.productId ?? '',
        ...(productName ? { productName } : {}),
        quantity: line.quantity,
        unitAmount: line.unitAmount,
        currency: invoice.currency,
        ...schedule,
      };
    });
    const subscription = newSubscription({
      id: text(input, 'subscriptionId'),
      organizationId: invoice.organizationId,
      environment: invoice.environment,
      customerId: invoice.customerId,
      items,
      createdAt: issueDate,
      daysUntilDue: Math.max(0, daysUntilDue(invoice.dueDate, Date.parse(issueDate))),
      // Each renewal copies this invoice's lines and tax rates, so it asks the same amount.
      periodAmountDue: invoice.amountDue,
      firstBill: { id: invoice.id, kind: 'invoice', dueAt: invoice.dueDate },
      description: invoice.description,
      metadata: invoice.metadata,
    });
    await commands.handle(subscriptionAggregate, subscription.id, { type: 'CreateSubscription', subscription }, ctx);
  }

  async function lineItemsOf(s: Subscription, ctx: WorkflowContext): Promise<InvoiceLineItem[]> {
    return Promise.all(
      s.items.map(async (item) => ({
        description: (await tenantsRecord(products, item.productId, ctx))?.name ?? item.productName ?? null,
        priceId: item.priceId || null,
        quantity: item.quantity,
        unitAmount: item.unitAmount,
        amountTotal: (BigInt(item.unitAmount) * BigInt(item.quantity)).toString(),
      })),
    );
  }

  /** The draft of renewal `bill` of `s`: as the series' first invoice (`template`) when there is one, else the subscription's items. */
  async function renewalDraft(s: Subscription, template: Invoice | null, ctx: WorkflowContext): Promise<Invoice> {
    const bill = s.latestInvoice!;
    const recurring = template?.recurring ?? invoiceRecurringOf(s);
    const number = await claimInvoiceNumber({ commands, invoices }, ctx, bill.id, undefined);
    return {
      ...newInvoiceDraft({
        id: bill.id,
        organizationId: s.organizationId,
        environment: s.environment,
        createdAt: bill.issuedAt,
      }),
      number,
      customerId: s.customerId ?? '',
      description: template?.description ?? s.description,
      currency: s.currency,
      lineItems: {
        object: 'list',
        data: template ? template.lineItems.data.map((line) => ({ ...line })) : await lineItemsOf(s, ctx),
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
      subscriptionId: s.id,
      paymentMethods: template?.paymentMethods ?? { chainIds: [], assetIds: [] },
      ...(template?.preferredChainId === undefined ? {} : { preferredChainId: template.preferredChainId }),
      metadata: { ...(template?.metadata ?? s.metadata) },
      ...(template ? { reminders: template.reminders } : {}),
    };
  }

  /**
   * Whether the renewal draft passes the finalize route's payability checks (`assertPayableAtFinalize`).
   * If not, it is not finalized: it stays a draft with the refusal recorded on it
   * (`InvoiceFinalizationFailed`, once per refusal) and logged, its subscription records its bill a
   * draft (`RenewalInvoiceNotFinalized`: it does not lapse), and this issue is done (no retry: the
   * merchant fixes the organization or the draft, then finalizes it).
   */
  async function finalizable(draft: Invoice, ctx: WorkflowContext): Promise<boolean> {
    const organization = await orgs.get(organizationRecordId(draft.organizationId, draft.environment));
    try {
      assertPayableAtFinalize({ rail: deps.rail, organization }, draft);
      return true;
    } catch (error) {
      // A 400 names the field; a 422 is the organization's broken wallet, no field of the draft.
      if (!(error instanceof ValidationError || error instanceof UnprocessableError)) throw error;
      const { code, message } = error;
      const field = error instanceof ValidationError ? error.field : null;
      const failure = { type: 'RecordInvoiceFinalizationFailure' as const, code, field, message };
      await commands.handle(invoiceAggregate, draft.id, failure, ctx);
      log(
        `[workflow subscription-billing] renewal invoice ${draft.id} of subscription ${draft.subscriptionId} cannot be finalized and stays a draft: ${message}`,
        { level: 'warn', event: 'subscription.renewal_not_finalized' },
      );
      return false;
    }
  }

  async function issueRenewal(input: JsonObject, ctx: WorkflowContext): Promise<void> {
    const invoiceId = text(input, 'invoiceId');
    const loaded = await commands.load(subscriptionAggregate, text(input, 'subscriptionId'), tenantOf(ctx));
    const subscription = loaded.state.context.subscription;
    // Billed by a later renewal, or settled (deleted, voided): nothing to issue. Ended since, only a renewal of a
    // period it served is still owed (its workflow leaves it so), so only that one is issued.
    const bill = subscription?.latestInvoice;
    if (!subscription || bill?.id !== invoiceId || (bill.status !== 'open' && bill.status !== 'draft')) return;
    if (hasEnded(subscription) && !billsServedPeriod(subscription, bill)) return;
    const existing = await invoiceOf(invoiceId, ctx);
    // Sent, deleted as a draft by the merchant, or no longer payable (paid at its finalize, voided): its issue is done.
    // One the merchant finalized while its send waited for a retry is still sent.
    const issued = existing && (existing.sentAt !== null || existing.deletedAt !== null);
    if (existing && (issued || (existing.status !== 'draft' && existing.status !== 'open'))) return;
    let draft = existing;
    if (!draft) {
      const templateId = input.templateId;
      const template = typeof templateId === 'string' ? await invoiceOf(templateId, ctx) : null;
      draft = await renewalDraft(subscription, template, ctx);
      await commands.handle(invoiceAggregate, invoiceId, { type: 'CreateInvoice', invoice: draft }, ctx);
      draft = (await invoiceOf(invoiceId, ctx)) ?? draft;
    }
    // Refused once, it is the merchant's to finalize: a replay or redelivery of this issue neither
    // finalizes it behind their back nor records another refusal as the organization changes.
    if (draft.status === 'draft' && (draft.lastFinalizationError !== undefined || !(await finalizable(draft, ctx)))) {
      // The subscription learns its bill is a draft, not sent (once; again after a crash in between).
      const learns = { type: 'RecordRenewalInvoiceNotFinalized' as const, invoiceId };
      await commands.handle(subscriptionAggregate, subscription.id, learns, ctx);
      return;
    }
    await commands.handle(
      invoiceAggregate,
      invoiceId,
      {
        type: 'SendInvoice',
        to: null,
        url: invoicePageUrl(deps.publicUrl, invoiceId),
        mailed: false,
        // Ended (a served period's renewal issued at or after the end): the series ends with it, nothing comes next.
        nextIssueDate: hasEnded(subscription) ? null : bill.periodEnd,
      },
      ctx,
    );
  }

  async function reportUnbillable(input: JsonObject): Promise<void> {
    log(
      `[workflow subscription-billing] checkout session ${text(input, 'checkoutSessionId')} makes no subscription ${text(input, 'subscriptionId')}: ${text(input, 'reason')}`,
      { level: 'warn', event: 'subscription.unbillable' },
    );
  }

  return {
    [SUBSCRIPTION_BILLING_EFFECTS.createFromInvoice]: createFromInvoice,
    [SUBSCRIPTION_BILLING_EFFECTS.issueRenewal]: issueRenewal,
    [SUBSCRIPTION_BILLING_EFFECTS.reportUnbillable]: reportUnbillable,
  };
}
