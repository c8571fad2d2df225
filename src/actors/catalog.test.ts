import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { ConflictError } from '../shared/errors.ts';
import {
  offerThroughPaymentLink,
  priceAggregate,
  productAggregate,
  type OfferThroughPaymentLink,
  type PriceEvent,
  type ProductEvent,
} from './catalog.ts';
import { createdPrice, createdProduct } from './catalog.fixture.ts';
import { readCountingStore } from '../../test/support/counting-stores.ts';
import { createCommandHandler } from './command-handler.ts';
import { givenWhenThen } from './given-when-then.ts';

const CREATED_AT = '2026-01-01T00:00:00.000Z';
const NOW = '2026-01-01T00:30:00.000Z';
const offer: OfferThroughPaymentLink = { type: 'OfferThroughPaymentLink', paymentLinkId: 'link-1' };
const tenant = { organizationId: 'org-1', environment: 'test' as const };

const productCreated: ProductEvent = {
  type: 'ProductCreated',
  data: { product: createdProduct({ ...tenant, createdAt: CREATED_AT }) },
};
const priceCreated: PriceEvent = {
  type: 'PriceCreated',
  data: { price: createdPrice({ ...tenant, createdAt: CREATED_AT }) },
};
const productDeleted: ProductEvent = { type: 'ProductDeleted', data: { at: CREATED_AT } };
const productDeactivated: ProductEvent = {
  type: 'ProductUpdated',
  data: { changes: { isActive: false }, at: CREATED_AT },
};
const priceDeactivated: PriceEvent = { type: 'PriceUpdated', data: { changes: { isActive: false }, at: CREATED_AT } };

const product = givenWhenThen(productAggregate);
const price = givenWhenThen(priceAggregate);

test('an active product is offered by the link: one fact, and the product is unchanged by it', (t) => {
  const offered = product([productCreated]).when(offer, NOW);
  t.deepEqual(offered, [{ type: 'ProductOfferedByPaymentLink', data: { paymentLinkId: 'link-1', at: NOW } }]);
  t.deepEqual(product([productCreated, ...offered]).state().record, product([productCreated]).state().record);
});

test('an active price is offered by the link: one fact, and the price is unchanged by it', (t) => {
  const offered = price([priceCreated]).when(offer, NOW);
  t.deepEqual(offered, [{ type: 'PriceOfferedByPaymentLink', data: { paymentLinkId: 'link-1', at: NOW } }]);
  t.deepEqual(price([priceCreated, ...offered]).state().record, price([priceCreated]).state().record);
});

test('a product or price that does not exist, is deleted or is inactive is not offered: 409 payment_link_unavailable naming why', (t) => {
  const cases: [() => unknown, RegExp][] = [
    [() => product([]).when(offer), /its product does not exist/],
    [() => product([productCreated, productDeleted]).when(offer), /product prod-1 is deleted/],
    [() => product([productCreated, productDeactivated]).when(offer), /product prod-1 is inactive/],
    [() => price([]).when(offer), /its price does not exist/],
    [() => price([priceCreated, priceDeactivated]).when(offer), /price price-1 is inactive/],
  ];
  for (const [decide, why] of cases) {
    const error = t.throws(decide, { instanceOf: ConflictError, message: why });
    t.is((error as ConflictError | undefined)?.code, 'payment_link_unavailable');
  }
});

const offeredAt = (at: string) => ({ paymentLinkId: 'link-1', at });
const LATER = '2026-01-01T00:30:59.999Z';
const MINUTE_LATER = '2026-01-01T00:31:00.000Z';

test('a product is not deleted or deactivated, nor a price deactivated, while a link offered on its stream may still be being created: 409 naming the link', (t) => {
  const productOffer: ProductEvent = { type: 'ProductOfferedByPaymentLink', data: offeredAt(NOW) };
  const priceOffer: PriceEvent = { type: 'PriceOfferedByPaymentLink', data: offeredAt(NOW) };
  const cases: [() => unknown, string][] = [
    [() => product([productCreated, productOffer]).when({ type: 'DeleteProduct' }, LATER), 'product_in_use'],
    [
      () =>
        product([productCreated, productOffer]).when(
          { type: 'UpdateProduct', changes: { isActive: false }, settledOffers: ['link-0'] },
          LATER,
        ),
      'product_in_use',
    ],
    [
      () => price([priceCreated, priceOffer]).when({ type: 'UpdatePrice', changes: { isActive: false } }, LATER),
      'price_in_use',
    ],
  ];
  for (const [decide, code] of cases) {
    const error = t.throws(decide, {
      instanceOf: ConflictError,
      message: /payment links still being created \(link-1\)/,
    });
    t.is((error as ConflictError | undefined)?.code, code);
  }
});

