import test from 'ava';
import { apiClient } from '../support/api-client.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { assertError, type Page, type Session } from './helpers.ts';

type ApiKey = { id: string; name: string; environment: string; maskedKey: string; secretKey?: string };
type Endpoint = { id: string; secret: string; url: string };

const raw = (baseUrl: string, path: string, headers: Record<string, string>) =>
  fetch(`${baseUrl}${path}`, { headers }).then(async (r) => ({
    status: r.status,
    body: (await r.json()) as unknown,
    headers: r.headers,
  }));

test('requests without a valid key are refused with 401 in the error shape', async (t) => {
  const weir = await startTestWeir(t);
  const { testSecretKey } = await createMerchant(weir.url);
  const path = '/api/v1/checkout/sessions';

  const cases: [string, Record<string, string>][] = [
    ['no Authorization header', {}],
    ['a Basic header', { authorization: `Basic ${Buffer.from(`${testSecretKey}:`).toString('base64')}` }],
    ['Bearer without a key', { authorization: 'Bearer' }],
    ['the key without Bearer', { authorization: testSecretKey }],
    ['a key with extra words', { authorization: `Bearer ${testSecretKey} extra` }],
    ['a malformed key', { authorization: 'Bearer sk_test_short' }],
    ['a key of an unknown environment', { authorization: `Bearer sk_prod_${testSecretKey.slice(8)}` }],
    ['a well-formed unknown key', { authorization: `Bearer sk_test_${'A'.repeat(40)}` }],
    [
      'a known key with one character changed',
      { authorization: `Bearer ${testSecretKey.slice(0, -1)}${testSecretKey.endsWith('a') ? 'b' : 'a'}` },
    ],
    ['a test key relabelled as live', { authorization: `Bearer sk_live_${testSecretKey.slice(8)}` }],
  ];
  for (const [what, headers] of cases) {
    const response = await raw(weir.url, path, headers);
    const body = assertError(t, response, 401, { code: 'authentication_required' });
    t.is(body.error, 'Unauthorized', what);
  }
  // Every /api path is guarded, including ones that do not exist.
  assertError(t, await raw(weir.url, '/api/v1/no-such-thing', {}), 401);
  // The real key works, so the refusals above are about the key and not the route.
  const ok = await raw(weir.url, path, { authorization: `Bearer ${testSecretKey}` });
  t.is(ok.status, 200);
  // The scheme is case-insensitive.
  t.is((await raw(weir.url, path, { authorization: `bearer ${testSecretKey}` })).status, 200);
});

test('a deleted key and a regenerated (old) key are refused with 401', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);

  const doomed = await api.post<ApiKey>('/api/v1/api-keys', { name: 'to delete' });
  t.is(doomed.status, 200, JSON.stringify(doomed.body));
  const doomedKey = apiClient(weir.url, doomed.body.secretKey);
  t.is((await doomedKey.get('/api/v1/checkout/sessions')).status, 200);
  t.is((await api.delete(`/api/v1/api-keys/${doomed.body.id}`)).status, 200);
  assertError(t, await doomedKey.get('/api/v1/checkout/sessions'), 401, { code: 'authentication_required' });

  const rotated = await api.post<ApiKey>('/api/v1/api-keys', { name: 'to rotate' });
  const oldKey = apiClient(weir.url, rotated.body.secretKey);
  const regenerated = await api.post<ApiKey>(`/api/v1/api-keys/${rotated.body.id}/regenerate`);
  t.is(regenerated.status, 200, JSON.stringify(regenerated.body));
  assertError(t, await oldKey.get('/api/v1/checkout/sessions'), 401, { code: 'authentication_required' });
  t.is((await apiClient(weir.url, regenerated.body.secretKey).get('/api/v1/checkout/sessions')).status, 200);
});

