import { evolvePrice, evolveProduct, type PriceEvent, type ProductEvent } from '../actors/catalog.ts';
import type { Price, Product } from '../actors/catalog.ts';
import type { ReadDocument } from '../read-store/read-store.ts';
import type { Projection } from './projection.ts';

export type ProductDoc = ReadDocument & Product;
export type PriceDoc = ReadDocument & Price;
export const PRODUCTS = 'products';
export const PRICES = 'prices';

/** Products and prices. */
export const catalogProjection: Projection = {
  name: 'catalog',
  collections: [PRODUCTS, PRICES],
  categories: ['product', 'price'],
  async apply(event, store) {
    if (event.streamId.startsWith('product-')) {
      const products = store.collection<ProductDoc>(PRODUCTS);
      const id = event.streamId.slice('product-'.length);
      const next = evolveProduct(await products.get(id), event as unknown as ProductEvent);
      if (next) await products.put({ ...next, _id: id });
    } else if (event.streamId.startsWith('price-')) {
      const prices = store.collection<PriceDoc>(PRICES);
      const id = event.streamId.slice('price-'.length);
      const typed = event as unknown as PriceEvent;
      const next = evolvePrice(await prices.get(id), typed);
      if (!next) return;
      await prices.put({ ...next, _id: id });
      if (typed.type === 'PriceCreated') {
        const products = store.collection<ProductDoc>(PRODUCTS);
        const product = await products.get(next.productId);
        if (product && !product.defaultPriceId) await products.put({ ...product, defaultPriceId: next.id });
      }
    }
  },
};
