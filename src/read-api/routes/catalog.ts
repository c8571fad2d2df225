import Router from '@koa/router';
import { priceAggregate, productAggregate, type Price, type Product } from '../../actors/catalog.ts';
import { CURRENCIES, INTERVALS } from '../../actors/line-items.ts';
import { PRICES, PRODUCTS, type PriceDoc, type ProductDoc } from '../../projections/catalog.projection.ts';
import { NotFoundError, ValidationError } from '../../shared/errors.ts';
import { isUuid } from '../../shared/ids.ts';
import {
  asObject,
  optionalArray,
  optionalBoolean,
  optionalEnum,
  optionalInteger,
  optionalMetadata,
  optionalObject,
  optionalString,
  optionalUrl,
  requiredAmount,
  requiredString,
} from '../../shared/input.ts';
import { type ApiContext, type ApiDeps, type ApiState, idsOf } from '../api-context.ts';
import { commandFor, ownedBy } from '../command.ts';
import { listPage } from '../pagination.ts';

const strip = <T extends { _id: string }>(doc: T) => {
  const { _id, ...rest } = doc;
  return rest;
};

/** Products and prices (the subset checkout sessions need; the billing issue completes it). */
export function catalogRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1' });
  const products = deps.readStore.collection<ProductDoc>(PRODUCTS);
  const prices = deps.readStore.collection<PriceDoc>(PRICES);
  const presentPrice = async (price: PriceDoc) => {
    const product = await products.get(price.productId);
    return {
      ...strip(price),
      product: product ? { id: product.id, name: product.name, isActive: product.isActive } : null,
    };
  };
  const presentProduct = async (product: ProductDoc) => {
    const price = product.defaultPriceId ? await prices.get(product.defaultPriceId) : null;
    // The reference nests the product in its default price too (a summary, not the whole record again).
    const summary = { id: product.id, name: product.name, isActive: product.isActive };
    return { ...strip(product), defaultPrice: price ? { ...strip(price), product: summary } : null };
  };
  const done = (message: string) => ({ message, statusCode: 200 });

  function priceFields(
    o: Record<string, unknown>,
    path: string,
    productId: string,
    ctx: ApiContext,
  ): Omit<Price, 'createdAt' | 'updatedAt'> {
    const interval = optionalEnum(o, 'interval', INTERVALS, path) ?? null;
    // Deliberate difference: the reference's streaming prices are paid per second through Superfluid
    // streams, which Weir's transfer-to-deposit-address rail cannot collect.
    if (o.type === 'streaming')
      throw new ValidationError(
        `${path ? `${path}.` : ''}type`,
        'streaming prices are not supported: Weir collects transfers, not per-second streams; use recurring',
        'unsupported_price_type',
      );
    const type =
      optionalEnum(o, 'type', ['one_time', 'recurring'] as const, path) ?? (interval ? 'recurring' : 'one_time');
    if (type === 'recurring' && !interval)
      throw new ValidationError(
        `${path ? `${path}.` : ''}interval`,
        'is required for a recurring price',
        'parameter_missing',
      );
    if (type === 'one_time' && interval)
      throw new ValidationError(`${path ? `${path}.` : ''}interval`, 'is only for recurring prices');
    const currency = optionalEnum(o, 'currency', CURRENCIES, path);
    if (!currency) throw new ValidationError(`${path ? `${path}.` : ''}currency`, 'is required', 'parameter_missing');
    return {
      id: idsOf(ctx)(),
      organizationId: ctx.state.tenant.organizationId,
      environment: ctx.state.tenant.environment,
      productId,
      type,
      currency,
      unitAmount: requiredAmount(o, 'unitAmount', path).toString(),
      interval,
      intervalCount:
        type === 'recurring' ? (optionalInteger(o, 'intervalCount', path, { min: 1, max: 36 }) ?? 1) : null,
      isActive: true,
      nickname: optionalString(o, 'nickname', path, { max: 100 }) ?? null,
      metadata: optionalMetadata(o, 'metadata', path) ?? {},
      billingScheme: 'per_unit',
    };
  }

  const loadProduct = async (ctx: ApiContext, id: string) => {
    const doc = isUuid(id) ? await products.get(id) : null;
    if (!ownedBy(ctx, doc) || doc.deleted) throw new NotFoundError('product', id);
    return doc;
  };

  /** A new product's fields, from a product body or a price's `productData` (`path`). */
  function productFields(body: Record<string, unknown>, path: string, ctx: ApiContext) {
    const { tenant } = ctx.state;
    const at = (key: string) => (path ? `${path}.${key}` : key);
    const product: Omit<Product, 'createdAt' | 'updatedAt' | 'deleted'> = {
      id: idsOf(ctx)(),
      organizationId: tenant.organizationId,
      environment: tenant.environment,
      name: requiredString(body, 'name', path, { max: 250 }),
      description: optionalString(body, 'description', path, { max: 2000 }) ?? null,
      isActive: optionalBoolean(body, 'isActive', path) ?? true,
      unitLabel: optionalString(body, 'unitLabel', path, { max: 40 }) ?? null,
      url: optionalUrl(body, 'url', path) ?? null,
      images: (optionalArray(body, 'images', path, { max: 8 }) ?? []).map((v, i) => {
        if (typeof v !== 'string') throw new ValidationError(at(`images[${i}]`), 'must be a string');
        return v;
      }),
      metadata: optionalMetadata(body, 'metadata', path) ?? {},
      visibility: optionalInteger(body, 'visibility', path, { min: 10, max: 20 }) ?? 10,
      defaultPriceId: null,
    };
    return product;
  }

  router.post('/products', async (ctx) => {
    const body = asObject(ctx.state.body, '');
    const product = productFields(body, '', ctx);
    const id = product.id;
    const defaultPriceData = optionalObject(body, 'defaultPriceData');
    const price = defaultPriceData ? priceFields(defaultPriceData, 'defaultPriceData', id, ctx) : null;
    await commandFor(deps, ctx, productAggregate, id, { type: 'CreateProduct', product });
    if (price) await commandFor(deps, ctx, priceAggregate, price.id, { type: 'CreatePrice', price });
    ctx.body = await presentProduct((await products.get(id))!);
  });

  router.get('/products', async (ctx) => {
    const page = await listPage(ctx, products, {
      base: { deleted: false },
      filters: { isActive: { kind: 'boolean' }, ids: { field: 'id', kind: 'csv' } },
      present: (p) => p,
    });
    ctx.body = { ...page, data: await Promise.all(page.data.map(presentProduct)) };
  });

  router.get('/products/:id', async (ctx) => {
    ctx.body = await presentProduct(await loadProduct(ctx, ctx.params.id!));
  });

  router.put('/products/:id', async (ctx) => {
    const product = await loadProduct(ctx, ctx.params.id!);
    const body = asObject(ctx.state.body, '');
    const changes: Partial<
      Omit<Product, 'id' | 'organizationId' | 'environment' | 'createdAt' | 'updatedAt' | 'deleted'>
    > = {};
    const name = optionalString(body, 'name', '', { min: 1, max: 250 });
    if (name !== undefined) changes.name = name;
    if (body.description !== undefined)
      changes.description = optionalString(body, 'description', '', { max: 2000 }) ?? null;
    if (body.unitLabel !== undefined) changes.unitLabel = optionalString(body, 'unitLabel', '', { max: 40 }) ?? null;
    if (body.url !== undefined) changes.url = optionalUrl(body, 'url') ?? null;
    const isActive = optionalBoolean(body, 'isActive');
    if (isActive !== undefined) changes.isActive = isActive;
    const metadata = optionalMetadata(body, 'metadata');
    if (metadata !== undefined) changes.metadata = metadata;
    const visibility = optionalInteger(body, 'visibility', '', { min: 10, max: 20 });
    if (visibility !== undefined) changes.visibility = visibility;
    if (body.images !== undefined) {
      changes.images = (optionalArray(body, 'images', '', { max: 8 }) ?? []).map((v, i) => {
        if (typeof v !== 'string') throw new ValidationError(`images[${i}]`, 'must be a string');
        return v;
      });
    }
    if (Object.keys(changes).length === 0)
      throw new ValidationError(null, 'nothing to update: send at least one product field');
    await commandFor(deps, ctx, productAggregate, product.id, { type: 'UpdateProduct', changes });
    ctx.body = await presentProduct((await products.get(product.id))!);
  });

  const toggle = (isActive: boolean) => async (ctx: ApiContext) => {
    const product = await loadProduct(ctx, ctx.params.id!);
    if (product.isActive !== isActive)
      await commandFor(deps, ctx, productAggregate, product.id, { type: 'UpdateProduct', changes: { isActive } });
    ctx.body = await presentProduct((await products.get(product.id))!);
  };
  for (const [action, isActive] of [
    ['activate', true],
    ['deactivate', false],
  ] as const) {
    // PUT as the reference has it; POST as Weir had it first.
    router.put(`/products/:id/${action}`, toggle(isActive));
    router.post(`/products/:id/${action}`, toggle(isActive));
  }

  router.delete('/products/:id', async (ctx) => {
    const product = await loadProduct(ctx, ctx.params.id!);
    await commandFor(deps, ctx, productAggregate, product.id, { type: 'DeleteProduct' });
    ctx.body = done('product deleted');
  });

  router.post('/prices', async (ctx) => {
    const body = asObject(ctx.state.body, '');
    // A price names its product, or brings `productData` to create one (as the reference allows).
    const productData = body.productId === undefined ? optionalObject(body, 'productData') : undefined;
    if (body.productId !== undefined && body.productData !== undefined)
      throw new ValidationError('productData', 'give productId or productData, not both');
    const newProduct = productData ? productFields(productData, 'productData', ctx) : null;
    const productId = newProduct ? newProduct.id : (await loadProduct(ctx, requiredString(body, 'productId'))).id;
    const price = priceFields(body, '', productId, ctx);
    if (newProduct)
      await commandFor(deps, ctx, productAggregate, newProduct.id, { type: 'CreateProduct', product: newProduct });
    await commandFor(deps, ctx, priceAggregate, price.id, { type: 'CreatePrice', price });
    ctx.body = await presentPrice((await prices.get(price.id))!);
  });

  router.get('/prices', async (ctx) => {
    const page = await listPage(ctx, prices, {
      filters: { productId: {}, isActive: { kind: 'boolean' }, type: { values: ['one_time', 'recurring'] } },
      present: (p) => p,
    });
    ctx.body = { ...page, data: await Promise.all(page.data.map(presentPrice)) };
  });

  const loadPrice = async (ctx: ApiContext) => {
    const doc = isUuid(ctx.params.id) ? await prices.get(ctx.params.id!) : null;
    if (!ownedBy(ctx, doc)) throw new NotFoundError('price', ctx.params.id!);
    return doc;
  };

  router.get('/prices/:id', async (ctx) => {
    ctx.body = await presentPrice(await loadPrice(ctx));
  });

  /** A price's amount and schedule never change (sessions and invoices refer to it); only these do. */
  router.put('/prices/:id', async (ctx) => {
    const price = await loadPrice(ctx);
    const body = asObject(ctx.state.body, '');
    for (const fixed of ['unitAmount', 'currency', 'type', 'interval', 'intervalCount', 'productId']) {
      if (body[fixed] !== undefined)
        throw new ValidationError(fixed, 'cannot be changed on an existing price; create a new price instead');
    }
    const changes: Partial<Pick<Price, 'isActive' | 'nickname' | 'metadata'>> = {};
    const isActive = optionalBoolean(body, 'isActive');
    if (isActive !== undefined) changes.isActive = isActive;
    if (body.nickname !== undefined) changes.nickname = optionalString(body, 'nickname', '', { max: 100 }) ?? null;
    const metadata = optionalMetadata(body, 'metadata');
    if (metadata !== undefined) changes.metadata = metadata;
    if (Object.keys(changes).length === 0)
      throw new ValidationError(null, 'nothing to update: send isActive, nickname or metadata');
    await commandFor(deps, ctx, priceAggregate, price.id, { type: 'UpdatePrice', changes });
    ctx.body = await presentPrice((await prices.get(price.id))!);
  });

  return router;
}
