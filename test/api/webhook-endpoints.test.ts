import test, { type ExecutionContext } from 'ava';
import { createManualClock } from '../../src/shared/clock.ts';
import { bodySignature, verifyTimestampedSignature } from '../../src/webhooks/signature.ts';
import { eventually } from '../support/api-client.ts';
import { startWebhookReceiver, type ReceivedWebhook } from '../support/webhook-receiver.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { assertError, assertRejectedWithoutWrite, payInFull, type Api, type Page, type Session } from './helpers.ts';

const ENDPOINTS = '/api/v1/webhook-endpoints';
type Endpoint = {
  id: string;
  description: string;
  url: string;
  secret: string;
  previousSecretExpiresAt: string | null;
  isDisabled: boolean;
  enabledEvents: { events: string[] };
  createdAt: string;
  updatedAt: string;
};
type Delivery = { id: string; eventType: string; status: string; attempts: number };
type TestSent = { statusCode: number; message: string; deliveryId: string; eventId: string };
type Envelope = { id: string; type: string; object: string; data: { object: { id: string } } };

const typeOf = (hook: ReceivedWebhook) => (JSON.parse(hook.body) as Envelope).type;
const deliveriesOf = async (api: Api, endpointId: string) =>
  (await api.get<Page<Delivery>>(`${ENDPOINTS}/${endpointId}/deliveries`)).body;

async function receiver(t: ExecutionContext) {
  const r = await startWebhookReceiver();
  t.teardown(() => r.close());
  return r;
}

