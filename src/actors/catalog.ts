import type { Aggregate } from './aggregate.ts';
import type { CommandContext, CommandHandler } from './command-handler.ts';
import { ConflictError, InvalidStateError } from '../shared/errors.ts';
import type { Environment } from '../event-store/event-store.ts';

export type Product = {
  id: string;
  organizationId: string;
  environment: Environment;
  name: string;
  description: string | null;
  isActive: boolean;
  unitLabel: string | null;
  url: string | null;
  images: string[];
  metadata: Record<string, string>;
  visibility: number;
  defaultPriceId: string | null;
  createdAt: string;
  updatedAt: string;
  deleted: boolean;
};

export type Price = {
  id: string;
  organizationId: string;
  environment: Environment;
  productId: string;
  type: 'one_time' | 'recurring';
  currency: string;
  unitAmount: string;
  interval: 'day' | 'week' | 'month' | 'year' | null;
  intervalCount: number | null;
  isActive: boolean;
  nickname: string | null;
  metadata: Record<string, string>;
  billingScheme: 'per_unit';
  createdAt: string;
  updatedAt: string;
};

export type ProductFields = Omit<
  Product,
  'id' | 'organizationId' | 'environment' | 'createdAt' | 'updatedAt' | 'deleted'
>;
export type PriceFields = Omit<Price, 'id' | 'organizationId' | 'environment' | 'createdAt' | 'updatedAt'>;

export type ProductEvent =
  | { type: 'ProductCreated'; data: { product: Omit<Product, 'updatedAt' | 'deleted'> } }
  | { type: 'ProductUpdated'; data: { changes: Partial<ProductFields>; at: string } }
  | { type: 'ProductDeleted'; data: { at: string } }
  | { type: 'ProductOfferedByPaymentLink'; data: { paymentLinkId: string; at: string } };

/**
 * The links offered on the record's stream that the read model already holds, as the route found
 * them before asking which active links sell the record: a deactivation or delete is refused for
 * any other recent offer, as its link is still being created.
 */
type Settled = { settledOffers?: string[] };

export type ProductCommand =
  | { type: 'CreateProduct'; product: Omit<Product, 'updatedAt' | 'deleted' | 'createdAt'> }
  | ({ type: 'UpdateProduct'; changes: Partial<ProductFields> } & Settled)
  | ({ type: 'DeleteProduct' } & Settled)
  | OfferThroughPaymentLink;

/**
 * A payment link about to sell the record: decided on the record's own stream, so a delete or
 * deactivation racing the link's creation is either seen here (409) or appended after this fact.
 */
export type OfferThroughPaymentLink = { type: 'OfferThroughPaymentLink'; paymentLinkId: string };

export type PriceEvent =
  | { type: 'PriceCreated'; data: { price: Omit<Price, 'updatedAt'> } }
  | { type: 'PriceUpdated'; data: { changes: Partial<Pick<Price, 'isActive' | 'nickname' | 'metadata'>>; at: string } }
  | { type: 'PriceOfferedByPaymentLink'; data: { paymentLinkId: string; at: string } };

export type PriceCommand =
  | { type: 'CreatePrice'; price: Omit<Price, 'updatedAt' | 'createdAt'> }
  | ({ type: 'UpdatePrice'; changes: Partial<Pick<Price, 'isActive' | 'nickname' | 'metadata'>> } & Settled)
  | OfferThroughPaymentLink;

/** A payment link's offer on a product's or price's stream. */
export type Offer = { paymentLinkId: string; at: string };

/** A catalog record as its decider sees it: the record, and the payment links offered on its stream. */
export type Offered<TRecord> = { record: TRecord | null; offers: Offer[] };

/**
 * How long a link has to be created after its offer: past this, an offer whose link the read model
 * never got (its request died in between) no longer holds back a deactivation or delete.
 */
export const OFFER_SETTLES_WITHIN_MS = 60_000;

/** The offers whose links may still be on their way: recent, and not among the settled ones. */
export const pendingOffers = (offers: Offer[], now: string, settled: readonly string[] = []): Offer[] =>
  offers.filter(
    (o) => !settled.includes(o.paymentLinkId) && Date.parse(now) - Date.parse(o.at) < OFFER_SETTLES_WITHIN_MS,
  );

/** A deactivation or delete is refused while a link offered on the stream may still be being created. */
function refuseWhileOffered(kind: 'product' | 'price', id: string, pending: Offer[]): void {
  if (pending.length === 0) return;
  throw new ConflictError(
    `${kind} ${id} is being offered by payment links still being created (${pending.map((o) => o.paymentLinkId).join(', ')}); try again in a moment, and deactivate or delete those links first`,
    `${kind}_in_use`,
  );
}

/** The decider's fold: the projection's record fold, plus the offers on the stream. */
const withOffers =
  <TRecord, TEvent extends { type: string; data: object }>(
    evolve: (record: TRecord | null, event: TEvent) => TRecord | null,
  ) =>
  (state: Offered<TRecord>, event: TEvent): Offered<TRecord> => ({
    record: evolve(state.record, event),
    offers: event.type.endsWith('OfferedByPaymentLink') ? [...state.offers, event.data as Offer] : state.offers,
  });

/** The refusal of a link whose product or price stopped being offered after the request read the catalog. */
const unavailable = (link: string, why: string) =>
  new ConflictError(
    `payment link ${link} cannot be created: ${why}; a link sells only an active product and price`,
    'payment_link_unavailable',
  );

