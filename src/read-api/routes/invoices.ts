import Router from '@koa/router';
import { invoiceAggregate } from '../../../machines/invoice.aggregate.ts';
import {
  assertDueDateFits,
  decideInvoice,
  newInvoiceDraft,
  type InvoiceCommand,
} from '../../../machines/invoice.decide.ts';
import { daysUntilDue, dueDaysAfter, dueEndOfDay, isOverdue } from '../../../machines/invoice.due.ts';
import { withChanges } from '../../../machines/invoice.evolve.ts';
import { hasEnded } from '../../../machines/subscription.decide.ts';
import type {
  Invoice,
  InvoiceChanges,
  InvoiceLineItem,
  InvoicePaymentMethods,
  InvoiceRecurring,
  RecurringIntervalCount,
} from '../../../machines/invoice.types.ts';
import type { CreateCheckoutSession } from '../../actors/create-checkout-session.ts';
import { assertInvoiceNumberFree, claimInvoiceNumber, invoiceNumbering } from '../../actors/invoice-number-claim.ts';
import { createLineItemResolver } from '../../actors/line-items.ts';
import { lineTaxes } from '../../actors/line-taxes.ts';
import { organizationRecordId } from '../../actors/organization.ts';
import {
  assertAssetsPayCurrency as assertAssetsInCurrency,
  assertPayableAtFinalize,
  assertPaymentMethodsAvailable as assertMethodsAvailable,
  assertPreferredOffered,
  NO_PAYMENT_METHOD,
  type NamedMethods,
  type PayabilityDeps,
  storedMethods,
} from '../../actors/invoice-payability.ts';
import { findTenantCustomer, requireTenantCustomer } from '../../actors/tenant-customer.ts';
import type { Environment } from '../../event-store/event-store.ts';
import { invoicePageUrl } from '../../hosted/urls.ts';
import { renderInvoiceMail } from '../../mail/invoice-mail.ts';
import type { Mailer } from '../../mail/mailer.ts';
import { PRICES, PRODUCTS, type PriceDoc, type ProductDoc } from '../../projections/catalog.projection.ts';
import { COLLECTIONS, type OrganizationDoc } from '../../projections/collections.ts';
import { CUSTOMERS, type CustomerDoc } from '../../projections/customers.projection.ts';
import { INVOICES, publicInvoice, type InvoiceDoc } from '../../projections/invoices.projection.ts';
import { SUBSCRIPTIONS, type SubscriptionDoc } from '../../projections/subscriptions.projection.ts';
import { NotFoundError, ValidationError, WeirError } from '../../shared/errors.ts';
import { isUuid } from '../../shared/ids.ts';
import { taxDecimals } from '../../shared/tax.ts';
import { type ApiContext, type ApiDeps, type ApiState, idsOf } from '../api-context.ts';
import { commandFor, ownedBy } from '../command.ts';
import { listPage } from '../pagination.ts';
import { DeletedMessage, idParams, invalidFields, listOf, notFound, walletInvalid, type z } from '../schema/fields.ts';
import {
  INVOICE_CREATE_EXAMPLE,
  INVOICE_EXAMPLE,
  INVOICE_LIST_FILTERS,
  InvoiceCreate,
  InvoiceListQuery,
  type InvoiceLineItemsInput,
  InvoiceSchema,
  InvoiceSendRequest,
  InvoiceUpdate,
} from '../schema/invoice.ts';
import { type ErrorSpec, schemaRoutes } from '../schema/route.ts';
import { presentCustomer } from './customers.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const DEFAULT_DAYS_UNTIL_DUE = 30;

/** The fields create and update share, as their schemas read them. */
/** What a subscription's renewal draft is finalized with (see `renewalTerms`). */
type RenewalTerms = { nextIssueDate?: string | null; dueDate?: string };
type InvoiceBody = z.output<typeof InvoiceCreate> | z.output<typeof InvoiceUpdate>;

/** The tax rates a draft holds (see `heldTaxRates`): the invoice's, and by price its lines' (the keys: the prices it holds). */
type HeldTaxRates = { defaults: ReadonlySet<string>; byPrice: ReadonlyMap<string, ReadonlySet<string>> };

/** The invoice fields a body sets (undefined: not sent); the others are the route's to set. */
type InvoiceFields = Omit<InvoiceChanges, 'number' | 'customerId' | 'currency' | 'lineItems' | 'taxRateIds'>;

/**
 * The due date `days` after the invoice is issued: its issue date (a date, at midnight UTC, gives a
 * due day: payable all of it), or now without one; 0 days is the end of that day (`dueDaysAfter`).
 * `daysUntilDue` and the 30-day default count so: net 7 of an invoice issued later is 7 days after that.
 */
function daysAfterIssue(days: number, issueDate: string | null, nowMs: number): string {
  const from = issueDate === null ? nowMs : Date.parse(issueDate);
  return issueDate !== null && from % DAY_MS === 0 ? dueEndOfDay(from + days * DAY_MS) : dueDaysAfter(from, days);
}

/**
 * The invoice fields a body sets, with what depends on the clock and on the invoice it changes:
 * `daysUntilDue` counts from the issue date sent, else the invoice's, else now; a one-time invoice
 * has no interval (a recurring one without one takes its prices', see `scheduleOfPrices`).
 */
