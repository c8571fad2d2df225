import { createHash } from 'node:crypto';
import test from 'ava';
import type { ProjectionRunner } from '../../src/projections/projection-runner.ts';
import { apiClient } from '../support/api-client.ts';
import { rawConnection } from '../support/raw-http.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { assertError, logLength, type Page, type Session } from './helpers.ts';

const SESSIONS = '/api/v1/checkout/sessions';

test('same Idempotency-Key and same body: the first response again, marked as replayed, and no second session', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);

  const first = await api.post<Session>(SESSIONS, sessionRequest(), { 'Idempotency-Key': 'order-42' });
  t.is(first.status, 200, JSON.stringify(first.body));
  t.is(first.headers.get('idempotent-replayed'), null, 'the first answer is not a replay');
  const logAfterFirst = await logLength(weir);

  const second = await api.post<Session>(SESSIONS, sessionRequest(), { 'Idempotency-Key': 'order-42' });
  t.is(second.status, 200);
  t.is(second.headers.get('idempotent-replayed'), 'true');
  t.is(second.body.id, first.body.id);
  t.deepEqual(second.body, first.body);
  t.regex(second.headers.get('content-type') ?? '', /application\/json/);
  t.is(await logLength(weir), logAfterFirst, 'a replay writes nothing');
  t.is((await api.get<Page<Session>>(SESSIONS)).body.count, 1);
});

test('same Idempotency-Key with another body (or on another route) is a 409 idempotency_key_in_use naming what differs', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const first = await api.post<Session>(SESSIONS, sessionRequest('150000000', 2), { 'Idempotency-Key': 'order-43' });
  t.is(first.status, 200);

  const before = await logLength(weir);
  assertError(t, await api.post(SESSIONS, sessionRequest('150000000', 3), { 'Idempotency-Key': 'order-43' }), 409, {
    code: 'idempotency_key_in_use',
    message: /already used with a different request body on POST \/api\/v1\/checkout\/sessions\b/,
  });
  assertError(t, await api.post('/api/v1/api-keys', { name: 'x' }, { 'Idempotency-Key': 'order-43' }), 409, {
    code: 'idempotency_key_in_use',
    message: /already used for POST \/api\/v1\/checkout\/sessions, not POST \/api\/v1\/api-keys/,
  });
  t.is(await logLength(weir), before, 'a conflicting request writes nothing');
  t.is((await api.get<Page<Session>>(SESSIONS)).body.count, 1);
  // The original request can still be replayed.
  t.is(
    (await api.post<Session>(SESSIONS, sessionRequest('150000000', 2), { 'Idempotency-Key': 'order-43' })).body.id,
    first.body.id,
  );
});

test('the same JSON with other whitespace, key order or number spelling under the same Idempotency-Key is a replay', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const request = { ...sessionRequest(), metadata: { orderId: 'o-1', channel: 'web' } };
  const first = await api.post<Session>(SESSIONS, JSON.stringify(request), { 'Idempotency-Key': 'order-json' });
  t.is(first.status, 200, JSON.stringify(first.body));
  const logAfterFirst = await logLength(weir);

  // Keys reversed at every depth, pretty-printed, an escaped character and 2 written as 2.0.
  const reversed = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(reversed)
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(
            Object.entries(value)
              .reverse()
              .map(([k, v]) => [k, reversed(v)]),
          )
        : value;
  const respelled = JSON.stringify(reversed(request), null, 2)
    .replace('"quantity": 2', '"quantity": 2.0')
    .replace('"o-1"', '"\\u006f-1"');
  t.not(respelled, JSON.stringify(request));
  t.deepEqual(JSON.parse(respelled), request, 'the same document');
  for (const body of [respelled, ` \n${JSON.stringify(request)}\t`]) {
    const again = await api.post<Session>(SESSIONS, body, { 'Idempotency-Key': 'order-json' });
    t.is(again.status, 200, JSON.stringify(again.body));
    t.is(again.headers.get('idempotent-replayed'), 'true');
    t.deepEqual(again.body, first.body);
  }
  t.is(await logLength(weir), logAfterFirst, 'a replay writes nothing');
  t.is((await api.get<Page<Session>>(SESSIONS)).body.count, 1);
});

