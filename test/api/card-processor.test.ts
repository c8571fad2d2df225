import test from 'ava';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';
import { assertError, assertRejectedWithoutWrite } from './helpers.ts';

const PATH = '/api/v1/organization/card-processor';
const PUBLISHABLE = 'pk_test_51HxAbCdEfGhIjKlMnOp';
const SECRET = 'sk_test_51HxQrStUvWxYz0123wxyz';

type CardProcessor = { connected: boolean; publishableKey: string | null; secretKeyLast4: string | null };

test('card processor keys: stored sealed, answered as the publishable key and the last four only, per environment', async (t) => {
  const lines: string[] = [];
  const weir = await startTestWeir(t, {}, { log: (line) => lines.push(line) });
  const { api, live } = await createMerchant(weir.url);

  const empty = await api.get<CardProcessor>(PATH);
  t.is(empty.status, 200, JSON.stringify(empty.body));
  t.like(empty.body, { connected: false, publishableKey: null, secretKeyLast4: null, cardPaymentsAvailable: false });

  const set = await api.put<CardProcessor>(PATH, { publishableKey: PUBLISHABLE, secretKey: SECRET });
  t.is(set.status, 200, JSON.stringify(set.body));
  t.like(set.body, {
    object: 'card_processor',
    connected: true,
    provider: 'stripe',
    publishableKey: PUBLISHABLE,
    secretKeyLast4: 'wxyz',
  });
  const read = await api.get<CardProcessor>(PATH);
  t.deepEqual(read.body, set.body);
  // The secret is in no answer, no log line and no event as given.
  t.false(JSON.stringify([set.body, read.body]).includes(SECRET));
  t.false(lines.join('\n').includes(SECRET));
  const events = await weir.eventStore.readAll(null, 100_000);
  t.false(JSON.stringify(events.map((e) => e.data)).includes(SECRET));
  t.true(events.some((e) => e.type === 'CardProcessorKeysSet'));
  // The live environment has its own (none yet).
  t.like((await live.get<CardProcessor>(PATH)).body, { connected: false });

  const removed = await api.delete(PATH);
  t.is(removed.status, 200, JSON.stringify(removed.body));
  t.like((await api.get<CardProcessor>(PATH)).body, { connected: false, secretKeyLast4: null });
  assertError(t, await api.delete(PATH), 400, { code: 'resource_missing' });
});

test('card processor keys: a malformed key, or a live key in test, is refused naming the field, without a write', async (t) => {
  const weir = await startTestWeir(t);
  const { api, live } = await createMerchant(weir.url);
  const put =
    (body: unknown, client = api) =>
    () =>
      client.put(PATH, body);
  await assertRejectedWithoutWrite(t, weir, put({ secretKey: SECRET }), {
    field: 'publishableKey',
    code: 'parameter_missing',
  });
  await assertRejectedWithoutWrite(t, weir, put({ publishableKey: PUBLISHABLE, secretKey: 'hunter2' }), {
    field: 'secretKey',
    message: /must be a secret key/,
  });
  await assertRejectedWithoutWrite(t, weir, put({ publishableKey: SECRET, secretKey: SECRET }), {
    field: 'publishableKey',
  });
  await assertRejectedWithoutWrite(
    t,
    weir,
    put({ publishableKey: PUBLISHABLE, secretKey: SECRET.replace('_test_', '_live_') }),
    { field: 'secretKey', message: /must be a test key in the test environment/ },
  );
  await assertRejectedWithoutWrite(t, weir, put({ publishableKey: PUBLISHABLE, secretKey: SECRET }, live), {
    field: 'publishableKey',
    message: /must be a live key in the live environment/,
  });
  await assertRejectedWithoutWrite(
    t,
    weir,
    put({ provider: 'paypal', publishableKey: PUBLISHABLE, secretKey: SECRET }),
    { field: 'provider' },
  );
});
