import type { PriceSnapshot, SessionLineItem } from '../../machines/checkout-session.types.ts';
import type { Rail, RailNetwork } from '../chain-ingest/rail.ts';
import type { Environment } from '../event-store/event-store.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { ValidationError } from '../shared/errors.ts';
import { newId, type IdSource } from '../shared/ids.ts';
import type { AppliedTaxRate } from '../shared/tax.ts';
import type { CommandContext, CommandHandler } from './command-handler.ts';
import { assertAmountFitsCurrency, assertPriceFitsCurrency } from './currency-precision.ts';
import { priceAggregate, productAggregate, type Price, type Product } from './catalog.ts';
import type { WithdrawalAddress } from './organization.ts';
import { walletProblem } from './session-networks.ts';
import { PRICES, PRODUCTS, type PriceDoc, type ProductDoc } from '../projections/catalog.projection.ts';
import type { InlinePrice, LineItemsRequest, PriceDescription } from '../read-api/schema/checkout-session-create.ts';

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
 * The currencies a price can be paid in, in `environment`: those of CURRENCIES that an asset of an
 * offered network has (as `GET /assets` lists them, and as checkout session creation demands), in
 * CURRENCIES' order. A product priced in another is one no payer can pay.
 */
export function offeredCurrencies(rail: Pick<Rail, 'networks'>, environment: Environment): string[] {
  const taken = new Set(rail.networks(environment).flatMap((n) => n.assets.map((a) => a.currency)));
  return CURRENCIES.filter((c) => taken.has(c));
}

/**
 * The networks an organization can be paid on, in `environment`, whatever the currency: those on
 * which its default wallet has no `walletProblem`. Checkout session creation gives a payer no other
 * network (`sessionNetworks`, which also holds the session's currency and restrictions).
 */
export function payableNetworks(
  rail: Pick<Rail, 'networks' | 'unpayableAddress'>,
  environment: Environment,
  wallets: readonly Pick<WithdrawalAddress, 'chainId' | 'address' | 'isDefault'>[],
): RailNetwork[] {
  return rail
    .networks(environment)
    .filter((network) =>
      wallets.some((w) => w.isDefault && w.chainId === network.chainId && !walletProblem(rail, network, w.address)),
    );
}

/**
 * The currencies an organization can be paid in, in `environment`: those of `offeredCurrencies` that
 * a `payableNetworks` network takes; a price in another currency is refused at session creation.
 */
export function payableCurrencies(
  rail: Pick<Rail, 'networks' | 'unpayableAddress'>,
  environment: Environment,
  wallets: readonly Pick<WithdrawalAddress, 'chainId' | 'address' | 'isDefault'>[],
): string[] {
  const payable = payableNetworks(rail, environment, wallets);
  return offeredCurrencies({ networks: () => payable }, environment);
}

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
  taxRateIds?: string[];
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

/** The fields a line's `price` beside its `priceId` may describe, in the order they are checked. */
const DESCRIBED = ['productId', 'type', 'interval', 'intervalCount', 'currency', 'unitAmount'] as const;

/**
 * A line's `price` sent beside its `priceId` describes that price: the first field given that
 * disagrees with the stored price is a 400 naming it (`…price.unitAmount`), never a silent pick.
 */
export function assertDescribes(described: PriceDescription, price: Price, path: string): void {
  for (const key of DESCRIBED) {
    const given = described[key];
    if (given === undefined) continue;
    const stored = price[key];
    if (stored !== null && String(given) === String(stored)) continue;
    throw new ValidationError(
      `${path}.${key}`,
      stored === null
        ? `is ${String(given)}, but price ${price.id} has no ${key} (a ${price.type} price)`
        : `is ${String(given)}, but price ${price.id} has ${key} ${String(stored)}: send the price as it is, or leave the field out`,
    );
  }
}