test('a body that differs in meaning under the same Idempotency-Key is a 409: a value, an added key, another array order', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const twoItems = {
    ...sessionRequest(),
    lineItems: {
      data: [
        { priceData: { currency: 'usdc', unitAmount: '1000000', productData: { name: 'A' } }, quantity: 1 },
        { priceData: { currency: 'usdc', unitAmount: '2000000', productData: { name: 'B' } }, quantity: 1 },
      ],
    },
    metadata: { orderId: 'o-2' },
  };
  const first = await api.post<Session>(SESSIONS, twoItems, { 'Idempotency-Key': 'order-meaning' });
  t.is(first.status, 200, JSON.stringify(first.body));
  const before = await logLength(weir);
  const variants: Record<string, unknown> = {
    'another value': { ...twoItems, metadata: { orderId: 'o-3' } },
    'a number for a string': { ...twoItems, metadata: { orderId: 2 } },
    'an added key': { ...twoItems, clientReferenceId: 'extra' },
    'another array order': { ...twoItems, lineItems: { data: [...twoItems.lineItems.data].reverse() } },
  };
  for (const [what, body] of Object.entries(variants)) {
    assertError(t, await api.post(SESSIONS, body, { 'Idempotency-Key': 'order-meaning' }), 409, {
      code: 'idempotency_key_in_use',
    });
    t.pass(what);
  }
  t.is(await logLength(weir), before, 'a conflicting request writes nothing');
  const replay = await api.post<Session>(SESSIONS, twoItems, { 'Idempotency-Key': 'order-meaning' });
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  t.is(replay.body.id, first.body.id);
});

test('a key claimed before bodies were compared by meaning (its hash of the bytes) is still replayed for the same bytes', async (t) => {
  const weir = await startTestWeir(t);
  const { api, organizationId } = await createMerchant(weir.url);
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
  const raw = JSON.stringify(sessionRequest());
  // The answer it recorded: a session as the API shows it (the response check holds it to the document).
  const recorded = await api.post<{ id: string }>(SESSIONS, sessionRequest());
  const at = new Date().toISOString();
  const metadata = {
    organizationId,
    environment: 'test' as const,
    actor: 'api_key:legacy',
    correlationId: 'legacy',
    occurredAt: at,
  };
  // What an earlier Weir recorded: no bodyForm, the hash of the bytes, a plain body.
  await weir.eventStore.append(
    `idempotency-${sha256(`${organizationId}:test:legacy-key`)}`,
    [
      {
        id: crypto.randomUUID(),
        type: 'IdempotencyKeyClaimed',
        data: { method: 'POST', path: SESSIONS, bodyHash: sha256(raw), at },
        metadata,
      },
      {
        id: crypto.randomUUID(),
        type: 'IdempotentResponseRecorded',
        data: { status: 200, body: JSON.stringify(recorded.body) },
        metadata,
      },
    ],
    'no_stream',
  );
  const replay = await api.post<{ id: string }>(SESSIONS, raw, { 'Idempotency-Key': 'legacy-key' });
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  t.is(replay.body.id, recorded.body.id);
  assertError(
    t,
    await api.post(SESSIONS, JSON.stringify(sessionRequest(), null, 2), { 'Idempotency-Key': 'legacy-key' }),
    409,
    {
      code: 'idempotency_key_in_use',
    },
  );
});

test('different Idempotency-Keys (and no key) make different sessions', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const a = await api.post<Session>(SESSIONS, sessionRequest(), { 'Idempotency-Key': 'order-a' });
  const b = await api.post<Session>(SESSIONS, sessionRequest(), { 'Idempotency-Key': 'order-b' });
  const c = await api.post<Session>(SESSIONS, sessionRequest());
  const d = await api.post<Session>(SESSIONS, sessionRequest());
  for (const r of [a, b, c, d]) {
    t.is(r.status, 200);
    t.is(r.headers.get('idempotent-replayed'), null);
  }
  t.is(new Set([a.body.id, b.body.id, c.body.id, d.body.id]).size, 4);
  t.is((await api.get<Page<Session>>(SESSIONS)).body.count, 4);
});

