import test from 'ava';
import { apiClient } from '../support/api-client.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { ADMIN_TOKEN, createMerchant, startTestWeir } from '../support/weir-harness.ts';
import { assertError, logText, type Page } from './helpers.ts';

type ApiKey = {
  id: string;
  name: string;
  environment: string;
  maskedKey: string;
  createdAt: string;
  updatedAt: string;
  secretKey?: string;
};
type Endpoint = { id: string; secret: string };

const KEY = /^sk_test_[0-9A-Za-z]{40}$/;

test('POST /api/v1/api-keys shows the secret once; lists and gets only ever show it masked', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);

  const created = await api.post<ApiKey>('/api/v1/api-keys', { name: 'backend' });
  t.is(created.status, 200, JSON.stringify(created.body));
  const secret = created.body.secretKey!;
  t.regex(secret, KEY);
  t.is(created.body.name, 'backend');
  t.is(created.body.environment, 'test');
  t.is(created.body.maskedKey, `sk_test_…${secret.slice(-4)}`);

  const list = await api.get<Page<ApiKey>>('/api/v1/api-keys');
  t.is(list.status, 200);
  t.is(list.body.count, 2, 'the organization key and the new one');
  t.true(list.body.data.some((k) => k.id === created.body.id));
  const one = await api.get<ApiKey>(`/api/v1/api-keys/${created.body.id}`);
  t.is(one.body.maskedKey, created.body.maskedKey);
  for (const shown of [JSON.stringify(list.body), JSON.stringify(one.body)]) {
    t.false(shown.includes(secret), 'the secret is never shown again');
    t.false(shown.includes('secretKey'));
    t.false(shown.includes('secretHash'), 'nor its hash');
  }

  // The new key is a working key of the same organization.
  const other = apiClient(weir.url, secret);
  t.is((await other.get<Page<ApiKey>>('/api/v1/api-keys')).body.count, 2);

  // A name is optional; a bad one is refused.
  t.regex((await api.post<ApiKey>('/api/v1/api-keys')).body.secretKey!, KEY);
  assertError(t, await api.post('/api/v1/api-keys', { name: '' }), 400, { field: 'name' });
  assertError(t, await api.post('/api/v1/api-keys', { name: 42 }), 400, { field: 'name' });
  assertError(t, await api.get('/api/v1/api-keys/00000000-0000-4000-8000-000000000000'), 404, {
    code: 'resource_missing',
  });
});

test('regenerate returns a new secret; the old one stops working and the new one works', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const created = (await api.post<ApiKey>('/api/v1/api-keys', { name: 'rotating' })).body;

  const regenerated = await api.post<ApiKey>(`/api/v1/api-keys/${created.id}/regenerate`);
  t.is(regenerated.status, 200, JSON.stringify(regenerated.body));
  t.is(regenerated.body.id, created.id, 'the same key record');
  t.is(regenerated.body.name, 'rotating');
  t.regex(regenerated.body.secretKey!, KEY);
  t.not(regenerated.body.secretKey, created.secretKey);
  t.is(regenerated.body.maskedKey, `sk_test_…${regenerated.body.secretKey!.slice(-4)}`);

  assertError(t, await apiClient(weir.url, created.secretKey).get('/api/v1/api-keys'), 401);
  const fresh = apiClient(weir.url, regenerated.body.secretKey);
  t.is((await fresh.get('/api/v1/api-keys')).status, 200);
  t.false(JSON.stringify((await fresh.get('/api/v1/api-keys')).body).includes(regenerated.body.secretKey!));

  // A key can regenerate itself: the answer carries the secret to use from now on.
  const self = await fresh.post<ApiKey>(`/api/v1/api-keys/${created.id}/regenerate`);
  t.is(self.status, 200);
  assertError(t, await fresh.get('/api/v1/api-keys'), 401);
  t.is((await apiClient(weir.url, self.body.secretKey).get('/api/v1/api-keys')).status, 200);
});

