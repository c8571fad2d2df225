import { randomUUID } from 'node:crypto';
import test from 'ava';
import { OFFER_SETTLES_WITHIN_MS, offerThroughPaymentLink } from '../../src/actors/catalog.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { PRICES, PRODUCTS } from '../../src/projections/catalog.projection.ts';
import type { ReadDocument, ReadStore } from '../../src/read-store/read-store.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';
import {
  appendAsEarlierWeir,
  assertError,
  assertRejectedWithoutWrite,
  type Api,
  type Page,
  type Price,
} from './helpers.ts';

type Link = {
  id: string;
  organizationId: string;
  url: string;
  livemode: boolean;
  isActive: boolean;
  type: string;
  pricing: 'fixed' | 'variable' | 'subscription';
  priceType: string;
  title: string;
  description: string | null;
  tags: string[];
  currency: string;
  amount: string | null;
  priceId: string | null;
  productId: string;
  interval: string | null;
  intervalCount: number | null;
  suggestedAmounts: string[];
  minimumAmount: string | null;
  maximumAmount: string | null;
  nameCollection: boolean;
  emailCollection: boolean;
  phoneNumberCollection: boolean;
  billingAddressCollection: boolean;
  shippingAddressCollection: boolean;
  customFields: {
    fields: {
      key: string;
      type: string;
      label: { type: string; custom: string };
      optional: boolean;
      text?: object;
      numeric?: object;
      dropdown?: object;
    }[];
  };
  submitType: string;
  afterCompletion: string;
  afterCompletionRedirectUrl: string | null;
  afterCompletionConfirmMsg: string | null;
  allowPromotionCodes: boolean;
  allowedChains: { chainId: number; isPreferred: boolean }[];
  metadata: Record<string, string>;
  createdAt: string;
  updatedAt: string;
};
type Product = { id: string; name: string; defaultPrice: Price | null };

const fixed = { title: 'Concert ticket', amount: '2500000000', currency: 'usdc' };

async function createLink(t: { is(a: unknown, b: unknown, m?: string): void }, api: Api, body: object): Promise<Link> {
  const created = await api.post<Link>('/api/v1/payment-links', body);
  t.is(created.status, 200, JSON.stringify(created.body));
  return created.body;
}

async function recurringProduct(api: Api): Promise<Product> {
  return (
    await api.post<Product>('/api/v1/products', {
      name: 'Pro plan',
      defaultPriceData: { currency: 'usdc', unitAmount: '1000000000', interval: 'month', intervalCount: 3 },
    })
  ).body;
}

// --- create, read, list, update, delete -----------------------------------------------------

test('a fixed-price link from amount and currency: created with its own product and price, read, listed, updated, deleted', async (t) => {
  const weir = await startTestWeir(t);
  const { api, organizationId } = await createMerchant(weir.url);
  const link = await createLink(t, api, {
    ...fixed,
    description: 'Front row',
    tags: ['music'],
    nameCollection: true,
    emailCollection: true,
    allowPromotionCodes: true,
    afterCompletion: 'redirect',
    afterCompletionRedirectUrl: 'https://shop.example/thanks?session={CHECKOUT_SESSION_ID}',
    metadata: { venue: 'hall' },
  });
  t.like(link, {
    organizationId,
    livemode: false,
    isActive: true,
    type: 'multiple',
    pricing: 'fixed',
    priceType: 'one_time',
    title: 'Concert ticket',
    description: 'Front row',
    currency: 'usdc',
    amount: '2500000000',
    interval: null,
    suggestedAmounts: [],
    nameCollection: true,
    emailCollection: true,
    phoneNumberCollection: false,
    submitType: 'pay',
    afterCompletion: 'redirect',
    allowPromotionCodes: true,
    metadata: { venue: 'hall' },
  });
  t.is(link.url, `${weir.url}/pay/${link.id}`);
  t.false('deleted' in link);
  t.false('environment' in link);

  // The amount became a catalog price of a product named after the link.
  const price = (await api.get<Price>(`/api/v1/prices/${link.priceId}`)).body;
  t.like(price, { type: 'one_time', currency: 'usdc', unitAmount: '2500000000', productId: link.productId });
  t.is((await api.get<Product>(`/api/v1/products/${link.productId}`)).body.name, 'Concert ticket');

  t.deepEqual((await api.get<Link>(`/api/v1/payment-links/${link.id}`)).body, link);
  const list = (await api.get<Page<Link>>('/api/v1/payment-links')).body;
  t.deepEqual(
    list.data.map((l) => l.id),
    [link.id],
  );

  const updated = await api.put<Link>(`/api/v1/payment-links/${link.id}`, {
    title: 'Concert ticket (late)',
    description: null,
    phoneNumberCollection: true,
    submitType: 'book',
    customFields: {
      fields: [
        {
          key: 'company',
          type: 'text',
          label: { type: 'custom', custom: 'Company' },
          optional: true,
          text: { maximumLength: 40 },
        },
      ],
    },
    afterCompletion: 'hosted_confirmation',
    afterCompletionConfirmMsg: 'See you there',
    // Clients of the reference send the whole link back: repeating the price is fine.
    amount: 2500000000,
    currency: 'usdc',
  });
  t.is(updated.status, 200, JSON.stringify(updated.body));
  t.like(updated.body, {
    title: 'Concert ticket (late)',
    description: null,
    phoneNumberCollection: true,
    submitType: 'book',
    afterCompletion: 'hosted_confirmation',
    afterCompletionRedirectUrl: null,
    afterCompletionConfirmMsg: 'See you there',
    amount: '2500000000',
  });
  t.deepEqual(updated.body.customFields.fields[0], {
    key: 'company',
    type: 'text',
    label: { type: 'custom', custom: 'Company' },
    optional: true,
    text: { minimumLength: null, maximumLength: 40 },
  });
  t.true(updated.body.updatedAt >= link.updatedAt);

  const removed = await api.delete<{ statusCode: number; message: string }>(`/api/v1/payment-links/${link.id}`);
  t.is(removed.status, 200);
  t.is(removed.body.statusCode, 200);
  assertError(t, await api.get(`/api/v1/payment-links/${link.id}`), 404, { code: 'resource_missing' });
  assertError(t, await api.put(`/api/v1/payment-links/${link.id}`, { title: 'x' }), 404);
  assertError(t, await api.delete(`/api/v1/payment-links/${link.id}`), 404);
  assertError(t, await api.put(`/api/v1/payment-links/${link.id}/activate`, {}), 404);
  t.is((await api.get<Page<Link>>('/api/v1/payment-links')).body.count, 0);
});

