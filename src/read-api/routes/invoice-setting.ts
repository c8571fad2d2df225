import type Router from '@koa/router';
import { invoiceNumbering } from '../../actors/invoice-number-claim.ts';
import { type InvoiceSetting, organizationAggregate, organizationRecordId } from '../../actors/organization.ts';
import { COLLECTIONS, type OrganizationDoc } from '../../projections/collections.ts';
import { INVOICES, type InvoiceDoc } from '../../projections/invoices.projection.ts';
import { NotFoundError, ValidationError } from '../../shared/errors.ts';
import { deterministicId } from '../../shared/ids.ts';
import type { ApiContext, ApiDeps, ApiState } from '../api-context.ts';
import { commandFor } from '../command.ts';
import { invalidFields } from '../schema/fields.ts';
import { InvoiceSettingSchema, InvoiceSettingUpdate } from '../schema/invoice-setting.ts';
import { schemaRoutes } from '../schema/route.ts';

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
      object: 'invoice_setting' as const,
      createdAt: org.createdAt,
      updatedAt: org.updatedAt,
      numberingScheme: setting.numberingScheme,
      invoicePrefix: setting.invoicePrefix,
      nextInvoiceSequence: Math.max(1, (await countOf(ctx)) + 1 + setting.sequenceOffset),
      description: setting.description,
      footer: setting.footer,
    };
  };

  const api = schemaRoutes(router, { tag: 'Invoice setting', auth: 'secretKey' });
  api.route(
    {
      method: 'get',
      path: '/invoice-setting',
      summary: 'Read the invoice setting',
      description: 'The prefix and next sequence of invoice numbers, and the default description and footer.',
      response: InvoiceSettingSchema,
    },
    (ctx) => present(ctx),
  );

  for (const method of ['put', 'post'] as const)
    api.route(
      {
        method,
        path: '/invoice-setting',
        summary: method === 'put' ? 'Update the invoice setting' : 'Update the invoice setting (POST)',
        description:
          'Numbers are per organization and environment (`merchant_level`); `null` clears description or footer.',
        body: InvoiceSettingUpdate,
        response: InvoiceSettingSchema,
        errors: [invalidFields()],
      },
      async (ctx, { body }) => {
        const changes: Partial<InvoiceSetting> = {};
        if (body.invoicePrefix !== undefined) changes.invoicePrefix = body.invoicePrefix;
        // Stored as an offset from the count of invoices, so the sequence moves on as invoices are made.
        if (body.nextInvoiceSequence !== undefined)
          changes.sequenceOffset = body.nextInvoiceSequence - ((await countOf(ctx)) + 1);
        for (const key of ['description', 'footer'] as const) if (body[key] !== undefined) changes[key] = body[key];
        if (Object.keys(changes).length === 0 && body.numberingScheme === undefined)
          throw new ValidationError(null, 'nothing to update: send at least one invoice setting');
        if (Object.keys(changes).length > 0)
          await commandFor(deps, ctx, organizationAggregate, recordId(ctx), { type: 'UpdateInvoiceSetting', changes });
        return present(ctx);
      },
    );
}