test('DELETE makes a key 401 and removes it from the list; deleting the calling key needs force', async (t) => {
  const weir = await startTestWeir(t);
  const { api, testSecretKey } = await createMerchant(weir.url);
  const created = (await api.post<ApiKey>('/api/v1/api-keys', { name: 'temporary' })).body;
  const temporary = apiClient(weir.url, created.secretKey);

  t.deepEqual((await api.delete(`/api/v1/api-keys/${created.id}`)).body, {
    statusCode: 200,
    message: `API key ${created.id} deleted`,
    success: true,
  });
  assertError(t, await temporary.get('/api/v1/api-keys'), 401);
  const list = (await api.get<Page<ApiKey>>('/api/v1/api-keys')).body;
  t.is(list.count, 1);
  t.false(list.data.some((k) => k.id === created.id));
  assertError(t, await api.get(`/api/v1/api-keys/${created.id}`), 404);
  assertError(t, await api.delete(`/api/v1/api-keys/${created.id}`), 404);
  assertError(t, await api.post(`/api/v1/api-keys/${created.id}/regenerate`), 404);

  const selfId = list.data[0]!.id;
  assertError(t, await api.delete(`/api/v1/api-keys/${selfId}`), 400, { field: 'id' });
  t.is((await api.get('/api/v1/api-keys')).status, 200, 'still works after the refused self-delete');
  t.is((await api.delete(`/api/v1/api-keys/${selfId}?force=true`)).status, 200);
  assertError(t, await apiClient(weir.url, testSecretKey).get('/api/v1/api-keys'), 401);
});

test('the log never stores a raw API key, even when the request carried an Idempotency-Key', async (t) => {
  const weir = await startTestWeir(t);
  const admin = apiClient(weir.url, ADMIN_TOKEN);
  const org = (
    await admin.post<{ testSecretKey: string; liveSecretKey: string }>('/admin/organizations', { name: 'Secretive' })
  ).body;
  const api = apiClient(weir.url, org.testSecretKey);

  const plain = (await api.post<ApiKey>('/api/v1/api-keys', { name: 'plain' })).body;
  const withKey = await api.post<ApiKey>(
    '/api/v1/api-keys',
    { name: 'idempotent' },
    { 'Idempotency-Key': 'create-key-1' },
  );
  t.is(withKey.status, 200);
  const replay = await api.post<ApiKey>(
    '/api/v1/api-keys',
    { name: 'idempotent' },
    { 'Idempotency-Key': 'create-key-1' },
  );
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  t.is(replay.body.secretKey, withKey.body.secretKey, 'the replay still answers the original response');
  const rotated = (
    await api.post<ApiKey>(`/api/v1/api-keys/${plain.id}/regenerate`, {}, { 'Idempotency-Key': 'rotate-1' })
  ).body;

  const log = await logText(weir);
  t.true(log.length > 0);
  const secrets = [org.testSecretKey, org.liveSecretKey, plain.secretKey!, withKey.body.secretKey!, rotated.secretKey!];
  for (const secret of secrets) {
    t.regex(secret, /^sk_(test|live)_/);
    t.false(log.includes(secret), 'a raw secret key is in the log');
    t.false(log.includes(secret.slice(8)), 'the random part of a secret key is in the log');
  }
});

test('webhook endpoint secrets are stored sealed, never in plain text', async (t) => {
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);

  const created = (
    await api.post<Endpoint>('/api/v1/webhook-endpoints', {
      description: 'a',
      url: receiver.url,
      enabledEvents: { events: ['*'] },
    })
  ).body;
  const idempotent = (
    await api.post<Endpoint>(
      '/api/v1/webhook-endpoints',
      { description: 'b', url: receiver.url, enabledEvents: { events: ['*'] } },
      { 'Idempotency-Key': 'endpoint-b' },
    )
  ).body;
  const regenerated = (
    await api.post<Endpoint>(`/api/v1/webhook-endpoints/${created.id}/regenerate`, {}, { 'Idempotency-Key': 'regen-a' })
  ).body;
  const listed = (await api.get<Page<Endpoint>>('/api/v1/webhook-endpoints')).body;
  t.is(listed.count, 2);

  const log = await logText(weir);
  t.true(log.includes('WebhookEndpointCreated') && log.includes('WebhookEndpointSecretRegenerated'));
  for (const secret of [created.secret, idempotent.secret, regenerated.secret]) {
    t.regex(secret, /^whsec_/);
    t.false(log.includes(secret), 'a webhook secret is in the log in plain text');
    t.false(log.includes(secret.slice('whsec_'.length)));
  }
});

