import Router from '@koa/router';
import { invoiceAggregate } from '../../../machines/invoice.aggregate.ts';
import { decideInvoice, newInvoiceDraft, type InvoiceCommand } from '../../../machines/invoice.decide.ts';
import type {
  Invoice,
  InvoiceChanges,
  InvoiceCollectionMethod,
  InvoiceLineItem,
  InvoicePaymentMethods,
  InvoiceRecurring,
  InvoiceReminderSettings,
  RecurringIntervalCount,
} from '../../../machines/invoice.types.ts';
import type { CreateCheckoutSession } from '../../actors/create-checkout-session.ts';
import { isEmail } from '../../actors/customer.ts';
import { claimInvoiceNumber, invoiceNumbering } from '../../actors/invoice-number-claim.ts';
import { createLineItemResolver } from '../../actors/line-items.ts';
import { lineTaxes } from '../../actors/line-taxes.ts';
import { organizationRecordId } from '../../actors/organization.ts';
import { findTenantCustomer, requireTenantCustomer } from '../../actors/tenant-customer.ts';
import { assetsPayingExactly } from '../../chain-ingest/rail.ts';
import type { Environment } from '../../event-store/event-store.ts';
import { renderInvoiceMail } from '../../mail/invoice-mail.ts';
import type { Mailer } from '../../mail/mailer.ts';
import { invoicePageUrl } from '../../hosted/urls.ts';
import { COLLECTIONS, type OrganizationDoc } from '../../projections/collections.ts';
import { PRICES, PRODUCTS, type PriceDoc, type ProductDoc } from '../../projections/catalog.projection.ts';
import { CUSTOMERS, type CustomerDoc } from '../../projections/customers.projection.ts';
import { INVOICES, publicInvoice, type InvoiceDoc } from '../../projections/invoices.projection.ts';
import { NotFoundError, ValidationError, WeirError } from '../../shared/errors.ts';
import { isUuid } from '../../shared/ids.ts';
import { taxDecimals } from '../../shared/tax.ts';
import {
  asObject,
  optionalArray,
  optionalBoolean,
  optionalEnum,
  optionalInteger,
  optionalMetadata,
  optionalObject,
  optionalString,
  requiredString,
  type Input,
} from '../../shared/input.ts';
import { type ApiContext, type ApiDeps, type ApiState, idsOf } from '../api-context.ts';
import { commandFor, ownedBy } from '../command.ts';
import { listPage } from '../pagination.ts';
import { parseLineItems } from '../schema/checkout-session-create.ts';
import { presentCustomer } from './customers.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const DEFAULT_DAYS_UNTIL_DUE = 30;
const NUMBER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._/#-]{0,63}$/;

/** Dashboard intervals and their month counts. */
const INTERVAL_MONTHS: Record<string, RecurringIntervalCount> = {
  month: 1,
  monthly: 1,
  quarter: 3,
  quarterly: 3,
  'half-year': 6,
  half_year: 6,
  'half-yearly': 6,
  half_yearly: 6,
  semiannual: 6,
  year: 12,
  yearly: 12,
  annually: 12,
  annual: 12,
};

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** A date (`2026-05-01`, midnight UTC) or an ISO 8601 timestamp, as an ISO timestamp. */
export function parseInvoiceDate(raw: string, field: string): string {
  const match = ISO_DATE.exec(raw);
  const fail = () =>
    new ValidationError(field, 'must be a date (2026-05-01) or an ISO 8601 timestamp (2026-05-01T08:00:00Z)');
  if (!match) throw fail();
  const [, year, month, dayOfMonth, hour, minute, second, offset] = match;
  const daysInMonth = new Date(Date.UTC(Number(year), Number(month), 0)).getUTCDate();
  if (Number(month) < 1 || Number(month) > 12 || Number(dayOfMonth) < 1 || Number(dayOfMonth) > daysInMonth)
    throw fail();
  if (hour !== undefined && (Number(hour) > 23 || Number(minute) > 59 || Number(second ?? 0) > 59)) throw fail();
  const time = Date.parse(hour === undefined ? `${raw}T00:00:00Z` : offset === undefined ? `${raw}Z` : raw);
  if (Number.isNaN(time)) throw fail();
  return new Date(time).toISOString();
}

function numberList(o: Input, key: string, path: string): number[] | undefined {
  return optionalArray(o, key, path, { max: 50 })?.map((v, i) => {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1)
      throw new ValidationError(`${path}.${key}[${i}]`, 'must be a positive integer');
    return v;
  });
}