test('test and live keys see only their own environment', async (t) => {
  const weir = await startTestWeir(t);
  const merchant = await createMerchant(weir.url);
  const { api, live } = merchant;

  const session = (await api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;
  t.false(session.livemode);
  assertError(t, await live.get(`/api/v1/checkout/sessions/${session.id}`), 404, { code: 'resource_missing' });
  assertError(t, await live.post(`/api/v1/checkout/sessions/${session.id}/cancel`), 404);
  t.is((await live.get<Page<Session>>('/api/v1/checkout/sessions')).body.count, 0);
  t.is((await api.get<Page<Session>>('/api/v1/checkout/sessions')).body.count, 1);

  // The live environment has its own payment methods: the test wallet is not there.
  t.is((await api.get<unknown[]>('/api/v1/organization/withdrawal-addresses')).body.length, 1);
  t.deepEqual((await live.get<unknown[]>('/api/v1/organization/withdrawal-addresses')).body, []);
  // Live keys are offered mainnets only; the test network is not among them.
  t.false((await live.get<Page<{ id: number }>>('/api/v1/chains')).body.data.some((c) => c.id === 7357));
  t.true((await api.get<Page<{ id: number }>>('/api/v1/chains')).body.data.some((c) => c.id === 7357));

  // And the other way round: a live endpoint and a live key are invisible to the test key.
  const liveEndpoint = await live.post<Endpoint>('/api/v1/webhook-endpoints', {
    description: 'live',
    url: 'https://shop.example/hooks',
    enabledEvents: { events: ['*'] },
  });
  t.is(liveEndpoint.status, 200, JSON.stringify(liveEndpoint.body));
  assertError(t, await api.get(`/api/v1/webhook-endpoints/${liveEndpoint.body.id}`), 404);
  t.is((await api.get<Page<Endpoint>>('/api/v1/webhook-endpoints')).body.count, 0);
  const liveKeys = (await live.get<Page<ApiKey>>('/api/v1/api-keys')).body;
  t.is(liveKeys.count, 1);
  t.is(liveKeys.data[0]!.environment, 'live');
  assertError(t, await api.get(`/api/v1/api-keys/${liveKeys.data[0]!.id}`), 404);
  assertError(t, await api.post(`/api/v1/api-keys/${liveKeys.data[0]!.id}/regenerate`), 404);
  // A key created with a live key is a live key.
  const madeLive = await live.post<ApiKey>('/api/v1/api-keys', { name: 'ci' });
  t.regex(madeLive.body.secretKey!, /^sk_live_/);
  t.is(madeLive.body.environment, 'live');
});

test("another organization's records are 404, and acting on them changes nothing", async (t) => {
  const weir = await startTestWeir(t);
  const alice = await createMerchant(weir.url, 'Alice Shop');
  const bob = await createMerchant(weir.url, 'Bob Shop');

  const session = (await alice.api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;
  assertError(t, await bob.api.get(`/api/v1/checkout/sessions/${session.id}`), 404, { code: 'resource_missing' });
  assertError(t, await bob.api.post(`/api/v1/checkout/sessions/${session.id}/cancel`), 404);
  t.is((await alice.api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body.status, 'open');
  const bobList = (await bob.api.get<Page<Session>>(`/api/v1/checkout/sessions?ids=${session.id}`)).body;
  t.is(bobList.count, 0);

  const endpoint = (
    await alice.api.post<Endpoint>('/api/v1/webhook-endpoints', {
      description: 'alice',
      url: 'https://alice.example/hooks',
      enabledEvents: { events: ['*'] },
    })
  ).body;
  assertError(t, await bob.api.get(`/api/v1/webhook-endpoints/${endpoint.id}`), 404);
  assertError(
    t,
    await bob.api.put(`/api/v1/webhook-endpoints/${endpoint.id}`, { url: 'https://evil.example/steal' }),
    404,
  );
  assertError(t, await bob.api.post(`/api/v1/webhook-endpoints/${endpoint.id}/regenerate`), 404);
  assertError(t, await bob.api.post(`/api/v1/webhook-endpoints/${endpoint.id}/test`), 404);
  assertError(t, await bob.api.get(`/api/v1/webhook-endpoints/${endpoint.id}/deliveries`), 404);
  assertError(t, await bob.api.delete(`/api/v1/webhook-endpoints/${endpoint.id}`), 404);
  const stillThere = await alice.api.get<Endpoint>(`/api/v1/webhook-endpoints/${endpoint.id}`);
  t.is(stillThere.status, 200);
  t.is(stillThere.body.url, 'https://alice.example/hooks');
  t.is(stillThere.body.secret, endpoint.secret);

  const aliceKeys = (await alice.api.get<Page<ApiKey>>('/api/v1/api-keys')).body.data;
  const aliceKeyId = aliceKeys[0]!.id;
  assertError(t, await bob.api.get(`/api/v1/api-keys/${aliceKeyId}`), 404);
  assertError(t, await bob.api.post(`/api/v1/api-keys/${aliceKeyId}/regenerate`), 404);
  assertError(t, await bob.api.delete(`/api/v1/api-keys/${aliceKeyId}`), 404);
  t.false((await bob.api.get<Page<ApiKey>>('/api/v1/api-keys')).body.data.some((k) => k.id === aliceKeyId));
  // Alice's key still works after Bob's attempts.
  t.is((await alice.api.get('/api/v1/checkout/sessions')).status, 200);

  const aliceWallet = (await alice.api.get<{ id: string }[]>('/api/v1/organization/withdrawal-addresses')).body[0]!;
  assertError(t, await bob.api.get(`/api/v1/organization/withdrawal-addresses/${aliceWallet.id}`), 404);
  assertError(t, await bob.api.delete(`/api/v1/organization/withdrawal-addresses/${aliceWallet.id}`), 404);
  t.is((await alice.api.get<unknown[]>('/api/v1/organization/withdrawal-addresses')).body.length, 1);

  // Each key reads its own organization.
  t.is((await alice.api.get<{ name: string }>('/api/v1/organization')).body.name, 'Alice Shop');
  t.is((await bob.api.get<{ name: string }>('/api/v1/organization')).body.name, 'Bob Shop');
});

test('the key is checked before the body: no key and a bad body is a 401, not a 400', async (t) => {
  const weir = await startTestWeir(t);
  const { testSecretKey } = await createMerchant(weir.url);
  const post = (headers: Record<string, string>, body: string) =>
    fetch(`${weir.url}/api/v1/checkout/sessions`, { method: 'POST', headers, body }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as unknown,
      headers: r.headers,
    }));
  assertError(t, await post({ 'content-type': 'application/json' }, '{not json'), 401, {
    code: 'authentication_required',
  });
  assertError(t, await post({ 'content-type': 'text/plain' }, 'hello'), 401, { code: 'authentication_required' });
  assertError(
    t,
    await post({ 'content-type': 'application/json', authorization: 'Bearer sk_test_nope' }, '{not json'),
    401,
  );
  // With a valid key, the same body is judged on its own.
  assertError(
    t,
    await post({ 'content-type': 'application/json', authorization: `Bearer ${testSecretKey}` }, '{not json'),
    400,
    { code: 'invalid_json' },
  );
});