test('Idempotency-Keys are per tenant: the same key in another organization or environment is independent', async (t) => {
  const weir = await startTestWeir(t);
  const alice = await createMerchant(weir.url, 'Alice');
  const bob = await createMerchant(weir.url, 'Bob');

  const fromAlice = await alice.api.post<Session>(SESSIONS, sessionRequest('150000000', 1), {
    'Idempotency-Key': 'order-1',
  });
  // Another body under the same key: not a conflict for Bob, and not Alice's answer.
  const fromBob = await bob.api.post<Session>(SESSIONS, sessionRequest('250000000', 1), {
    'Idempotency-Key': 'order-1',
  });
  t.is(fromAlice.status, 200);
  t.is(fromBob.status, 200, JSON.stringify(fromBob.body));
  t.is(fromBob.headers.get('idempotent-replayed'), null);
  t.not(fromBob.body.id, fromAlice.body.id);
  t.is(fromBob.body.amountTotal, '250000000');
  assertError(t, await bob.api.get(`${SESSIONS}/${fromAlice.body.id}`), 404);

  // Same body, same key: still Bob's own session, not a replay of Alice's.
  const bobAgain = await bob.api.post<Session>(SESSIONS, sessionRequest('150000000', 1), {
    'Idempotency-Key': 'order-2',
  });
  const aliceSame = await alice.api.post<Session>(SESSIONS, sessionRequest('150000000', 1), {
    'Idempotency-Key': 'order-2',
  });
  t.not(aliceSame.body.id, bobAgain.body.id);
  t.is(aliceSame.headers.get('idempotent-replayed'), null);

  // The live environment of the same organization has its own key space.
  const live = await alice.live.post<{ id: string }>(
    '/api/v1/api-keys',
    { name: 'live' },
    { 'Idempotency-Key': 'order-1' },
  );
  t.is(live.status, 200, JSON.stringify(live.body));
  t.is(live.headers.get('idempotent-replayed'), null);
});

test('a recorded response survives a restart on the same data dir', async (t) => {
  const first = await startTestWeir(t);
  const { api, testSecretKey } = await createMerchant(first.url);
  const created = await api.post<Session>(SESSIONS, sessionRequest(), { 'Idempotency-Key': 'order-restart' });
  t.is(created.status, 200);
  const apiKey = await api.post<{ id: string; secretKey: string }>(
    '/api/v1/api-keys',
    { name: 'restart' },
    { 'Idempotency-Key': 'key-restart' },
  );
  await first.stop();

  const second = await startTestWeir(t, { dataDir: first.dataDir });
  const again = apiClient(second.url, testSecretKey);
  const replayed = await again.post<Session>(SESSIONS, sessionRequest(), { 'Idempotency-Key': 'order-restart' });
  t.is(replayed.status, 200, JSON.stringify(replayed.body));
  t.is(replayed.headers.get('idempotent-replayed'), 'true');
  t.is(replayed.body.id, created.body.id);
  t.is((await again.get<Page<Session>>(SESSIONS)).body.count, 1);
  const keyReplayed = await again.post<{ id: string; secretKey: string }>(
    '/api/v1/api-keys',
    { name: 'restart' },
    { 'Idempotency-Key': 'key-restart' },
  );
  t.is(keyReplayed.body.id, apiKey.body.id);
  t.is(keyReplayed.body.secretKey, apiKey.body.secretKey);
  assertError(t, await again.post(SESSIONS, sessionRequest('1', 1), { 'Idempotency-Key': 'order-restart' }), 409, {
    code: 'idempotency_key_in_use',
  });
});

