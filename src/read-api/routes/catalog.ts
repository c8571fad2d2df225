import Router from '@koa/router';
import { pendingOffers, priceAggregate, productAggregate, type Price, type Product } from '../../actors/catalog.ts';
import { assertAmountFitsCurrency } from '../../actors/currency-precision.ts';
import { PAYMENT_LINKS, type PaymentLinkDoc } from '../../projections/payment-links.projection.ts';
import {
  CATALOG_LISTED,
  PRICES,
  PRODUCTS,
  type PriceDoc,
  type ProductDoc,
} from '../../projections/catalog.projection.ts';
import { NotFoundError, ValidationError } from '../../shared/errors.ts';
import { isUuid } from '../../shared/ids.ts';
import {
  PriceCreate,
  type PriceInput,
  PriceSchema,
  PriceUpdate,
  ProductCreate,
  type ProductInput,
  ProductSchema,
  ProductUpdate,
} from '../schema/catalog.ts';
import {
  DeletedMessage,
  idParams,
  invalidFields,
  listOf,
  listQuery,
  notFound,
  queryFilter,
  unsupportedQuery,
} from '../schema/fields.ts';
import { schemaRoutes } from '../schema/route.ts';
import { paymentLinkCatalog, type Sold } from '../payment-link-catalog.ts';
import { type ApiContext, type ApiDeps, type ApiState, idsOf } from '../api-context.ts';
import { commandFor, ownedBy } from '../command.ts';
import { csvQuery, listPage, VISIBILITY_FILTER } from '../pagination.ts';
import { CURRENCIES, INTERVALS } from '../../actors/line-items.ts';
import type { Filter } from '../../read-store/read-store.ts';

const PRICE_TYPES = ['one_time', 'recurring'] as const;

type PriceQuery = { priceTypes?: string; interval?: string; intervalCount?: string; priceCurrency?: string };

/**
 * The product filter a list's price filters make: a listed price (active or not) matching every
 * one given, read from the terms the product keeps; null when none is given. Checked first, so a
 * bad value is a 400 naming it.
 */
function priceTermsFilter(query: PriceQuery): Filter | null {
  const given = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);
  const filter: Filter = {};
  const types = given(query.priceTypes)
    ?.split(',')
    .map((type) => type.trim());
  if (types) {
    const bad = types.find((type) => !(PRICE_TYPES as readonly string[]).includes(type));
    if (bad !== undefined)
      throw new ValidationError('priceTypes', `must be a comma-separated list of ${PRICE_TYPES.join(', ')}`);
    filter.type = { $in: types };
  }
  const interval = given(query.interval);
  if (interval !== undefined) {
    if (!(INTERVALS as readonly string[]).includes(interval))
      throw new ValidationError('interval', `must be one of ${INTERVALS.join(', ')}`);
    filter.interval = interval;
  }
  const count = given(query.intervalCount);
  if (count !== undefined) {
    if (!/^[1-9][0-9]{0,5}$/.test(count)) throw new ValidationError('intervalCount', 'must be a positive integer');
    filter.intervalCount = Number(count);
  }
  const currency = given(query.priceCurrency)?.toLowerCase();
  if (currency !== undefined) {
    if (!(CURRENCIES as readonly string[]).includes(currency))
      throw new ValidationError('priceCurrency', `must be one of ${CURRENCIES.join(', ')}`);
    filter.currency = currency;
  }
  return Object.keys(filter).length === 0 ? null : { priceTerms: { $elemMatch: filter } };
}

/** The record as the API shows it: the read model's own fields (its id, the ad hoc mark) left out. */
const strip = <T extends { _id: string; adHoc?: boolean }>(doc: T) => {
  const { _id, adHoc: _adHoc, ...rest } = doc;
  return rest;
};

