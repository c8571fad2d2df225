import test from 'ava';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { assertError, assertRejectedWithoutWrite, logLength, type Page, type Session } from './helpers.ts';

const SESSIONS = '/api/v1/checkout/sessions';
const UNIT_AMOUNT = 'lineItems.data[0].priceData.unitAmount';

/** A session request whose first line item's priceData has `unitAmount` replaced. */
const withUnitAmount = (unitAmount: unknown) => {
  const body = sessionRequest();
  return {
    ...body,
    lineItems: {
      data: [{ ...body.lineItems.data[0]!, priceData: { ...body.lineItems.data[0]!.priceData, unitAmount } }],
    },
  };
};

test('malformed bodies: bad JSON, a non-JSON content type, a body that is not an object', async (t) => {
  const weir = await startTestWeir(t);
  const { api, testSecretKey } = await createMerchant(weir.url);
  const post = (body: string, contentType: string) =>
    fetch(`${weir.url}${SESSIONS}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${testSecretKey}`, 'content-type': contentType },
      body,
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as unknown, headers: r.headers }));

  const json = JSON.stringify(sessionRequest());
  await assertRejectedWithoutWrite(t, weir, () => post('{"mode": "payment",', 'application/json'), {
    code: 'invalid_json',
  });
  await assertRejectedWithoutWrite(t, weir, () => post("{'mode': 'payment'}", 'application/json'), {
    code: 'invalid_json',
  });
  await assertRejectedWithoutWrite(t, weir, () => post(json, 'text/plain'), { code: 'invalid_content_type' });
  await assertRejectedWithoutWrite(t, weir, () => post(json, 'application/x-www-form-urlencoded'), {
    code: 'invalid_content_type',
  });
  await assertRejectedWithoutWrite(t, weir, () => post('[1, 2]', 'application/json'), { message: /JSON object/ });
  await assertRejectedWithoutWrite(t, weir, () => post('"text"', 'application/json'), { message: /JSON object/ });
  await assertRejectedWithoutWrite(t, weir, () => post('null', 'application/json'), {});
  // The same JSON with the right type is accepted (charset parameters included).
  t.is((await post(json, 'application/json; charset=utf-8')).status, 200);
  t.is((await api.get<Page<Session>>(SESSIONS)).body.count, 1);
});

test('successUrl is required and must be an http(s) URL; the message names the field', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const { successUrl: _omitted, ...withoutSuccessUrl } = sessionRequest();

  await assertRejectedWithoutWrite(t, weir, () => api.post(SESSIONS, withoutSuccessUrl), {
    field: 'successUrl',
    code: 'parameter_missing',
  });
  await assertRejectedWithoutWrite(t, weir, () => api.post(SESSIONS, { ...withoutSuccessUrl, successUrl: null }), {
    field: 'successUrl',
    code: 'parameter_missing',
  });
  await assertRejectedWithoutWrite(t, weir, () => api.post(SESSIONS, { ...withoutSuccessUrl, successUrl: '' }), {
    field: 'successUrl',
  });
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(SESSIONS, { ...withoutSuccessUrl, successUrl: 'thanks.html' }),
    { field: 'successUrl', code: 'url_invalid' },
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(SESSIONS, { ...withoutSuccessUrl, successUrl: 'javascript:alert(1)' }),
    { field: 'successUrl', code: 'url_invalid' },
  );
  await assertRejectedWithoutWrite(t, weir, () => api.post(SESSIONS, { ...withoutSuccessUrl, successUrl: 42 }), {
    field: 'successUrl',
  });
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(SESSIONS, { ...sessionRequest(), cancelUrl: 'ftp://shop.example/' }),
    { field: 'cancelUrl' },
  );
  await assertRejectedWithoutWrite(t, weir, () => api.post(SESSIONS, { ...sessionRequest(), mode: 'donation' }), {
    field: 'mode',
  });
  await assertRejectedWithoutWrite(t, weir, () => api.post(SESSIONS, { ...sessionRequest(), lineItems: undefined }), {
    field: 'lineItems',
    code: 'parameter_missing',
  });
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(SESSIONS, { ...sessionRequest(), lineItems: { data: [] } }),
    { field: 'lineItems.data' },
  );
  t.is((await api.get<Page<Session>>(SESSIONS)).body.count, 0);
});

