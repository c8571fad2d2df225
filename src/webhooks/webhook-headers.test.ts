import test from 'ava';
import { openApiDocument } from '../read-api/schema/openapi-document.ts';
import { verifyBodySignature, verifyTimestampedSignature } from './signature.ts';
import { webhookHeaders } from './webhook-headers.ts';

type Parameter = { name: string; in: string; required?: boolean };
type Document = { webhooks: Record<string, { post: { parameters?: Parameter[] } }> };

const sent = webhookHeaders({ secret: 'whsec_k', body: '{"id":"e1"}', eventId: 'e1', nowMs: 1_700_000_000_500 });

const withoutToken = webhookHeaders({
  secret: 'whsec_k',
  body: '{"id":"e1"}',
  eventId: 'e1',
  nowMs: 1_700_000_000_500,
  tokenHeader: false,
});

test('every webhook in the document declares exactly the headers a delivery carries, as required those sent whatever the setting: x-webhook-token only may be absent', (t) => {
  const document = openApiDocument({}, { version: 'test' }) as unknown as Document;
  const names = Object.keys(sent).sort();
  t.true(Object.keys(document.webhooks).length > 0);
  for (const [type, webhook] of Object.entries(document.webhooks)) {
    const headers = (webhook.post.parameters ?? []).filter((p) => p.in === 'header');
    t.deepEqual(headers.map((p) => p.name.toLowerCase()).sort(), names, type);
    const required = headers.filter((p) => p.required).map((p) => p.name.toLowerCase());
    t.deepEqual(required.sort(), Object.keys(withoutToken).sort(), `${type}: the headers always sent`);
    const token = headers.find((p) => p.name === 'X-Webhook-Token') as Parameter & { description?: string };
    t.regex(token.description ?? '', /WEIR_WEBHOOK_TOKEN_HEADER=off/, `${type}: says when it is absent`);
  }
});

test('tokenHeader: false leaves the secret out of the headers; the others are the same and still verify', (t) => {
  t.false('x-webhook-token' in withoutToken);
  t.false(Object.values(withoutToken).includes('whsec_k'), 'the secret is in no header');
  t.is(sent['x-webhook-token'], 'whsec_k', 'sent by default');
  const { 'x-webhook-token': _token, ...rest } = sent;
  t.deepEqual(withoutToken, rest);
  t.true(verifyBodySignature('whsec_k', '{"id":"e1"}', withoutToken['x-webhook-signature']));
  t.true(
    verifyTimestampedSignature({
      secret: 'whsec_k',
      body: '{"id":"e1"}',
      header: withoutToken['x-weir-signature'],
      nowSeconds: 1_700_000_100,
    }),
  );
});

test('the headers sign the raw body with the whole secret and name the event', (t) => {
  t.is(sent['x-webhook-id'], 'e1');
  t.true(verifyBodySignature('whsec_k', '{"id":"e1"}', sent['x-webhook-signature']));
  t.true(sent['x-weir-signature'].startsWith('t=1700000000,'));
  t.true(
    verifyTimestampedSignature({
      secret: 'whsec_k',
      body: '{"id":"e1"}',
      header: sent['x-weir-signature'],
      nowSeconds: 1_700_000_100,
    }),
  );
  t.false(
    verifyTimestampedSignature({
      secret: 'k',
      body: '{"id":"e1"}',
      header: sent['x-weir-signature'],
      nowSeconds: 1_700_000_100,
    }),
    'the prefix is part of the key',
  );
});

test('during an overlap x-weir-signature carries a v1 for the new secret then the old; the other headers the new one only', (t) => {
  const body = '{"id":"e2"}';
  const both = webhookHeaders({
    secret: 'whsec_new',
    previousSecret: 'whsec_old',
    body,
    eventId: 'e2',
    nowMs: 1_700_000_000_000,
  });
  const [stamp, first, second, ...rest] = both['x-weir-signature'].split(',');
  t.is(stamp, 't=1700000000');
  t.is(rest.length, 0);
  t.is(
    `${stamp},${first}`,
    webhookHeaders({ secret: 'whsec_new', body, eventId: 'e2', nowMs: 1_700_000_000_000 })['x-weir-signature'],
  );
  t.is(
    `${stamp},${second}`,
    webhookHeaders({ secret: 'whsec_old', body, eventId: 'e2', nowMs: 1_700_000_000_000 })['x-weir-signature'],
  );
  const check = (secret: string, header: string) =>
    verifyTimestampedSignature({ secret, body, header, nowSeconds: 1_700_000_000 });
  t.true(check('whsec_new', both['x-weir-signature']));
  t.true(check('whsec_old', both['x-weir-signature']), 'any v1 may match');
  t.false(check('whsec_other', both['x-weir-signature']));
  t.true(verifyBodySignature('whsec_new', body, both['x-webhook-signature']));
  t.is(both['x-webhook-token'], 'whsec_new');

  const after = webhookHeaders({
    secret: 'whsec_new',
    previousSecret: null,
    body,
    eventId: 'e2',
    nowMs: 1_700_000_000_000,
  });
  t.is(after['x-weir-signature'].match(/v1=/g)?.length, 1);
  t.false(check('whsec_old', after['x-weir-signature']));
});

test('the reference page says above the events how to verify, answer and dedupe them', (t) => {
  const document = openApiDocument({}, { version: 'test' }) as unknown as {
    tags: { name: string; description?: string }[];
  };
  const description = document.tags.find((tag) => tag.name === 'Webhooks')?.description ?? '';
  for (const needed of [
    'X-Weir-Signature',
    'whsec_',
    '2xx within 10 s',
    'X-Webhook-Id',
    'regenerate',
    'disabled',
    'previousSecretExpiresInSeconds',
    'any `v1`',
    'WEIR_WEBHOOK_TOKEN_HEADER=off',
  ])
    t.true(description.includes(needed), needed);
});

test('a signature as long as the real one but not ASCII is refused, not a throw (a receiver would answer 500)', (t) => {
  const odd = 'é'.repeat(64);
  const header = `t=1700000000,v1=${odd}`;
  t.false(verifyTimestampedSignature({ secret: 'whsec_x', body: '{}', header, nowSeconds: 1_700_000_000 }));
  t.false(verifyBodySignature('whsec_x', '{}', odd));
});