function invoiceFieldsOf(body: InvoiceBody, nowMs: number, current: Invoice | null): InvoiceFields {
  const issueDate = body.issueDate === undefined ? (current?.issueDate ?? null) : body.issueDate;
  const sent = Object.entries({
    dueDate: body.daysUntilDue === undefined ? body.dueDate : daysAfterIssue(body.daysUntilDue, issueDate, nowMs),
    issueDate: body.issueDate,
    description: body.description,
    memo: body.memo,
    footer: body.footer,
    invoiceType: body.invoiceType,
    recurring: body.recurring,
    collectionMethod: body.collectionMethod,
    paymentMethods: paymentMethodsOf(body, current),
    preferredChainId: body.paymentSetting?.preferredChainId,
    reminders: body.reminders,
    metadata: body.metadata,
  }).filter(([, value]) => value !== undefined);
  const fields = Object.fromEntries(sent) as InvoiceFields;
  const effectiveType = fields.invoiceType ?? current?.invoiceType ?? 'one_time';
  if (effectiveType === 'one_time' && fields.invoiceType === 'one_time') fields.recurring = null;
  if (effectiveType === 'one_time' && fields.recurring)
    throw new ValidationError('interval', 'is only allowed on a recurring invoice (invoiceType recurring)');
  return fields;
}

const sameChains = (a: readonly number[], b: readonly number[]) =>
  a.length === b.length && a.every((chainId) => b.includes(chainId));

/**
 * `paymentMethods` with `paymentSetting.allowedChains` (the reference's form of its `chainIds`)
 * folded in: they are one restriction, so two lists naming different networks are refused, naming
 * both; an empty list restricts nothing, so the other one stands. The events keep `paymentMethods`.
 */
function paymentMethodsOf(body: InvoiceBody, current: Invoice | null): InvoicePaymentMethods | undefined {
  const allowed = body.paymentSetting?.allowedChains;
  if (allowed === undefined) return body.paymentMethods;
  const chainIds = [...new Set(allowed.map((c) => c.chainId))];
  const sent = body.paymentMethods?.chainIds ?? [];
  if (chainIds.length > 0 && sent.length > 0 && !sameChains(chainIds, [...new Set(sent)]))
    throw new ValidationError(
      'paymentSetting.allowedChains',
      `names chains ${chainIds.join(', ')} but paymentMethods.chainIds names ${sent.join(', ')}: both restrict the invoice's networks; send one of them, or the same chains in both`,
    );
  return {
    chainIds: chainIds.length > 0 ? chainIds : sent,
    assetIds: body.paymentMethods?.assetIds ?? current?.paymentMethods.assetIds ?? [],
  };
}

/**
 * The restriction a create or update body sets (`next`, from `paymentMethodsOf`), each value named
 * by the field that sent it: `allowedChains` when it names the networks; assets a draft keeps
 * while only `allowedChains` changes are named as its own.
 */
function sentMethods(body: InvoiceBody, next: InvoicePaymentMethods): NamedMethods {
  const allowed = body.paymentSetting?.allowedChains ?? [];
  const chains =
    allowed.length > 0
      ? allowed.map(({ chainId }, i) => ({ field: `paymentSetting.allowedChains[${i}].chainId`, chainId }))
      : storedMethods({ chainIds: body.paymentMethods?.chainIds ?? [], assetIds: [] }).chains;
  const kept =
    body.paymentMethods === undefined
      ? ' (kept from the draft: send paymentMethods.assetIds with the new networks)'
      : undefined;
  return { chains, assets: storedMethods(next, kept).assets };
}

/** What a refusal of a stored asset adds: it was kept from the draft, and how to change it. */
const KEPT_ASSETS = " (kept from the draft: send paymentMethods.assetIds in the lines' currency)";
/** The field a due date that does not fit is named by: the one the body sent. */
const dueField = (body: InvoiceBody): 'dueDate' | 'daysUntilDue' =>
  body.daysUntilDue === undefined ? 'dueDate' : 'daysUntilDue';

/** A catalog price as the schedule check reads it. */
type ScheduledPrice = Pick<PriceDoc, 'id' | 'type' | 'interval' | 'intervalCount'>;

const MONTHS_PER: Partial<Record<NonNullable<PriceDoc['interval']>, number>> = { month: 1, year: 12 };
const everyMonths = (months: number): string => (months === 1 ? 'every month' : `every ${months} months`);
const INVOICE_MONTHS: readonly number[] = [1, 3, 6, 12] satisfies RecurringIntervalCount[];

/** How many months a recurring price bills (null: by the day or the week), and that in words. */
function priceSchedule(price: ScheduledPrice): { months: number | null; bills: string } {
  const per = price.interval ? MONTHS_PER[price.interval] : undefined;
  const months = per === undefined ? null : per * (price.intervalCount ?? 1);
  return {
    months,
    bills: months === null ? `every ${price.intervalCount ?? 1} ${price.interval}(s)` : everyMonths(months),
  };
}

/**
 * The schedule of a recurring invoice sent without an interval: its recurring prices' (the spec's
 * recurring flow sends only `invoiceType` and the lines' prices), which `assertScheduleFits` then
 * holds every line to. Without a recurring price the interval must be sent; a price no invoice
 * schedule bills (weekly, every 2 months) is refused naming `field`.
 */
function scheduleOfPrices(field: string, linePrices: readonly ScheduledPrice[]): InvoiceRecurring {
  const price = linePrices.find((p) => p.type === 'recurring');
  if (!price)
    throw new ValidationError(
      'interval',
      'is required for a recurring invoice whose lines have no recurring price: month, quarter, half-year or year',
      'parameter_missing',
    );
  const { months, bills } = priceSchedule(price);
  if (months === null || !INVOICE_MONTHS.includes(months))
    throw new ValidationError(
      field,
      `price ${price.id} bills ${bills}, but a recurring invoice bills monthly, quarterly, half-yearly or yearly: use a price on one of those schedules`,
    );
  return { interval: 'month', intervalCount: months as RecurringIntervalCount };
}

/**
 * A recurring invoice is the first bill of a subscription that bills on the invoice's schedule:
 * a recurring price on another schedule (every 2 years on a monthly invoice) would be billed, and
 * shown, on the invoice's. Refused, naming `field`; a one-time price is billed each period as it is.
 */
