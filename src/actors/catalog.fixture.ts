import type { Price, Product } from './catalog.ts';

const AT = '2026-01-01T00:00:00.000Z';

/** A product of org-1's test environment, active, its fields as a created one has them; `fields` over it. */
export const productFixture = (fields: Partial<Product> = {}): Product => ({
  id: 'prod-1',
  organizationId: 'org-1',
  environment: 'test',
  name: 'Ticket',
  description: null,
  isActive: true,
  unitLabel: null,
  url: null,
  images: [],
  metadata: {},
  visibility: 10,
  defaultPriceId: 'price-1',
  createdAt: AT,
  updatedAt: AT,
  deleted: false,
  ...fields,
});

/** A one-time USDC price of prod-1, active; `fields` over it. */
export const priceFixture = (fields: Partial<Price> = {}): Price => ({
  id: 'price-1',
  organizationId: 'org-1',
  environment: 'test',
  productId: 'prod-1',
  type: 'one_time',
  currency: 'usdc',
  unitAmount: '100000000',
  interval: null,
  intervalCount: null,
  isActive: true,
  nickname: null,
  metadata: {},
  billingScheme: 'per_unit',
  createdAt: AT,
  updatedAt: AT,
  ...fields,
});

/** The product as its `ProductCreated` event carries it. */
export function createdProduct(fields: Partial<Product> = {}): Omit<Product, 'updatedAt' | 'deleted'> {
  const { updatedAt: _updatedAt, deleted: _deleted, ...created } = productFixture(fields);
  return created;
}

/** The price as its `PriceCreated` event carries it. */
export function createdPrice(fields: Partial<Price> = {}): Omit<Price, 'updatedAt'> {
  const { updatedAt: _updatedAt, ...created } = priceFixture(fields);
  return created;
}
