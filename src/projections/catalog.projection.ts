import { evolvePrice, evolveProduct, type PriceEvent, type ProductEvent } from '../actors/catalog.ts';
import type { Price, Product } from '../actors/catalog.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import type { ReadDocument } from '../read-store/read-store.ts';
import type { Projection } from './projection.ts';

/**
 * `adHoc`: made by a payer's click (an amount chosen on a payment link, an invoice paid), for that
 * one checkout session, not by the merchant: kept for the sessions that name it, out of the lists.
 */
export type ProductDoc = ReadDocument & Product & { adHoc?: boolean; priceTerms?: PriceTerms[] };
/**
 * What a product list's price filters ask of a price. A price's terms never change, so the product
 * keeps those of its listed prices (active or not): the filter then reads products alone, never the
 * tenant's whole price list.
 */
export type PriceTerms = Pick<Price, 'type' | 'currency' | 'interval' | 'intervalCount'>;
export type PriceDoc = ReadDocument & Price & { adHoc?: boolean };
export const PRODUCTS = 'products';
export const PRICES = 'prices';

/** A list's filter leaving ad hoc records out (documents written before the mark have none). */
export const CATALOG_LISTED = { adHoc: { $ne: true } } as const;

/** The hosted pages act as the payer: what their sessions create is ad hoc. */
const byPayer = (event: RecordedEvent): boolean => event.metadata.actor === 'payer';

/** Products and prices. */
export const catalogProjection: Projection = {
  name: 'catalog',
  // 2: records created by a payer are marked ad hoc (and never made a product's default price).
  // 3: products keep their listed prices' terms (`priceTerms`).
  version: 3,
  collections: [PRODUCTS, PRICES],
  categories: ['product', 'price'],
  async apply(event, store) {
    if (event.streamId.startsWith('product-')) {
      const products = store.collection<ProductDoc>(PRODUCTS);
      const id = event.streamId.slice('product-'.length);
      const typed = event as unknown as ProductEvent;
      const current = await products.get(id);
      const next = evolveProduct(current, typed);
      const adHoc = typed.type === 'ProductCreated' ? byPayer(event) : (current?.adHoc ?? false);
      if (next) await products.put({ ...next, adHoc, priceTerms: current?.priceTerms ?? [], _id: id });
    } else if (event.streamId.startsWith('price-')) {
      const prices = store.collection<PriceDoc>(PRICES);
      const id = event.streamId.slice('price-'.length);
      const typed = event as unknown as PriceEvent;
      const current = await prices.get(id);
      const next = evolvePrice(current, typed);
      if (!next) return;
      const adHoc = typed.type === 'PriceCreated' ? byPayer(event) : (current?.adHoc ?? false);
      await prices.put({ ...next, adHoc, _id: id });
      // A payer's amount is no price the merchant set: never the product's default, out of its terms.
      if (typed.type === 'PriceCreated' && !adHoc) {
        const products = store.collection<ProductDoc>(PRODUCTS);
        const product = await products.get(next.productId);
        if (!product) return;
        const terms: PriceTerms = {
          type: next.type,
          currency: next.currency,
          interval: next.interval,
          intervalCount: next.intervalCount,
        };
        const held = product.priceTerms ?? [];
        // A batch retried applies the event again: the terms are a set.
        const same = (t: PriceTerms) =>
          t.type === terms.type &&
          t.currency === terms.currency &&
          t.interval === terms.interval &&
          t.intervalCount === terms.intervalCount;
        await products.put({
          ...product,
          defaultPriceId: product.defaultPriceId ?? next.id,
          priceTerms: held.some(same) ? held : [...held, terms],
        });
      }
    }
  },
};