test('create validates url, description and enabledEvents', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const valid = {
    description: 'backend',
    url: 'https://shop.example/hooks',
    enabledEvents: { events: ['checkout_session.completed'] },
  };

  await assertRejectedWithoutWrite(t, weir, () => api.post(ENDPOINTS, { ...valid, url: undefined }), {
    field: 'url',
    code: 'parameter_missing',
  });
  for (const url of [
    'ftp://shop.example/hooks',
    'shop.example/hooks',
    'javascript:alert(1)',
    'mailto:a@b.example',
    '',
  ]) {
    await assertRejectedWithoutWrite(t, weir, () => api.post(ENDPOINTS, { ...valid, url }), { field: 'url' });
  }
  await assertRejectedWithoutWrite(t, weir, () => api.post(ENDPOINTS, { ...valid, description: undefined }), {
    field: 'description',
    code: 'parameter_missing',
  });
  await assertRejectedWithoutWrite(t, weir, () => api.post(ENDPOINTS, { ...valid, enabledEvents: undefined }), {
    field: 'enabledEvents',
    code: 'parameter_missing',
  });
  await assertRejectedWithoutWrite(t, weir, () => api.post(ENDPOINTS, { ...valid, enabledEvents: {} }), {
    field: 'enabledEvents.events',
    code: 'parameter_missing',
  });
  await assertRejectedWithoutWrite(t, weir, () => api.post(ENDPOINTS, { ...valid, enabledEvents: { events: [] } }), {
    field: 'enabledEvents.events',
  });
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(ENDPOINTS, { ...valid, enabledEvents: { events: 'checkout_session.completed' } }),
    { field: 'enabledEvents.events' },
  );
  // The reference's plain array is taken too (see the end of this test); its items are checked the same way.
  await assertRejectedWithoutWrite(t, weir, () => api.post(ENDPOINTS, { ...valid, enabledEvents: ['nope'] }), {
    field: 'enabledEvents[0]',
    message: /"nope" is not an event type/,
  });
  await assertRejectedWithoutWrite(t, weir, () => api.post(ENDPOINTS, { ...valid, enabledEvents: [] }), {
    field: 'enabledEvents',
  });
  await assertRejectedWithoutWrite(t, weir, () => api.post(ENDPOINTS, { ...valid, enabledEvents: 'invoice.paid' }), {
    field: 'enabledEvents',
    message: /must be an object/,
  });
  await assertRejectedWithoutWrite(
    t,
    weir,
    () =>
      api.post(ENDPOINTS, {
        ...valid,
        enabledEvents: { events: ['checkout_session.completed', 'checkout.session.completed'] },
      }),
    { field: 'enabledEvents.events[1]' },
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(ENDPOINTS, { ...valid, enabledEvents: { events: ['webhook_endpoint.test'] } }),
    { field: 'enabledEvents.events[0]' },
  );
  await assertRejectedWithoutWrite(t, weir, () => api.post(ENDPOINTS, { ...valid, enabledEvents: { events: [42] } }), {
    field: 'enabledEvents.events[0]',
  });
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(ENDPOINTS, { ...valid, enabledEvents: { events: ['__proto__'] } }),
    { field: 'enabledEvents.events[0]', message: /is not an event type/ },
  );
  // A huge value is not echoed back whole: the message names its kind, or quotes the start of a string.
  const huge = await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(ENDPOINTS, { ...valid, enabledEvents: { events: [{ x: 'y'.repeat(70_000) }, 'z'.repeat(70_000)] } }),
    { field: 'enabledEvents.events[0]', message: /^enabledEvents\.events\[0\]: an object is not an event type/ },
  );
  t.true(JSON.stringify(huge).length < 1000);
  await assertRejectedWithoutWrite(t, weir, () => api.post(ENDPOINTS, { ...valid, isDisabled: 'no' }), {
    field: 'isDisabled',
  });
  t.is((await api.get<Page<Endpoint>>(ENDPOINTS)).body.count, 0);

  // Both schemes, '*' and every advertised event type are accepted.
  const types = (await api.get<{ events: string[] }>(`${ENDPOINTS}/event-types`)).body.events;
  t.true(types.includes('*') && types.includes('checkout_session.expired'));
  const all = await api.post<Endpoint>(ENDPOINTS, {
    ...valid,
    url: 'http://127.0.0.1:9/hooks',
    enabledEvents: { events: types },
  });
  t.is(all.status, 200, JSON.stringify(all.body));
  const star = await api.post<Endpoint>(ENDPOINTS, { ...valid, enabledEvents: { events: ['*', '*'] } });
  t.deepEqual(star.body.enabledEvents, { events: ['*'] }, 'duplicates are dropped');

  // The reference's plain array of event types, at create and at update.
  const plain = await api.post<Endpoint>(ENDPOINTS, { ...valid, enabledEvents: ['invoice.paid', 'invoice.paid'] });
  t.is(plain.status, 200, JSON.stringify(plain.body));
  t.deepEqual(plain.body.enabledEvents, { events: ['invoice.paid'] });
  const updated = await api.put<Endpoint>(`${ENDPOINTS}/${plain.body.id}`, { enabledEvents: ['*'] });
  t.deepEqual(updated.body.enabledEvents, { events: ['*'] });

  // A failed payment intent by the specification's name or the reference's, or both: listed, taken, answered back as sent.
  t.true(types.includes('payment_intent.failed') && types.includes('payment_intent.payment_failed'));
  const bySpec = await api.post<Endpoint>(ENDPOINTS, {
    ...valid,
    enabledEvents: { events: ['payment_intent.failed'] },
  });
  t.is(bySpec.status, 200, JSON.stringify(bySpec.body));
  t.deepEqual(bySpec.body.enabledEvents, { events: ['payment_intent.failed'] });
  const both = await api.put<Endpoint>(`${ENDPOINTS}/${bySpec.body.id}`, {
    enabledEvents: ['payment_intent.payment_failed', 'payment_intent.failed'],
  });
  t.deepEqual(both.body.enabledEvents, { events: ['payment_intent.payment_failed', 'payment_intent.failed'] });
  t.deepEqual((await api.get<Endpoint>(`${ENDPOINTS}/${bySpec.body.id}`)).body.enabledEvents, both.body.enabledEvents);
});