test('unitAmount must be a non-negative integer; the message names the full field path', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  for (const bad of ['-1', '1.5', 1.5, 'abc', -1, '', ' 100', '1e8', 1e20, '0x10', true, {}]) {
    const body = await assertRejectedWithoutWrite(t, weir, () => api.post(SESSIONS, withUnitAmount(bad)), {
      field: UNIT_AMOUNT,
    });
    t.is(body.code, 'parameter_invalid_integer', `${JSON.stringify(bad)}: ${body.message}`);
  }
  await assertRejectedWithoutWrite(t, weir, () => api.post(SESSIONS, withUnitAmount(undefined)), {
    field: UNIT_AMOUNT,
    code: 'parameter_missing',
  });
  await assertRejectedWithoutWrite(t, weir, () => api.post(SESSIONS, withUnitAmount('9223372036854775808')), {
    field: UNIT_AMOUNT,
  });
  // A zero total is refused as a whole.
  await assertRejectedWithoutWrite(t, weir, () => api.post(SESSIONS, withUnitAmount('0')), { field: 'lineItems' });
  // An amount that no offered asset can represent exactly (USDC has 6 decimals) is refused at its field, not rounded.
  await assertRejectedWithoutWrite(t, weir, () => api.post(SESSIONS, withUnitAmount('150000001')), {
    field: UNIT_AMOUNT,
    code: 'parameter_invalid',
  });
  t.is((await api.get<Page<Session>>(SESSIONS)).body.count, 0);
});

test('amounts are accepted as a digit string or as a number, and answered as strings', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const asString = await api.post<Session>(SESSIONS, withUnitAmount('150000000'));
  const asNumber = await api.post<Session>(SESSIONS, withUnitAmount(150000000));
  for (const r of [asString, asNumber]) {
    t.is(r.status, 200, JSON.stringify(r.body));
    t.is(r.body.amountTotal, '300000000');
    t.is(r.body.amountSubtotal, '300000000');
    t.is(r.body.lineItems.data[0]!.price.unitAmount, '150000000');
    t.is(r.body.lineItems.data[0]!.amountTotal, '300000000');
  }
  // Larger than a JavaScript number can hold exactly: fine as a string, kept digit for digit.
  const big = await api.post<Session>(SESSIONS, {
    ...sessionRequest(),
    lineItems: {
      data: [
        {
          priceData: { currency: 'usdc', unitAmount: '900719925474099300', productData: { name: 'big' } },
          quantity: 1,
        },
      ],
    },
  });
  t.is(big.status, 200, JSON.stringify(big.body));
  t.is(big.body.amountTotal, '900719925474099300');
});