export type LineItemResolver = {
  /**
   * Resolve every item's price (existing prices and products must be the tenant's and active, a price
   * one its currency's assets can carry, `assertPriceFitsCurrency`; the items share one currency),
   * giving new prices and products ids from `nextId` (default `newId`); writes nothing. The items'
   * fields were checked by their schema (`LineItemsInput`). `held`: ids of prices the record being
   * edited already sells, taken again though they or their products were deactivated (or found too
   * fine) since (retired for new uses only, as a draft invoice keeps an archived price).
   */
  resolve(
    input: LineItemsRequest,
    tenant: { organizationId: string; environment: 'test' | 'live' },
    now: string,
    nextId?: IdSource,
    held?: ReadonlySet<string>,
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

export function createLineItemResolver(deps: {
  readStore: ReadStore;
  commands: CommandHandler;
  rail: Pick<Rail, 'networks'>;
}): LineItemResolver {
  const prices = deps.readStore.collection<PriceDoc>(PRICES);
  const products = deps.readStore.collection<ProductDoc>(PRODUCTS);

  async function findProduct(
    id: string,
    path: string,
    tenant: { organizationId: string; environment: string },
    held = false,
  ): Promise<Product> {
    const product = await products.get(id);
    if (
      !product ||
      product.deleted ||
      product.organizationId !== tenant.organizationId ||
      product.environment !== tenant.environment
    ) {
      throw new ValidationError(path, `product ${id} does not exist`, 'resource_missing');
    }
    if (!product.isActive && !held) throw new ValidationError(path, `product ${id} is not active`, 'product_inactive');
    return product;
  }

  const newPrice = (
    price: InlinePrice,
    tenant: { organizationId: string; environment: 'test' | 'live' },
    productId: string,
    now: string,
    nextId: IdSource,
    path: string,
  ): Price => {
    assertAmountFitsCurrency(deps.rail, tenant.environment, `${path}.unitAmount`, price.currency, price.unitAmount);
    return priceOf(price, tenant, productId, now, nextId);
  };
  const priceOf = (
    price: InlinePrice,
    tenant: { organizationId: string; environment: 'test' | 'live' },
    productId: string,
    now: string,
    nextId: IdSource,
  ): Price => ({
    id: nextId(),
    organizationId: tenant.organizationId,
    environment: tenant.environment,
    productId,
    type: price.type,
    currency: price.currency,
    unitAmount: price.unitAmount.toString(),
    interval: price.interval,
    intervalCount: price.intervalCount,
    isActive: true,
    nickname: null,
    metadata: {},
    billingScheme: 'per_unit',
    createdAt: now,
    updatedAt: now,
  });

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
    async resolve(input, tenant, now, nextId = newId, held = new Set()) {
      const resolved: Resolved[] = [];
      for (const [index, item] of input.data.entries()) {
        const path = `lineItems.data[${index}]`;
        const line = {
          quantity: item.quantity,
          ...(item.taxRateIds === undefined ? {} : { taxRateIds: item.taxRateIds }),
        };
        if ('priceId' in item) {
          const { priceId } = item;
          const price = await prices.get(priceId);
          if (!price || price.organizationId !== tenant.organizationId || price.environment !== tenant.environment) {
            throw new ValidationError(`${path}.priceId`, `price ${priceId} does not exist`, 'resource_missing');
          }
          const kept = held.has(priceId);
          if (!price.isActive && !kept) throw new ValidationError(`${path}.priceId`, `price ${priceId} is not active`);
          const product = await findProduct(price.productId, `${path}.priceId`, tenant, kept);
          // A price stored finer than its currency's assets: refused for new uses, kept (as an archived one is) by a
          // draft already holding it, whose total finalize checks.
          if (!kept) assertPriceFitsCurrency(deps.rail, tenant.environment, `${path}.priceId`, price);
          if ('describedAs' in item) assertDescribes(item.describedAs, price, `${path}.price`);
          resolved.push({ ...line, price, product, createPrice: false, createProduct: false });
        } else if ('price' in item) {
          const product = await findProduct(item.price.productId, `${path}.price.productId`, tenant);
          const price = newPrice(item.price, tenant, product.id, now, nextId, `${path}.price`);
          resolved.push({ ...line, price, product, createPrice: true, createProduct: false });
        } else if ('productId' in item.priceData) {
          const { priceData } = item;
          const product = await findProduct(priceData.productId, `${path}.priceData.productId`, tenant);
          const price = newPrice(priceData, tenant, product.id, now, nextId, `${path}.priceData`);
          resolved.push({ ...line, price, product, createPrice: true, createProduct: false });
        } else {
          const { productData } = item.priceData;
          const product: Product = {
            id: nextId(),
            organizationId: tenant.organizationId,
            environment: tenant.environment,
            name: productData.name,
            description: productData.description ?? null,
            isActive: true,
            unitLabel: productData.unitLabel ?? null,
            url: productData.url ?? null,
            images: productData.images ?? [],
            metadata: productData.metadata ?? {},
            visibility: 10,
            defaultPriceId: null,
            createdAt: now,
            updatedAt: now,
            deleted: false,
          };
          const price = newPrice(item.priceData, tenant, product.id, now, nextId, `${path}.priceData`);
          resolved.push({ ...line, price, product, createPrice: true, createProduct: true });
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