test('create, list, get, update, regenerate, delete', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);

  const created = await api.post<Endpoint>(ENDPOINTS, {
    description: 'backend',
    url: 'https://shop.example/hooks',
    enabledEvents: { events: ['checkout_session.completed'] },
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  const endpoint = created.body;
  t.regex(endpoint.id, /^[0-9a-f-]{36}$/);
  t.regex(endpoint.secret, /^whsec_[0-9A-Za-z]{40}$/);
  t.like(endpoint, {
    description: 'backend',
    url: 'https://shop.example/hooks',
    isDisabled: false,
    enabledEvents: { events: ['checkout_session.completed'] },
  });

  const listed = (await api.get<Page<Endpoint>>(ENDPOINTS)).body;
  t.like(listed, { page: 1, count: 1, hasMore: false });
  t.deepEqual(listed.data[0], endpoint);
  t.deepEqual((await api.get<Endpoint>(`${ENDPOINTS}/${endpoint.id}`)).body, endpoint);

  const disabled = await api.put<Endpoint>(`${ENDPOINTS}/${endpoint.id}`, { isDisabled: true });
  t.is(disabled.status, 200, JSON.stringify(disabled.body));
  t.true(disabled.body.isDisabled);
  t.is(disabled.body.url, endpoint.url, 'a partial update keeps the rest');
  t.is(disabled.body.secret, endpoint.secret, 'an update keeps the secret');
  t.is((await api.get<Page<Endpoint>>(`${ENDPOINTS}?isDisabled=true`)).body.count, 1);
  t.is((await api.get<Page<Endpoint>>(`${ENDPOINTS}?isDisabled=false`)).body.count, 0);
  const changed = await api.put<Endpoint>(`${ENDPOINTS}/${endpoint.id}`, {
    url: 'https://shop.example/v2/hooks',
    description: 'v2',
    enabledEvents: { events: ['*'] },
    isDisabled: false,
  });
  t.like(changed.body, {
    url: 'https://shop.example/v2/hooks',
    description: 'v2',
    isDisabled: false,
    enabledEvents: { events: ['*'] },
  });
  await assertRejectedWithoutWrite(t, weir, () => api.put(`${ENDPOINTS}/${endpoint.id}`, { url: 'ftp://x.example' }), {
    field: 'url',
  });
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.put(`${ENDPOINTS}/${endpoint.id}`, { enabledEvents: { events: ['nope'] } }),
    { field: 'enabledEvents.events[0]' },
  );
  await assertRejectedWithoutWrite(t, weir, () => api.put(`${ENDPOINTS}/${endpoint.id}`, { isDisabled: 1 }), {
    field: 'isDisabled',
  });
  await assertRejectedWithoutWrite(t, weir, () => api.put(`${ENDPOINTS}/${endpoint.id}`, {}), {
    message: /nothing to update/,
  });

  const regenerated = await api.post<Endpoint>(`${ENDPOINTS}/${endpoint.id}/regenerate`);
  t.is(regenerated.status, 200);
  t.regex(regenerated.body.secret, /^whsec_/);
  t.not(regenerated.body.secret, endpoint.secret);
  t.is(regenerated.body.id, endpoint.id);
  t.is((await api.get<Endpoint>(`${ENDPOINTS}/${endpoint.id}`)).body.secret, regenerated.body.secret);
  t.is(regenerated.body.previousSecretExpiresAt, null, 'no body: the old secret stops at once, as before');

  t.deepEqual((await api.delete(`${ENDPOINTS}/${endpoint.id}`)).body, {
    statusCode: 200,
    message: `webhook endpoint ${endpoint.id} deleted`,
  });
  for (const r of [
    await api.get(`${ENDPOINTS}/${endpoint.id}`),
    await api.put(`${ENDPOINTS}/${endpoint.id}`, { isDisabled: true }),
    await api.post(`${ENDPOINTS}/${endpoint.id}/regenerate`),
    await api.post(`${ENDPOINTS}/${endpoint.id}/test`),
    await api.get(`${ENDPOINTS}/${endpoint.id}/deliveries`),
    await api.delete(`${ENDPOINTS}/${endpoint.id}`),
  ])
    assertError(t, r, 404, { code: 'resource_missing' });
  t.is((await api.get<Page<Endpoint>>(ENDPOINTS)).body.count, 0);
  assertError(t, await api.get(`${ENDPOINTS}/00000000-0000-4000-8000-000000000000`), 404);
});

