import Router from '@koa/router';
import test from 'ava';
import { ValidationError } from '../../shared/errors.ts';
import {
  amount,
  arrayOf,
  bodyObject,
  closedObject,
  ignored,
  metadata,
  objectField,
  optional,
  requiredText,
  text,
  url,
  z,
} from './fields.ts';
import { openApiDocument } from './openapi-document.ts';
import { declarationOf, parseWith, schemaRoutes } from './route.ts';

const LineItems = bodyObject({
  lineItems: z.object({
    data: arrayOf(
      z.object({
        quantity: z.number({ error: 'parameter_invalid_integer\u001fmust be an integer' }).int().min(1),
        priceData: optional(z.object({ unitAmount: amount() })),
      }),
      { min: 1 },
    ),
  }),
});

const refusal = (schema: z.ZodType, value: unknown): ValidationError => {
  try {
    parseWith(schema, value);
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error(`${JSON.stringify(value)} was accepted`);
};

test('a bad nested field is a 400 naming its full path, with its code', (t) => {
  const bad = refusal(LineItems, { lineItems: { data: [{ quantity: 1 }, { quantity: 'two' }] } });
  t.is(bad.statusCode, 400);
  t.is(bad.field, 'lineItems.data[1].quantity');
  t.is(bad.message, 'lineItems.data[1].quantity: must be an integer');
  t.is(bad.code, 'parameter_invalid_integer');
  t.is(refusal(LineItems, { lineItems: { data: [] } }).message, 'lineItems.data: must have at least 1 item');
  const amountBad = refusal(LineItems, { lineItems: { data: [{ quantity: 1, priceData: { unitAmount: '1.5' } }] } });
  t.is(amountBad.field, 'lineItems.data[0].priceData.unitAmount');
  t.is(amountBad.code, 'parameter_invalid_integer');
  const missing = refusal(LineItems, { lineItems: { data: [{ quantity: 1, priceData: {} }] } });
  t.is(missing.message, 'lineItems.data[0].priceData.unitAmount: is required');
  t.is(missing.code, 'parameter_missing');
});

test('the body itself must be an object: the message names no field', (t) => {
  for (const body of [undefined, null, [1], 'text']) {
    const bad = refusal(LineItems, body);
    t.is(bad.field, null);
    t.is(bad.message, 'the request body must be a JSON object');
  }
});

test('amounts are bigints inside, from digit strings or safe integers; documented as digit strings', (t) => {
  const schema = bodyObject({ unitAmount: amount() });
  t.is(parseWith(schema, { unitAmount: '900719925474099300' }).unitAmount, 900719925474099300n);
  t.is(parseWith(schema, { unitAmount: 150000000 }).unitAmount, 150000000n);
  for (const bad of ['-1', '1e8', ' 1', 1.5, -1, true, {}, '9223372036854775808'])
    t.is(refusal(schema, { unitAmount: bad }).code, 'parameter_invalid_integer', JSON.stringify(bad));

  const router = new Router({ prefix: '/api/v1' });
  schemaRoutes(router, { tag: 'Prices', auth: 'secretKey' }).route(
    { method: 'post', path: '/prices', summary: 'Create a price', body: schema },
    () => ({}),
  );
  const document = openApiDocument({ api: router as unknown as Router<never> }, { version: 'test' });
  const body = JSON.stringify(document.paths?.['/api/v1/prices']?.post?.requestBody);
  t.regex(body, /"unitAmount":\{"type":"string","pattern":"\^\\\\d\+\$"/);
});

test('text bounds, URLs and optional fields speak the API’s messages; null is taken as absent', (t) => {
  const schema = bodyObject({
    name: requiredText({ max: 5 }),
    note: optional(text({ max: 3 })),
    successUrl: optional(url()),
  });
  t.is(refusal(schema, {}).message, 'name: is required');
  t.is(refusal(schema, { name: null }).code, 'parameter_missing');
  t.is(refusal(schema, { name: '' }).code, 'parameter_invalid_string_empty');
  t.is(refusal(schema, { name: 'toolong' }).message, 'name: must be at most 5 characters');
  t.is(refusal(schema, { name: 7 }).message, 'name: must be a string');
  t.is(refusal(schema, { name: 'a', successUrl: 'thanks.html' }).code, 'url_invalid');
  t.is(refusal(schema, { name: 'a', successUrl: 'javascript:alert(1)' }).code, 'url_invalid');
  t.deepEqual(parseWith(schema, { name: 'a', note: null }), { name: 'a', note: undefined });
});

test('unknown keys are refused, named in full, in nested objects and in the body itself', (t) => {
  const Address = closedObject({ line1: optional(text()), country: optional(text({ max: 2 })) }, 'an address');
  const schema = bodyObject({ address: optional(Address) });
  const bad = refusal(schema, { address: { street: 'x' } });
  t.is(bad.field, 'address.street');
  t.is(bad.message, 'address.street: is not an address field; use line1, country');
  t.is(refusal(schema, { address: 'Porto' }).message, 'address: must be an object');
  // The body's own unknown keys are refused too, never dropped.
  t.is(refusal(schema, { address: { line1: 'x' }, extra: 1 }).message, 'extra: is not a known field; use address');
});

test('metadata: string values, numbers and booleans as text, and each bad key named', (t) => {
  const schema = bodyObject({ metadata: optional(metadata()) });
  t.deepEqual(parseWith(schema, { metadata: { a: 'x', n: 2, b: true } }).metadata, { a: 'x', n: '2', b: 'true' });
  t.is(refusal(schema, { metadata: { a: {} } }).message, 'metadata.a: must be a string');
  t.is(refusal(schema, JSON.parse('{"metadata":{"__proto__":"x"}}')).field, 'metadata.__proto__');
});

test('a declared route validates its request, hands the handler parsed values and is recorded for the document', async (t) => {
  const router = new Router<{ body: unknown }>({ prefix: '/api/v1' });
  const seen: unknown[] = [];
  schemaRoutes(router, { tag: 'Things', auth: 'secretKey' }).route(
    {
      method: 'put',
      path: '/things/:id',
      summary: 'Update a thing',
      params: z.object({ id: z.string() }),
      body: bodyObject({ name: requiredText() }),
    },
    (_ctx, input) => {
      seen.push(input.params.id, input.body.name);
      return { ok: true };
    },
  );
  const layer = router.stack[0]!;
  t.is(declarationOf(layer)?.summary, 'Update a thing');
  t.is(declarationOf(layer)?.tag, 'Things');
  const ctx = {
    params: { id: 'a1' },
    query: {},
    state: { body: { name: 'x' } as unknown },
    body: undefined as unknown,
  };
  const run = layer.stack[0] as unknown as (c: typeof ctx) => Promise<void>;
  await run(ctx);
  t.deepEqual(seen, ['a1', 'x']);
  t.deepEqual(ctx.body, { ok: true });
  ctx.state.body = { name: 3 };
  const error = await t.throwsAsync(run(ctx), { instanceOf: ValidationError });
  t.is(error?.message, 'name: must be a string');
});

test('an unknown key is named before any other fault, also inside a union; an ignored field is taken and left out of the list', (t) => {
  const Body = bodyObject({
    successUrl: url({ required: true }),
    events: optional(z.union([objectField({ list: arrayOf(text()) }), arrayOf(text())])),
    ...ignored(['nameCollection'], 'the page collects nothing'),
  });
  const typo = refusal(Body, { successURL: 'https://shop.example/ok' });
  t.is(typo.field, 'successURL');
  t.is(typo.message, 'successURL: is not a known field; use successUrl, events');
  t.is(refusal(Body, { successUrl: 'https://shop.example/ok', events: { lsit: [] } }).field, 'events.lsit');
  t.deepEqual(parseWith(Body, { successUrl: 'https://shop.example/ok', nameCollection: true }), {
    successUrl: 'https://shop.example/ok',
    nameCollection: undefined,
  });
});