test('scopes: a read key only reads, an audit key reads and verifies the log; each refusal is a 403 naming the scope', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const read = await api.post<ApiKey & { scope: string }>('/api/v1/api-keys', { name: 'analyst', scope: 'read' });
  const audit = await api.post<ApiKey & { scope: string }>('/api/v1/api-keys', { name: 'auditor', scope: 'audit' });
  t.is(read.body.scope, 'read');
  t.is(audit.body.scope, 'audit');
  t.is((await api.post<ApiKey & { scope: string }>('/api/v1/api-keys')).body.scope, 'full', 'full by default');
  assertError(t, await api.post('/api/v1/api-keys', { scope: 'admin' }), 400, { field: 'scope' });
  const reader = apiClient(weir.url, read.body.secretKey);
  const auditor = apiClient(weir.url, audit.body.secretKey);

  for (const key of [reader, auditor]) {
    t.is((await key.get<Page<ApiKey>>('/api/v1/api-keys')).status, 200);
    t.is((await key.get('/api/v1/checkout/sessions')).status, 200);
    const before = await logText(weir);
    for (const [method, path] of [
      ['post', '/api/v1/checkout/sessions'],
      ['post', '/api/v1/api-keys'],
      ['delete', `/api/v1/api-keys/${read.body.id}`],
    ] as const) {
      const refused = method === 'post' ? await key.post(path, { name: 'x' }) : await key.delete(path);
      const scope = key === reader ? 'read' : 'audit';
      assertError(t, refused, 403, {
        code: 'api_key_scope',
        message: new RegExp(`scope is ${scope}: it may only read`),
      });
    }
    t.is(await logText(weir), before, 'nothing written');
  }

  // The log's verification: audit keys and full keys, not read keys.
  t.is((await auditor.get('/api/v1/audit/verify')).status, 200);
  t.is((await api.get('/api/v1/audit/verify')).status, 200);
  assertError(t, await reader.get('/api/v1/audit/verify'), 403, {
    code: 'api_key_scope',
    message: /needs an API key with the audit scope \(or a full key\); this key's scope is read/,
  });
});

test('a read or audit key sees webhook endpoints with their signing secret masked: it may not sign deliveries', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const endpoint = await api.post<Endpoint>('/api/v1/webhook-endpoints', {
    description: 'shop',
    url: 'https://shop.example/hooks',
    enabledEvents: { events: ['*'] },
  });
  const secret = endpoint.body.secret;
  t.regex(secret, /^whsec_/);
  const masked = `whsec_…${secret.slice(-4)}`;
  for (const scope of ['read', 'audit']) {
    const issued = await api.post<ApiKey>('/api/v1/api-keys', { name: scope, scope });
    const key = apiClient(weir.url, issued.body.secretKey);
    const list = await key.get<Page<Endpoint>>('/api/v1/webhook-endpoints');
    const one = await key.get<Endpoint>(`/api/v1/webhook-endpoints/${endpoint.body.id}`);
    t.is(list.status, 200);
    t.is(one.status, 200);
    t.is(list.body.data[0]?.secret, masked, `${scope}: listed masked`);
    t.is(one.body.secret, masked, `${scope}: read masked`);
    t.false(JSON.stringify([list.body, one.body]).includes(secret.slice('whsec_'.length)));
  }
  t.is(
    (await api.get<Endpoint>(`/api/v1/webhook-endpoints/${endpoint.body.id}`)).body.secret,
    secret,
    'a full key sees it',
  );
});

test('each key says when it last authenticated a request (lastUsedAt, to the minute), null until it has', async (t) => {
  const clock = createManualClock(Date.parse('2026-05-01T08:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url);
  const created = await api.post<ApiKey & { lastUsedAt: string | null }>('/api/v1/api-keys', { name: 'backend' });
  t.is(created.body.lastUsedAt, null, 'a new key was never used');
  const lastUsed = async (id: string) =>
    (await api.get<Page<ApiKey & { lastUsedAt: string | null }>>('/api/v1/api-keys')).body.data.find((k) => k.id === id)
      ?.lastUsedAt;
  t.is(await lastUsed(created.body.id), null);

  clock.advanceBy(5 * 60_000);
  const backend = apiClient(weir.url, created.body.secretKey);
  t.is((await backend.get('/api/v1/checkout/sessions')).status, 200);
  t.is(await lastUsed(created.body.id), '2026-05-01T08:05:00.000Z');
  t.is(
    (await api.get<ApiKey & { lastUsedAt: string | null }>(`/api/v1/api-keys/${created.body.id}`)).body.lastUsedAt,
    '2026-05-01T08:05:00.000Z',
  );
  // A refused key (a wrong secret) is not a use.
  clock.advanceBy(2 * 3600_000);
  t.is((await apiClient(weir.url, `${created.body.secretKey!.slice(0, -1)}x`).get('/api/v1/api-keys')).status, 401);
  t.is(await lastUsed(created.body.id), '2026-05-01T08:05:00.000Z');
  t.is((await backend.get('/api/v1/checkout/sessions')).status, 200);
  t.is(await lastUsed(created.body.id), '2026-05-01T10:05:00.000Z');
});