test('POST /:id/test sends webhook_endpoint.test signed with the current secret', async (t) => {
  const hooks = await receiver(t);
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  // Subscribed to something else entirely: the test event comes anyway.
  const endpoint = (
    await api.post<Endpoint>(ENDPOINTS, {
      description: 'd',
      url: hooks.url,
      enabledEvents: { events: ['invoice.paid'] },
    })
  ).body;

  const sent = (await api.post<TestSent>(`${ENDPOINTS}/${endpoint.id}/test`)).body;
  t.like(sent, { statusCode: 200, message: `test event sent to webhook endpoint ${endpoint.id}` });
  const [first] = await hooks.waitFor((all) => all.length >= 1);
  const envelope = JSON.parse(first!.body) as Envelope;
  t.is(envelope.id, sent.eventId, 'the answer names the event delivered');
  t.is(first!.headers['x-webhook-id'], sent.eventId);
  t.is(envelope.type, 'webhook_endpoint.test');
  t.is(envelope.data.object.id, endpoint.id);
  t.regex(envelope.id, /^[0-9a-f-]{36}$/);
  t.is(first!.headers['x-webhook-signature'], bodySignature(endpoint.secret, first!.body));
  t.is(first!.headers['x-webhook-token'], endpoint.secret);

  const regenerated = (await api.post<Endpoint>(`${ENDPOINTS}/${endpoint.id}/regenerate`)).body;
  await api.post(`${ENDPOINTS}/${endpoint.id}/test`);
  const [, second] = await hooks.waitFor((all) => all.length >= 2);
  t.is(typeOf(second!), 'webhook_endpoint.test');
  t.not((JSON.parse(second!.body) as Envelope).id, envelope.id, 'each test is a new event');
  t.is(
    second!.headers['x-webhook-signature'],
    bodySignature(regenerated.secret, second!.body),
    'signed with the new secret',
  );
  t.not(second!.headers['x-webhook-signature'], bodySignature(endpoint.secret, second!.body), 'not with the old one');

  const deliveries = await eventually(async () => {
    const page = await deliveriesOf(api, endpoint.id);
    return page.count === 2 && page.data.every((d) => d.status === 'succeeded') ? page : undefined;
  }, 'both test deliveries to be recorded');
  t.true(deliveries.data.every((d) => d.eventType === 'webhook_endpoint.test' && d.attempts === 1));
});

test('each delivery says in its body which environment sent it (livemode), so one receiver can serve a test and a live endpoint', async (t) => {
  const hooks = await receiver(t);
  // Live endpoints may reach the loopback receiver only where the operator allows it.
  const weir = await startTestWeir(t, { webhookInternalTargets: ['test', 'live'] });
  const { api, live } = await createMerchant(weir.url);
  for (const [client, name] of [
    [api, 'test'],
    [live, 'live'],
  ] as const) {
    const endpoint = await client.post<Endpoint>(ENDPOINTS, {
      description: name,
      url: `${hooks.url}?${name}`,
      enabledEvents: { events: ['*'] },
    });
    t.is(endpoint.status, 200, JSON.stringify(endpoint.body));
    await client.post(`${ENDPOINTS}/${endpoint.body.id}/test`);
  }
  const delivered = await hooks.waitFor((all) => all.length >= 2);
  const livemodes = delivered
    .map((hook) => JSON.parse(hook.body) as { data: { object: { description: string } }; livemode?: unknown })
    .map((event) => [event.data.object.description, event.livemode])
    .sort();
  t.deepEqual(livemodes, [
    ['live', true],
    ['test', false],
  ]);
});

test('POST /:id/test answers the ids its delivery has in the delivery log: found by id, by eventId, and resent by that id', async (t) => {
  const hooks = await receiver(t);
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const endpoint = (
    await api.post<Endpoint>(ENDPOINTS, { description: 'd', url: hooks.url, enabledEvents: { events: ['*'] } })
  ).body;
  const first = (await api.post<TestSent>(`${ENDPOINTS}/${endpoint.id}/test`)).body;
  const second = (await api.post<TestSent>(`${ENDPOINTS}/${endpoint.id}/test`)).body;
  t.not(first.deliveryId, second.deliveryId);
  t.not(first.eventId, second.eventId);
  // The answer comes once the log shows the delivery: no wait needed to find it.
  const logged = await deliveriesOf(api, endpoint.id);
  t.deepEqual(
    logged.data.map((d) => [d.id, (d as Delivery & { eventId: string }).eventId]).sort(),
    [
      [first.deliveryId, first.eventId],
      [second.deliveryId, second.eventId],
    ].sort(),
  );
  const byEvent = (
    await api.get<Page<Delivery>>(`${ENDPOINTS}/${endpoint.id}/deliveries?eventId=${encodeURIComponent(first.eventId)}`)
  ).body.data;
  t.deepEqual(
    byEvent.map((d) => d.id),
    [first.deliveryId],
  );
  await hooks.waitFor((all) => all.length >= 2);
  await eventually(async () => {
    const page = await deliveriesOf(api, endpoint.id);
    return page.data.every((d) => d.status === 'succeeded') ? true : undefined;
  }, 'both test deliveries to succeed');
  const resent = await api.post<Delivery>(`${ENDPOINTS}/${endpoint.id}/deliveries/${first.deliveryId}/resend`);
  t.is(resent.status, 200);
  t.is(resent.body.id, first.deliveryId);
});