test('a request refused with a 400 does not use up its Idempotency-Key', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const { successUrl: _omitted, ...withoutSuccessUrl } = sessionRequest();

  assertError(t, await api.post(SESSIONS, withoutSuccessUrl, { 'Idempotency-Key': 'order-fix' }), 400, {
    field: 'successUrl',
  });
  // Retrying the same bad request gives the same 400, not a replay or a conflict.
  assertError(t, await api.post(SESSIONS, withoutSuccessUrl, { 'Idempotency-Key': 'order-fix' }), 400, {
    field: 'successUrl',
  });
  // The corrected request goes through under the same key, and is then recorded.
  const fixed = await api.post<Session>(SESSIONS, sessionRequest(), { 'Idempotency-Key': 'order-fix' });
  t.is(fixed.status, 200, JSON.stringify(fixed.body));
  const replay = await api.post<Session>(SESSIONS, sessionRequest(), { 'Idempotency-Key': 'order-fix' });
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  t.is(replay.body.id, fixed.body.id);
  t.is((await api.get<Page<Session>>(SESSIONS)).body.count, 1);
});

test('a POST no route takes (404) or a path does not allow (405), sent again with its Idempotency-Key, gets the same error, not a recorded null', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const customer = (await api.post<{ id: string }>('/api/v1/customers', { email: 'c@example.com' })).body.id;

  for (const [path, status] of [
    ['/api/v1/no-such-thing', 404],
    [`/api/v1/customers/${customer}`, 405],
  ] as const) {
    const key = `retry-${status}`;
    const first = await api.post(path, { a: 1 }, { 'Idempotency-Key': key });
    assertError(t, first, status);
    const again = await api.post(path, { a: 1 }, { 'Idempotency-Key': key });
    assertError(t, again, status);
    t.deepEqual(again.body, first.body, `${path}: the same error body as the first time`);
    t.is(again.headers.get('allow'), first.headers.get('allow'), `${path}: the same Allow header`);
    // Nothing was done, so the key is not used up: a corrected request may take it.
    const corrected = await api.post(
      '/api/v1/customers',
      { email: `${status}@example.com` },
      { 'Idempotency-Key': key },
    );
    t.is(corrected.status, 200, JSON.stringify(corrected.body));
  }
});

test('Idempotency-Key is validated and ignored on GET', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  assertError(t, await api.post(SESSIONS, sessionRequest(), { 'Idempotency-Key': 'k'.repeat(256) }), 400, {
    field: 'Idempotency-Key',
  });
  t.is((await api.get<Page<Session>>(SESSIONS)).body.count, 0);
  const get = await api.call('GET', SESSIONS, undefined, { 'Idempotency-Key': 'get-1' });
  t.is(get.status, 200);
  t.is(get.headers.get('idempotent-replayed'), null);
});

test('a burst of one request under one Idempotency-Key: one 200, and the rest a 409 idempotency_request_in_progress with Retry-After, not the mismatch code', async (t) => {
  // The first request is held after its writes (waiting for its read models) until the rest are answered.
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const gate = { armed: false };
  const weir = await startTestWeir(
    t,
    {},
    {
      wrapProjections: (runner: ProjectionRunner): ProjectionRunner => ({
        ...runner,
        waitFor: async (position, timeoutMs) => {
          if (gate.armed) await held;
          return runner.waitFor(position, timeoutMs);
        },
      }),
    },
  );
  const { api } = await createMerchant(weir.url);
  gate.armed = true;
  const burst = 10;
  let answered = 0;
  const responses = await Promise.all(
    Array.from({ length: burst }, () =>
      api.post<Session>(SESSIONS, sessionRequest(), { 'Idempotency-Key': 'double-click' }).then((response) => {
        if (++answered === burst - 1) release();
        return response;
      }),
    ),
  );
  const created = responses.filter((r) => r.status === 200);
  t.is(created.length, 1, JSON.stringify(responses.map((r) => r.body)));
  for (const r of responses.filter((x) => x.status !== 200)) {
    assertError(t, r, 409, { code: 'idempotency_request_in_progress', message: /still being processed/ });
    t.is(r.headers.get('retry-after'), '1', 'a small Retry-After in seconds');
  }
  t.is((await api.get<Page<Session>>(SESSIONS)).body.count, 1);
  // Once settled, a retry replays it.
  const retry = await api.post<Session>(SESSIONS, sessionRequest(), { 'Idempotency-Key': 'double-click' });
  t.is(retry.body.id, created[0]!.body.id);
  t.is(retry.headers.get('idempotent-replayed'), 'true');
});