test('a line item must use exactly one of priceId, price and priceData (or priceId with the price it names); an unknown priceId is refused', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const product = await api.post<{ id: string; defaultPrice: { id: string } }>('/api/v1/products', {
    name: 'Mug',
    defaultPriceData: { currency: 'usdc', unitAmount: '100000000' },
  });
  t.is(product.status, 200, JSON.stringify(product.body));
  const priceId = product.body.defaultPrice.id;
  const priceData = { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Mug' } };
  const price = { productId: product.body.id, currency: 'usdc', unitAmount: '100000000', type: 'one_time' };
  const withItem = (item: Record<string, unknown>) => ({
    ...sessionRequest(),
    lineItems: { data: [{ quantity: 1, ...item }] },
  });

  for (const item of [{ priceId, priceData }, { price, priceData }, { priceId, price, priceData }, {}]) {
    await assertRejectedWithoutWrite(t, weir, () => api.post(SESSIONS, withItem(item)), {
      field: 'lineItems.data[0]',
      message: /exactly one of priceId, price or priceData/,
    });
  }
  // priceId with the price it names is that price; one that disagrees is refused naming the field.
  t.is((await api.post(SESSIONS, withItem({ priceId, price }))).status, 200);
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(SESSIONS, withItem({ priceId, price: { ...price, type: 'recurring', interval: 'month' } })),
    { field: 'lineItems.data[0].price.type', message: /has type one_time/ },
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(SESSIONS, withItem({ priceId: '3f0e9a52-6a53-4b5e-9c0f-2f6a1d9b7c10' })),
    { field: 'lineItems.data[0].priceId', code: 'resource_missing' },
  );
  await assertRejectedWithoutWrite(t, weir, () => api.post(SESSIONS, withItem({ priceId: 'price_123' })), {
    field: 'lineItems.data[0].priceId',
  });
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(SESSIONS, withItem({ price: { ...price, productId: '3f0e9a52-6a53-4b5e-9c0f-2f6a1d9b7c10' } })),
    { field: 'lineItems.data[0].price.productId', code: 'resource_missing' },
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(SESSIONS, withItem({ priceData: { currency: 'usdc', unitAmount: '1' } })),
    { field: 'lineItems.data[0].priceData' },
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(SESSIONS, withItem({ priceData: { ...priceData, currency: 'doge' } })),
    { field: 'lineItems.data[0].priceData.currency' },
  );
  await assertRejectedWithoutWrite(t, weir, () => api.post(SESSIONS, withItem({ priceId, quantity: 0 })), {
    field: 'lineItems.data[0].quantity',
  });
  await assertRejectedWithoutWrite(t, weir, () => api.post(SESSIONS, withItem({ priceId, quantity: '2' })), {
    field: 'lineItems.data[0].quantity',
  });
  // A later item's error is found before anything (such as the first item's inline product) is written.
  await assertRejectedWithoutWrite(
    t,
    weir,
    () =>
      api.post(SESSIONS, {
        ...sessionRequest(),
        lineItems: { data: [{ priceData }, { priceData: { ...priceData, unitAmount: 'x' } }] },
      }),
    { field: 'lineItems.data[1].priceData.unitAmount' },
  );

  // Another organization's price is as unknown as a made-up one.
  const other = await createMerchant(weir.url, 'Other');
  await assertRejectedWithoutWrite(t, weir, () => other.api.post(SESSIONS, withItem({ priceId })), {
    field: 'lineItems.data[0].priceId',
    code: 'resource_missing',
  });
  // The valid form of each works.
  t.is((await api.post(SESSIONS, withItem({ priceId }))).status, 200);
  t.is((await api.post(SESSIONS, withItem({ price }))).status, 200);
  t.is((await api.post(SESSIONS, withItem({ priceData }))).status, 200);
});

test('list parameters are validated: limit, page, createdAt bounds and enum filters', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  t.is((await api.post(SESSIONS, sessionRequest())).status, 200);
  const before = await logLength(weir);

  for (const limit of ['0', '201', '-1', 'ten', '1.5']) {
    assertError(t, await api.get(`${SESSIONS}?limit=${limit}`), 400, { field: 'limit', code: 'parameter_invalid' });
  }
  for (const page of ['0', '-2', 'x', '99999999999999999999', '9007199254740993'])
    assertError(t, await api.get(`${SESSIONS}?page=${page}`), 400, { field: 'page' });
  for (const op of ['gt', 'gte', 'lt', 'lte']) {
    for (const garbage of [
      'garbage',
      '2026-13-45',
      '2026-02-31',
      'March 3',
      '1',
      '12/31/2026',
      '2026-05-01T25:00:00Z',
    ]) {
      assertError(t, await api.get(`${SESSIONS}?createdAt[${op}]=${encodeURIComponent(garbage)}`), 400, {
        field: `createdAt[${op}]`,
      });
    }
  }
  assertError(t, await api.get(`${SESSIONS}?status=done`), 400, { field: 'status' });
  assertError(t, await api.get(`${SESSIONS}?mode=gift`), 400, { field: 'mode' });
  assertError(t, await api.get('/api/v1/webhook-endpoints?isDisabled=yes'), 400, { field: 'isDisabled' });
  t.is(await logLength(weir), before);

  // The edges are accepted.
  for (const query of [
    'limit=1',
    'limit=200',
    'page=1',
    'createdAt[gte]=2020-01-01',
    'createdAt[lt]=2999-01-01T00:00:00Z',
    'createdAt[gt]=2020-01-01T00:00:00.000%2B02:00',
  ]) {
    const r = await api.get<Page<Session>>(`${SESSIONS}?${query}`);
    t.is(r.status, 200, `${query}: ${JSON.stringify(r.body)}`);
    t.is(r.body.count, 1, query);
  }
});