test("fixed-price links from a price id and from a product's default price sell that price; no new price is made", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const product = (
    await api.post<Product>('/api/v1/products', {
      name: 'Mug',
      defaultPriceData: { currency: 'usdc', unitAmount: '1500000000' },
    })
  ).body;
  const byPrice = await createLink(t, api, { title: 'Mug', priceId: product.defaultPrice!.id });
  t.like(byPrice, {
    pricing: 'fixed',
    priceId: product.defaultPrice!.id,
    productId: product.id,
    amount: '1500000000',
    currency: 'usdc',
  });
  const byProduct = await createLink(t, api, { title: 'Mug', productId: product.id, pricing: 'fixed' });
  t.like(byProduct, { pricing: 'fixed', priceId: product.defaultPrice!.id, productId: product.id });
  // A product with an amount: a new one-time price of that product.
  const withAmount = await createLink(t, api, {
    title: 'Mug (sale)',
    productId: product.id,
    amount: '1000000000',
    currency: 'usdc',
  });
  t.like(withAmount, { pricing: 'fixed', productId: product.id, amount: '1000000000' });
  t.not(withAmount.priceId, product.defaultPrice!.id);
  t.is((await api.get<Page<Price>>(`/api/v1/prices?productId=${product.id}`)).body.count, 2);
});

test('subscription links sell a recurring price, by price id or by a product whose default price is recurring', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const plan = await recurringProduct(api);
  for (const body of [
    { priceId: plan.defaultPrice!.id },
    { productId: plan.id },
    { productId: plan.id, pricing: 'subscription' },
  ]) {
    const link = await createLink(t, api, { title: 'Pro', ...body });
    t.like(link, {
      pricing: 'subscription',
      priceType: 'recurring',
      interval: 'month',
      intervalCount: 3,
      amount: '1000000000',
      priceId: plan.defaultPrice!.id,
      productId: plan.id,
    });
    // Renewal invoices are mailed to the payer, so a subscription link collects the email unless told otherwise, and cannot be told otherwise.
    t.is(link.emailCollection, true);
  }
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/payment-links', { title: 'Pro', productId: plan.id, emailCollection: false }),
    {
      field: 'emailCollection',
      message: /a subscription link must collect the payer's email/,
    },
  );
  const link = await createLink(t, api, { title: 'Pro', productId: plan.id });
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.put(`/api/v1/payment-links/${link.id}`, { emailCollection: false }),
    { field: 'emailCollection' },
  );
});

test('a subscription link on a price billed by the week or the day is refused at creation, naming the field that carried it, as a subscription session is: its page could take no payer', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const plan = async (interval: string, intervalCount: number) =>
    (
      await api.post<Product>('/api/v1/products', {
        name: `Box every ${intervalCount} ${interval}`,
        defaultPriceData: { currency: 'usdc', unitAmount: '1000000000', type: 'recurring', interval, intervalCount },
      })
    ).body;
  const weekly = await plan('week', 1);
  const daily = await plan('day', 30);
  const unbillable = (interval: string) =>
    new RegExp(
      `a subscription is billed monthly, quarterly, half-yearly or annually \\(interval month or year\\), not by the ${interval}$`,
    );
  const cases: [string, object, string, string][] = [
    ['a weekly priceId', { priceId: weekly.defaultPrice!.id }, 'priceId', 'week'],
    [
      'a weekly priceId, pricing subscription',
      { priceId: weekly.defaultPrice!.id, pricing: 'subscription' },
      'priceId',
      'week',
    ],
    ['a product whose default price is weekly', { productId: weekly.id }, 'productId', 'week'],
    ['a daily priceId', { priceId: daily.defaultPrice!.id }, 'priceId', 'day'],
  ];
  for (const [what, body, field, interval] of cases) {
    t.log(what);
    await assertRejectedWithoutWrite(t, weir, () => api.post('/api/v1/payment-links', { title: 'Box', ...body }), {
      field,
      message: unbillable(interval),
    });
  }
  // A one-time link on such a product is no subscription, so its price is refused as it was: a recurring price makes a subscription link.
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/payment-links', { title: 'Box', priceId: weekly.defaultPrice!.id, pricing: 'fixed' }),
    { field: 'priceId', message: /a fixed-price link needs a one-time price/ },
  );
  t.is((await api.get<Page<Link>>('/api/v1/payment-links')).body.count, 0);
});

test('a variable-price link takes suggested amounts and bounds; it sells its own product with no price', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const link = await createLink(t, api, {
    title: 'Donation',
    currency: 'usdc',
    submitType: 'donate',
    suggestedAmounts: ['500000000', 1000000000],
    minimumAmount: '100000000',
    maximumAmount: 50000000000,
  });
  t.like(link, {
    pricing: 'variable',
    priceType: 'one_time',
    amount: null,
    priceId: null,
    currency: 'usdc',
    minimumAmount: '100000000',
    maximumAmount: '50000000000',
  });
  t.deepEqual(link.suggestedAmounts, ['500000000', '1000000000']);
  t.is((await api.get<Product>(`/api/v1/products/${link.productId}`)).body.name, 'Donation');
  t.is((await api.get<Page<Price>>(`/api/v1/prices?productId=${link.productId}`)).body.count, 0);

  const updated = await api.put<Link>(`/api/v1/payment-links/${link.id}`, {
    suggestedAmounts: ['2000000000'],
    maximumAmount: null,
  });
  t.like(updated.body, { suggestedAmounts: ['2000000000'], maximumAmount: null, minimumAmount: '100000000' });
  // The reference's preferredCurrency stands in for the deprecated currency.
  t.like(await createLink(t, api, { title: 'Tip', preferredCurrency: 'dai' }), {
    pricing: 'variable',
    currency: 'dai',
  });
});