export function evolveProduct(product: Product | null, event: ProductEvent): Product | null {
  switch (event.type) {
    case 'ProductCreated':
      return { ...event.data.product, updatedAt: event.data.product.createdAt, deleted: false };
    case 'ProductUpdated':
      return product && { ...product, ...event.data.changes, updatedAt: event.data.at };
    case 'ProductDeleted':
      return product && { ...product, deleted: true, isActive: false, updatedAt: event.data.at };
    case 'ProductOfferedByPaymentLink':
      // A link's sale changes nothing of the product: the fact only orders the link among the product's changes.
      return product;
  }
}

export function evolvePrice(price: Price | null, event: PriceEvent): Price | null {
  switch (event.type) {
    case 'PriceCreated':
      return { ...event.data.price, updatedAt: event.data.price.createdAt };
    case 'PriceUpdated':
      return price && { ...price, ...event.data.changes, updatedAt: event.data.at };
    case 'PriceOfferedByPaymentLink':
      // As for a product: it only orders the link among the price's changes.
      return price;
  }
}

export const productAggregate: Aggregate<Offered<Product>, ProductEvent, ProductCommand> = {
  category: 'product',
  initialState: () => ({ record: null, offers: [] }),
  evolve: withOffers(evolveProduct),
  decide({ record: product, offers }, command, { now }) {
    if (command.type === 'CreateProduct')
      return product ? [] : [{ type: 'ProductCreated', data: { product: { ...command.product, createdAt: now } } }];
    if (command.type === 'OfferThroughPaymentLink') {
      const { paymentLinkId } = command;
      if (!product) throw unavailable(paymentLinkId, 'its product does not exist');
      if (product.deleted) throw unavailable(paymentLinkId, `product ${product.id} is deleted`);
      if (!product.isActive) throw unavailable(paymentLinkId, `product ${product.id} is inactive`);
      return [{ type: 'ProductOfferedByPaymentLink', data: { paymentLinkId, at: now } }];
    }
    if (!product || product.deleted) throw new InvalidStateError('product does not exist', 'resource_missing');
    if (command.type === 'DeleteProduct' || (product.isActive && command.changes.isActive === false))
      refuseWhileOffered('product', product.id, pendingOffers(offers, now, command.settledOffers));
    if (command.type === 'UpdateProduct')
      return [{ type: 'ProductUpdated', data: { changes: command.changes, at: now } }];
    return [{ type: 'ProductDeleted', data: { at: now } }];
  },
};

export const priceAggregate: Aggregate<Offered<Price>, PriceEvent, PriceCommand> = {
  category: 'price',
  initialState: () => ({ record: null, offers: [] }),
  evolve: withOffers(evolvePrice),
  decide({ record: price, offers }, command, { now }) {
    if (command.type === 'CreatePrice')
      return price ? [] : [{ type: 'PriceCreated', data: { price: { ...command.price, createdAt: now } } }];
    if (command.type === 'OfferThroughPaymentLink') {
      const { paymentLinkId } = command;
      if (!price) throw unavailable(paymentLinkId, 'its price does not exist');
      if (!price.isActive) throw unavailable(paymentLinkId, `price ${price.id} is inactive`);
      return [{ type: 'PriceOfferedByPaymentLink', data: { paymentLinkId, at: now } }];
    }
    if (!price) throw new InvalidStateError('price does not exist', 'resource_missing');
    if (price.isActive && command.changes.isActive === false)
      refuseWhileOffered('price', price.id, pendingOffers(offers, now, command.settledOffers));
    return [{ type: 'PriceUpdated', data: { changes: command.changes, at: now } }];
  },
};

/** What a new payment link sells from the catalog: an existing product, and its existing price if the link names one. */
export type PaymentLinkOffer = { paymentLinkId: string; productId: string; priceId: string | null };

/**
 * Offers a new link's product and price on their own streams. Both offers are decided on the
 * streams as they stand before either is appended, so a link refused for one (a deleted product
 * whose price is still active) leaves no offer on the other. Only a change that lands on the
 * price between that check and its own offer can still refuse the link after the product's offer
 * is appended: closing that needs one append across both streams, which the event store port has not.
 * Returns the log position of the last offer.
 */
export async function offerThroughPaymentLink(
  commands: CommandHandler,
  ctx: CommandContext,
  { paymentLinkId, productId, priceId }: PaymentLinkOffer,
): Promise<bigint | null> {
  const offer: OfferThroughPaymentLink = { type: 'OfferThroughPaymentLink', paymentLinkId };
  const tenant = { organizationId: ctx.organizationId, environment: ctx.environment };
  // The decided events are dropped (the appends below decide again on the same reads): only a refusal matters here.
  const check = { now: new Date(0).toISOString() };
  const product = await commands.load(productAggregate, productId, tenant);
  productAggregate.decide(product.state, offer, check);
  const price = priceId === null ? null : await commands.load(priceAggregate, priceId, tenant);
  if (price) priceAggregate.decide(price.state, offer, check);
  const offered = await commands.handle(productAggregate, productId, offer, ctx, product);
  if (priceId === null || price === null) return offered.position;
  return (await commands.handle(priceAggregate, priceId, offer, ctx, price)).position;
}
