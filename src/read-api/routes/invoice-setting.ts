import type Router from '@koa/router';
import { invoiceNumbering } from '../../actors/invoice-number-claim.ts';
import { type InvoiceSetting, organizationAggregate, organizationRecordId } from '../../actors/organization.ts';
import { COLLECTIONS, type OrganizationDoc } from '../../projections/collections.ts';
import { INVOICES, type InvoiceDoc } from '../../projections/invoices.projection.ts';
import { NotFoundError, ValidationError } from '../../shared/errors.ts';
import { deterministicId } from '../../shared/ids.ts';
import { asObject, optionalEnum, optionalInteger, optionalString, type Input } from '../../shared/input.ts';
import type { ApiContext, ApiDeps, ApiState } from '../api-context.ts';
import { commandFor } from '../command.ts';

/** A prefix such that prefix + a six-digit (or longer) sequence is still a valid invoice number. */
const PREFIX = /^[A-Za-z0-9][A-Za-z0-9._/#-]{0,19}$/;
const MAX_SEQUENCE = 999_999_999;

/** `description` / `footer`: a text, or null to clear it. */
function defaultText(body: Input, key: 'description' | 'footer'): string | null | undefined {
  if (body[key] === null) return null;
  return optionalString(body, key, '', { max: 5000 });
}

/**
 * `GET /organization/invoice-setting` (the reference's), and `PUT` / `POST` of the same (Weir's,
 * as the reference has no way to change it): the prefix and next sequence of invoice numbers,
 * and the default description and footer. Numbers are per tenant (`merchant_level`).
 */
export function mountInvoiceSetting(router: Router<ApiState>, deps: ApiDeps): void {
  const orgs = deps.readStore.collection<OrganizationDoc>(COLLECTIONS.organizations);
  const invoices = deps.readStore.collection<InvoiceDoc>(INVOICES);
  const recordId = (ctx: ApiContext) =>
    organizationRecordId(ctx.state.tenant.organizationId, ctx.state.tenant.environment);
  /** What the next invoice numbered by Weir would take, before any skip past a number already in use. */
  const countOf = (ctx: ApiContext) =>
    invoices.count({ organizationId: ctx.state.tenant.organizationId, environment: ctx.state.tenant.environment });

  const present = async (ctx: ApiContext) => {
    const org = await orgs.get(recordId(ctx));
    if (!org) throw new NotFoundError('organization', ctx.state.tenant.organizationId);
    const setting = await invoiceNumbering(deps.commands, ctx.state.tenant);
    return {
      id: deterministicId(`invoice-setting:${recordId(ctx)}`),
      object: 'invoice_setting',
      createdAt: org.createdAt,
      updatedAt: org.updatedAt,
      numberingScheme: setting.numberingScheme,
      invoicePrefix: setting.invoicePrefix,
      nextInvoiceSequence: Math.max(1, (await countOf(ctx)) + 1 + setting.sequenceOffset),
      description: setting.description,
      footer: setting.footer,
    };
  };

  router.get('/invoice-setting', async (ctx) => {
    ctx.body = await present(ctx);
  });

  const update = async (ctx: ApiContext) => {
    const body = asObject(ctx.state.body, '');
    const changes: Partial<InvoiceSetting> = {};
    const scheme = optionalEnum(body, 'numberingScheme', ['merchant_level', 'customer_level'] as const);
    if (scheme === 'customer_level')
      throw new ValidationError(
        'numberingScheme',
        'Weir numbers invoices per organization (merchant_level); customer_level is not offered',
      );
    const prefix = optionalString(body, 'invoicePrefix', '', {
      pattern: PREFIX,
      hint: 'must be 1 to 20 letters, digits or . _ / # -, starting with a letter or digit',
    });
    if (prefix !== undefined) changes.invoicePrefix = prefix;
    const next = optionalInteger(body, 'nextInvoiceSequence', '', { min: 1, max: MAX_SEQUENCE });
    // Stored as an offset from the count of invoices, so the sequence moves on as invoices are made.
    if (next !== undefined) changes.sequenceOffset = next - ((await countOf(ctx)) + 1);
    for (const key of ['description', 'footer'] as const) {
      const v = defaultText(body, key);
      if (v !== undefined) changes[key] = v;
    }
    if (Object.keys(changes).length === 0 && scheme === undefined)
      throw new ValidationError(null, 'nothing to update: send at least one invoice setting');
    if (Object.keys(changes).length > 0)
      await commandFor(deps, ctx, organizationAggregate, recordId(ctx), { type: 'UpdateInvoiceSetting', changes });
    ctx.body = await present(ctx);
  };
  router.put('/invoice-setting', update);
  router.post('/invoice-setting', update);
}