test("custom fields of every type and allowed chains are stored in the reference's shapes", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const link = await createLink(t, api, {
    ...fixed,
    customFields: {
      fields: [
        {
          key: 'company',
          type: 'text',
          label: { type: 'custom', custom: 'Company' },
          optional: false,
          text: { minimumLength: 2, maximumLength: 40 },
        },
        { key: 'seats', type: 'numeric', label: 'Seats', numeric: { minimum: 1, maximum: '10.5', maximumLength: 4 } },
        {
          key: 'size',
          type: 'dropdown',
          label: { custom: 'Size' },
          optional: true,
          dropdown: {
            options: [
              { label: 'Small', value: 's' },
              { label: 'Large', value: 'l' },
            ],
          },
        },
      ],
    },
    allowedChains: [{ chainId: 7357, isPreferred: true }],
  });
  t.deepEqual(link.customFields.fields, [
    {
      key: 'company',
      type: 'text',
      label: { type: 'custom', custom: 'Company' },
      optional: false,
      text: { minimumLength: 2, maximumLength: 40 },
    },
    {
      key: 'seats',
      type: 'numeric',
      label: { type: 'custom', custom: 'Seats' },
      optional: false,
      numeric: { minimumLength: null, maximumLength: 4, minimum: '1', maximum: '10.5' },
    },
    {
      key: 'size',
      type: 'dropdown',
      label: { type: 'custom', custom: 'Size' },
      optional: true,
      dropdown: {
        options: [
          { label: 'Small', value: 's' },
          { label: 'Large', value: 'l' },
        ],
      },
    },
  ]);
  t.deepEqual(link.allowedChains, [{ chainId: 7357, isPreferred: true }]);
  const cleared = await api.put<Link>(`/api/v1/payment-links/${link.id}`, { customFields: null, allowedChains: [] });
  t.deepEqual(cleared.body.customFields, { fields: [] });
  t.deepEqual(cleared.body.allowedChains, []);
});

// --- activate and deactivate ----------------------------------------------------------------

test('deactivate and activate, by PUT (as the reference) or POST; repeating changes nothing; lists filter on isActive', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const link = await createLink(t, api, fixed);
  const other = await createLink(t, api, { ...fixed, title: 'Other', isActive: false });
  t.false(other.isActive);

  const off = await api.put<Link>(`/api/v1/payment-links/${link.id}/deactivate`, {});
  t.is(off.status, 200);
  t.false(off.body.isActive);
  t.false((await api.post<Link>(`/api/v1/payment-links/${link.id}/deactivate`)).body.isActive);
  t.is((await api.get<Page<Link>>('/api/v1/payment-links?isActive=true')).body.count, 0);
  t.true((await api.post<Link>(`/api/v1/payment-links/${link.id}/activate`)).body.isActive);
  t.true((await api.put<Link>(`/api/v1/payment-links/${link.id}/activate`, {})).body.isActive);
  t.deepEqual(
    (await api.get<Page<Link>>('/api/v1/payment-links?isActive=true')).body.data.map((l) => l.id),
    [link.id],
  );
  t.deepEqual(
    (await api.get<Page<Link>>('/api/v1/payment-links?isActive=false')).body.data.map((l) => l.id),
    [other.id],
  );
  // isActive in an update body switches it too.
  t.true((await api.put<Link>(`/api/v1/payment-links/${other.id}`, { isActive: true })).body.isActive);
  assertError(t, await api.get('/api/v1/payment-links?isActive=yes'), 400, { field: 'isActive' });
});

test('a link whose product or price is deleted or inactive is not activated, by any route: a 409 names what is missing and nothing is written, where the API showed it active while its page said not available', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const product = await api.post<Product>('/api/v1/products', {
    name: 'Tea',
    defaultPriceData: { currency: 'usdc', unitAmount: '100000000' },
  });
  const priceId = product.body.defaultPrice!.id;
  const productId = product.body.id;
  const link = await createLink(t, api, { title: 'Tea', priceId, isActive: false });
  const activations = [
    () => api.put(`/api/v1/payment-links/${link.id}/activate`, {}),
    () => api.post(`/api/v1/payment-links/${link.id}/activate`),
    () => api.put(`/api/v1/payment-links/${link.id}`, { isActive: true, title: 'Green tea' }),
  ];
  const refusedFor = async (missing: string) => {
    for (const activate of activations) {
      const refused = await assertRejectedWithoutWrite(t, weir, activate, {
        status: 409,
        code: 'payment_link_unavailable',
      });
      t.true(refused.message.startsWith(`payment link ${link.id} cannot be activated: ${missing};`), refused.message);
    }
    t.like((await api.get<Link>(`/api/v1/payment-links/${link.id}`)).body, { isActive: false, title: 'Tea' });
  };

  t.is((await api.put(`/api/v1/prices/${priceId}`, { isActive: false })).status, 200);
  await refusedFor(`price ${priceId} is inactive`);
  t.is((await api.put(`/api/v1/products/${productId}/deactivate`, {})).status, 200);
  await refusedFor(`product ${productId} is inactive`);
  t.is((await api.put(`/api/v1/products/${productId}/activate`, {})).status, 200);
  t.is((await api.put(`/api/v1/prices/${priceId}`, { isActive: true })).status, 200);
  t.true((await api.put<Link>(`/api/v1/payment-links/${link.id}/activate`, {})).body.isActive, 'sold again');

  t.is((await api.put(`/api/v1/payment-links/${link.id}/deactivate`, {})).status, 200);
  t.is((await api.delete(`/api/v1/products/${productId}`)).status, 200);
  await refusedFor(`product ${productId} is deleted`);
  // Switching it off, or an update that leaves it off, is still allowed.
  t.is((await api.put(`/api/v1/payment-links/${link.id}`, { title: 'Old tea' })).status, 200);
  t.is((await api.put(`/api/v1/payment-links/${link.id}/deactivate`, {})).status, 200);
});