test('an offer whose link the read model has (settled), or made a minute ago or more (its request died), holds nothing back; nor does it hold back other changes', (t) => {
  const productOffer: ProductEvent = { type: 'ProductOfferedByPaymentLink', data: offeredAt(NOW) };
  const priceOffer: PriceEvent = { type: 'PriceOfferedByPaymentLink', data: offeredAt(NOW) };
  const settled = ['link-1'];
  t.like(product([productCreated, productOffer]).when({ type: 'DeleteProduct', settledOffers: settled }, LATER), [
    { type: 'ProductDeleted' },
  ]);
  t.like(product([productCreated, productOffer]).when({ type: 'DeleteProduct' }, MINUTE_LATER), [
    { type: 'ProductDeleted' },
  ]);
  t.like(product([productCreated, productOffer]).when({ type: 'UpdateProduct', changes: { name: 'Pass' } }, LATER), [
    { type: 'ProductUpdated' },
  ]);
  t.like(
    price([priceCreated, priceOffer]).when(
      { type: 'UpdatePrice', changes: { isActive: false }, settledOffers: settled },
      LATER,
    ),
    [{ type: 'PriceUpdated' }],
  );
  t.like(price([priceCreated, priceOffer]).when({ type: 'UpdatePrice', changes: { nickname: 'Door' } }, LATER), [
    { type: 'PriceUpdated' },
  ]);
});

async function catalogWith(t: ExecutionContext, productEvents: ProductEvent[], priceEvents: PriceEvent[]) {
  const dir = await mkdtemp(join(tmpdir(), 'weir-catalog-'));
  const eventStore = createSqliteEventStore({ path: join(dir, 'events.sqlite3') });
  t.teardown(async () => {
    await eventStore.close();
    await rm(dir, { recursive: true, force: true });
  });
  const metadata = { ...tenant, actor: 'test', correlationId: 'c-1', occurredAt: CREATED_AT };
  const append = (stream: string, events: { type: string; data: object }[]) =>
    eventStore.append(
      stream,
      events.map((e, i) => ({
        id: `${stream}-${i}`,
        type: e.type,
        data: JSON.parse(JSON.stringify(e.data)),
        metadata,
      })),
      'any',
    );
  await append('product-prod-1', productEvents);
  await append('price-price-1', priceEvents);
  const counting = readCountingStore(eventStore);
  const commands = createCommandHandler({ eventStore: counting, clock: createManualClock() });
  const offers = async (stream: string) =>
    (await eventStore.readStream(stream)).filter((e) => e.type.endsWith('OfferedByPaymentLink')).length;
  return { commands, offers, reads: counting.reads };
}

const ctx = { ...tenant, actor: 'test' };
const link = { paymentLinkId: 'link-1', productId: 'prod-1', priceId: 'price-1' };

test('a link is offered on both streams when its product and price are active, each stream read once', async (t) => {
  const { commands, offers, reads } = await catalogWith(t, [productCreated], [priceCreated]);
  t.not(await offerThroughPaymentLink(commands, ctx, link), null);
  t.deepEqual(reads, ['product-prod-1', 'price-price-1'], 'the checks and the appends share one read per stream');
  t.is(await offers('product-prod-1'), 1);
  t.is(await offers('price-price-1'), 1);
});

test('a link refused for its product or for its price leaves no offer on the other, still offered, stream', async (t) => {
  const cases: [string, ProductEvent[], PriceEvent[]][] = [
    ['product deleted', [productCreated, productDeleted], [priceCreated]],
    ['product inactive', [productCreated, productDeactivated], [priceCreated]],
    ['price inactive', [productCreated], [priceCreated, priceDeactivated]],
  ];
  for (const [name, productEvents, priceEvents] of cases) {
    const { commands, offers } = await catalogWith(t, productEvents, priceEvents);
    await t.throwsAsync(offerThroughPaymentLink(commands, ctx, link), { instanceOf: ConflictError }, name);
    t.is(await offers('product-prod-1'), 0, name);
    t.is(await offers('price-price-1'), 0, name);
  }
});
