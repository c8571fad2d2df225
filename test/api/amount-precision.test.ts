import test from 'ava';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { assertRejectedWithoutWrite, BSC_TESTNET, createCustomer, startWeirWithEvmNetwork } from './helpers.ts';

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