/** Wraps a read store so that `get` answers with the documents `stale` holds, as a read model behind the log would. */
const lagging =
  (stale: Map<string, ReadDocument>) =>
  (store: ReadStore): ReadStore => ({
    ...store,
    collection<T extends ReadDocument>(name: string) {
      const collection = store.collection<T>(name);
      return { ...collection, get: async (id: string) => (stale.get(id) as T | undefined) ?? collection.get(id) };
    },
  });

test('a link refused because its product or price stopped being offered after the request read the catalog leaves no offer on either stream, also on the one still offered', async (t) => {
  const stale = new Map<string, ReadDocument>();
  const weir = await startTestWeir(t, {}, { wrapReadStore: lagging(stale) });
  const { api } = await createMerchant(weir.url);
  const changes: Record<string, (product: Product) => Promise<{ status: number }>> = {
    'product deleted, price active': (p) => api.delete(`/api/v1/products/${p.id}`),
    'product deactivated, price active': (p) => api.put(`/api/v1/products/${p.id}`, { isActive: false }),
    'price deactivated, product active': (p) => api.put(`/api/v1/prices/${p.defaultPrice!.id}`, { isActive: false }),
  };
  for (const [name, change] of Object.entries(changes)) {
    const product = (
      await api.post<Product>('/api/v1/products', {
        name,
        defaultPriceData: { currency: 'usdc', unitAmount: '100000000' },
      })
    ).body;
    const priceId = product.defaultPrice!.id;
    // The request reads the catalog as it was before the change: only the streams know.
    const before = [
      await weir.readStore.collection(PRODUCTS).get(product.id),
      await weir.readStore.collection(PRICES).get(priceId),
    ];
    t.is((await change(product)).status, 200, name);
    for (const doc of before) stale.set(doc!._id, doc!);
    const link = await api.post('/api/v1/payment-links', { title: 'Ticket', priceId });
    assertError(t, link, 409, { code: 'payment_link_unavailable' });
    for (const stream of [`product-${product.id}`, `price-${priceId}`]) {
      const offers = (await weir.eventStore.readStream(stream)).filter((e) => e.type.endsWith('OfferedByPaymentLink'));
      t.deepEqual(offers, [], `${name}: ${stream} has no offer of the refused link`);
    }
  }
});

test("a product is not deleted or deactivated, nor its price deactivated, between a link's offer and the link's creation (409 naming the link); an offer whose link never came holds nothing back after a minute", async (t) => {
  const clock = createManualClock(Date.now());
  const weir = await startTestWeir(t, {}, { clock });
  const { api, organizationId } = await createMerchant(weir.url);
  const product = (
    await api.post<Product>('/api/v1/products', {
      name: 'Ticket',
      defaultPriceData: { currency: 'usdc', unitAmount: '100000000' },
    })
  ).body;
  const priceId = product.defaultPrice!.id;
  // A link's request has made its offers and not yet created the link (or died there).
  const paymentLinkId = randomUUID();
  await offerThroughPaymentLink(
    weir.commands,
    { organizationId, environment: 'test', actor: 'test' },
    { paymentLinkId, productId: product.id, priceId },
  );
  const naming = { message: new RegExp(`still being created \\(${paymentLinkId}\\)`) };
  assertError(t, await api.delete(`/api/v1/products/${product.id}`), 409, { code: 'product_in_use', ...naming });
  assertError(t, await api.put(`/api/v1/products/${product.id}/deactivate`, {}), 409, {
    code: 'product_in_use',
    ...naming,
  });
  assertError(t, await api.put(`/api/v1/products/${product.id}`, { isActive: false }), 409, {
    code: 'product_in_use',
    ...naming,
  });
  assertError(t, await api.put(`/api/v1/prices/${priceId}`, { isActive: false }), 409, {
    code: 'price_in_use',
    ...naming,
  });
  t.is((await api.put(`/api/v1/products/${product.id}`, { name: 'Pass' })).status, 200, 'other changes go on');
  clock.advanceBy(OFFER_SETTLES_WITHIN_MS);
  t.is((await api.put(`/api/v1/prices/${priceId}`, { isActive: false })).status, 200);
  t.is((await api.delete(`/api/v1/products/${product.id}`)).status, 200);
});

test('a link created while its product is deleted or deactivated, or its price deactivated, is decided on their own streams: either refused, or the change comes after the link in that stream, never a link for what was already gone', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  type Race = { name: string; stream: (product: Product) => string; change: (product: Product) => Promise<unknown> };
  const races: Race[] = [
    {
      name: 'product deleted',
      stream: (p) => `product-${p.id}`,
      change: (p) => api.delete(`/api/v1/products/${p.id}`),
    },
    {
      name: 'product deactivated',
      stream: (p) => `product-${p.id}`,
      change: (p) => api.put(`/api/v1/products/${p.id}`, { isActive: false }),
    },
    {
      name: 'price deactivated',
      stream: (p) => `price-${p.defaultPrice!.id}`,
      change: (p) => api.put(`/api/v1/prices/${p.defaultPrice!.id}`, { isActive: false }),
    },
  ];
  let bothWent = 0;
  for (const race of races) {
    for (let round = 0; round < 12; round++) {
      const product = (
        await api.post<Product>('/api/v1/products', {
          name: `Ticket ${round}`,
          defaultPriceData: { currency: 'usdc', unitAmount: '100000000' },
        })
      ).body;
      // Both requests start in the same turn: each may find the read model before the other's write.
      const [link, change] = (await Promise.all([
        api.post<Link>('/api/v1/payment-links', { title: 'Ticket', priceId: product.defaultPrice!.id }),
        race.change(product),
      ])) as [Awaited<ReturnType<Api['post']>>, Awaited<ReturnType<Api['post']>>];
      const label = `${race.name}, round ${round}: link ${link.status} ${JSON.stringify(link.body)}, change ${change.status}`;
      if (link.status !== 200) {
        t.true([400, 409].includes(link.status), label);
        continue;
      }
      if (change.status !== 200) {
        t.like(change.body, { code: race.name.startsWith('price') ? 'price_in_use' : 'product_in_use' }, label);
        continue;
      }
      bothWent++;
      const linkId = (link.body as Link).id;
      const events = await weir.eventStore.readStream(race.stream(product));
      const offered = events.findIndex((e) => (e.data as { paymentLinkId?: string }).paymentLinkId === linkId);
      const changed = events.findIndex(
        (e) => e.type === 'ProductDeleted' || (e.type.endsWith('Updated') && 'isActive' in (e.data.changes as object)),
      );
      t.true(offered >= 0 && offered < changed, `${label}: the change must come after the link's offer`);
    }
  }
  t.log(`rounds where the link and the change both went through: ${bothWent}`);
});