/**
 * An invoice is in its lines' currency: a `currency` sent must be it (the spec names the field; the
 * lines' prices decide, so a disagreement is refused rather than one of the two silently taken).
 */
function assertCurrencyOfLines(sent: string | undefined, ofLines: string): void {
  if (sent !== undefined && sent !== ofLines)
    throw new ValidationError(
      'currency',
      `is ${sent}, but the line items are in ${ofLines}: an invoice is in its line items' currency`,
    );
}

function assertScheduleFits(field: string, recurring: Invoice['recurring'], linePrices: readonly ScheduledPrice[]) {
  if (!recurring) return;
  for (const price of linePrices) {
    if (price.type !== 'recurring') continue;
    const { months, bills } = priceSchedule(price);
    if (months === recurring.intervalCount) continue;
    throw new ValidationError(
      field,
      `price ${price.id} bills ${bills}, but this recurring invoice bills ${everyMonths(recurring.intervalCount)}: its subscription bills one schedule; use prices of the invoice's interval, or set the interval to the prices'`,
    );
  }
}

export type InvoiceRouteDeps = ApiDeps & { createCheckoutSession: CreateCheckoutSession; mailer: Mailer };

const STATUS_ERRORS: ErrorSpec = {
  status: 400,
  codes: ['status_transition_invalid'],
  description: "The invoice's status forbids the operation (the message names it)",
};
const PARTIALLY_PAID: ErrorSpec = {
  status: 400,
  codes: ['invoice_partially_paid'],
  description:
    'A checkout session of the invoice has received part of its amount: it cannot be voided; mark it paid or uncollectible instead',
};
const NOT_PAYABLE: ErrorSpec = {
  status: 400,
  codes: ['amount_not_payable'],
  description: 'No asset can take the total exactly (its decimals cannot hold it): nothing is finalized',
};
/** What resolving and taxing the lines can refuse (a price, product or tax rate that is not the tenant's, or inactive). */
const LINE_ERRORS = ['resource_missing', 'product_inactive', 'tax_rate_inactive', 'parameters_exclusive'];
const NO_PAYMENT_METHOD_ERRORS: ErrorSpec = {
  status: 400,
  codes: [NO_PAYMENT_METHOD, 'parameter_invalid'],
  description:
    "A network or asset the draft is restricted to (`paymentMethods`) has no payment method of the organization (its withdrawal address was removed since), an asset is unknown, off the draft's networks or not in its currency, its `paymentSetting.preferredChainId` is no longer one of its networks with a payment method that can be paid and an asset in its currency, or no network at all would take it (the organization has no wallet address, or none on a network with an asset in its currency): nothing is finalized; the message names the field",
};
const WALLET_INVALID_ERRORS: ErrorSpec = walletInvalid("the invoice's pay page");
const NUMBER_IN_USE: ErrorSpec = {
  status: 409,
  codes: ['invoice_number_in_use'],
  description: 'The invoice number is taken by another invoice',
};

/**
 * `/api/v1/invoices`: drafts are created, edited and deleted; finalizing opens an invoice for
 * payment (its hosted page `/invoices/{id}`, pay link `…/pay`); send mails it to the customer; pay marks it paid
 * out of band; void and mark-uncollectible close it; duplicate copies it into a new draft. A
 * transition the invoice's status forbids is a 400 naming that status.
 */