test('one Idempotency-Key on two cancels of different sessions: the second is a 409 naming the path, and its session stays open', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const a = (await api.post<Session>(SESSIONS, sessionRequest())).body.id;
  const b = (await api.post<Session>(SESSIONS, sessionRequest())).body.id;
  const key = { 'Idempotency-Key': 'cancel-1' };
  const canceled = await api.call<Session>('POST', `${SESSIONS}/${a}/cancel`, undefined, key);
  t.is(canceled.status, 200, JSON.stringify(canceled.body));
  t.is(canceled.body.status, 'canceled');

  const before = await logLength(weir);
  const body = assertError(t, await api.call('POST', `${SESSIONS}/${b}/cancel`, undefined, key), 409, {
    code: 'idempotency_key_in_use',
  });
  t.true(
    body.message.includes(`already used for POST ${SESSIONS}/${a}/cancel, not POST ${SESSIONS}/${b}/cancel`),
    body.message,
  );
  t.false(body.message.includes('different request body'), 'the bodies are the same (none): the path differs');
  t.is(await logLength(weir), before, 'a conflicting request writes nothing');
  t.is((await api.get<Session>(`${SESSIONS}/${b}`)).body.status, 'open');
});

test('an Idempotency-Key sent empty, blank, too long or with a control character is a 400 naming the header, and writes nothing', async (t) => {
  const weir = await startTestWeir(t);
  const { api, testSecretKey } = await createMerchant(weir.url);
  const before = await logLength(weir);
  for (const [key, message] of [
    ['', /^Idempotency-Key: must not be empty$/],
    ['   ', /^Idempotency-Key: must not be empty$/],
    ['k'.repeat(256), /^Idempotency-Key: must be at most 255 characters$/],
    ['order\t1', /^Idempotency-Key: must not contain control characters$/],
  ] as const) {
    assertError(t, await api.post(SESSIONS, sessionRequest(), { 'Idempotency-Key': key }), 400, {
      code: 'parameter_invalid',
      field: 'Idempotency-Key',
      message,
    });
  }
  // Sent twice (a proxy adding its own): fetch would join them, so by hand.
  const body = JSON.stringify(sessionRequest());
  const connection = rawConnection(weir.port);
  t.teardown(connection.close);
  await connection.send(
    [
      `POST ${SESSIONS} HTTP/1.1`,
      'Host: 127.0.0.1',
      `Authorization: Bearer ${testSecretKey}`,
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Idempotency-Key: a',
      'Idempotency-Key: b',
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  );
  const twice = await connection.exchange();
  t.regex(twice.statusLine, /^HTTP\/1\.1 400/, twice.text);
  t.is((JSON.parse(twice.body) as { message: string }).message, 'Idempotency-Key: must be sent once');

  t.is(await logLength(weir), before, 'nothing written');
  t.is((await api.get<Page<Session>>(SESSIONS)).body.count, 0);
});

test('the read-only analytics query takes no Idempotency-Key: one sent, bad or reused with another body, is ignored and claims nothing', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const query = (pipeline: unknown[], key: string) =>
    api.post<{ data: unknown[] }>(
      '/api/v1/analytics/query',
      { collection: 'checkout_sessions', pipeline },
      {
        'Idempotency-Key': key,
      },
    );
  const before = await logLength(weir);
  for (const key of ['', 'k'.repeat(256)]) {
    const answer = await query([{ $count: 'n' }], key);
    t.is(answer.status, 200, JSON.stringify(answer.body));
  }
  // The same key with another pipeline runs it: no 409, no replay of the first answer.
  const first = await query([{ $count: 'n' }], 'report-1');
  const second = await query([{ $limit: 1 }], 'report-1');
  t.is(second.status, 200, JSON.stringify(second.body));
  t.is(second.headers.get('idempotent-replayed'), null);
  t.is(first.headers.get('idempotent-replayed'), null);
  t.is(await logLength(weir), before, 'no key claimed');
});