test('a link whose product or price an earlier Weir deleted or deactivated shows isActive false in reads and list filters, and a whole link sent back with isActive true is accepted, where it showed true and the echo was a 409', async (t) => {
  const weir = await startTestWeir(t);
  const { api, organizationId } = await createMerchant(weir.url);
  const product = await api.post<Product>('/api/v1/products', {
    name: 'Tea',
    defaultPriceData: { currency: 'usdc', unitAmount: '100000000' },
  });
  const priceId = product.body.defaultPrice!.id;
  const productId = product.body.id;
  const link = await createLink(t, api, { title: 'Tea', priceId });
  const other = await createLink(t, api, fixed);
  // The API now refuses these while a link sells them (409 product_in_use): an earlier Weir wrote them.
  const earlier = (stream: string, type: string, data: object) =>
    appendAsEarlierWeir(weir, organizationId, stream, type, data);
  const shown = async (isActive: boolean, why: string) => {
    t.is((await api.get<Link>(`/api/v1/payment-links/${link.id}`)).body.isActive, isActive, why);
    const listed = (query: string) =>
      api.get<Page<Link>>(`/api/v1/payment-links?${query}`).then((r) => r.body.data.map((l) => l.id).sort());
    t.deepEqual(await listed('isActive=true'), (isActive ? [link.id, other.id] : [other.id]).sort(), why);
    t.deepEqual(await listed('isActive=false'), isActive ? [] : [link.id], why);
    t.is(
      (await api.get<Page<Link>>('/api/v1/payment-links')).body.data.find((l) => l.id === link.id)?.isActive,
      isActive,
      why,
    );
  };
  await shown(true, 'sold');
  await earlier(`price-${priceId}`, 'PriceUpdated', { changes: { isActive: false } });
  await shown(false, 'price inactive');
  await earlier(`price-${priceId}`, 'PriceUpdated', { changes: { isActive: true } });
  await shown(true, 'price active again');
  await earlier(`product-${productId}`, 'ProductUpdated', { changes: { isActive: false } });
  await shown(false, 'product inactive');
  await earlier(`product-${productId}`, 'ProductUpdated', { changes: { isActive: true } });
  await shown(true, 'product active again');
  await earlier(`product-${productId}`, 'ProductDeleted', {});
  await shown(false, 'product deleted');

  // A client that read the link while it sold sends it back whole: isActive true is no activation.
  const { id: _id, url: _url, livemode: _livemode, createdAt: _c, updatedAt: _u, organizationId: _o, ...whole } = link;
  const echoed = await api.put<Link>(`/api/v1/payment-links/${link.id}`, { ...whole, title: 'Old tea' });
  t.is(echoed.status, 200, JSON.stringify(echoed.body));
  t.like(echoed.body, { title: 'Old tea', isActive: false });
  // Switched off, it is not switched on again while its product is gone.
  t.is((await api.put(`/api/v1/payment-links/${link.id}/deactivate`, {})).status, 200);
  await assertRejectedWithoutWrite(t, weir, () => api.put(`/api/v1/payment-links/${link.id}`, whole), {
    status: 409,
    code: 'payment_link_unavailable',
  });
});

test('lists page like every list and filter by ids and pricing', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const a = await createLink(t, api, { ...fixed, title: 'A' });
  const b = await createLink(t, api, { title: 'B', currency: 'usdc' });
  const c = await createLink(t, api, { ...fixed, title: 'C' });
  const first = (await api.get<Page<Link>>('/api/v1/payment-links?limit=2')).body;
  t.like(first, { page: 1, limit: 2, count: 3, hasMore: true });
  const second = (await api.get<Page<Link>>('/api/v1/payment-links?limit=2&page=2')).body;
  t.like(second, { page: 2, count: 3, hasMore: false });
  t.deepEqual([...first.data, ...second.data].map((l) => l.id).sort(), [a.id, b.id, c.id].sort());
  t.deepEqual(
    (await api.get<Page<Link>>(`/api/v1/payment-links?ids=${a.id},${c.id}`)).body.data.map((l) => l.id).sort(),
    [a.id, c.id].sort(),
  );
  t.deepEqual(
    (await api.get<Page<Link>>('/api/v1/payment-links?pricing=variable')).body.data.map((l) => l.id),
    [b.id],
  );
  assertError(t, await api.get('/api/v1/payment-links?pricing=free'), 400, { field: 'pricing' });
  assertError(t, await api.get('/api/v1/payment-links?limit=0'), 400, { field: 'limit' });
});

// --- refusals -------------------------------------------------------------------------------

