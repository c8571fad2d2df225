import test from 'ava';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import {
  appendAsEarlierWeir,
  assertRejectedWithoutWrite,
  BSC_TESTNET,
  createCustomer,
  startWeirWithEvmNetwork,
} from './helpers.ts';

/**
 * A price finer than every asset of its currency carries (1.1234567 USDC, where USDC has 6 decimals)
 * could never be paid exactly: each route taking one refuses it at its field, writing nothing, rather
 * than the invoice being refused only at finalize.
 */

const SEVEN_DECIMALS = '112345670';
const refusedAt = (field: string) => ({
  field,
  message: new RegExp(
    `^${field.replace(/[.[\]]/g, '\\$&')}: 112345670 is 1\\.1234567 USDC, more decimals than any USDC asset carries \\(at most 6\\).*send a multiple of 100`,
  ),
});
/** What a stored price finer than its currency is refused with where `field` names it for a new use. */
const legacyRefusedAt = (field: string, priceId: string) => ({
  field,
  message: new RegExp(
    `^${field.replace(/[.[\]]/g, '\\$&')}: price ${priceId} cannot be sold: its unitAmount 112345670 is 1\\.1234567 USDC, more decimals than any USDC asset carries \\(at most 6\\).*stored before Weir refused such prices.*multiple of 100`,
  ),
});
const adHoc = (unitAmount: string) => ({
  data: [{ priceData: { currency: 'usdc', unitAmount, productData: { name: 'Consulting hour' } }, quantity: 1 }],
});

test('invoices: a line amount finer than any USDC asset is refused at create and at update, naming the line, nothing written', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const customerId = await createCustomer(api);
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/invoices', { customerId, lineItems: adHoc(SEVEN_DECIMALS) }),
    refusedAt('lineItems.data[0].priceData.unitAmount'),
  );
  const draft = await api.post<{ id: string }>('/api/v1/invoices', { customerId, lineItems: adHoc('112345600') });
  t.is(draft.status, 200, JSON.stringify(draft.body));
  const product = await api.post<{ id: string }>('/api/v1/products', { name: 'Audit' });
  t.is(product.status, 200, JSON.stringify(product.body));
  await assertRejectedWithoutWrite(
    t,
    weir,
    () =>
      api.put(`/api/v1/invoices/${draft.body.id}`, {
        lineItems: {
          data: [
            { priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Hour' } }, quantity: 1 },
            {
              price: { productId: product.body.id, currency: 'usdc', unitAmount: SEVEN_DECIMALS, type: 'one_time' },
              quantity: 1,
            },
          ],
        },
      }),
    refusedAt('lineItems.data[1].price.unitAmount'),
  );
});

test('products and prices: a price finer than any USDC asset is refused naming its field, nothing written', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  await assertRejectedWithoutWrite(
    t,
    weir,
    () =>
      api.post('/api/v1/products', {
        name: 'Espresso',
        defaultPriceData: { currency: 'usdc', unitAmount: SEVEN_DECIMALS },
      }),
    refusedAt('defaultPriceData.unitAmount'),
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () =>
      api.post('/api/v1/prices', {
        productData: { name: 'Espresso' },
        currency: 'usdc',
        unitAmount: SEVEN_DECIMALS,
      }),
    refusedAt('unitAmount'),
  );
  // Six decimals are a price; DAI (18 decimals) takes all eight the API carries.
  t.is(
    (await api.post('/api/v1/prices', { productData: { name: 'A' }, currency: 'usdc', unitAmount: '112345600' }))
      .status,
    200,
  );
  t.is(
    (await api.post('/api/v1/prices', { productData: { name: 'B' }, currency: 'dai', unitAmount: '112345678' })).status,
    200,
  );
});

test('payment links and checkout sessions: an amount finer than any USDC asset is refused naming its field, nothing written', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/payment-links', { title: 'Tea', amount: SEVEN_DECIMALS, currency: 'usdc' }),
    refusedAt('amount'),
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/checkout/sessions', { ...sessionRequest(SEVEN_DECIMALS, 1) }),
    refusedAt('lineItems.data[0].priceData.unitAmount'),
  );
});

test('a price only some USDC asset can carry (BNB Chain’s, with 18 decimals) is taken: the rule is the finest asset offered', async (t) => {
  const weir = await startWeirWithEvmNetwork(t, BSC_TESTNET);
  const { api } = await createMerchant(weir.url);
  const price = await api.post('/api/v1/prices', {
    productData: { name: 'A' },
    currency: 'usdc',
    unitAmount: SEVEN_DECIMALS,
  });
  t.is(price.status, 200, JSON.stringify(price.body));
});

