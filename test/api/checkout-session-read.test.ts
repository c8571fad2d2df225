import test from 'ava';
import { apiClient } from '../support/api-client.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { assertError, type Session } from './helpers.ts';

const get = (baseUrl: string, path: string, key: string, method = 'GET') =>
  fetch(`${baseUrl}${path}`, { method, headers: { authorization: `Bearer ${key}` } }).then(async (r) => ({
    status: r.status,
    text: await r.text(),
    headers: r.headers,
  }));

test('GET of one session: the same answer with or without a trailing slash; tenancy, unknown ids, no key and other methods', async (t) => {
  const weir = await startTestWeir(t);
  const alice = await createMerchant(weir.url, 'Alice');
  const bob = await createMerchant(weir.url, 'Bob');
  const created = await alice.api.post<Session>('/api/v1/checkout/sessions', sessionRequest());
  t.is(created.status, 200);
  const path = `/api/v1/checkout/sessions/${created.body.id}`;

  // The session's path, and the same with a trailing slash.
  const polled = await get(weir.url, path, alice.testSecretKey);
  const routed = await get(weir.url, `${path}/`, alice.testSecretKey);
  t.is(polled.status, 200);
  t.is(routed.status, 200);
  t.is(polled.text, routed.text);
  t.deepEqual(JSON.parse(polled.text), created.body);
  t.is(polled.headers.get('content-type'), 'application/json; charset=utf-8');
  t.is(polled.headers.get('content-length'), String(Buffer.byteLength(polled.text)));
  t.is(polled.headers.get('x-content-type-options'), 'nosniff');
  t.is(
    (await get(weir.url, `/api/v1/checkout/sessions/${encodeURIComponent(created.body.id)}`, alice.testSecretKey)).text,
    polled.text,
  );

  // Tenancy, unknown ids (also ones that decode to a slash or not at all), no key, other methods.
  const notFound = async (response: Promise<{ status: number; text: string; headers: Headers }>) => {
    const { status, text, headers } = await response;
    assertError(t, { status, body: JSON.parse(text) as unknown, headers }, 404, { code: 'resource_missing' });
  };
  await notFound(get(weir.url, path, bob.testSecretKey));
  await notFound(get(weir.url, '/api/v1/checkout/sessions/cs_unknown', alice.testSecretKey));
  await notFound(get(weir.url, '/api/v1/checkout/sessions/a%2Fb', alice.testSecretKey));
  await notFound(get(weir.url, '/api/v1/checkout/sessions/%E0%A4%A', alice.testSecretKey));
  t.is((await get(weir.url, path, `sk_test_${'A'.repeat(40)}`)).status, 401);
  t.is((await get(weir.url, path, alice.testSecretKey, 'PUT')).status, 405);
  t.is((await get(weir.url, path, alice.testSecretKey, 'HEAD')).status, 200);
  t.is((await get(weir.url, `${path}/completed_webhook_delivered`, alice.testSecretKey)).status, 200);
});

test("a session's addresses carry the asset's network and flags, and the payment intent its paymentMethodId", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  type Shaped = Session & {
    addresses: { asset: { isPublic: boolean; isEIP5827Supported: boolean; chainId: number; chain: { id: number } } }[];
    paymentIntent: { paymentMethodId: string | null };
  };
  const created = await api.post<Shaped>('/api/v1/checkout/sessions', sessionRequest());
  t.is(created.status, 200, JSON.stringify(created.body));
  const chain = (await api.get<Record<string, unknown>>('/api/v1/chains/7357')).body;
  const { assets: _assets, ...chainOnly } = chain;
  for (const address of created.body.addresses) {
    t.like(address.asset, { isPublic: true, isEIP5827Supported: false });
    if (address.asset.chainId === 7357) t.deepEqual(address.asset.chain, chainOnly);
  }
  t.is(created.body.paymentIntent.paymentMethodId, null, 'no payment method until the payer picks an asset');
  const read = (await api.get<Shaped>(`/api/v1/checkout/sessions/${created.body.id}`)).body;
  t.deepEqual(read.addresses, created.body.addresses);
  const revealed = await apiClient(weir.url).post(`/checkout/${created.body.id}/payment-method`, {
    assetId: created.body.addresses.find((a) => a.asset.currency === 'usdc')!.asset.id,
  });
  t.is(revealed.status, 200);
  const chosen = (
    await api.get<Shaped & { paymentIntent: { paymentMethod: { id: string } } }>(
      `/api/v1/checkout/sessions/${created.body.id}`,
    )
  ).body;
  t.is(chosen.paymentIntent.paymentMethodId, chosen.paymentIntent.paymentMethod.id);
});