/** Products and prices (the subset checkout sessions need; the billing issue completes it). */
export function catalogRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1' });
  const products = deps.readStore.collection<ProductDoc>(PRODUCTS);
  const prices = deps.readStore.collection<PriceDoc>(PRICES);
  const { refuseWhileSold } = paymentLinkCatalog(deps.readStore);
  const links = deps.readStore.collection<PaymentLinkDoc>(PAYMENT_LINKS);

  /**
   * Refuses taking away what an active link sells, and returns the links recently offered on the
   * record's stream that the read model already has. They are looked up before the active links
   * are, so a link created in between is either among those (refused here) or not settled (the
   * command refuses it as still being created): a link never lands on a deleted or inactive record.
   */
  async function refuseWhileSoldOrOffered(ctx: ApiContext, sold: Sold): Promise<string[]> {
    const { tenant } = ctx.state;
    const { offers } =
      sold.kind === 'product'
        ? (await deps.commands.load(productAggregate, sold.doc.id, tenant)).state
        : (await deps.commands.load(priceAggregate, sold.doc.id, tenant)).state;
    const recent = pendingOffers(offers, new Date(deps.clock.now()).toISOString()).map((o) => o.paymentLinkId);
    const known = await Promise.all(recent.map(async (id) => ((await links.get(id)) ? id : null)));
    await refuseWhileSold(sold);
    return known.filter((id) => id !== null);
  }
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
    const { priceTerms: _terms, ...shown } = strip(product);
    return { ...shown, defaultPrice: price ? { ...strip(price), product: summary } : null };
  };
  const done = (message: string) => ({ message, statusCode: 200 });

  const api = schemaRoutes(router, { tag: 'Products', auth: 'secretKey' });
  const params = idParams('product');
  const priceParams = idParams('price');
  const productInUse = {
    status: 409,
    codes: ['product_in_use'],
    description:
      'Active payment links sell the product, or links offering it are still being created: the message names them',
  };
  const priceInUse = {
    status: 409,
    codes: ['price_in_use'],
    description:
      'Active payment links sell the price, or links offering it are still being created: the message names them',
  };

  /** A new price, its amount one an asset of its currency can carry (else a 400 naming `field`). */
  const newPrice = (
    ctx: ApiContext,
    productId: string,
    fields: PriceInput,
    field: string,
  ): Omit<Price, 'createdAt' | 'updatedAt'> => {
    assertAmountFitsCurrency(deps.rail, ctx.state.tenant.environment, field, fields.currency, fields.unitAmount);
    return priceRecord(ctx, productId, fields);
  };
  const priceRecord = (
    ctx: ApiContext,
    productId: string,
    fields: PriceInput,
  ): Omit<Price, 'createdAt' | 'updatedAt'> => ({
    id: idsOf(ctx)(),
    organizationId: ctx.state.tenant.organizationId,
    environment: ctx.state.tenant.environment,
    productId,
    type: fields.type,
    currency: fields.currency,
    unitAmount: fields.unitAmount.toString(),
    interval: fields.interval,
    intervalCount: fields.intervalCount,
    isActive: true,
    nickname: fields.nickname ?? null,
    metadata: fields.metadata ?? {},
    billingScheme: 'per_unit',
  });

  const loadProduct = async (ctx: ApiContext, id: string) => {
    const doc = isUuid(id) ? await products.get(id) : null;
    if (!ownedBy(ctx, doc) || doc.deleted) throw new NotFoundError('product', id);
    return doc;
  };

  /** A new product's record from its checked fields. */
  function newProduct(fields: ProductInput, ctx: ApiContext): Omit<Product, 'createdAt' | 'updatedAt' | 'deleted'> {
    const { tenant } = ctx.state;
    return {
      id: idsOf(ctx)(),
      organizationId: tenant.organizationId,
      environment: tenant.environment,
      name: fields.name,
      description: fields.description ?? null,
      isActive: fields.isActive ?? true,
      unitLabel: fields.unitLabel ?? null,
      url: fields.url ?? null,
      images: fields.images ?? [],
      metadata: fields.metadata ?? {},
      visibility: fields.visibility ?? 10,
      defaultPriceId: null,
    };
  }

  api.route(
    {
      method: 'post',
      path: '/products',
      summary: 'Create a product',
      description: 'With `defaultPriceData`, its default price is created with it.',
      body: ProductCreate,
      response: ProductSchema,
      errors: [invalidFields()],
    },
    async (ctx, { body }) => {
      const product = newProduct(body, ctx);
      const id = product.id;
      const price = body.defaultPriceData
        ? newPrice(ctx, id, body.defaultPriceData, 'defaultPriceData.unitAmount')
        : null;
      await commandFor(deps, ctx, productAggregate, id, { type: 'CreateProduct', product });
      if (price) await commandFor(deps, ctx, priceAggregate, price.id, { type: 'CreatePrice', price });
      return presentProduct((await products.get(id))!);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/products',
      summary: 'List products',
      description:
        'Newest first; filter by `isActive`, `ids`, `visibility`, `url`, and by the prices a product has: `priceTypes`, `interval`, `intervalCount` and `priceCurrency` together select the products with a price matching them all.',
      query: listQuery({
        isActive: queryFilter('`true` or `false`'),
        ids: queryFilter('Comma-separated product ids'),
        visibility: queryFilter('10: the products shown in the dashboard, 20: those kept to the API'),
        url: queryFilter("The product's url, exactly"),
        priceTypes: queryFilter('Comma-separated price types (`one_time`, `recurring`): products with a price of one'),
        interval: queryFilter(`Products with a recurring price billed each ${INTERVALS.join(', ')}`),
        intervalCount: queryFilter('Products with a recurring price billed every this many intervals'),
        priceCurrency: queryFilter(`Products with a price in this currency (${CURRENCIES.join(', ')})`),
      }),
      response: listOf(ProductSchema),
      errors: [invalidFields()],
    },
    async (ctx, { query }) => {
      const byPrice = priceTermsFilter(query);
      const asked = csvQuery(ctx, 'ids');
      const page = await listPage(ctx, products, {
        // Asked for by id (a session's product), a payer's one-off product is listed too.
        base: {
          ...(asked?.length ? { deleted: false } : { deleted: false, ...CATALOG_LISTED }),
          ...byPrice,
        },
        filters: {
          isActive: { kind: 'boolean' },
          ids: { field: 'id', kind: 'csv' },
          visibility: VISIBILITY_FILTER,
          url: {},
        },
        present: (p) => p,
      });
      return { ...page, data: await Promise.all(page.data.map(presentProduct)) };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/products/:id',
      summary: 'Read a product',
      params,
      response: ProductSchema,
      errors: [notFound('product')],
    },
    async (ctx, { params: { id } }) => presentProduct(await loadProduct(ctx, id)),
  );

  api.route(
    {
      method: 'put',
      path: '/products/:id',
      summary: 'Update a product',
      description:
        'Only the fields sent change; `null` clears a text field. A product an active payment link sells is not deactivated (409 `product_in_use`, naming the links).',
      params,
      body: ProductUpdate,
      response: ProductSchema,
      errors: [invalidFields(), notFound('product'), productInUse],
    },
    async (ctx, { params: { id }, body }) => {
      const product = await loadProduct(ctx, id);
      if (body.defaultPriceId !== undefined && body.defaultPriceId !== product.defaultPriceId)
        throw new ValidationError(
          'defaultPriceId',
          `cannot be changed: a product's default price is its first (${product.defaultPriceId ?? 'none yet'})`,
        );
      const changes: Partial<
        Omit<Product, 'id' | 'organizationId' | 'environment' | 'createdAt' | 'updatedAt' | 'deleted'>
      > = {};
      if (body.name !== undefined) changes.name = body.name;
      if (body.description !== undefined) changes.description = body.description;
      if (body.unitLabel !== undefined) changes.unitLabel = body.unitLabel;
      if (body.url !== undefined) changes.url = body.url;
      if (body.isActive !== undefined) changes.isActive = body.isActive;
      if (body.metadata !== undefined) changes.metadata = body.metadata;
      if (body.visibility !== undefined) changes.visibility = body.visibility;
      if (body.images !== undefined) changes.images = body.images ?? [];
      if (Object.keys(changes).length === 0)
        throw new ValidationError(null, 'nothing to update: send at least one product field');
      const settledOffers =
        changes.isActive === false && product.isActive
          ? await refuseWhileSoldOrOffered(ctx, { kind: 'product', doc: product })
          : [];
      await commandFor(deps, ctx, productAggregate, product.id, { type: 'UpdateProduct', changes, settledOffers });
      return presentProduct((await products.get(product.id))!);
    },
  );

  for (const [action, isActive] of [
    ['activate', true],
    ['deactivate', false],
  ] as const) {
    // PUT as the reference has it; POST as Weir had it first.
    for (const method of ['put', 'post'] as const)
      api.route(
        {
          method,
          path: `/products/:id/${action}`,
          summary: isActive ? 'Activate a product' : 'Deactivate a product',
          ...(isActive
            ? {}
            : {
                description:
                  'A product an active payment link sells is not deactivated (409 `product_in_use`, naming the links): deactivate or delete those links first.',
              }),
          params,
          response: ProductSchema,
          errors: isActive ? [notFound('product')] : [notFound('product'), productInUse],
          idempotent: method === 'post',
        },
        async (ctx, { params: { id } }) => {
          const product = await loadProduct(ctx, id);
          if (product.isActive === isActive) return presentProduct(product);
          const settledOffers = isActive ? [] : await refuseWhileSoldOrOffered(ctx, { kind: 'product', doc: product });
          await commandFor(deps, ctx, productAggregate, product.id, {
            type: 'UpdateProduct',
            changes: { isActive },
            settledOffers,
          });
          return presentProduct((await products.get(product.id))!);
        },
      );
  }

  api.route(
    {
      method: 'delete',
      path: '/products/:id',
      summary: 'Delete a product',
      description:
        'A product an active payment link sells is not deleted (409 `product_in_use`, naming the links): deactivate or delete those links first. Checkout sessions, invoices and subscriptions that sold it keep their own copy of its price.',
      params,
      response: DeletedMessage,
      errors: [notFound('product'), productInUse],
    },
    async (ctx, { params: { id } }) => {
      const product = await loadProduct(ctx, id);
      const settledOffers = await refuseWhileSoldOrOffered(ctx, { kind: 'product', doc: product });
      await commandFor(deps, ctx, productAggregate, product.id, { type: 'DeleteProduct', settledOffers });
      return done(`product ${product.id} deleted`);
    },
  );

  api.route(
    {
      method: 'post',
      path: '/prices',
      tag: 'Prices',
      summary: 'Create a price',
      description: 'Of an existing product (`productId`) or of a new one (`productData`), as the reference allows.',
      body: PriceCreate,
      response: PriceSchema,
      errors: [invalidFields(), notFound('product')],
      examples: {
        request: { productId: '0f8fad5b-d9cb-469f-a165-70867728950e', currency: 'usdc', unitAmount: '150000000' },
      },
    },
    async (ctx, { body }) => {
      const created = body.productData ? newProduct(body.productData, ctx) : null;
      const productId = created ? created.id : (await loadProduct(ctx, body.productId!)).id;
      const price = newPrice(ctx, productId, body.price, 'unitAmount');
      if (created)
        await commandFor(deps, ctx, productAggregate, created.id, { type: 'CreateProduct', product: created });
      await commandFor(deps, ctx, priceAggregate, price.id, { type: 'CreatePrice', price });
      return presentPrice((await prices.get(price.id))!);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/prices',
      tag: 'Prices',
      summary: 'List prices',
      description: 'Newest first; filter by `ids`, `productId`, `isActive` and `type`.',
      query: listQuery({
        ids: queryFilter('Comma-separated price ids'),
        productId: queryFilter("Only this product's prices"),
        isActive: queryFilter('`true` or `false`'),
        type: queryFilter('`one_time` or `recurring`'),
        ...unsupportedQuery(['visibility'], 'prices have no visibility of their own (filter products by theirs)'),
      }),
      response: listOf(PriceSchema),
      errors: [invalidFields()],
    },
    async (ctx) => {
      const page = await listPage(ctx, prices, {
        // Asked for by id (a session's line item), a payer's one-off price is listed too, as products are.
        base: csvQuery(ctx, 'ids')?.length ? {} : CATALOG_LISTED,
        filters: {
          ids: { field: 'id', kind: 'csv' },
          productId: {},
          isActive: { kind: 'boolean' },
          type: { values: PRICE_TYPES },
        },
        present: (p) => p,
      });
      return { ...page, data: await Promise.all(page.data.map(presentPrice)) };
    },
  );

  const loadPrice = async (ctx: ApiContext, id: string) => {
    const doc = isUuid(id) ? await prices.get(id) : null;
    if (!ownedBy(ctx, doc)) throw new NotFoundError('price', id);
    return doc;
  };

  api.route(
    {
      method: 'get',
      path: '/prices/:id',
      tag: 'Prices',
      summary: 'Read a price',
      params: priceParams,
      response: PriceSchema,
      errors: [notFound('price')],
    },
    async (ctx, { params: { id } }) => presentPrice(await loadPrice(ctx, id)),
  );

  /** A price's amount and schedule never change (sessions and invoices refer to it); only these do. */
  api.route(
    {
      method: 'put',
      path: '/prices/:id',
      tag: 'Prices',
      summary: 'Update a price',
      description:
        'Only `isActive`, `nickname` and `metadata` change; a new amount or schedule is a new price. A price an active payment link sells is not deactivated (409 `price_in_use`, naming the links).',
      params: priceParams,
      body: PriceUpdate,
      response: PriceSchema,
      errors: [invalidFields(), notFound('price'), priceInUse],
    },
    async (ctx, { params: { id }, body }) => {
      const price = await loadPrice(ctx, id);
      const changes: Partial<Pick<Price, 'isActive' | 'nickname' | 'metadata'>> = {};
      if (body.isActive !== undefined) changes.isActive = body.isActive;
      if (body.nickname !== undefined) changes.nickname = body.nickname;
      if (body.metadata !== undefined) changes.metadata = body.metadata;
      if (Object.keys(changes).length === 0)
        throw new ValidationError(null, 'nothing to update: send isActive, nickname or metadata');
      const settledOffers =
        changes.isActive === false && price.isActive
          ? await refuseWhileSoldOrOffered(ctx, { kind: 'price', doc: price })
          : [];
      await commandFor(deps, ctx, priceAggregate, price.id, { type: 'UpdatePrice', changes, settledOffers });
      return presentPrice((await prices.get(price.id))!);
    },
  );

  return router;
}