function stringList(o: Input, key: string, path: string): string[] | undefined {
  return optionalArray(o, key, path, { max: 50 })?.map((v, i) => {
    if (typeof v !== 'string' || v.length === 0 || v.length > 200)
      throw new ValidationError(`${path}.${key}[${i}]`, 'must be a non-empty string');
    return v;
  });
}

function dayOffsets(o: Input, key: string, path: string): number[] | undefined {
  return optionalArray(o, key, path, { max: 10 })?.map((v, i) => {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1 || v > 365)
      throw new ValidationError(`${path}.${key}[${i}]`, 'must be a whole number of days from 1 to 365');
    return v;
  });
}

/** The invoice fields of a create or update request; undefined means "not sent". */
type InvoiceFields = {
  dueDate?: string;
  issueDate?: string | null;
  description?: string | null;
  memo?: string | null;
  footer?: string | null;
  invoiceType?: Invoice['invoiceType'];
  recurring?: InvoiceRecurring | null;
  collectionMethod?: InvoiceCollectionMethod;
  paymentMethods?: InvoicePaymentMethods;
  reminders?: InvoiceReminderSettings;
  metadata?: Record<string, string>;
  number?: string;
};

function readFields(body: Input, nowMs: number, current: Invoice | null): InvoiceFields {
  const fields: InvoiceFields = {};
  const dueDate = optionalString(body, 'dueDate', '', { max: 64 });
  const daysUntilDue = optionalInteger(body, 'daysUntilDue', '', { min: 0, max: 3650 });
  if (dueDate !== undefined && daysUntilDue !== undefined)
    throw new ValidationError('dueDate', 'send dueDate or daysUntilDue, not both', 'parameters_exclusive');
  if (dueDate !== undefined) fields.dueDate = parseInvoiceDate(dueDate, 'dueDate');
  if (daysUntilDue !== undefined) fields.dueDate = new Date(nowMs + daysUntilDue * DAY_MS).toISOString();
  if (body.issueDate !== undefined) {
    const issueDate = optionalString(body, 'issueDate', '', { max: 64 });
    fields.issueDate = issueDate === undefined ? null : parseInvoiceDate(issueDate, 'issueDate');
  }
  for (const key of ['description', 'memo', 'footer'] as const) {
    if (body[key] !== undefined) fields[key] = optionalString(body, key, '', { max: 5000 }) ?? null;
  }
  const invoiceType = optionalEnum(body, 'invoiceType', ['one_time', 'recurring'] as const);
  if (invoiceType !== undefined) fields.invoiceType = invoiceType;
  // `interval` (month, quarter, half-year, year) or `recurring: {interval, intervalCount}`.
  const recurringInput = optionalObject(body, 'recurring');
  const intervalName =
    optionalString(body, 'interval', '', { max: 20 }) ??
    (recurringInput ? optionalString(recurringInput, 'interval', 'recurring', { max: 20 }) : undefined);
  if (intervalName !== undefined) {
    const months = INTERVAL_MONTHS[intervalName.toLowerCase()];
    if (months === undefined)
      throw new ValidationError(
        body.interval !== undefined ? 'interval' : 'recurring.interval',
        'must be one of month, quarter, half-year, year',
      );
    const countInput = recurringInput ? optionalInteger(recurringInput, 'intervalCount', 'recurring') : undefined;
    const intervalCount = intervalName.toLowerCase() === 'month' && countInput !== undefined ? countInput : months;
    if (![1, 3, 6, 12].includes(intervalCount))
      throw new ValidationError('recurring.intervalCount', 'must be 1, 3, 6 or 12');
    fields.recurring = { interval: 'month', intervalCount: intervalCount as RecurringIntervalCount };
  }
  const effectiveType = fields.invoiceType ?? current?.invoiceType ?? 'one_time';
  if (effectiveType === 'one_time' && fields.invoiceType === 'one_time') fields.recurring = null;
  if (effectiveType === 'recurring' && fields.recurring === undefined && !current?.recurring) {
    throw new ValidationError(
      'interval',
      'is required for a recurring invoice: month, quarter, half-year or year',
      'parameter_missing',
    );
  }
  if (effectiveType === 'one_time' && fields.recurring)
    throw new ValidationError('interval', 'is only allowed on a recurring invoice (invoiceType recurring)');
  const collectionMethod = optionalEnum(body, 'collectionMethod', ['charge_automatically', 'send_invoice'] as const);
  if (collectionMethod !== undefined) fields.collectionMethod = collectionMethod;
  const methods = optionalObject(body, 'paymentMethods');
  if (methods)
    fields.paymentMethods = {
      chainIds: numberList(methods, 'chainIds', 'paymentMethods') ?? [],
      assetIds: stringList(methods, 'assetIds', 'paymentMethods') ?? [],
    };
  const reminders = optionalObject(body, 'reminders');
  if (reminders) {
    fields.reminders = {
      enabled: optionalBoolean(reminders, 'enabled', 'reminders') ?? true,
      daysBeforeDue: dayOffsets(reminders, 'daysBeforeDue', 'reminders') ?? [],
      daysAfterDue: dayOffsets(reminders, 'daysAfterDue', 'reminders') ?? [],
    };
  }
  const metadata = optionalMetadata(body, 'metadata');
  if (metadata !== undefined) fields.metadata = metadata;
  const number = optionalString(body, 'number', '', {
    min: 1,
    max: 64,
    pattern: NUMBER_PATTERN,
    hint: 'must be 1 to 64 letters, digits or . _ / # -, starting with a letter or digit',
  });
  if (number !== undefined) fields.number = number;
  return fields;
}