test('WEIR_WEBHOOK_TOKEN_HEADER off: deliveries carry no x-webhook-token, and their signatures still verify', async (t) => {
  const hooks = await receiver(t);
  const weir = await startTestWeir(t, { webhookTokenHeader: false });
  const { api } = await createMerchant(weir.url);
  const endpoint = (
    await api.post<Endpoint>(ENDPOINTS, { description: 'd', url: hooks.url, enabledEvents: { events: ['*'] } })
  ).body;
  const sent = (await api.post<TestSent>(`${ENDPOINTS}/${endpoint.id}/test`)).body;
  const [hook] = await hooks.waitFor((all) => all.length >= 1);
  t.false('x-webhook-token' in hook!.headers);
  t.false(Object.values(hook!.headers).includes(endpoint.secret), 'the secret is in no header');
  t.is(hook!.headers['x-webhook-id'], sent.eventId);
  t.is(hook!.headers['x-webhook-signature'], bodySignature(endpoint.secret, hook!.body));
  const header = hook!.headers['x-weir-signature'] as string;
  const nowSeconds = Number(/^t=(\d+),/.exec(header)?.[1]);
  t.true(verifyTimestampedSignature({ secret: endpoint.secret, body: hook!.body, header, nowSeconds }));
});

test('regenerate may keep the old secret signing beside the new one until the clock passes its expiry', async (t) => {
  const hooks = await receiver(t);
  const clock = createManualClock(Date.parse('2026-06-01T10:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url);
  const endpoint = (
    await api.post<Endpoint>(ENDPOINTS, { description: 'd', url: hooks.url, enabledEvents: { events: ['*'] } })
  ).body;
  t.is(endpoint.previousSecretExpiresAt, null);

  const regenerate = `${ENDPOINTS}/${endpoint.id}/regenerate`;
  for (const previousSecretExpiresInSeconds of [-1, 86_401, 1.5, '3600', true])
    await assertRejectedWithoutWrite(t, weir, () => api.post(regenerate, { previousSecretExpiresInSeconds }), {
      field: 'previousSecretExpiresInSeconds',
    });
  await assertRejectedWithoutWrite(t, weir, () => api.post(regenerate, { previousSecretExpiresIn: 60 }), {
    field: 'previousSecretExpiresIn',
  });
  t.is((await api.get<Endpoint>(`${ENDPOINTS}/${endpoint.id}`)).body.secret, endpoint.secret, 'nothing changed');

  const rolled = (await api.post<Endpoint>(regenerate, { previousSecretExpiresInSeconds: 3600 })).body;
  t.not(rolled.secret, endpoint.secret);
  t.is(rolled.previousSecretExpiresAt, '2026-06-01T11:00:00.000Z');
  t.is(
    (await api.get<Endpoint>(`${ENDPOINTS}/${endpoint.id}`)).body.previousSecretExpiresAt,
    rolled.previousSecretExpiresAt,
  );

  const verifies = (hook: ReceivedWebhook, secret: string) => {
    const header = hook.headers['x-weir-signature'] as string;
    const nowSeconds = Number(/^t=(\d+),/.exec(header)?.[1]);
    return verifyTimestampedSignature({ secret, body: hook.body, header, nowSeconds });
  };
  await api.post(`${ENDPOINTS}/${endpoint.id}/test`);
  const [during] = await hooks.waitFor((all) => all.length >= 1);
  t.is((during!.headers['x-weir-signature'] as string).match(/v1=/g)?.length, 2, 'a v1 for each secret');
  t.true(verifies(during!, rolled.secret), 'the new secret passes');
  t.true(verifies(during!, endpoint.secret), 'the old secret passes while it overlaps');
  t.true(
    verifyTimestampedSignature({
      secret: rolled.secret,
      body: during!.body,
      header: (during!.headers['x-weir-signature'] as string).split(',v1=').slice(0, 2).join(',v1='),
      nowSeconds: Date.parse('2026-06-01T10:00:00Z') / 1000,
    }),
    "the new secret's v1 comes first",
  );
  t.is(during!.headers['x-webhook-signature'], bodySignature(rolled.secret, during!.body), 'the new secret only');
  t.is(during!.headers['x-webhook-token'], rolled.secret);

  clock.advanceBy(60 * 60 * 1000);
  t.is((await api.get<Endpoint>(`${ENDPOINTS}/${endpoint.id}`)).body.previousSecretExpiresAt, null, 'expired');
  await api.post(`${ENDPOINTS}/${endpoint.id}/test`);
  const [, after] = await hooks.waitFor((all) => all.length >= 2);
  t.is((after!.headers['x-weir-signature'] as string).match(/v1=/g)?.length, 1, 'only the new secret once expired');
  t.true(verifies(after!, rolled.secret));
  t.false(verifies(after!, endpoint.secret), 'the old secret fails after its expiry');
});

test('a disabled endpoint receives nothing; enabled again, it receives new events', async (t) => {
  const active = await receiver(t);
  const muted = await receiver(t);
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const on = (
    await api.post<Endpoint>(ENDPOINTS, {
      description: 'on',
      url: active.url,
      enabledEvents: { events: ['checkout_session.completed'] },
    })
  ).body;
  const off = (
    await api.post<Endpoint>(ENDPOINTS, {
      description: 'off',
      url: muted.url,
      enabledEvents: { events: ['checkout_session.completed'] },
      isDisabled: true,
    })
  ).body;
  t.true(off.isDisabled);

  const first = (await api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;
  await payInFull(weir, api, first);
  await active.waitFor((all) => all.some((h) => (JSON.parse(h.body) as Envelope).data.object.id === first.id));
  // Deliveries are scheduled for every endpoint in the same step, so the disabled one would have its own by now.
  t.is((await deliveriesOf(api, on.id)).count, 1);
  t.is((await deliveriesOf(api, off.id)).count, 0);
  t.is(muted.received.length, 0);

  t.false((await api.put<Endpoint>(`${ENDPOINTS}/${off.id}`, { isDisabled: false })).body.isDisabled);
  const second = (await api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;
  await payInFull(weir, api, second);
  const [hook] = await muted.waitFor((all) => all.length >= 1);
  const envelope = JSON.parse(hook!.body) as Envelope;
  t.is(envelope.type, 'checkout_session.completed');
  t.is(envelope.data.object.id, second.id, 'only the event after re-enabling; the earlier one is not sent late');
  t.is((await deliveriesOf(api, off.id)).count, 1);

  // Disabled again, a test delivery is still sent on request (that is what the test button is for).
  await api.put(`${ENDPOINTS}/${off.id}`, { isDisabled: true });
  await api.post(`${ENDPOINTS}/${off.id}/test`);
  await muted.waitFor((all) => all.some((h) => typeOf(h) === 'webhook_endpoint.test'));
});

test('an endpoint gets only the event types it subscribed to', async (t) => {
  const completedHooks = await receiver(t);
  const expiredHooks = await receiver(t);
  const clock = createManualClock(Date.parse('2026-06-01T10:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url);
  const completedOnly = (
    await api.post<Endpoint>(ENDPOINTS, {
      description: 'c',
      url: completedHooks.url,
      enabledEvents: { events: ['checkout_session.completed'] },
    })
  ).body;
  const expiredOnly = (
    await api.post<Endpoint>(ENDPOINTS, {
      description: 'e',
      url: expiredHooks.url,
      enabledEvents: { events: ['checkout_session.expired'] },
    })
  ).body;

  const paid = (await api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;
  await payInFull(weir, api, paid);
  const [completed] = await completedHooks.waitFor((all) => all.length >= 1);
  t.is(typeOf(completed!), 'checkout_session.completed');
  t.is((await deliveriesOf(api, expiredOnly.id)).count, 0, 'no delivery for an event type the endpoint did not choose');
  t.is(expiredHooks.received.length, 0);

  // The same endpoint does get the type it chose.
  const abandoned = (await api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;
  clock.advanceBy(2 * 60 * 60 * 1000);
  const [expired] = await expiredHooks.waitFor((all) => all.length >= 1);
  const envelope = JSON.parse(expired!.body) as Envelope;
  t.is(envelope.type, 'checkout_session.expired');
  t.is(envelope.data.object.id, abandoned.id);
  const expiredDeliveries = (await deliveriesOf(api, expiredOnly.id)).data;
  t.deepEqual(
    expiredDeliveries.map((d) => d.eventType),
    ['checkout_session.expired'],
    'payment_intent.canceled (not chosen) is not sent along',
  );
  await eventually(
    async () => ((await deliveriesOf(api, completedOnly.id)).count === 1 ? true : undefined),
    'the completed endpoint to have exactly its one delivery',
  );
  t.true(completedHooks.received.every((h) => typeOf(h) === 'checkout_session.completed'));
});

test('POST /:id/deliveries/:deliveryId/resend makes a new attempt, recorded in the log with its answer', async (t) => {
  // The first attempt gets a 500, every later one a 200.
  const hooks = await startWebhookReceiver((_request, index) => (index === 0 ? 500 : 200));
  t.teardown(() => hooks.close());
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const endpoint = (
    await api.post<Endpoint>(ENDPOINTS, {
      description: 'd',
      url: hooks.url,
      enabledEvents: { events: ['invoice.paid'] },
    })
  ).body;
  await api.post(`${ENDPOINTS}/${endpoint.id}/test`);
  type Logged = Delivery & {
    attemptLog: { attempt: number; statusCode: number | null; durationMs: number; response?: string | null }[];
    resends: { at: string; by: string; attempt: number }[];
    nextAttemptAt: string | null;
  };
  const deliveryWhen = (ok: (d: Logged) => boolean, what: string) =>
    eventually(async () => {
      const [d] = (await api.get<Page<Logged>>(`${ENDPOINTS}/${endpoint.id}/deliveries`)).body.data;
      return d && ok(d) ? d : undefined;
    }, what);
  const failed = await deliveryWhen((d) => d.attempts === 1, 'the first attempt to be recorded');
  t.is(failed.status, 'pending', 'retried later on its schedule');
  t.is(failed.attemptLog[0]!.statusCode, 500);
  t.is(failed.attemptLog[0]!.response, 'ok', 'the start of the answer is kept');

  // Waiting for its retry (30 s on): a resend brings it forward.
  const resend = `${ENDPOINTS}/${endpoint.id}/deliveries/${failed.id}/resend`;
  const answer = await api.post<Logged>(resend);
  t.is(answer.status, 200);
  t.deepEqual(
    answer.body.resends.map((r) => r.attempt),
    [2],
  );
  t.regex(answer.body.resends[0]!.by, /^api_key:/);
  await hooks.waitFor((all) => all.length >= 2);
  const succeeded = await deliveryWhen((d) => d.status === 'succeeded', 'the resent attempt to succeed');
  t.deepEqual(
    succeeded.attemptLog.map((a) => [a.attempt, a.statusCode]),
    [
      [1, 500],
      [2, 200],
    ],
  );

  // Ended: a resend is one more attempt, and the delivery ends as that attempt does.
  t.is((await api.post(resend)).status, 200);
  await hooks.waitFor((all) => all.length >= 3);
  const again = await deliveryWhen((d) => d.attempts === 3 && d.status === 'succeeded', 'the third attempt');
  t.is(again.attemptLog[2]!.statusCode, 200);
  t.true(again.attemptLog.every((a) => a.durationMs >= 0));
  t.is(JSON.parse(hooks.received[2]!.body).id, JSON.parse(hooks.received[0]!.body).id, 'the same event, same id');

  assertError(t, await api.post(`${ENDPOINTS}/${endpoint.id}/deliveries/nope/resend`), 404, {
    code: 'resource_missing',
  });
});

test('resend on a disabled endpoint is refused (400 endpoint_disabled, nothing logged) and works once it is enabled; on a deleted one it is a 404 saying it was deleted (it said only not found)', async (t) => {
  const receiver = { answer: 503 };
  const hooks = await startWebhookReceiver(() => receiver.answer);
  t.teardown(() => hooks.close());
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const endpoint = (
    await api.post<Endpoint>(ENDPOINTS, { description: 'd', url: hooks.url, enabledEvents: { events: ['*'] } })
  ).body;
  // A real event (a withdrawal address added), its first attempt failed, then canceled by the disabling.
  await api.post('/api/v1/organization/withdrawal-addresses', {
    chainId: 7357,
    address: '0x1111111111111111111111111111111111111111',
    name: 'second',
  });
  const deliveryWhen = (ok: (d: Delivery) => boolean, what: string) =>
    eventually(async () => {
      const [d] = (await deliveriesOf(api, endpoint.id)).data;
      return d && ok(d) ? d : undefined;
    }, what);
  const failed = await deliveryWhen((d) => d.attempts === 1, 'the first attempt to fail');
  await api.put(`${ENDPOINTS}/${endpoint.id}`, { isDisabled: true });
  await deliveryWhen((d) => d.status === 'canceled', 'the delivery to be canceled');
  const resend = `${ENDPOINTS}/${endpoint.id}/deliveries/${failed.id}/resend`;
  await assertRejectedWithoutWrite(t, weir, () => api.post(resend), {
    status: 400,
    code: 'endpoint_disabled',
    message: new RegExp(`^webhook endpoint ${endpoint.id} is disabled: enable it before resending$`),
  });
  t.is((await weir.eventStore.readStream(`webhook_delivery-${failed.id}`)).at(-1)?.type, 'WebhookDeliveryCanceled');

  await api.put(`${ENDPOINTS}/${endpoint.id}`, { isDisabled: false });
  receiver.answer = 200;
  t.is((await api.post(resend)).status, 200);
  await hooks.waitFor((all) => all.length === 2);
  await deliveryWhen((d) => d.status === 'succeeded' && d.attempts === 2, 'the resent attempt to succeed');

  t.is((await api.delete(`${ENDPOINTS}/${endpoint.id}`)).status, 200);
  await assertRejectedWithoutWrite(t, weir, () => api.post(resend), {
    status: 404,
    code: 'resource_missing',
    message: new RegExp(`^webhook endpoint ${endpoint.id} not found: it was deleted$`),
  });
  await eventually(async () => (weir.webhooks.status().inFlight === 0 ? true : undefined), 'nothing in flight');
  t.is(hooks.received.length, 2, 'nothing more was sent');
});

test("the document says what a delivery's canceled holds and what a test send answers (it named no shape, and a test send's answer a deleted customer)", async (t) => {
  const weir = await startTestWeir(t);
  type Schema = {
    properties?: Record<string, Schema>;
    enum?: string[];
    anyOf?: Schema[];
    $ref?: string;
    example?: unknown;
  };
  const document = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as {
    components: { schemas: Record<string, Schema> };
    paths: Record<
      string,
      Record<string, { responses: Record<string, { content: Record<string, { schema: Schema }> }> }>
    >;
  };
  const canceled = document.components.schemas.WebhookDelivery!.properties!.canceled!;
  const shape = [canceled, ...(canceled.anyOf ?? [])].find((s) => s.properties);
  t.deepEqual(Object.keys(shape?.properties ?? {}).sort(), ['at', 'reason']);
  t.deepEqual(shape?.properties?.reason?.enum, ['endpoint_deleted', 'endpoint_disabled']);
  const answer =
    document.paths[`${ENDPOINTS}/{id}/test`]!.post!.responses['200']!.content['application/json']!.schema.$ref!;
  const sentSchema = document.components.schemas[answer.split('/').pop()!]!;
  t.regex(JSON.stringify(sentSchema.example), /test event sent/);
  t.deepEqual(
    Object.keys(sentSchema.properties ?? {}).sort(),
    ['deliveryId', 'eventId', 'message', 'statusCode'],
    "the reference's fields and the ids to find the delivery by",
  );
});