test('customer-chooses-amount links: a suggested, minimum or maximum amount finer than any USDC asset is refused at create and at update naming it, nothing written; one the link already has may be sent back', async (t) => {
  const weir = await startTestWeir(t);
  const { api, organizationId } = await createMerchant(weir.url);
  const tipJar = { title: 'Tip jar', currency: 'usdc', pricing: 'variable' };
  for (const [field, amounts] of [
    ['suggestedAmounts[1]', { suggestedAmounts: ['500000000', SEVEN_DECIMALS] }],
    ['minimumAmount', { minimumAmount: SEVEN_DECIMALS }],
    ['maximumAmount', { minimumAmount: '100000000', maximumAmount: SEVEN_DECIMALS }],
  ] as const)
    await assertRejectedWithoutWrite(
      t,
      weir,
      () => api.post('/api/v1/payment-links', { ...tipJar, ...amounts }),
      refusedAt(field),
    );
  const link = await api.post<{ id: string }>('/api/v1/payment-links', {
    ...tipJar,
    suggestedAmounts: ['112345600'],
    minimumAmount: '100000000',
  });
  t.is(link.status, 200, JSON.stringify(link.body));
  for (const [field, amounts] of [
    ['suggestedAmounts[0]', { suggestedAmounts: [SEVEN_DECIMALS] }],
    ['minimumAmount', { minimumAmount: SEVEN_DECIMALS }],
    ['maximumAmount', { maximumAmount: SEVEN_DECIMALS }],
  ] as const)
    await assertRejectedWithoutWrite(
      t,
      weir,
      () => api.put(`/api/v1/payment-links/${link.body.id}`, amounts),
      refusedAt(field),
    );
  // A link stored with such an amount (before the rule) is sent back whole: what it has is not refused again.
  await appendAsEarlierWeir(weir, organizationId, `payment_link-${link.body.id}`, 'PaymentLinkUpdated', {
    changes: { suggestedAmounts: [SEVEN_DECIMALS] },
  });
  const stored = await api.get<Record<string, unknown>>(`/api/v1/payment-links/${link.body.id}`);
  const { id: _id, url: _url, livemode: _l, organizationId: _o, createdAt: _c, updatedAt: _u, ...whole } = stored.body;
  const sentBack = await api.put(`/api/v1/payment-links/${link.body.id}`, { ...whole, title: 'Tips' });
  t.is(sentBack.status, 200, JSON.stringify(sentBack.body));
  // Its page's button for it, pressed (or the amount typed), is a 400 form saying why: never a 5xx, never rounded.
  const pressed = await fetch(String(stored.body.url), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ suggestedAmount: '1.1234567' }).toString(),
  });
  t.is(pressed.status, 400);
  t.regex(await pressed.text(), /Amount: must have at most 6 decimals for USDC/);
});

test('a price stored finer than any USDC asset (before the rule) is refused where it is sold, naming it, whatever the quantity: sessions, subscriptions, invoices, payment links; nothing written', async (t) => {
  const weir = await startTestWeir(t);
  const { api, organizationId } = await createMerchant(weir.url);
  const product = await api.post<{ id: string; defaultPriceId: string }>('/api/v1/products', {
    name: 'Espresso',
    defaultPriceData: { currency: 'usdc', unitAmount: '100000000' },
  });
  t.is(product.status, 200, JSON.stringify(product.body));
  const plan = await api.post<{ id: string }>('/api/v1/prices', {
    productId: product.body.id,
    currency: 'usdc',
    unitAmount: '100000000',
    type: 'recurring',
    interval: 'month',
  });
  t.is(plan.status, 200, JSON.stringify(plan.body));
  const priceId = product.body.defaultPriceId;
  const customerId = await createCustomer(api);
  const draft = await api.post<{ id: string }>('/api/v1/invoices', {
    customerId,
    lineItems: { data: [{ priceId, quantity: 10 }] },
  });
  t.is(draft.status, 200, JSON.stringify(draft.body));
  for (const id of [priceId, plan.body.id])
    await appendAsEarlierWeir(weir, organizationId, `price-${id}`, 'PriceUpdated', {
      changes: { unitAmount: SEVEN_DECIMALS },
    });

  // Ten of them (11.234567 USDC) would be a total the chain carries: the price is refused all the same.
  for (const quantity of [1, 10])
    await assertRejectedWithoutWrite(
      t,
      weir,
      () =>
        api.post('/api/v1/checkout/sessions', {
          ...sessionRequest(),
          lineItems: { data: [{ priceId, quantity }] },
        }),
      legacyRefusedAt('lineItems.data[0].priceId', priceId),
    );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () =>
      api.post('/api/v1/checkout/sessions', {
        mode: 'subscription',
        successUrl: 'https://shop.example/welcome',
        lineItems: { data: [{ priceId: plan.body.id, quantity: 1 }] },
      }),
    legacyRefusedAt('lineItems.data[0].priceId', plan.body.id),
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () =>
      api.post('/api/v1/invoices', {
        customerId,
        lineItems: {
          data: [
            { priceData: adHoc('100000000').data[0]!.priceData, quantity: 1 },
            { priceId, quantity: 10 },
          ],
        },
      }),
    legacyRefusedAt('lineItems.data[1].priceId', priceId),
  );
  // A draft that already held it keeps it, as it keeps an archived price: its total is checked at finalize.
  const kept = await api.put(`/api/v1/invoices/${draft.body.id}`, { lineItems: { data: [{ priceId, quantity: 10 }] } });
  t.is(kept.status, 200, JSON.stringify(kept.body));
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/payment-links', { title: 'Espresso', priceId }),
    legacyRefusedAt('priceId', priceId),
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/payment-links', { title: 'Espresso', productId: product.body.id }),
    legacyRefusedAt('productId', priceId),
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/payment-links', { title: 'Plan', priceId: plan.body.id }),
    legacyRefusedAt('priceId', plan.body.id),
  );
});