test('every invalid create is refused with a 400 naming the field, and writes nothing', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const other = await createMerchant(weir.url, 'Other shop');
  const product = (await api.post<Product>('/api/v1/products', { name: 'Bare' })).body;
  const inactive = (
    await api.post<Product>('/api/v1/products', {
      name: 'Old',
      isActive: false,
      defaultPriceData: { currency: 'usdc', unitAmount: '100000000' },
    })
  ).body;
  const plan = await recurringProduct(api);
  const foreign = (
    await other.api.post<Product>('/api/v1/products', {
      name: 'Theirs',
      defaultPriceData: { currency: 'usdc', unitAmount: '100000000' },
    })
  ).body;
  const text = (over: object = {}) => ({ key: 'company', type: 'text', label: 'Company', ...over });
  const custom = (...fields: unknown[]) => ({ ...fixed, customFields: { fields } });
  const variable = { title: 'Tip', currency: 'usdc' };

  const cases: [unknown, string | null, string?][] = [
    ['not an object', null],
    [{ amount: '100', currency: 'usdc' }, 'title', 'parameter_missing'],
    [{ ...fixed, title: '' }, 'title', 'parameter_invalid_string_empty'],
    [{ ...fixed, title: 'x'.repeat(251) }, 'title'],
    [{ ...fixed, type: 'forever' }, 'type'],
    [{ ...fixed, type: 'One_time' }, 'type'],
    [{ ...fixed, type: ['one_time'] }, 'type'],
    [{ ...fixed, amount: '-1' }, 'amount', 'parameter_invalid_integer'],
    [{ ...fixed, amount: '12.5' }, 'amount', 'parameter_invalid_integer'],
    [{ ...fixed, amount: '0' }, 'amount'],
    [{ ...fixed, amount: '9223372036854775808' }, 'amount'],
    [{ title: 'x', amount: '100' }, 'currency', 'parameter_missing'],
    [{ title: 'x' }, 'currency', 'parameter_missing'],
    [{ ...fixed, currency: 'doge' }, 'currency'],
    [{ title: 'x', priceId: 'nope' }, 'priceId', 'resource_missing'],
    [{ title: 'x', priceId: '00000000-0000-4000-8000-000000000000' }, 'priceId', 'resource_missing'],
    [{ title: 'x', priceId: foreign.defaultPrice!.id }, 'priceId', 'resource_missing'],
    [{ title: 'x', priceId: inactive.defaultPrice!.id }, 'priceId', 'product_inactive'],
    [{ title: 'x', priceId: plan.defaultPrice!.id, amount: '100' }, 'amount', 'parameters_exclusive'],
    [{ title: 'x', priceId: plan.defaultPrice!.id, productId: product.id }, 'productId'],
    [{ title: 'x', priceId: plan.defaultPrice!.id, currency: 'dai' }, 'currency'],
    [{ title: 'x', productId: foreign.id }, 'productId', 'resource_missing'],
    [{ title: 'x', productId: inactive.id }, 'productId', 'product_inactive'],
    [{ title: 'x', productId: product.id }, 'productId'],
    [{ title: 'x', productId: plan.id, currency: 'dai' }, 'currency'],
    [{ ...fixed, pricing: 'free' }, 'pricing'],
    [{ ...fixed, pricing: 'subscription' }, 'priceId'],
    [{ ...fixed, pricing: 'variable' }, 'amount'],
    [{ title: 'x', priceId: plan.defaultPrice!.id, pricing: 'variable' }, 'priceId'],
    [{ title: 'x', priceId: plan.defaultPrice!.id, pricing: 'fixed' }, 'priceId'],
    [{ ...variable, pricing: 'fixed' }, 'amount', 'parameter_missing'],
    [{ ...fixed, suggestedAmounts: ['100000000'] }, 'suggestedAmounts'],
    [{ ...fixed, minimumAmount: '100000000' }, 'minimumAmount'],
    [{ ...variable, suggestedAmounts: '100' }, 'suggestedAmounts'],
    [{ ...variable, suggestedAmounts: ['100000000', 'ten'] }, 'suggestedAmounts[1]', 'parameter_invalid_integer'],
    [{ ...variable, suggestedAmounts: ['100000000', '0'] }, 'suggestedAmounts[1]'],
    [{ ...variable, suggestedAmounts: ['1', '2', '3', '4', '5', '6'] }, 'suggestedAmounts'],
    [{ ...variable, suggestedAmounts: ['100000000', '100000000'] }, 'suggestedAmounts[1]'],
    [{ ...variable, suggestedAmounts: ['50000000'], minimumAmount: '100000000' }, 'suggestedAmounts[0]'],
    [{ ...variable, suggestedAmounts: ['900000000'], maximumAmount: '500000000' }, 'suggestedAmounts[0]'],
    [{ ...variable, minimumAmount: '0' }, 'minimumAmount'],
    [{ ...variable, minimumAmount: 'one' }, 'minimumAmount', 'parameter_invalid_integer'],
    [{ ...variable, minimumAmount: '500', maximumAmount: '400' }, 'minimumAmount'],
    [{ ...fixed, customFields: [] }, 'customFields'],
    [{ ...fixed, customFields: { fields: {} } }, 'customFields.fields'],
    [custom(...['a', 'b', 'c', 'd', 'e', 'f'].map((key) => text({ key }))), 'customFields.fields'],
    [custom('text'), 'customFields.fields[0]'],
    [custom(text({ type: undefined })), 'customFields.fields[0].type', 'parameter_missing'],
    [custom(text({ type: 'date' })), 'customFields.fields[0].type'],
    [custom(text({ key: undefined })), 'customFields.fields[0].key', 'parameter_missing'],
    [custom(text({ key: 'has space' })), 'customFields.fields[0].key'],
    [custom(text(), text({ key: 'Company' })), 'customFields.fields[1].key'],
    [custom(text({ label: undefined })), 'customFields.fields[0].label', 'parameter_missing'],
    [custom(text({ label: { type: 'custom' } })), 'customFields.fields[0].label.custom', 'parameter_missing'],
    [custom(text({ label: { type: 'preset', custom: 'Company' } })), 'customFields.fields[0].label.type'],
    [custom(text({ label: 'x'.repeat(51) })), 'customFields.fields[0].label'],
    [custom(text({ optional: 'no' })), 'customFields.fields[0].optional'],
    [custom(text({ text: { minimumLength: -1 } })), 'customFields.fields[0].text.minimumLength'],
    [
      custom(text({ text: { minimumLength: 1.5 } })),
      'customFields.fields[0].text.minimumLength',
      'parameter_invalid_integer',
    ],
    [custom(text({ text: { minimumLength: 5, maximumLength: 2 } })), 'customFields.fields[0].text.minimumLength'],
    [custom(text({ text: { maximumLength: 256 } })), 'customFields.fields[0].text.maximumLength'],
    [custom(text({ text: { maximumLength: 0 } })), 'customFields.fields[0].text.maximumLength'],
    [custom(text({ dropdown: { options: [{ label: 'A', value: 'a' }] } })), 'customFields.fields[0].dropdown'],
    [
      custom({ key: 'n', type: 'numeric', label: 'N', numeric: { minimum: 'one' } }),
      'customFields.fields[0].numeric.minimum',
    ],
    [
      custom({ key: 'n', type: 'numeric', label: 'N', numeric: { minimum: 1e21 } }),
      'customFields.fields[0].numeric.minimum',
    ],
    [
      custom({ key: 'n', type: 'numeric', label: 'N', numeric: { minimum: 10, maximum: '9.99' } }),
      'customFields.fields[0].numeric.minimum',
    ],
    [
      custom({ key: 'n', type: 'numeric', label: 'N', numeric: { minimumLength: 3, maximumLength: 2 } }),
      'customFields.fields[0].numeric.minimumLength',
    ],
    [
      custom({ key: 'd', type: 'dropdown', label: 'D' }),
      'customFields.fields[0].dropdown.options',
      'parameter_missing',
    ],
    [
      custom({ key: 'd', type: 'dropdown', label: 'D', dropdown: { options: [] } }),
      'customFields.fields[0].dropdown.options',
    ],
    [
      custom({ key: 'd', type: 'dropdown', label: 'D', dropdown: { options: [{ label: 'A' }] } }),
      'customFields.fields[0].dropdown.options[0].value',
      'parameter_missing',
    ],
    [
      custom({
        key: 'd',
        type: 'dropdown',
        label: 'D',
        dropdown: {
          options: [
            { label: 'A', value: 'a' },
            { label: 'B', value: 'a' },
          ],
        },
      }),
      'customFields.fields[0].dropdown.options[1].value',
    ],
    [
      custom({
        key: 'd',
        type: 'dropdown',
        label: 'D',
        dropdown: { options: Array.from({ length: 51 }, (_, i) => ({ label: `O${i}`, value: `o${i}` })) },
      }),
      'customFields.fields[0].dropdown.options',
    ],
    [{ ...fixed, afterCompletion: 'close' }, 'afterCompletion'],
    [{ ...fixed, afterCompletion: 'redirect' }, 'afterCompletionRedirectUrl', 'parameter_missing'],
    [{ ...fixed, afterCompletionRedirectUrl: 'shop.example/thanks' }, 'afterCompletionRedirectUrl', 'url_invalid'],
    [
      { ...fixed, afterCompletionRedirectUrl: 'ftp://shop.example/thanks' },
      'afterCompletionRedirectUrl',
      'url_invalid',
    ],
    [
      { ...fixed, afterCompletion: 'hosted_confirmation', afterCompletionRedirectUrl: 'https://shop.example/ok' },
      'afterCompletionRedirectUrl',
    ],
    [
      { ...fixed, afterCompletionRedirectUrl: 'https://shop.example/ok', afterCompletionConfirmMsg: 'Thanks' },
      'afterCompletionConfirmMsg',
    ],
    [{ ...fixed, afterCompletionConfirmMsg: 'x'.repeat(501) }, 'afterCompletionConfirmMsg'],
    [{ ...fixed, allowedChains: { chainId: 7357 } }, 'allowedChains'],
    [{ ...fixed, allowedChains: [{ isPreferred: true }] }, 'allowedChains[0].chainId', 'parameter_missing'],
    [{ ...fixed, allowedChains: [{ chainId: 99999 }] }, 'allowedChains[0].chainId'],
    [{ ...fixed, allowedChains: [{ chainId: 7357 }, { chainId: 7357 }] }, 'allowedChains[1].chainId'],
    [{ ...fixed, allowedChains: [{ chainId: 7357, isPreferred: 'yes' }] }, 'allowedChains[0].isPreferred'],
    [{ ...fixed, tags: 'music' }, 'tags'],
    [{ ...fixed, tags: ['music', ''] }, 'tags[1]'],
    [{ ...fixed, tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }, 'tags'],
    [{ ...fixed, image: 'not a url' }, 'image', 'url_invalid'],
    [{ ...fixed, submitType: 'buy' }, 'submitType'],
    [{ ...fixed, nameCollection: 'yes' }, 'nameCollection'],
    [{ ...fixed, allowPromotionCodes: 1 }, 'allowPromotionCodes'],
    [{ ...fixed, isActive: 'true' }, 'isActive'],
    [{ ...fixed, metadata: { n: {} } }, 'metadata.n'],
  ];
  for (const [body, field, code] of cases) {
    await assertRejectedWithoutWrite(t, weir, () => api.post('/api/v1/payment-links', body), {
      ...(field ? { field } : {}),
      ...(code ? { code } : {}),
    });
  }
  t.is((await api.get<Page<Link>>('/api/v1/payment-links')).body.count, 0);
});

