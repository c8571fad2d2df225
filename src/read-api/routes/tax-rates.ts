import Router from '@koa/router';
import {
  TAX_RATES,
  taxRateAggregate,
  type TaxRate,
  type TaxRateChanges,
  type TaxRateDoc,
} from '../../actors/tax-rate.ts';
import { NotFoundError, ValidationError } from '../../shared/errors.ts';
import { isUuid } from '../../shared/ids.ts';
import { percentageNumber, TAX_TYPES } from '../../shared/tax.ts';
import { type ApiContext, type ApiDeps, type ApiState, idsOf } from '../api-context.ts';
import { commandFor, ownedBy } from '../command.ts';
import { listPage } from '../pagination.ts';
import { idParams, invalidFields, listOf, listQuery, notFound, queryFilter } from '../schema/fields.ts';
import { schemaRoutes } from '../schema/route.ts';
import { TaxRateCreate, TaxRateSchema, TaxRateUpdate } from '../schema/tax-rate.ts';

/**
 * `/api/v1/tax-rates`: create, list, read, update (name, description, country, isActive,
 * metadata: a rate's percentage and type never change, as sessions and invoices refer to them),
 * activate and deactivate. A percentage is exact (at most 4 decimal places); `type` is
 * `exclusive` (added to the price, the default) or `inclusive` (contained in it).
 */
export function taxRateRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1/tax-rates' });
  const rates = deps.readStore.collection<TaxRateDoc>(TAX_RATES);

  const present = (doc: TaxRateDoc) => {
    const { _id, _revision: _r, environment, ...rate } = doc as TaxRateDoc & { _revision?: number };
    return {
      ...rate,
      object: 'tax_rate' as const,
      percentage: percentageNumber(rate.percentage),
      livemode: environment === 'live',
    };
  };

  const load = async (ctx: ApiContext): Promise<TaxRateDoc> => {
    const id = ctx.params.id!;
    const doc = isUuid(id) ? await rates.get(id) : null;
    if (!ownedBy(ctx, doc)) throw new NotFoundError('tax rate', id);
    return doc;
  };

  const api = schemaRoutes(router, { tag: 'Tax rates', auth: 'secretKey' });
  const params = idParams('tax rate');

  api.route(
    {
      method: 'post',
      path: '/',
      summary: 'Create a tax rate',
      description:
        'A percentage is exact (at most 4 decimal places); `type` is `exclusive` (added to the price, the default) or `inclusive` (contained in it). Neither changes afterwards.',
      body: TaxRateCreate,
      response: TaxRateSchema,
      errors: [invalidFields()],
    },
    async (ctx, { body }) => {
      const { tenant } = ctx.state;
      const taxRate: Omit<TaxRate, 'createdAt' | 'updatedAt'> = {
        id: idsOf(ctx)(),
        organizationId: tenant.organizationId,
        environment: tenant.environment,
        name: body.name,
        description: body.description ?? null,
        country: body.country ?? null,
        percentage: body.percentage,
        type: body.type ?? 'exclusive',
        isActive: body.isActive ?? true,
        metadata: body.metadata ?? {},
      };
      await commandFor(deps, ctx, taxRateAggregate, taxRate.id, { type: 'CreateTaxRate', taxRate });
      return present((await rates.get(taxRate.id))!);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/',
      summary: 'List tax rates',
      query: listQuery({
        ids: queryFilter('Comma-separated tax rate ids'),
        isActive: queryFilter('true or false'),
        type: queryFilter('exclusive or inclusive'),
        country: queryFilter('A two-letter country code'),
      }),
      response: listOf(TaxRateSchema),
      errors: [invalidFields()],
    },
    (ctx) =>
      listPage(ctx, rates, {
        filters: {
          ids: { field: 'id', kind: 'csv' },
          isActive: { kind: 'boolean' },
          type: { values: TAX_TYPES },
          country: {},
        },
        present,
      }),
  );

  api.route(
    {
      method: 'get',
      path: '/:id',
      summary: 'Read a tax rate',
      params,
      response: TaxRateSchema,
      errors: [notFound('tax rate')],
    },
    async (ctx) => present(await load(ctx)),
  );

  api.route(
    {
      method: 'put',
      path: '/:id',
      summary: 'Update a tax rate',
      description: 'Name, description, country, isActive and metadata; a percentage and type never change.',
      params,
      body: TaxRateUpdate,
      response: TaxRateSchema,
      errors: [invalidFields(), notFound('tax rate')],
    },
    async (ctx, { body }) => {
      const rate = await load(ctx);
      const changes: TaxRateChanges = {
        name: body.name,
        description: body.description,
        country: body.country,
        isActive: body.isActive,
        metadata: body.metadata === null ? {} : body.metadata,
      };
      if (Object.values(changes).every((v) => v === undefined))
        throw new ValidationError(null, 'nothing to update: send name, description, country, isActive or metadata');
      await commandFor(deps, ctx, taxRateAggregate, rate.id, { type: 'UpdateTaxRate', changes });
      return present((await rates.get(rate.id))!);
    },
  );

  for (const [action, isActive] of [
    ['activate', true],
    ['deactivate', false],
  ] as const) {
    api.route(
      {
        method: 'put',
        path: `/:id/${action}`,
        summary: `${isActive ? 'Activate' : 'Deactivate'} a tax rate`,
        params,
        response: TaxRateSchema,
        errors: [notFound('tax rate')],
      },
      async (ctx) => {
        const rate = await load(ctx);
        await commandFor(deps, ctx, taxRateAggregate, rate.id, { type: 'UpdateTaxRate', changes: { isActive } });
        return present((await rates.get(rate.id))!);
      },
    );
  }

  return router;
}