export type InvoiceRouteDeps = ApiDeps & { createCheckoutSession: CreateCheckoutSession; mailer: Mailer };

/** Where a customer pays an invoice (the hosted invoice page). */

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
    return {
      ...view,
      lineItems: { ...view.lineItems, data },
      customer: customer ? presentCustomer(customer) : null,
      autoAdvance: doc.subscriptionId !== null,
      paymentSettingId,
      paymentSetting: org ? { id: org.id, ...org.paymentSetting } : null,
    };
  }
  const lineItemResolver = createLineItemResolver({ readStore: deps.readStore, commands: deps.commands });

  const load = async (ctx: ApiContext): Promise<InvoiceDoc> => {
    const id = ctx.params.id!;
    const doc = isUuid(id) ? await invoices.get(id) : null;
    if (!ownedBy(ctx, doc) || doc.deletedAt !== null) throw new NotFoundError('invoice', id);
    return doc;
  };
  /** A total no asset can take exactly would get a pay page that can never be paid: refused before it is finalized. */
  const assertPayable = (invoice: InvoiceDoc): void => {
    const total = BigInt(invoice.amountDue);
    if (total === 0n) return;
    const environment = invoice.environment as Environment;
    const { payable, unpayable } = assetsPayingExactly(
      deps.rail,
      environment,
      invoice.currency,
      total,
      invoice.paymentMethods.chainIds,
    );
    if (payable.length > 0 || unpayable.length === 0) return;
    throw new ValidationError(
      'lineItems',
      `cannot be paid: the total ${invoice.amountDue} (10^-8 ${invoice.currency.toUpperCase()}) cannot be paid exactly in ${unpayable.join(', ')}; use amounts those assets' decimals can hold`,
      'amount_not_payable',
    );
  };
  const run = async (ctx: ApiContext, id: string, command: InvoiceCommand): Promise<InvoiceDoc> => {
    await commandFor(deps, ctx, invoiceAggregate, id, command);
    return (await invoices.get(id))!;
  };
  const commandContext = (ctx: ApiContext) => ({
    organizationId: ctx.state.tenant.organizationId,
    environment: ctx.state.tenant.environment,
    actor: `api_key:${ctx.state.tenant.keyId}`,
  });

  /** The lines with their taxes: each line's own `taxRateIds`, else `defaultTaxRateIds` (the invoice's). */
  async function resolveLines(ctx: ApiContext, input: unknown, now: string, defaultTaxRateIds: unknown) {
    const { tenant } = ctx.state;
    const resolved = await lineItemResolver.resolve(
      parseLineItems(input),
      { organizationId: tenant.organizationId, environment: tenant.environment },
      now,
      idsOf(ctx),
    );
    const currency = resolved[0]!.price.currency;
    const taxes = await lineTaxes(
      deps.readStore,
      tenant,
      defaultTaxRateIds,
      resolved.map((r) => ({ amount: BigInt(r.price.unitAmount) * BigInt(r.quantity), taxRateIds: r.taxRateIds })),
      taxDecimals(deps.rail.networks(tenant.environment), currency),
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
  async function retaxLines(ctx: ApiContext, invoice: Invoice, taxRateIds: unknown): Promise<InvoiceLineItem[]> {
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

  /** The `taxRateIds` a request sets on the invoice (checked when its lines are taxed); undefined when not sent. */
  const taxRateIdsOf = (body: Input): string[] | undefined =>
    body.taxRateIds === undefined || body.taxRateIds === null
      ? undefined
      : Array.isArray(body.taxRateIds)
        ? body.taxRateIds.map(String)
        : [];

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

  router.post('/', async (ctx) => {
    const body = asObject(ctx.state.body, '');
    const nowMs = deps.clock.now();
    const now = new Date(nowMs).toISOString();
    const customerId = requiredString(body, 'customerId', '', { max: 64 });
    await requireTenantCustomer(customers, ctx.state.tenant, customerId);
    const fields = readFields(body, nowMs, null);
    if (body.lineItems === undefined || body.lineItems === null)
      throw new ValidationError('lineItems', 'is required', 'parameter_missing');
    const { resolved, lineItems, currency } = await resolveLines(ctx, body.lineItems, now, body.taxRateIds);
    const { number, ...rest } = fields;
    const taxRateIds = taxRateIdsOf(body);
    // The organization's invoice setting gives the description and footer a request leaves out.
    const defaults = await invoiceNumbering(deps.commands, ctx.state.tenant);
    const invoice: Invoice = {
      ...blankInvoice(ctx, now),
      description: defaults.description,
      footer: defaults.footer,
      ...rest,
      customerId,
      currency,
      lineItems: { object: 'list', data: lineItems },
      ...(taxRateIds ? { taxRateIds } : {}),
      dueDate: fields.dueDate ?? new Date(nowMs + DEFAULT_DAYS_UNTIL_DUE * DAY_MS).toISOString(),
    };
    const doc = await createDraft(ctx, invoice, number, async () => {
      await lineItemResolver.commit(resolved, commandContext(ctx));
    });
    ctx.body = await present(doc);
  });

  router.get('/', async (ctx) => {
    const page = await listPage(ctx, invoices, {
      base: { deletedAt: null },
      present: (doc) => doc,
      filters: {
        ids: { field: 'id', kind: 'csv' },
        status: { values: ['draft', 'open', 'paid', 'void', 'uncollectible'] },
        customerId: {},
        invoiceType: { values: ['one_time', 'recurring'] },
        collectionMethod: { values: ['charge_automatically', 'send_invoice'] },
        number: {},
      },
    });
    ctx.body = { ...page, data: await Promise.all(page.data.map(present)) };
  });

  router.get('/:id', async (ctx) => {
    ctx.body = await present(await load(ctx));
  });

  router.put('/:id', async (ctx) => {
    const invoice = await load(ctx);
    // The decider names the status when the invoice is no longer a draft; nothing is written first.
    if (invoice.status !== 'draft') {
      await run(ctx, invoice.id, { type: 'UpdateInvoice', changes: {} });
      return;
    }
    const body = asObject(ctx.state.body, '');
    const nowMs = deps.clock.now();
    const { number, ...fields } = readFields(body, nowMs, invoice);
    const changes: InvoiceChanges = { ...fields };
    if (body.customerId !== undefined) {
      changes.customerId = requiredString(body, 'customerId', '', { max: 64 });
      await requireTenantCustomer(customers, ctx.state.tenant, changes.customerId);
    }
    let commitLines: (() => Promise<void>) | null = null;
    const taxRateIds = taxRateIdsOf(body);
    if (taxRateIds !== undefined) changes.taxRateIds = taxRateIds;
    if (body.lineItems !== undefined) {
      const { resolved, lineItems, currency } = await resolveLines(
        ctx,
        body.lineItems,
        new Date(nowMs).toISOString(),
        taxRateIds === undefined ? invoice.taxRateIds : body.taxRateIds,
      );
      changes.lineItems = { object: 'list', data: lineItems };
      changes.currency = currency;
      commitLines = async () => {
        await lineItemResolver.commit(resolved, commandContext(ctx));
      };
    } else if (taxRateIds !== undefined) {
      changes.lineItems = { object: 'list', data: await retaxLines(ctx, invoice, body.taxRateIds) };
    }
    if (Object.keys(changes).length === 0 && number === undefined)
      throw new ValidationError(null, 'nothing to update: send at least one invoice field');
    decideInvoice(
      invoiceAggregate.initialState(),
      { type: 'CreateInvoice', invoice: { ...invoice, ...changes } },
      { now: invoice.createdAt },
    );
    if (number !== undefined && number !== invoice.number)
      changes.number = await claimInvoiceNumber(
        { commands: deps.commands, invoices },
        commandContext(ctx),
        invoice.id,
        number,
      );
    await commitLines?.();
    ctx.body = await present(await run(ctx, invoice.id, { type: 'UpdateInvoice', changes }));
  });

  router.delete('/:id', async (ctx) => {
    const invoice = await load(ctx);
    await run(ctx, invoice.id, { type: 'DeleteInvoice' });
    ctx.body = { message: `invoice ${invoice.id} deleted`, statusCode: 200 };
  });

  router.post('/:id/finalize', async (ctx) => {
    const invoice = await load(ctx);
    if (invoice.status === 'draft') assertPayable(invoice);
    ctx.body = await present(
      await run(ctx, invoice.id, { type: 'FinalizeInvoice', url: invoicePageUrl(deps.publicUrl, invoice.id) }),
    );
  });

  router.post('/:id/send', async (ctx) => {
    const invoice = await load(ctx);
    const url = invoicePageUrl(deps.publicUrl, invoice.id);
    if (invoice.status !== 'draft' && invoice.status !== 'open') {
      await run(ctx, invoice.id, { type: 'SendInvoice', to: null, url, mailed: true });
      return;
    }
    const body = ctx.state.body === undefined ? {} : asObject(ctx.state.body, '');
    const known = await findTenantCustomer(customers, ctx.state.tenant, invoice.customerId);
    const to = optionalString(body, 'to', '', { max: 254 }) ?? known?.email ?? null;
    if (!to)
      throw new ValidationError(
        'to',
        "is required: the invoice's customer has no email address on record",
        'parameter_missing',
      );
    if (!isEmail(to)) throw new ValidationError('to', 'must be an email address');
    const cc = stringList(body, 'cc', '') ?? [];
    for (const [i, address] of cc.entries())
      if (!isEmail(address)) throw new ValidationError(`cc[${i}]`, 'must be an email address');
    // Finalize first (numbers and the pay link are frozen), mail, then record that it was sent.
    if (invoice.status === 'draft') assertPayable(invoice);
    const open = invoice.status === 'draft' ? await run(ctx, invoice.id, { type: 'FinalizeInvoice', url }) : invoice;
    // Nothing to pay: finalizing paid it, so there is no invoice to mail; its receipt follows the payment.
    if (open.status === 'paid') {
      ctx.body = await present(open);
      return;
    }
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
    ctx.body = await present(
      await run(ctx, invoice.id, { type: 'SendInvoice', to: body.to === undefined ? null : to, url, mailed: true }),
    );
  });

  router.post('/:id/pay', async (ctx) => {
    const invoice = await load(ctx);
    ctx.body = await present(await run(ctx, invoice.id, { type: 'MarkInvoicePaid' }));
  });

  router.post('/:id/void', async (ctx) => {
    const invoice = await load(ctx);
    ctx.body = await present(await run(ctx, invoice.id, { type: 'VoidInvoice' }));
  });

  router.post('/:id/mark-uncollectible', async (ctx) => {
    const invoice = await load(ctx);
    ctx.body = await present(await run(ctx, invoice.id, { type: 'MarkInvoiceUncollectible' }));
  });

  /** A new draft with the same customer, lines and settings; a fresh number; due as far ahead as the original was. */
  router.post('/:id/duplicate', async (ctx) => {
    const source = await load(ctx);
    const nowMs = deps.clock.now();
    const now = new Date(nowMs).toISOString();
    const span = Math.max(0, Date.parse(source.dueDate) - Date.parse(source.issueDate ?? source.createdAt));
    const invoice: Invoice = {
      ...blankInvoice(ctx, now),
      customerId: source.customerId,
      description: source.description,
      currency: source.currency,
      lineItems: { object: 'list', data: source.lineItems.data.map((item) => ({ ...item })) },
      ...(source.taxRateIds ? { taxRateIds: [...source.taxRateIds] } : {}),
      dueDate: new Date(nowMs + span).toISOString(),
      memo: source.memo,
      footer: source.footer,
      invoiceType: source.invoiceType,
      recurring: source.recurring,
      collectionMethod: source.collectionMethod,
      paymentMethods: source.paymentMethods,
      reminders: source.reminders,
      metadata: { ...source.metadata },
    };
    ctx.body = await present(await createDraft(ctx, invoice, undefined, async () => {}));
  });

  return router;
}