test('every invalid update is refused with a 400 naming the field, and writes nothing; the price of a link never changes', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const link = await createLink(t, api, fixed);
  const variable = await createLink(t, api, { title: 'Tip', currency: 'usdc', minimumAmount: '100000000' });
  const plan = await recurringProduct(api);
  const cases: [string, unknown, string | null][] = [
    [link.id, [], null],
    [link.id, { amount: '100' }, 'amount'],
    [link.id, { amount: null }, 'amount'],
    [link.id, { currency: 'dai' }, 'currency'],
    [link.id, { priceId: plan.defaultPrice!.id }, 'priceId'],
    [link.id, { productId: plan.id }, 'productId'],
    [link.id, { pricing: 'variable' }, 'pricing'],
    [link.id, { interval: 'month' }, 'interval'],
    [link.id, { title: '' }, 'title'],
    [link.id, { type: 'forever' }, 'type'],
    [link.id, { type: 'ONE_TIME' }, 'type'],
    [link.id, { type: 1 }, 'type'],
    [link.id, { suggestedAmounts: ['100000000'] }, 'suggestedAmounts'],
    [link.id, { afterCompletion: 'redirect' }, 'afterCompletionRedirectUrl'],
    [link.id, { afterCompletionRedirectUrl: 'https://shop.example/ok' }, 'afterCompletionRedirectUrl'],
    [
      link.id,
      { customFields: { fields: [{ key: 'k', type: 'dropdown', label: 'K', dropdown: { options: [] } }] } },
      'customFields.fields[0].dropdown.options',
    ],
    [link.id, { allowedChains: [{ chainId: 1 }] }, 'allowedChains[0].chainId'],
    [link.id, { isActive: 'no' }, 'isActive'],
    [variable.id, { suggestedAmounts: ['50000000'] }, 'suggestedAmounts[0]'],
    [variable.id, { maximumAmount: '50000000' }, 'minimumAmount'],
    [variable.id, { amount: '100000000' }, 'amount'],
  ];
  for (const [id, body, field] of cases) {
    await assertRejectedWithoutWrite(
      t,
      weir,
      () => api.put(`/api/v1/payment-links/${id}`, body),
      field ? { field } : {},
    );
  }
  t.like((await api.get<Link>(`/api/v1/payment-links/${link.id}`)).body, {
    amount: '2500000000',
    currency: 'usdc',
    title: 'Concert ticket',
    updatedAt: link.updatedAt,
  });
});

