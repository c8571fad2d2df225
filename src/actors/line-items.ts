import type { PriceSnapshot, SessionLineItem } from '../../machines/checkout-session.types.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { ValidationError } from '../shared/errors.ts';
import { newId, isUuid, type IdSource } from '../shared/ids.ts';
import {
  asObject,
  optionalArray,
  optionalEnum,
  optionalInteger,
  optionalMetadata,
  optionalObject,
  optionalString,
  requiredAmount,
  requiredString,
  type Input,
} from '../shared/input.ts';
import type { AppliedTaxRate } from '../shared/tax.ts';
import type { CommandContext, CommandHandler } from './command-handler.ts';
import { priceAggregate, productAggregate, type Price, type Product } from './catalog.ts';
import { PRICES, PRODUCTS, type PriceDoc, type ProductDoc } from '../projections/catalog.projection.ts';

export const CURRENCIES = [
  'usdc',
  'usdt',
  'pyusd',
  'eurc',
  'dai',
  'eth',
  'matic',
  'pol',
  'bnb',
  'sol',
  'trx',
  'busd',
  'btc',
] as const;
export const INTERVALS = ['day', 'week', 'month', 'year'] as const;

/**
 * A line item resolved to an existing price, or to a price (and product) still to be created.
 * `taxRateIds`: the line's own, as sent (checked by `resolveTaxRateIds`), absent when not sent.
 */
export type Resolved = {
  quantity: number;
  price: Price;
  product: Product;
  createPrice: boolean;
  createProduct: boolean;
  taxRateIds?: unknown;
};

/** The taxes of one line (see `taxLine`). */
export type LineTax = { taxRates: AppliedTaxRate[]; amountTax: bigint; amountExclusive: bigint };

function snapshot(price: Price, product: Product): PriceSnapshot {
  return {
    id: price.id,
    productId: product.id,
    product: { id: product.id, name: product.name, description: product.description, isActive: product.isActive },
    type: price.type,
    currency: price.currency,
    unitAmount: price.unitAmount,
    interval: price.interval,
    intervalCount: price.intervalCount,
    isActive: price.isActive,
  };
}

export type LineItemResolver = {
  /** Check every item and resolve its price, giving new prices and products ids from `nextId` (default `newId`); writes nothing. */
  resolve(
    input: unknown,
    tenant: { organizationId: string; environment: 'test' | 'live' },
    now: string,
    nextId?: IdSource,
  ): Promise<Resolved[]>;
  /** Create the prices and products that inline items asked for, then answer the items (with their taxes, by index). */
  commit(items: Resolved[], ctx: CommandContext, taxes?: LineTax[]): Promise<SessionLineItem[]>;
  /**
   * Start creating the prices and products that inline items asked for. Every append is asked for
   * before this returns, so they join the same group commit as every append the caller asks for next
   * in the same turn (a session's, in log order after them).
   */
  write(items: Resolved[], ctx: CommandContext): Promise<void>;
  /** The items as a session holds them (with their taxes, by index); writes nothing. */
  lineItemsOf(items: Resolved[], taxes?: LineTax[]): SessionLineItem[];
};

