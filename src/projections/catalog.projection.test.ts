import test from 'ava';
import type { Price } from '../actors/catalog.ts';
import { createdPrice, createdProduct } from '../actors/catalog.fixture.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { catalogProjection, PRODUCTS, type ProductDoc } from './catalog.projection.ts';
import { createTestLog } from './test-log.ts';

const AT = '2026-01-01T00:00:00.000Z';

const price = (id: string, terms: Pick<Price, 'type' | 'currency' | 'interval' | 'intervalCount'>) => ({
  type: 'PriceCreated',
  data: { price: createdPrice({ id, unitAmount: '1000000', createdAt: AT, ...terms }) },
});

test("a product keeps its listed prices' terms, once each (a payer's ad hoc price left out), through its own updates, so the list's price filters read products alone", async (t) => {
  const store = createEmbeddedReadStore({ writes: 'trusted' });
  const { append } = createTestLog(AT);
  const apply = async (streamId: string, event: { type: string; data: object }, actor = 'test') => {
    const recorded = append(streamId, event);
    await catalogProjection.apply({ ...recorded, metadata: { ...recorded.metadata, actor } }, store);
  };
  await apply('product-prod-1', {
    type: 'ProductCreated',
    data: { product: createdProduct({ name: 'Plan', defaultPriceId: null, createdAt: AT }) },
  });
  const monthly = { type: 'recurring', currency: 'usdc', interval: 'month', intervalCount: 1 } as const;
  await apply('price-a', price('a', monthly));
  await apply('price-b', price('b', monthly));
  await apply('price-c', price('c', { type: 'one_time', currency: 'usdt', interval: null, intervalCount: null }));
  await apply(
    'price-d',
    price('d', { type: 'one_time', currency: 'dai', interval: null, intervalCount: null }),
    'payer',
  );
  await apply('product-prod-1', { type: 'ProductUpdated', data: { changes: { name: 'Plan 2' }, at: AT } });
  const products = store.collection<ProductDoc>(PRODUCTS);
  const doc = await products.get('prod-1');
  t.is(doc?.defaultPriceId, 'a');
  t.deepEqual(doc?.priceTerms, [monthly, { type: 'one_time', currency: 'usdt', interval: null, intervalCount: null }]);
  t.is(
    (await products.find({ priceTerms: { $elemMatch: { currency: 'usdc', type: { $in: ['recurring'] } } } })).length,
    1,
  );
  t.is((await products.find({ priceTerms: { $elemMatch: { currency: 'usdc', type: 'one_time' } } })).length, 0);
  t.is((await products.find({ priceTerms: { $elemMatch: { currency: 'dai' } } })).length, 0);
});
