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
import {
  asObject,
  optionalBoolean,
  optionalEnum,
  optionalMetadata,
  optionalString,
  requiredString,
  type Input,
} from '../../shared/input.ts';
import { parsePercentage, percentageNumber, TAX_TYPES } from '../../shared/tax.ts';
import { type ApiContext, type ApiDeps, type ApiState, idsOf } from '../api-context.ts';
import { commandFor, ownedBy } from '../command.ts';
import { listPage } from '../pagination.ts';

const COUNTRY = /^[A-Za-z]{2}$/;

/** An optional text field; `null` clears it (undefined: not sent). */
function nullableText(body: Input, key: string, max: number): string | null | undefined {
  if (!(key in body)) return undefined;
  if (body[key] === null) return null;
  return optionalString(body, key, '', { max }) ?? null;
}

function country(body: Input): string | null | undefined {
  const value = nullableText(body, 'country', 2);
  if (value === undefined || value === null) return value;
  if (!COUNTRY.test(value))
    throw new ValidationError('country', 'must be a two-letter ISO 3166-1 country code, such as DE');
  return value.toUpperCase();
}

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

  router.post('/', async (ctx) => {
    const body = asObject(ctx.state.body, '');
    const { tenant } = ctx.state;
    if (body.percentage === undefined || body.percentage === null)
      throw new ValidationError('percentage', 'is required', 'parameter_missing');
    const taxRate: Omit<TaxRate, 'createdAt' | 'updatedAt'> = {
      id: idsOf(ctx)(),
      organizationId: tenant.organizationId,
      environment: tenant.environment,
      name: requiredString(body, 'name', '', { max: 100 }),
      description: nullableText(body, 'description', 500) ?? null,
      country: country(body) ?? null,
      percentage: parsePercentage(body.percentage, 'percentage'),
      type: optionalEnum(body, 'type', TAX_TYPES) ?? 'exclusive',
      isActive: optionalBoolean(body, 'isActive') ?? true,
      metadata: optionalMetadata(body, 'metadata') ?? {},
    };
    await commandFor(deps, ctx, taxRateAggregate, taxRate.id, { type: 'CreateTaxRate', taxRate });
    ctx.body = present((await rates.get(taxRate.id))!);
  });

  router.get('/', async (ctx) => {
    ctx.body = await listPage(ctx, rates, {
      filters: {
        ids: { field: 'id', kind: 'csv' },
        isActive: { kind: 'boolean' },
        type: { values: TAX_TYPES },
        country: {},
      },
      present,
    });
  });

  router.get('/:id', async (ctx) => {
    ctx.body = present(await load(ctx));
  });

  router.put('/:id', async (ctx) => {
    const rate = await load(ctx);
    const body = asObject(ctx.state.body, '');
    for (const fixed of ['percentage', 'type'])
      if (body[fixed] !== undefined)
        throw new ValidationError(fixed, 'cannot be changed on an existing tax rate; create a new tax rate instead');
    const changes: TaxRateChanges = {
      name: optionalString(body, 'name', '', { min: 1, max: 100 }),
      description: nullableText(body, 'description', 500),
      country: country(body),
      isActive: optionalBoolean(body, 'isActive'),
      metadata: 'metadata' in body && body.metadata === null ? {} : optionalMetadata(body, 'metadata'),
    };
    if (Object.values(changes).every((v) => v === undefined))
      throw new ValidationError(null, 'nothing to update: send name, description, country, isActive or metadata');
    await commandFor(deps, ctx, taxRateAggregate, rate.id, { type: 'UpdateTaxRate', changes });
    ctx.body = present((await rates.get(rate.id))!);
  });

  for (const [action, isActive] of [
    ['activate', true],
    ['deactivate', false],
  ] as const) {
    router.put(`/:id/${action}`, async (ctx) => {
      const rate = await load(ctx);
      await commandFor(deps, ctx, taxRateAggregate, rate.id, { type: 'UpdateTaxRate', changes: { isActive } });
      ctx.body = present((await rates.get(rate.id))!);
    });
  }

  return router;
}