test('other create endpoints validate too, and write nothing when they refuse', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  await assertRejectedWithoutWrite(t, weir, () => api.post('/api/v1/products', {}), {
    field: 'name',
    code: 'parameter_missing',
  });
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/products', { name: 'p', defaultPriceData: { currency: 'usdc', unitAmount: '-5' } }),
    { field: 'defaultPriceData.unitAmount' },
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/products', { name: 'p', defaultPriceData: { unitAmount: '5' } }),
    { field: 'defaultPriceData.currency' },
  );
  await assertRejectedWithoutWrite(t, weir, () => api.post('/api/v1/products', { name: 'p', url: 'not a url' }), {
    field: 'url',
  });
  await assertRejectedWithoutWrite(
    t,
    weir,
    () =>
      api.post('/api/v1/webhook-endpoints', {
        description: 'd',
        url: 'https://x.example',
        enabledEvents: { events: ['nope'] },
      }),
    { field: 'enabledEvents.events[0]' },
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/organization/withdrawal-addresses', { chainId: 7357, address: '0x1234' }),
    { field: 'address' },
  );
  t.is((await api.get<Page<unknown>>('/api/v1/products')).body.count, 0);
});

test('a method a path does not have is answered in the error shape, with the allowed methods', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const before = await logLength(weir);
  const deleteAll = assertError(t, await api.delete(SESSIONS), 405, { code: 'method_not_allowed' });
  t.regex(deleteAll.message, /GET/);
  assertError(t, await api.put(SESSIONS, sessionRequest()), 405, { code: 'method_not_allowed' });
  assertError(t, await api.call('PATCH', '/api/v1/organization', { name: 'x' }), 405, { code: 'method_not_allowed' });
  assertError(t, await api.get('/api/v1/nothing-here'), 404, { code: 'resource_missing' });
  t.is(await logLength(weir), before);
  t.is((await api.get<Page<Session>>(SESSIONS)).body.count, 0);
});

test('metadata is kept key for key, and a key that cannot be stored is refused rather than dropped', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const kept = await api.post<Session & { metadata: Record<string, string> }>(SESSIONS, {
    ...sessionRequest(),
    metadata: { orderId: 'A-1', constructor: 'c', count: 3, paid: false },
  });
  t.is(kept.status, 200, JSON.stringify(kept.body));
  t.deepEqual(kept.body.metadata, { orderId: 'A-1', constructor: 'c', count: '3', paid: 'false' });
  // Sent as raw JSON: a JavaScript object literal would not carry an own __proto__ key.
  await assertRejectedWithoutWrite(
    t,
    weir,
    () =>
      api.post(
        SESSIONS,
        `{"successUrl":"https://shop.example/ok","lineItems":${JSON.stringify(sessionRequest().lineItems)},"metadata":{"__proto__":"x","a":"b"}}`,
      ),
    { field: 'metadata.__proto__' },
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(SESSIONS, { ...sessionRequest(), metadata: { nested: { a: 1 } } }),
    { field: 'metadata.nested' },
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(SESSIONS, { ...sessionRequest(), metadata: { ['k'.repeat(41)]: 'v' } }),
    { field: `metadata.${'k'.repeat(41)}` },
  );
});