export function createLineItemResolver(deps: { readStore: ReadStore; commands: CommandHandler }): LineItemResolver {
  const prices = deps.readStore.collection<PriceDoc>(PRICES);
  const products = deps.readStore.collection<ProductDoc>(PRODUCTS);

  async function findProduct(
    id: string,
    path: string,
    tenant: { organizationId: string; environment: string },
  ): Promise<Product> {
    if (!isUuid(id)) throw new ValidationError(path, 'must be a uuid');
    const product = await products.get(id);
    if (
      !product ||
      product.deleted ||
      product.organizationId !== tenant.organizationId ||
      product.environment !== tenant.environment
    ) {
      throw new ValidationError(path, `product ${id} does not exist`, 'resource_missing');
    }
    if (!product.isActive) throw new ValidationError(path, `product ${id} is not active`, 'product_inactive');
    return product;
  }

  function inlinePrice(
    o: Input,
    path: string,
    tenant: { organizationId: string; environment: 'test' | 'live' },
    productId: string,
    now: string,
    nextId: IdSource,
  ): Price {
    const type =
      optionalEnum(o, 'type', ['one_time', 'recurring'] as const, path) ?? (o.interval ? 'recurring' : 'one_time');
    const interval = optionalEnum(o, 'interval', INTERVALS, path) ?? null;
    if (type === 'recurring' && !interval)
      throw new ValidationError(`${path}.interval`, 'is required for a recurring price', 'parameter_missing');
    return {
      id: nextId(),
      organizationId: tenant.organizationId,
      environment: tenant.environment,
      productId,
      type,
      currency:
        optionalEnum(o, 'currency', CURRENCIES, path) ??
        (() => {
          throw new ValidationError(`${path}.currency`, 'is required', 'parameter_missing');
        })(),
      unitAmount: requiredAmount(o, 'unitAmount', path).toString(),
      interval: type === 'recurring' ? interval : null,
      intervalCount:
        type === 'recurring' ? (optionalInteger(o, 'intervalCount', path, { min: 1, max: 36 }) ?? 1) : null,
      isActive: true,
      nickname: null,
      metadata: {},
      billingScheme: 'per_unit',
      createdAt: now,
      updatedAt: now,
    };
  }

  const write: LineItemResolver['write'] = (items, ctx) => {
    // New ids (fresh, or seeded by an idempotent request that may have written them already):
    // no stream to read first; an existing one makes the append conflict and the create a no-op.
    const created = { ...ctx, assumeNew: true };
    const writes: Promise<unknown>[] = [];
    for (const item of items) {
      if (item.createProduct) {
        const { updatedAt: _u, deleted: _d, createdAt: _c, ...product } = item.product;
        writes.push(deps.commands.handle(productAggregate, product.id, { type: 'CreateProduct', product }, created));
      }
      if (item.createPrice) {
        const { updatedAt: _u, createdAt: _c, ...price } = item.price;
        writes.push(deps.commands.handle(priceAggregate, price.id, { type: 'CreatePrice', price }, created));
      }
    }
    return Promise.all(writes).then(() => {});
  };

  const lineItemsOf: LineItemResolver['lineItemsOf'] = (items, taxes) =>
    items.map(({ quantity, price, product }, index) => {
      const subtotal = BigInt(price.unitAmount) * BigInt(quantity);
      const tax = taxes?.[index];
      return {
        description: product.name,
        quantity,
        price: snapshot(price, product),
        amountSubtotal: subtotal.toString(),
        // Exclusive tax is added to the line; inclusive tax is already in its price.
        amountTotal: (subtotal + (tax?.amountExclusive ?? 0n)).toString(),
        currency: price.currency,
        ...(tax ? { amountTax: tax.amountTax.toString(), taxRates: tax.taxRates } : {}),
      };
    });

  return {
    async resolve(input, tenant, now, nextId = newId) {
      const lineItems = asObject(input, 'lineItems');
      const data = optionalArray(lineItems, 'data', 'lineItems', { min: 1, max: 20 });
      if (!data) throw new ValidationError('lineItems.data', 'is required', 'parameter_missing');
      const resolved: Resolved[] = [];
      for (const [index, raw] of data.entries()) {
        const path = `lineItems.data[${index}]`;
        const item = asObject(raw, path);
        const quantity = optionalInteger(item, 'quantity', path, { min: 1, max: 1_000_000 }) ?? 1;
        const taxRateIds = item.taxRateIds ?? undefined;
        const forms = ['priceId', 'price', 'priceData'].filter((k) => item[k] !== undefined && item[k] !== null);
        if (forms.length !== 1)
          throw new ValidationError(
            path,
            'must have exactly one of priceId, price or priceData',
            'parameters_exclusive',
          );
        if (forms[0] === 'priceId') {
          const priceId = requiredString(item, 'priceId', path);
          if (!isUuid(priceId)) throw new ValidationError(`${path}.priceId`, 'must be a uuid');
          const price = await prices.get(priceId);
          if (!price || price.organizationId !== tenant.organizationId || price.environment !== tenant.environment) {
            throw new ValidationError(`${path}.priceId`, `price ${priceId} does not exist`, 'resource_missing');
          }
          if (!price.isActive) throw new ValidationError(`${path}.priceId`, `price ${priceId} is not active`);
          resolved.push({
            quantity,
            price,
            product: await findProduct(price.productId, `${path}.priceId`, tenant),
            createPrice: false,
            createProduct: false,
            ...(taxRateIds === undefined ? {} : { taxRateIds }),
          });
        } else if (forms[0] === 'price') {
          const o = optionalObject(item, 'price', path)!;
          const product = await findProduct(
            requiredString(o, 'productId', `${path}.price`),
            `${path}.price.productId`,
            tenant,
          );
          resolved.push({
            quantity,
            price: inlinePrice(o, `${path}.price`, tenant, product.id, now, nextId),
            product,
            createPrice: true,
            createProduct: false,
            ...(taxRateIds === undefined ? {} : { taxRateIds }),
          });
        } else {
          const o = optionalObject(item, 'priceData', path)!;
          const p = `${path}.priceData`;
          let product: Product;
          let createProduct = false;
          const productData = optionalObject(o, 'productData', p);
          if (o.productId !== undefined && o.productId !== null) {
            if (productData)
              throw new ValidationError(p, 'must have productId or productData, not both', 'parameters_exclusive');
            product = await findProduct(requiredString(o, 'productId', p), `${p}.productId`, tenant);
          } else if (productData) {
            const pp = `${p}.productData`;
            product = {
              id: nextId(),
              organizationId: tenant.organizationId,
              environment: tenant.environment,
              name: requiredString(productData, 'name', pp, { max: 250 }),
              description: optionalString(productData, 'description', pp, { max: 2000 }) ?? null,
              isActive: true,
              unitLabel: optionalString(productData, 'unitLabel', pp, { max: 40 }) ?? null,
              url: optionalString(productData, 'url', pp, { max: 2048 }) ?? null,
              images: (optionalArray(productData, 'images', pp, { max: 8 }) ?? []).map((v, i) => {
                if (typeof v !== 'string') throw new ValidationError(`${pp}.images[${i}]`, 'must be a string');
                return v;
              }),
              metadata: optionalMetadata(productData, 'metadata', pp) ?? {},
              visibility: 10,
              defaultPriceId: null,
              createdAt: now,
              updatedAt: now,
              deleted: false,
            };
            createProduct = true;
          } else {
            throw new ValidationError(p, 'must have productId or productData', 'parameter_missing');
          }
          resolved.push({
            quantity,
            price: inlinePrice(o, p, tenant, product.id, now, nextId),
            product,
            createPrice: true,
            createProduct,
            ...(taxRateIds === undefined ? {} : { taxRateIds }),
          });
        }
      }
      const currencies = new Set(resolved.map((r) => r.price.currency));
      if (currencies.size > 1)
        throw new ValidationError(
          'lineItems.data',
          `all line items must have the same currency; found ${[...currencies].join(', ')}`,
        );
      return resolved;
    },

    async commit(items, ctx, taxes) {
      await write(items, ctx);
      return lineItemsOf(items, taxes);
    },
    write,
    lineItemsOf,
  };
}