export function invoiceRoutes(deps: InvoiceRouteDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1/invoices' });
  const invoices = deps.readStore.collection<InvoiceDoc>(INVOICES);
  const customers = deps.readStore.collection<CustomerDoc>(CUSTOMERS);
  const orgs = deps.readStore.collection<OrganizationDoc>(COLLECTIONS.organizations);
  const prices = deps.readStore.collection<PriceDoc>(PRICES);
  const subscriptions = deps.readStore.collection<SubscriptionDoc>(SUBSCRIPTIONS);
  /** The catalog prices of an invoice's lines (a line without one, or whose price is gone, has none to check). */
  const pricesOfLines = async (lines: readonly InvoiceLineItem[]): Promise<ScheduledPrice[]> => {
    const found = await Promise.all(lines.map((line) => (line.priceId ? prices.get(line.priceId) : null)));
    return found.filter((price) => price !== null);
  };
  const products = deps.readStore.collection<ProductDoc>(PRODUCTS);

  /**
   * An invoice as the reference shows it: its customer, the organization's payment setting it is
   * paid under, and each line's catalog price. `autoAdvance` is true for the invoices subscription
   * billing makes (finalized and sent without the merchant); an API draft waits for finalize.
   * A draft's `url` stays null: its hosted page exists only once it is finalized.
   */
  async function present(doc: InvoiceDoc) {
    const [customer, org] = await Promise.all([
      customers.get(doc.customerId),
      orgs.get(organizationRecordId(doc.organizationId, doc.environment)),
    ]);
    const view = publicInvoice(doc);
    // The public view's lines (with their tax fields), each with its catalog price.
    const data = await Promise.all(
      view.lineItems.data.map(async (line) => {
        const price = line.priceId ? await prices.get(line.priceId) : null;
        const product = price ? await products.get(price.productId) : null;
        if (!price) return { ...line, price: null };
        const { _id, ...rest } = price;
        return {
          ...line,
          price: {
            ...rest,
            product: product ? { id: product.id, name: product.name, isActive: product.isActive } : null,
          },
        };
      }),
    );
    const paymentSettingId = org ? org.id : null;
    // The reference shows an invoice's networks as its payment setting's allowedChains.
    const allowedChains = doc.paymentMethods.chainIds.map((chainId) => ({ chainId }));
    const preferred = doc.preferredChainId === undefined ? {} : { preferredChainId: doc.preferredChainId };
    return {
      ...view,
      lineItems: { ...view.lineItems, data },
      customer: customer ? presentCustomer(customer) : null,
      // Renewals are finalized and sent by Weir; a series' first invoice (which names its subscription too) by the merchant.
      autoAdvance: doc.billingReason === 'subscription_cycle',
      paymentSettingId,
      paymentSetting: org ? { id: org.id, ...org.paymentSetting, ...preferred, allowedChains } : null,
    };
  }
  const lineItemResolver = createLineItemResolver({
    readStore: deps.readStore,
    commands: deps.commands,
    rail: deps.rail,
  });

  /** What the payability checks read of the tenant: Weir's networks and the organization's payment methods. */
  const payability = async (tenant: { organizationId: string; environment: string }): Promise<PayabilityDeps> => ({
    rail: deps.rail,
    organization: await orgs.get(organizationRecordId(tenant.organizationId, tenant.environment as Environment)),
  });
  const assertPaymentMethodsAvailable = async (
    tenant: { organizationId: string; environment: string },
    named: NamedMethods,
    next: Pick<Invoice, 'paymentMethods'>,
  ): Promise<void> => {
    if (named.chains.length === 0 && named.assets.length === 0) return;
    assertMethodsAvailable(await payability(tenant), tenant.environment as Environment, named, next);
  };
  const assertAssetsPayCurrency = (environment: string, currency: string, named: NamedMethods['assets']): void =>
    assertAssetsInCurrency(deps, environment as Environment, currency, named);
  /** The check of what a create or update body sets of the networks and assets. */
  const assertBodyPayable = async (
    ctx: ApiContext,
    body: InvoiceBody,
    next: Pick<Invoice, 'paymentMethods'>,
    networksChange: boolean,
  ): Promise<void> => {
    if (networksChange)
      await assertPaymentMethodsAvailable(ctx.state.tenant, sentMethods(body, next.paymentMethods), next);
  };
  /**
   * The check of the preferred chain a create or update body sends, or a draft keeps while `change`
   * (its networks, or its lines' currency) changes: the refusal then says to send one with them.
   */
  const assertBodyPreferred = async (
    ctx: ApiContext,
    body: InvoiceBody,
    next: Pick<Invoice, 'paymentMethods' | 'preferredChainId' | 'currency'>,
    change: 'networks' | 'lineItems' | null,
  ): Promise<void> => {
    const sent = body.paymentSetting?.preferredChainId !== undefined;
    if (!sent && change === null) return;
    const chainsBy = body.paymentSetting?.allowedChains?.length ? 'paymentSetting.allowedChains' : undefined;
    const { tenant } = ctx.state;
    const hint = sent ? '' : `, sending it with the new ${change}`;
    assertPreferredOffered(await payability(tenant), tenant.environment as Environment, next, hint, chainsBy);
  };

  const load = async (ctx: ApiContext, id: string): Promise<InvoiceDoc> => {
    const doc = isUuid(id) ? await invoices.get(id) : null;
    if (!ownedBy(ctx, doc) || doc.deletedAt !== null) throw new NotFoundError('invoice', id);
    return doc;
  };
  /**
   * What a draft must be before it opens: due from today and not before its issue date, payable
   * (`assertPayableAtFinalize`, the check subscription billing makes of a renewal too), and a
   * recurring one's prices on its schedule (a draft written before these were checked, or left
   * until its due date passed).
   */
  const assertFinalizable = async (invoice: InvoiceDoc, terms: RenewalTerms): Promise<void> => {
    const dated = terms.dueDate === undefined ? invoice : { ...invoice, dueDate: terms.dueDate };
    assertDueDateFits(dated, new Date(deps.clock.now()).toISOString());
    assertPayableAtFinalize(await payability(invoice), invoice);
    if (invoice.invoiceType === 'recurring')
      assertScheduleFits('lineItems', invoice.recurring, await pricesOfLines(invoice.lineItems.data));
  };
  /**
   * What finalizing a subscription's renewal draft (a draft only when Weir could not finalize it, see
   * `lastFinalizationError`) takes from its subscription: its successor on the subscription's calendar,
   * and a due date when its own has passed. Nothing for any other draft.
   */
  const renewalTerms = async (invoice: InvoiceDoc): Promise<RenewalTerms | null> => {
    if (invoice.status !== 'draft' || invoice.billingReason !== 'subscription_cycle' || !invoice.subscriptionId)
      return null;
    const subscription = await subscriptions.get(invoice.subscriptionId);
    if (!subscription) return {};
    // An older draft (a later renewal was issued since, see `letsNextRenewalIssue`) is re-dated alike;
    // its successor exists already, so it announces none.
    const bill = subscription.latestInvoice;
    const now = deps.clock.now();
    // Overdue already: due the subscription's days after today, as Stripe dates a subscription's
    // invoice from its finalize (days_until_due), rather than refused or opened overdue (past due at once).
    // Zero days is today, payable all of it, as a renewal issued with 0 days is (`dueDaysAfter`).
    const redated = isOverdue(invoice, now) ? { dueDate: dueDaysAfter(now, subscription.daysUntilDue) } : {};
    // Its subscription ended since: the series ends with it, it announces no successor.
    if (hasEnded(subscription)) return { nextIssueDate: null, ...redated };
    return bill?.id === invoice.id ? { nextIssueDate: bill.periodEnd, ...redated } : redated;
  };
  /**
   * How finalize opens a draft: a renewal is finalized as its billing would have (`renewalTerms`),
   * sent too (the mail dispatcher mails it to the customer); any other is only finalized.
   */
  const finalizeCommand = (invoice: InvoiceDoc, terms: RenewalTerms | null): InvoiceCommand => {
    const url = invoicePageUrl(deps.publicUrl, invoice.id);
    if (terms === null) return { type: 'FinalizeInvoice', url };
    return { type: 'SendInvoice', to: null, url, mailed: false, ...terms };
  };
  const run = async (ctx: ApiContext, id: string, command: InvoiceCommand): Promise<InvoiceDoc> => {
    await commandFor(deps, ctx, invoiceAggregate, id, command);
    return (await invoices.get(id))!;
  };
  const commandContext = (ctx: ApiContext) => ({
    organizationId: ctx.state.tenant.organizationId,
    environment: ctx.state.tenant.environment,
    actor: ctx.state.tenant.actor,
    ...(ctx.state.tenant.clientAddress ? { clientAddress: ctx.state.tenant.clientAddress } : {}),
  });

  /**
   * The lines with their taxes: each line's own `taxRateIds`, else `defaultTaxRateIds` (the invoice's).
   * `held`: the prices and rates the draft being updated holds (`heldTaxRates`), taken again though deactivated since.
   */
  async function resolveLines(
    ctx: ApiContext,
    input: InvoiceLineItemsInput,
    now: string,
    defaultTaxRateIds: string[] | undefined,
    held?: HeldTaxRates,
  ) {
    const { tenant } = ctx.state;
    const resolved = await lineItemResolver.resolve(
      input,
      { organizationId: tenant.organizationId, environment: tenant.environment },
      now,
      idsOf(ctx),
      held && new Set(held.byPrice.keys()),
    );
    const currency = resolved[0]!.price.currency;
    const taxes = await lineTaxes(
      deps.readStore,
      tenant,
      defaultTaxRateIds,
      resolved.map((r) => ({
        amount: BigInt(r.price.unitAmount) * BigInt(r.quantity),
        taxRateIds: r.taxRateIds,
        ...(held && !r.createPrice ? { heldTaxRateIds: held.byPrice.get(r.price.id) } : {}),
      })),
      taxDecimals(deps.rail.networks(tenant.environment), currency),
      held?.defaults,
    );
    const lineItems: InvoiceLineItem[] = resolved.map((r, i) => {
      const subtotal = BigInt(r.price.unitAmount) * BigInt(r.quantity);
      const tax = taxes?.[i];
      return {
        description: r.product.name,
        priceId: r.price.id,
        quantity: r.quantity,
        unitAmount: r.price.unitAmount,
        amountTotal: (subtotal + (tax?.amountExclusive ?? 0n)).toString(),
        ...(tax ? { amountTax: tax.amountTax.toString(), taxRates: tax.taxRates } : {}),
      };
    });
    return { resolved, lineItems, currency };
  }

  /**
   * A draft's lines taxed again with new invoice-level `taxRateIds`: lines that named their own
   * rates keep them; the others take the new ones.
   */
  async function retaxLines(ctx: ApiContext, invoice: Invoice, taxRateIds: string[]): Promise<InvoiceLineItem[]> {
    const hadDefaults = (invoice.taxRateIds?.length ?? 0) > 0;
    const lines = invoice.lineItems.data.map((line) => {
      const own =
        line.taxRates && (line.taxRates.some((r) => !r.isDefault) || (line.taxRates.length === 0 && hadDefaults));
      return {
        amount: BigInt(line.unitAmount) * BigInt(line.quantity),
        ...(own ? { taxRates: line.taxRates!.map((r) => ({ ...r, percentage: String(r.percentage) })) } : {}),
      };
    });
    const taxes = await lineTaxes(
      deps.readStore,
      ctx.state.tenant,
      taxRateIds,
      lines,
      taxDecimals(deps.rail.networks(ctx.state.tenant.environment), invoice.currency),
      heldTaxRates(invoice).defaults,
    );
    return invoice.lineItems.data.map((line, i) => {
      const { amountTax: _t, taxRates: _r, ...bare } = line;
      const tax = taxes?.[i];
      return {
        ...bare,
        amountTotal: (lines[i]!.amount + (tax?.amountExclusive ?? 0n)).toString(),
        ...(tax ? { amountTax: tax.amountTax.toString(), taxRates: tax.taxRates } : {}),
      };
    });
  }

  /**
   * The tax rates a draft holds: its own (`taxRateIds`), and those each of its lines' prices is
   * taxed with. An update may send them again though deactivated since (a rate is retired for new
   * uses, as Stripe's archived rates are), so a draft using one can still be edited, as its prices
   * (and their products) can though deactivated since; a line holds
   * only its price's, so a rate is never carried onto other goods. By price, not index: a line
   * removed before it moves the others.
   */
  function heldTaxRates(invoice: Invoice): HeldTaxRates {
    const byPrice = new Map<string, Set<string>>();
    for (const line of invoice.lineItems.data) {
      if (!line.priceId) continue;
      const ids = byPrice.get(line.priceId) ?? new Set<string>();
      for (const rate of line.taxRates ?? []) ids.add(rate.id);
      byPrice.set(line.priceId, ids);
    }
    return { defaults: new Set(invoice.taxRateIds ?? []), byPrice };
  }

  /** Validate the whole draft (the decider, dry), then reserve its number and write it. */
  async function createDraft(
    ctx: ApiContext,
    invoice: Invoice,
    wantedNumber: string | undefined,
    commit: () => Promise<void>,
  ): Promise<InvoiceDoc> {
    decideInvoice(invoiceAggregate.initialState(), { type: 'CreateInvoice', invoice }, { now: invoice.createdAt });
    const number = await claimInvoiceNumber(
      { commands: deps.commands, invoices },
      commandContext(ctx),
      invoice.id,
      wantedNumber,
    );
    await commit();
    return run(ctx, invoice.id, { type: 'CreateInvoice', invoice: { ...invoice, number } });
  }

  const blankInvoice = (ctx: ApiContext, now: string): Invoice =>
    newInvoiceDraft({
      id: idsOf(ctx)(),
      organizationId: ctx.state.tenant.organizationId,
      environment: ctx.state.tenant.environment as Environment,
      createdAt: now,
    });

  const api = schemaRoutes(router, { tag: 'Invoices', auth: 'secretKey' });
  const params = idParams('invoice');
  /** A status change with no body: load, decide, answer the invoice. */
  const transition = (
    path: string,
    summary: string,
    command: InvoiceCommand,
    options: { description?: string; errors?: ErrorSpec[] } = {},
  ) =>
    api.route(
      {
        method: 'post',
        path,
        summary,
        ...(options.description ? { description: options.description } : {}),
        params,
        response: InvoiceSchema,
        errors: [notFound('invoice'), STATUS_ERRORS, ...(options.errors ?? [])],
      },
      async (ctx, { params: { id } }) => {
        const invoice = await load(ctx, id);
        return present(await run(ctx, invoice.id, command));
      },
    );

  api.route(
    {
      method: 'post',
      path: '/',
      summary: 'Create a draft invoice',
      description:
        'A draft for an existing customer, with 1 to 20 lines in one currency. Its number is the next of the organization’s invoice setting unless `number` is sent; its hosted page (`url`) exists once it is finalized.',
      body: InvoiceCreate,
      response: InvoiceSchema,
      errors: [invalidFields(...LINE_ERRORS, NO_PAYMENT_METHOD), NUMBER_IN_USE],
      examples: { request: INVOICE_CREATE_EXAMPLE, response: INVOICE_EXAMPLE },
    },
    async (ctx, { body }) => {
      const nowMs = deps.clock.now();
      const now = new Date(nowMs).toISOString();
      const fields = invoiceFieldsOf(body, nowMs, null);
      const paymentMethods = fields.paymentMethods ?? { chainIds: [], assetIds: [] };
      await assertBodyPayable(ctx, body, { paymentMethods }, fields.paymentMethods !== undefined);
      const dueDate = fields.dueDate ?? daysAfterIssue(DEFAULT_DAYS_UNTIL_DUE, fields.issueDate ?? null, nowMs);
      assertDueDateFits({ dueDate, issueDate: fields.issueDate ?? null }, now, dueField(body));
      const { resolved, lineItems, currency } = await resolveLines(ctx, body.lineItems, now, body.taxRateIds);
      assertCurrencyOfLines(body.currency, currency);
      if (fields.paymentMethods)
        assertAssetsPayCurrency(ctx.state.tenant.environment, currency, storedMethods(fields.paymentMethods).assets);
      await assertBodyPreferred(
        ctx,
        body,
        { paymentMethods, preferredChainId: fields.preferredChainId ?? undefined, currency },
        null,
      );
      const linePrices = resolved.map((r) => r.price);
      if (fields.invoiceType === 'recurring' && !fields.recurring)
        fields.recurring = scheduleOfPrices('lineItems', linePrices);
      assertScheduleFits('lineItems', fields.recurring ?? null, linePrices);
      // The organization's invoice setting gives the description and footer a request leaves out.
      const defaults = await invoiceNumbering(deps.commands, ctx.state.tenant);
      const invoice: Invoice = {
        ...withChanges(
          { ...blankInvoice(ctx, now), description: defaults.description, footer: defaults.footer },
          fields,
        ),
        customerId: body.customerId,
        currency,
        lineItems: { object: 'list', data: lineItems },
        ...(body.taxRateIds ? { taxRateIds: body.taxRateIds } : {}),
        dueDate,
      };
      // The customer last of the checks, after the number's: a refusal naming only it says the rest
      // passed (the dashboard creates a new customer only then, so a refused invoice writes nothing).
      if (body.number !== undefined)
        await assertInvoiceNumberFree(deps.commands, ctx.state.tenant, invoice.id, body.number);
      await requireTenantCustomer(customers, ctx.state.tenant, body.customerId);
      const doc = await createDraft(ctx, invoice, body.number, async () => {
        await lineItemResolver.commit(resolved, commandContext(ctx));
      });
      return present(doc);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/',
      summary: 'List invoices',
      description:
        'Newest first; filter by `status`, `customerId`, `invoiceType`, `collectionMethod`, `number`, `subscriptionId` and `ids`.',
      query: InvoiceListQuery,
      response: listOf(InvoiceSchema),
      errors: [invalidFields()],
    },
    async (ctx) => {
      const page = await listPage(ctx, invoices, {
        base: { deletedAt: null },
        present: (doc) => doc,
        filters: INVOICE_LIST_FILTERS,
        dateFields: ['dueDate'],
      });
      return { ...page, data: await Promise.all(page.data.map(present)) };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/:id',
      summary: 'Read an invoice',
      params,
      response: InvoiceSchema,
      errors: [notFound('invoice')],
    },
    async (ctx, { params: { id } }) => present(await load(ctx, id)),
  );

  api.route(
    {
      method: 'put',
      path: '/:id',
      summary: 'Update a draft invoice',
      description:
        "Only a draft changes; only the fields sent change (null clears a text field). New `lineItems` replace every line; new `taxRateIds` tax the lines again. A price the draft already sells (`priceId`) may be sent again though it or its product was deactivated since, as may a tax rate it holds (its own `taxRateIds`, or a line's for the same price); elsewhere an inactive price, product or rate is refused (400).",
      params,
      body: InvoiceUpdate,
      response: InvoiceSchema,
      errors: [invalidFields(...LINE_ERRORS, NO_PAYMENT_METHOD), notFound('invoice'), STATUS_ERRORS, NUMBER_IN_USE],
    },
    async (ctx, { params: { id }, body }) => {
      const invoice = await load(ctx, id);
      // The decider names the status when the invoice is no longer a draft; nothing is written first.
      if (invoice.status !== 'draft') {
        await run(ctx, invoice.id, { type: 'UpdateInvoice', changes: {} });
        return undefined;
      }
      const nowMs = deps.clock.now();
      const changes: InvoiceChanges = invoiceFieldsOf(body, nowMs, invoice);
      await assertBodyPayable(ctx, body, withChanges(invoice, changes), changes.paymentMethods !== undefined);
      if (changes.dueDate !== undefined || changes.issueDate !== undefined)
        assertDueDateFits(
          {
            dueDate: changes.dueDate ?? invoice.dueDate,
            issueDate: changes.issueDate === undefined ? invoice.issueDate : changes.issueDate,
          },
          new Date(nowMs).toISOString(),
          dueField(body),
        );
      if (body.customerId !== undefined) changes.customerId = body.customerId;
      let commitLines: (() => Promise<void>) | null = null;
      let resolvedPrices: ScheduledPrice[] | null = null;
      if (body.taxRateIds !== undefined) changes.taxRateIds = body.taxRateIds;
      if (body.lineItems !== undefined) {
        const { resolved, lineItems, currency } = await resolveLines(
          ctx,
          body.lineItems,
          new Date(nowMs).toISOString(),
          body.taxRateIds ?? invoice.taxRateIds,
          heldTaxRates(invoice),
        );
        changes.lineItems = { object: 'list', data: lineItems };
        changes.currency = currency;
        resolvedPrices = resolved.map((r) => r.price);
        commitLines = async () => {
          await lineItemResolver.commit(resolved, commandContext(ctx));
        };
      } else if (body.taxRateIds !== undefined) {
        changes.lineItems = { object: 'list', data: await retaxLines(ctx, invoice, body.taxRateIds) };
      }
      assertCurrencyOfLines(body.currency, changes.currency ?? invoice.currency);
      if (changes.paymentMethods !== undefined || changes.currency !== undefined)
        assertAssetsPayCurrency(
          ctx.state.tenant.environment,
          changes.currency ?? invoice.currency,
          storedMethods(changes.paymentMethods ?? invoice.paymentMethods, body.paymentMethods ? undefined : KEPT_ASSETS)
            .assets,
        );
      const currencyChange = changes.currency !== undefined && changes.currency !== invoice.currency;
      await assertBodyPreferred(
        ctx,
        body,
        withChanges(invoice, changes),
        changes.paymentMethods !== undefined ? 'networks' : currencyChange ? 'lineItems' : null,
      );
      if (Object.keys(changes).length === 0 && body.number === undefined)
        throw new ValidationError(null, 'nothing to update: send at least one invoice field');
      if ((changes.invoiceType ?? invoice.invoiceType) === 'recurring') {
        const linePrices = resolvedPrices ?? (await pricesOfLines(invoice.lineItems.data));
        let recurring = changes.recurring === undefined ? invoice.recurring : changes.recurring;
        if (!recurring) recurring = changes.recurring = scheduleOfPrices('lineItems', linePrices);
        assertScheduleFits(body.lineItems !== undefined ? 'lineItems' : 'interval', recurring, linePrices);
      }
      decideInvoice(
        invoiceAggregate.initialState(),
        { type: 'CreateInvoice', invoice: withChanges(invoice, changes) },
        { now: invoice.createdAt },
      );
      // The customer last of the checks, after the number's, as on create.
      if (body.number !== undefined && body.number !== invoice.number)
        await assertInvoiceNumberFree(deps.commands, ctx.state.tenant, invoice.id, body.number);
      if (body.customerId !== undefined) await requireTenantCustomer(customers, ctx.state.tenant, body.customerId);
      if (body.number !== undefined && body.number !== invoice.number)
        changes.number = await claimInvoiceNumber(
          { commands: deps.commands, invoices },
          commandContext(ctx),
          invoice.id,
          body.number,
        );
      await commitLines?.();
      return present(await run(ctx, invoice.id, { type: 'UpdateInvoice', changes }));
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/:id',
      summary: 'Delete a draft invoice',
      params,
      response: DeletedMessage,
      errors: [notFound('invoice'), STATUS_ERRORS],
    },
    async (ctx, { params: { id } }) => {
      const invoice = await load(ctx, id);
      await run(ctx, invoice.id, { type: 'DeleteInvoice' });
      return { message: `invoice ${invoice.id} deleted`, statusCode: 200 };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/:id/finalize',
      summary: 'Finalize a draft invoice',
      description:
        "Opens it for payment: its number and lines are frozen and its hosted page (`url`) exists. An invoice with nothing to pay is paid at once. A due date before today or before its issue date is refused (400 naming `dueDate`): move it first; so is one no network would take (the organization's wallets, its `paymentMethods`, its currency and total: 400 naming the field), or whose pay page would pay into a wallet of the organization that is broken (422 `payment_method_invalid`, naming the wallet). A subscription's renewal left a draft because Weir could not finalize it (`lastFinalizationError`) is also sent: mailed to its customer, as Weir sends renewals, its next invoice on the subscription's calendar; past its due date, it is due the subscription's `daysUntilDue` from now (0: the end of today) instead of refused, and the subscription's bill (`latestInvoice`, `draft` until then, or `missed` where an older Weir let it lapse) opens due then, the subscription `active` again.",
      params,
      response: InvoiceSchema,
      errors: [notFound('invoice'), STATUS_ERRORS, NOT_PAYABLE, NO_PAYMENT_METHOD_ERRORS, WALLET_INVALID_ERRORS],
    },
    async (ctx, { params: { id } }) => {
      const invoice = await load(ctx, id);
      const terms = await renewalTerms(invoice);
      if (invoice.status === 'draft') await assertFinalizable(invoice, terms ?? {});
      return present(await run(ctx, invoice.id, finalizeCommand(invoice, terms)));
    },
  );

  api.route(
    {
      method: 'post',
      path: '/:id/send',
      summary: 'Send an invoice',
      description:
        "Finalizes a draft, then mails the invoice with its pay link to `to` (default: the customer's address) and `cc`. An invoice with nothing to pay is paid at finalize and not mailed (its receipt is). A subscription's renewal draft is finalized as by `POST …/finalize` (its subscription's calendar, and a new due date when its own has passed).",
      params,
      body: InvoiceSendRequest,
      bodyOptional: true,
      response: InvoiceSchema,
      errors: [
        invalidFields(),
        notFound('invoice'),
        STATUS_ERRORS,
        NOT_PAYABLE,
        NO_PAYMENT_METHOD_ERRORS,
        WALLET_INVALID_ERRORS,
        { status: 502, codes: ['mail_delivery_failed'], description: 'The mail server refused the mail' },
      ],
    },
    async (ctx, { params: { id }, body }) => {
      const invoice = await load(ctx, id);
      const url = invoicePageUrl(deps.publicUrl, invoice.id);
      if (invoice.status !== 'draft' && invoice.status !== 'open') {
        await run(ctx, invoice.id, { type: 'SendInvoice', to: null, url, mailed: true });
        return undefined;
      }
      const known = await findTenantCustomer(customers, ctx.state.tenant, invoice.customerId);
      const to = body.to ?? known?.email ?? null;
      if (!to)
        throw new ValidationError(
          'to',
          "is required: the invoice's customer has no email address on record",
          'parameter_missing',
        );
      const cc = body.cc ?? [];
      // Finalize first (numbers and the pay link are frozen), mail, then record that it was sent.
      // A renewal draft opens on its subscription's calendar, as its finalize does.
      const terms = (await renewalTerms(invoice)) ?? {};
      if (invoice.status === 'draft') await assertFinalizable(invoice, terms);
      const open =
        invoice.status === 'draft' ? await run(ctx, invoice.id, { type: 'FinalizeInvoice', url, ...terms }) : invoice;
      // Nothing to pay: finalizing paid it, so there is no invoice to mail; its receipt follows the payment.
      if (open.status === 'paid') return present(open);
      const org = await orgs.get(organizationRecordId(open.organizationId, open.environment));
      const mail = renderInvoiceMail({
        kind: 'invoice',
        invoice: open,
        organization: org,
        customerName: known?.name ?? null,
        payUrl: open.url ?? url,
        now: deps.clock.now(),
      });
      try {
        for (const recipient of [to, ...cc]) await deps.mailer.send({ to: recipient, ...mail });
      } catch (error) {
        throw new WeirError(
          502,
          'Bad Gateway',
          'mail_delivery_failed',
          `the invoice is ${open.status} but could not be mailed: ${(error as Error).message}`,
        );
      }
      return present(
        await run(ctx, invoice.id, { type: 'SendInvoice', to: body.to === undefined ? null : to, url, mailed: true }),
      );
    },
  );

  transition(
    '/:id/pay',
    'Mark an invoice paid out of band',
    { type: 'MarkInvoicePaid' },
    {
      description: 'For an open invoice paid outside Weir: the rest of its amount is recorded as paid.',
    },
  );
  transition(
    '/:id/void',
    'Void an invoice',
    { type: 'VoidInvoice' },
    {
      description:
        'For an open or uncollectible invoice that has received nothing: once money has arrived (a partial payment), it is marked paid or uncollectible instead.',
      errors: [PARTIALLY_PAID],
    },
  );
  transition('/:id/mark-uncollectible', 'Mark an invoice uncollectible', { type: 'MarkInvoiceUncollectible' });

  api.route(
    {
      method: 'post',
      path: '/:id/duplicate',
      summary: 'Duplicate an invoice',
      description:
        "A new draft with the same customer, lines and settings, a fresh number, due as far ahead as the original was. A subscription's renewal invoice copies as a one-time invoice (a re-bill of its lines), so its copy starts no second subscription; the first invoice of a recurring series copies as a new series.",
      params,
      response: InvoiceSchema,
      errors: [notFound('invoice')],
    },
    async (ctx, { params: { id } }) => {
      const source = await load(ctx, id);
      const nowMs = deps.clock.now();
      const now = new Date(nowMs).toISOString();
      // The original's days until due, counted from when they were set: its issue date, unless finalize gave it
      // one (then its creation). The copy counts them as `daysUntilDue` does: from now, having no issue date.
      const setIssueDate = source.issueDate !== null && source.issueDate !== source.finalizedAt;
      const countedFrom = Date.parse(setIssueDate ? source.issueDate! : source.createdAt);
      const days = Math.max(0, daysUntilDue(source.dueDate, countedFrom));
      // A subscription's renewal copies as a plain re-bill: recurring, it would start a second series
      // (and subscription) for the same customer. A merchant's own series-starting invoice copies as a new series.
      const renewal = source.billingReason === 'subscription_cycle';
      const invoice: Invoice = {
        ...blankInvoice(ctx, now),
        customerId: source.customerId,
        description: source.description,
        currency: source.currency,
        lineItems: { object: 'list', data: source.lineItems.data.map((item) => ({ ...item })) },
        ...(source.taxRateIds ? { taxRateIds: [...source.taxRateIds] } : {}),
        dueDate: daysAfterIssue(days, null, nowMs),
        memo: source.memo,
        footer: source.footer,
        invoiceType: renewal ? 'one_time' : source.invoiceType,
        recurring: renewal ? null : source.recurring,
        collectionMethod: source.collectionMethod,
        paymentMethods: source.paymentMethods,
        ...(source.preferredChainId === undefined ? {} : { preferredChainId: source.preferredChainId }),
        reminders: source.reminders,
        metadata: { ...source.metadata },
      };
      return present(await createDraft(ctx, invoice, undefined, async () => {}));
    },
  );

  return router;
}