test('an unknown link is a 404 for every operation, whatever its id looks like', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
    assertError(t, await api.get(`/api/v1/payment-links/${id}`), 404, { code: 'resource_missing' });
    assertError(t, await api.put(`/api/v1/payment-links/${id}`, { title: 'x' }), 404);
    assertError(t, await api.delete(`/api/v1/payment-links/${id}`), 404);
    assertError(t, await api.put(`/api/v1/payment-links/${id}/activate`, {}), 404);
    assertError(t, await api.post(`/api/v1/payment-links/${id}/deactivate`), 404);
  }
  assertError(t, await apiWithoutKey(weir.url).get('/api/v1/payment-links'), 401);
});

const apiWithoutKey = (url: string) => ({
  get: (path: string) =>
    fetch(`${url}${path}`).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as unknown,
      headers: r.headers,
    })),
});

// --- tenancy --------------------------------------------------------------------------------

test('another organization, or the live environment of the same one, sees a 404 and an empty list', async (t) => {
  const weir = await startTestWeir(t);
  const shop = await createMerchant(weir.url, 'Shop');
  const other = await createMerchant(weir.url, 'Other');
  const link = await createLink(t, shop.api, fixed);
  for (const api of [other.api, shop.live]) {
    assertError(t, await api.get(`/api/v1/payment-links/${link.id}`), 404);
    assertError(t, await api.put(`/api/v1/payment-links/${link.id}`, { title: 'mine now' }), 404);
    assertError(t, await api.put(`/api/v1/payment-links/${link.id}/deactivate`, {}), 404);
    assertError(t, await api.post(`/api/v1/payment-links/${link.id}/activate`), 404);
    assertError(t, await api.delete(`/api/v1/payment-links/${link.id}`), 404);
    t.is((await api.get<Page<Link>>('/api/v1/payment-links')).body.count, 0);
    t.is((await api.get<Page<Link>>(`/api/v1/payment-links?ids=${link.id}`)).body.count, 0);
  }
  // Nor can a link of the live environment sell a test price.
  assertError(t, await shop.live.post('/api/v1/payment-links', { title: 'x', priceId: link.priceId }), 400, {
    field: 'priceId',
    code: 'resource_missing',
  });
  t.like((await shop.api.get<Link>(`/api/v1/payment-links/${link.id}`)).body, {
    title: 'Concert ticket',
    isActive: true,
  });
  // A live link lives beside it, unseen by the test key.
  const live = await createLink(t, shop.live, { title: 'Live tip', currency: 'usdc' });
  t.true(live.livemode);
  t.deepEqual(
    (await shop.api.get<Page<Link>>('/api/v1/payment-links')).body.data.map((l) => l.id),
    [link.id],
  );
});

test("the reference's currencies and preferredCurrency make a link; the deprecated currency still works", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const listed = await createLink(t, api, { title: 'Ticket', amount: '100', currencies: ['usdt', 'usdc'] });
  t.is(listed.currency, 'usdt', 'without a preference, the first listed currency');
  const preferred = await createLink(t, api, {
    title: 'Ticket',
    amount: '100',
    currencies: ['usdt', 'usdc'],
    preferredCurrency: 'usdc',
  });
  t.is(preferred.currency, 'usdc');
  t.is((await createLink(t, api, { title: 'Tip', preferredCurrency: 'usdc' })).currency, 'usdc');
  t.is((await createLink(t, api, fixed)).currency, 'usdc');
  await assertRejectedWithoutWrite(
    t,
    weir,
    () =>
      api.post('/api/v1/payment-links', { title: 'x', amount: '1', currencies: ['usdc'], preferredCurrency: 'dai' }),
    { field: 'preferredCurrency' },
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/payment-links', { title: 'x', amount: '1', currencies: ['gold'] }),
    { field: 'currencies[0]' },
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/payment-links', { title: 'x', amount: '1', currencies: [] }),
    { field: 'currencies' },
  );
});
